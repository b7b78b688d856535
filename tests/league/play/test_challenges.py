"""Challenges inside a real ``arena serve --league``: an author's version against another, played by real bot
processes in their sandbox as a 2-entrant tournament with an SPRT, unrated; the refusals (another author's
version, an opponent neither active nor one's own, the daily limit, too many deal sets) are one line each; a
challenge cut by a ``kill -9`` resumes from its run folder and ends once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena.league.play.challenges import next_challenges
from arena.league.rules.config import ChallengeSettings, league_from_dict
from arena.league.files import load_league
from arena.league.clock import utc_now
from arena.league.rules.lifecycle import DONE, PLAYING
from arena.league.rules.model import ONLINE, ChallengeRow
from arena.league.storage.db import open_database, sqlite_url
from arena.league.rules.errors import ConfigError
from arena.league.rules.rating import recompute
from arena.protocol import league_pb2 as lpb
from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from support.league import GAME, League, bearer, bot_folder, league_in, rated_with_seats, start_league
from support.paths import ROOT
from support.waiting import wait_for

CHALLENGE_S = 600
"""Generous: the challenge starts two bots in their sandbox and plays deal sets beside the ladder, on a busy
2-core machine."""
LEAGUE = GAME + """[ladder]
concurrency = 1
placement = 1
[challenges]
per_day = 2
max_deal_sets = 40
elo0 = 0
elo1 = 150
"""
EXAMPLES = ROOT / "bots" / "python"
FIRST_CAP = 8
"""The first challenge's deal sets: enough for a verdict or a cap, few enough for CI's budget (in Block to 1 point
the deal decides most games, and 40 deal sets took minutes)."""


def expected_verdict(challenge: lpb.LeagueChallenge) -> tuple[str, str]:
    """A done challenge's verdict in the league's words (elo0 = 0, elo1 = 150), from the test's own numbers: each
    state's wording exactly, whichever the fresh deals made it."""
    units = f"{challenge.units} deal sets"
    if challenge.sprt_state == "H1":
        return "better", f"the SPRT accepted H1, +150.0 Elo rather than +0.0, after {units}"
    if challenge.sprt_state == "H0":
        return "not better by 150 Elo", f"the SPRT accepted H0, +0.0 Elo rather than +150.0, after {units}"
    undecided = f"the SPRT did not stop within {units}"
    if challenge.elo_low == challenge.elo_high == 0.0:  # no interval: an infinite Elo
        return f"not told apart after {units}", f"{undecided}, and the Elo difference has no 95% interval"
    shown = f"[{challenge.elo_low:+.1f}, {challenge.elo_high:+.1f}]"
    if challenge.elo_low > 0:
        return "better", f"{undecided}; the Elo difference's 95% interval {shown} lies above 0"
    if challenge.elo_high < 0:
        return "worse", f"{undecided}; the Elo difference's 95% interval {shown} lies below 0"
    return f"not told apart after {units}", f"{undecided}; the Elo difference's 95% interval {shown} holds 0"


def start(root: Path) -> League:
    return league_in(root, LEAGUE)


def league_in_again(league: League) -> League:
    """The same league's server started again on its data folder (after a kill)."""
    server = start_league(league.root / "data", league.operator, league.root / "league.toml", None)
    return League(server, league.root, league.operator, league.tokens)


def ready(league: League, author: str, bot: str, example: str, folder: str) -> lpb.BotVersion:
    league.upload(author, bot_folder(league.root / folder, EXAMPLES / example), bot)
    version = league.settled(league.token(author), bot)
    assert version.state == lpb.VERSION_STATE_READY, version.reason
    return version


def refused(league: League, author: str, *args: str) -> str:
    """The CLI's one line for a refused challenge (exit status 1)."""
    done = league.league("challenge", *args, token=league.tokens[author])
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_an_unrated_sprt_verdict_and_one_line_refusals(tmp_path: Path) -> None:
    league = start(tmp_path)
    try:
        league.add_author("alice")
        league.add_author("bob")
        old = ready(league, "alice", "mine", "random_bot.py", "v1")
        new = ready(league, "alice", "mine", "greedy_bot.py", "v2")
        bobs = ready(league, "bob", "bobs", "random_bot.py", "b1")
        assert (old.number, new.number) == (1, 2) and new.active and not [v for v in league.versions(
            league.token("alice"), "mine") if v.id == old.id][0].active

        # refusals, each one line, nothing queued
        assert "may not challenge with version" in refused(league, "alice", str(bobs.id), "--against", str(new.id))
        assert "it is another author's and not its bot's active version" in refused(
            league, "bob", str(bobs.id), "--against", str(old.id))
        assert "1 to 40 deal sets (challenges.max_deal_sets), got 41" in refused(
            league, "alice", str(new.id), "--against", str(old.id), "--deal-sets", "41")
        assert "cannot challenge itself" in refused(league, "alice", str(new.id), "--against", str(new.id))

        asked = league.league("challenge", str(new.id), "--against", str(old.id), "--deal-sets", str(FIRST_CAP),
                              token=league.tokens["alice"])
        assert asked.returncode == 0, asked.stderr
        assert asked.stdout.startswith("challenge 1: mine-v2 ") and "vs mine-v1 " in asked.stdout
        second = league.league("challenge", str(new.id), "--against", str(bobs.id), "--deal-sets", "2",
                               token=league.tokens["alice"])
        assert second.returncode == 0, second.stderr
        line = refused(league, "alice", str(new.id), "--against", str(bobs.id))
        assert line == ("error: permission denied: author 'alice' has asked for 2 challenges in the last 24 hours, "
                        "the league's limit (challenges.per_day = 2); try later")

        stub = league.stub()
        alice = bearer(league.token("alice"))

        def done() -> bool:
            listed = stub.ListChallenges(lpb.ListChallengesRequest(), timeout=30, metadata=alice).challenges
            return all(c.state == lpb.TABLE_STATE_DONE for c in listed)

        wait_for(done, CHALLENGE_S, "both challenges to end")
        # The verdict is the arena's SPRT on this challenge's own (fresh, random) deals: in Block to one point the
        # deal decides most games, so the greedy bot's edge over random is small and either hypothesis may win.
        # Whatever the deals, the verdict must be the test's: decided before the cap, or undecided at it. (A clear
        # H1 in a few deal sets, with Draw to 30, is tests/e2e/test_league_from_ladder_to_verified_finals.py's.)
        first = stub.GetChallenge(lpb.GetChallengeRequest(id=1), timeout=30, metadata=alice).challenge
        if first.sprt_state in ("H0", "H1"):
            assert first.verdict.startswith(f"SPRT mine-v2 vs mine-v1: {first.sprt_state} accepted: LLR "), first
            assert 1 <= first.units <= FIRST_CAP
        else:
            assert (first.sprt_state, first.units) == ("continue", FIRST_CAP), first
        assert first.elo_low <= first.elo <= first.elo_high, first
        assert (first.outcome, first.outcome_why) == expected_verdict(first), first
        capped = stub.GetChallenge(lpb.GetChallengeRequest(id=2), timeout=30, metadata=alice).challenge
        assert capped.units == 2 and capped.verdict.startswith("SPRT mine-v2 vs bobs-v1: ")
        assert (capped.outcome, capped.outcome_why) == expected_verdict(capped), capped
        with pytest.raises(grpc.RpcError) as other:
            stub.GetChallenge(lpb.GetChallengeRequest(id=1), timeout=30, metadata=bearer(league.token("bob")))
        assert other.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert stub.ListChallenges(lpb.ListChallengesRequest(), timeout=30,
                                   metadata=bearer(league.token("bob"))).challenges == []
        shown = league.league("challenges", "1", token=league.tokens["alice"])
        assert shown.returncode == 0, shown.stderr
        assert f": done: {first.outcome} ({first.outcome_why}); " + " ".join(first.verdict.split()) in " ".join(
            shown.stdout.split()), shown.stdout

        # unrated: the league's games and ratings are the ladder's tables' only
        database = open_database(sqlite_url(league.root / "data"))
        league_id = database.league("test").id
        tables = database.tables_in(league_id, [DONE])
        assert database.game_count(league_id) == 2 * len(tables)
        stored = {r.version_id: (r.mu, r.sigma, r.games) for r in database.ratings(league_id, ONLINE)}
        assert stored == recompute(rated_with_seats(database, league_id))
        assert old.id not in stored  # the old version played only its challenge
        database.close()

        folder = league.root / "data" / "league" / "leagues" / "test" / "challenges" / "1"
        verified = subprocess.run([sys.executable, "-m", "arena", "replay", str(folder), "--verify", "--jobs", "1"],
                                  capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        said = " ".join(verified.stdout.split())
        assert said.startswith("verified ") and ": OK; deals checked against the revealed master seed" in said
    finally:
        league.server.stop()


def _row(challenge_id: int, author_id: int | None) -> ChallengeRow:
    return ChallengeRow(challenge_id, 1, author_id, 1, 2, 1, "queued", None, None, utc_now(), None, None)


@pytest.mark.fast
def test_a_free_slot_takes_an_idle_authors_oldest_challenge() -> None:
    queued = [_row(2, 7), _row(3, 7), _row(4, 8), _row(5, 9)]
    assert [c.id for c in next_challenges(queued, [_row(1, 7)], 1)] == [4]
    assert [c.id for c in next_challenges(queued, [_row(1, 7)], 3)] == [4, 5, 2]
    assert [c.id for c in next_challenges(queued, [], 2)] == [2, 4]
    assert [c.id for c in next_challenges(queued[:2], [_row(1, 7)], 1)] == [2]


RESTART_LEAGUE = LEAGUE.replace("target = 1", "target = 60")
"""Long games (to 60 points), so that the kill falls between a challenge's first game and its last."""


def test_a_killed_challenge_resumes_and_ends_once(tmp_path: Path) -> None:
    league = league_in(tmp_path, RESTART_LEAGUE)
    league.add_author("alice")
    old = ready(league, "alice", "mine", "random_bot.py", "v1")
    (league.root / "v2").mkdir()
    (league.root / "v2" / "bot.py").write_text((EXAMPLES / "random_bot.py").read_text() + "\n# the second version\n")
    (league.root / "v2" / "bot.toml").write_text((league.root / "v1" / "bot.toml").read_text())
    league.upload("alice", league.root / "v2", "mine")
    new = league.settled(league.token("alice"), "mine")
    assert new.state == lpb.VERSION_STATE_READY and new.number == 2
    asked = league.league("challenge", str(new.id), "--against", str(old.id), "--deal-sets", "3",
                          token=league.tokens["alice"])
    assert asked.returncode == 0, asked.stderr
    database = open_database(sqlite_url(league.root / "data"))
    records = RunFolder(league.root / "data" / "league" / "leagues" / "test" / "challenges" / "1").records

    def mid_challenge() -> bool:  # playing, with some but not all of its six games recorded
        return (database.challenge(1).state == PLAYING and records.exists()
                and 1 <= records.read_bytes().count(b"\n") <= 4)

    try:  # a window of games, not one exact count: a busy machine may poll only after a game or two more
        wait_for(mid_challenge, CHALLENGE_S, "the challenge with some of its games recorded")
    finally:
        league.server.stop(signal.SIGKILL)
    kept = records.read_text().splitlines()
    assert database.challenge(1).state == PLAYING and 1 <= len(kept) < 6

    again = league_in_again(league)
    try:
        wait_for(lambda: database.challenge(1).state == DONE, CHALLENGE_S, "the cut challenge to resume and end")
    finally:
        again.server.stop()
    ended = database.challenge(1)
    database.close()
    assert ended.result["sprt"]["units"] == 3 and ended.result["sprt"]["state"] == "continue"
    assert ended.result["verdict"].startswith("SPRT mine-v2 vs mine-v1: undecided: LLR ")
    lines = records.read_text().splitlines()
    assert len(lines) == 6 and lines[:len(kept)] == kept  # the games before the kill kept, the others played once
    assert sorted(index_of(json.loads(line)) for line in lines) == list(range(6))


@pytest.mark.parametrize(("table", "line"), [
    ("per_dya = 1", "unknown key 'per_dya' in [challenges]; valid keys: per_day, max_deal_sets, concurrency, elo0, "
                    "elo1"),
    ("per_day = 0", "key 'challenges.per_day' must be an integer >= 1 and <= 100000, got 0"),
    ("max_deal_sets = 10001", "key 'challenges.max_deal_sets' must be an integer >= 1 and <= 10000, got 10001"),
    ("elo1 = -5", "key 'challenges.elo1' must be greater than challenges.elo0 (0), got -5"),
    ('elo0 = "a"', "key 'challenges.elo0' must be a number of Elo from -1000 to 1000 (the SPRT's hypotheses, as a "
                   "tournament file's [sprt]), got 'a'"),
])
@pytest.mark.fast
def test_a_bad_challenges_key_is_named_in_a_line(tmp_path: Path, table: str, line: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text(GAME + "[challenges]\n" + table + "\n")
    with pytest.raises(ConfigError) as refused:
        load_league(path)
    assert str(refused.value) == f"{path}: {line}"


@pytest.mark.fast
def test_the_challenges_defaults() -> None:
    assert league_from_dict({"name": "x", "variant": "block"}).challenges == ChallengeSettings(5, 300, 1, 0.0, 40.0)
