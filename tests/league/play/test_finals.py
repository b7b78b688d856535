"""The freeze and the finals inside a real ``arena serve --league``: three ready versions (the Python kit's random
and greedy examples and a quick search bot, real bot processes in their sandbox), frozen by the operator, then a
round robin with a fresh committed seed, ranked by the maximum-likelihood fit; its folder verifies against the
revealed seed. The ladder and the challenges stop at the freeze; an author may neither freeze nor start the finals.
In-process: the finals seat the frozen versions though a newer one became ready, and their ranking counts complete
deal sets only."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arena.league.rules.permissions import OPERATOR
from arena.league.storage.db import AsyncDatabase, open_database, sqlite_url
from arena.league.play.finals import Finals, default_tables, finals_ranking
from arena.league.intake.pipeline import BuiltBots
from arena.protocol import league_pb2 as lpb
from arena.records.run_folder import COMPACT_RECORDS, FORMAT_VARIABLE, RECORDS, RunFolder
from arena.records.store import iter_records
from arena.tournament.likelihood import ORDER_DIGITS, Tally, fit, leaderboard
from support.ladder import QUICK_SEARCH, Log, newer_version, setup
from support.league import GAME, League, bearer, bot_folder, league_in
from support.paths import ROOT
from support.records import run_of, won_by
from support.waiting import wait_for

FINALS_S = 900
"""Generous: 24 games of three sandboxed bots, after the ladder's tables in flight end, on a busy 2-core machine."""
LEAGUE = GAME + """[ladder]
concurrency = 1
placement = 1
"""
EXAMPLES = ROOT / "bots" / "python"
FIELD = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py", "search": QUICK_SEARCH}


def start(root: Path) -> League:
    return league_in(root, LEAGUE)


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_the_frozen_field_is_ranked_and_the_folder_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)  # the finals' default records (compact), not the suite's readable ones
    league = start(tmp_path)
    try:
        league.add_author("ann")
        ids = {}
        for bot, example in FIELD.items():
            league.upload("ann", bot_folder(league.root / bot, example), bot)
        for bot in FIELD:
            version = league.settled(league.token("ann"), bot)
            assert version.state == lpb.VERSION_STATE_READY, version.reason
            ids[bot] = version.id
        operator = league.operator

        assert "may not freeze a league: only the operator may" in one_line(
            league.league("freeze", token=league.tokens["ann"]))
        assert one_line(league.league("finals", "--deal-sets", "4", token=operator)) == (
            "error: failed precondition: the league is not frozen: freeze it first (arena league freeze)")
        frozen = league.league("freeze", token=operator)
        assert frozen.returncode == 0, frozen.stderr
        assert "league 'test' frozen at " in frozen.stdout
        for bot, version_id in ids.items():
            assert f"{bot}-v1 ({version_id})" in frozen.stdout
        assert "frozen already" in one_line(league.league("freeze", token=operator))
        assert "is frozen for its finals: it takes no more challenges" in one_line(league.league(
            "challenge", str(ids["search"]), "--against", str(ids["rand"]), token=league.tokens["ann"]))
        assert "may not start the finals" in one_line(league.league("finals", "--start", token=league.tokens["ann"]))
        queue = league.stub().GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30,
                                             metadata=bearer(league.token("ann")))
        assert list(queue.next) == [] and queue.note == ("the league is frozen for its finals: the ladder chooses "
                                                         "no more tables")
        shown = league.league("finals", token=league.tokens["ann"])
        assert shown.returncode == 0 and shown.stdout.strip() == "finals of 'test': frozen"

        started = league.league("finals", "--deal-sets", "4", token=operator)
        assert started.returncode == 0, started.stderr
        assert started.stdout.startswith("finals of 'test': playing, ")
        assert " of 24 games recorded in " in started.stdout
        again = one_line(league.league("finals", "--start", token=operator))  # playing, or done on a fast machine
        assert re.search(r"the finals were started already \((playing|done)\)", again), again

        stub = league.stub()
        ann = bearer(league.token("ann"))

        def ended() -> bool:
            return stub.Finals(lpb.FinalsRequest(), timeout=30, metadata=ann).state in ("done", "failed")

        wait_for(ended, FINALS_S, "the finals to end")
        reply = stub.Finals(lpb.FinalsRequest(), timeout=30, metadata=ann)
        assert (reply.state, reply.error, reply.games, reply.scheduled) == ("done", "", 24, 24)
        assert {row.version_id for row in reply.ranking} == set(ids.values())
        ratings = [row.rating for row in reply.ranking]
        shown_order = [round(rating, ORDER_DIGITS) for rating in ratings]  # as the ranking orders them
        assert shown_order == sorted(shown_order, reverse=True) and abs(sum(ratings)) < 1e-6  # anchored on the mean
        assert all(row.deal_sets == 8 for row in reply.ranking)  # 4 deal sets against each of the 2 others
        assert all(row.rating_low < row.rating < row.rating_high for row in reply.ranking)
        by_name = {row.version: row for row in reply.ranking}
        for row in reply.ranking:  # a tie is declared both ways, and tied versions share a rank range
            for other in row.tied_with:
                assert row.version in by_name[other].tied_with
            assert ("–" in row.rank) == bool(row.tied_with)  # an en dash: "1–3"
        printed = league.league("finals", token=league.tokens["ann"])
        assert printed.returncode == 0 and "finals of 'test': done, 24 of 24 games" in " ".join(printed.stdout.split())

        database = open_database(sqlite_url(league.root / "data"))
        league_id = database.league("test").id
        freeze = database.frozen(league_id)
        assert freeze is not None and set(freeze.field) == set(ids.values())
        tables = database.tables_in(league_id, ["queued", "playing", "done", "failed"])
        assert all(t.created_at <= freeze.frozen_at for t in tables)  # the ladder chose nothing after the freeze
        database.close()
        folder = Path(reply.folder)
        assert (folder / COMPACT_RECORDS).exists() and not (folder / RECORDS).exists()
        again = finals_ranking(folder, {r.version: r.version_id for r in reply.ranking}, 2)  # from the records
        assert {row["version"]: row["rating"] for row in again} == pytest.approx(  # the same fit, to 0.001 Elo
            {row.version: row.rating for row in reply.ranking}, abs=1e-3)
        verified = subprocess.run([sys.executable, "-m", "arena", "replay", str(folder), "--verify", "--jobs", "1"],
                                  capture_output=True, text=True, timeout=300, cwd=ROOT)
        said = " ".join(verified.stdout.split())
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert said.startswith("verified 24 games") and ": OK; deals checked against the revealed master seed" in said
    finally:
        league.server.stop()


@pytest.mark.parametrize(("field", "sides", "tables"), [(3, 3, 3), (8, 4, 8), (20, 6, 20), (50, 4, 205)])
@pytest.mark.fast
def test_by_default_every_pair_meets_about_once(field: int, sides: int, tables: int) -> None:
    assert default_tables(field, sides) == tables
    assert tables * sides * (sides - 1) >= field * (field - 1)  # expected meetings of a pair: at least one


def record_of(index: int, seats: list[str], places: list[int]) -> dict:
    """A four-player game's record as the finals read it: seat i holds side i, ``places[i]`` its place (0 first;
    sides sharing a place are tied, never for first here)."""
    ranking = sorted(range(len(seats)), key=lambda side: places[side])
    return {"recordVersion": 1, "index": index, "dealKey": "deal-0", "seats": seats, "sideOfSeat": [0, 1, 2, 3],
            "result": {"scores": [10 * place for place in places], "ranking": ranking, "winner": ranking[0]}}


@pytest.mark.fast
def test_equal_four_player_totals_tie_where_float_sums_differ(tmp_path: Path) -> None:
    """One deal set of four players (four rotations): 7 scores 0 + 0 + 1/6 (tied last with 8) + 1 = 7/6 and 8
    scores 1/3 + 1/3 + 1/6 + 1/3 = 7/6, which as floats add up to 1.1666666666666667 and 1.1666666666666665. They
    tie, as the ladder ranks the same deal set: the ranking is the fit of 9 first, 10 second, 7 and 8 tied."""
    names = {"g7": 7, "g8": 8, "g9": 9, "g10": 10}
    games = [(["g7", "g8", "g9", "g10"], [3, 2, 0, 1]), (["g8", "g9", "g10", "g7"], [2, 1, 0, 3]),
             (["g9", "g10", "g7", "g8"], [1, 0, 2, 2]), (["g10", "g7", "g8", "g9"], [3, 0, 2, 1])]
    with (tmp_path / RECORDS).open("w") as records:
        for index, (seats, places) in enumerate(games):
            records.write(json.dumps(record_of(index, seats, places)) + "\n")
    tally = Tally()
    for name in names:
        tally.entrant(name)
    tally.add((("g9",), ("g10",), ("g7", "g8")))
    expected = [(row.rank, row.entrant, pytest.approx(row.elo, abs=1e-9), row.tied_with)
                for row in leaderboard(fit(tally.evidence()))]  # the fit's entrants in another order: the last bits
    ranking = finals_ranking(tmp_path, names, 4)
    assert [(row["rank"], row["version"], row["rating"], tuple(row["tied_with"])) for row in ranking] == expected
    assert ranking[2]["rating"] == ranking[3]["rating"] and [row["version_id"] for row in ranking] == [9, 10, 7, 8]


@pytest.mark.fast
def test_only_complete_deal_sets_are_ranked(tmp_path: Path) -> None:
    """a beat b and b beat c in whole deal sets (both rotations); c beat a in the first rotation of a deal set whose
    second was never played (a run cut short): that deal set is no result, so c has one deal set and a only one."""
    games = [won_by("a-v1", "b-v1", "0", 0), won_by("a-v1", "b-v1", "0", 1),
             won_by("b-v1", "c-v1", "1", 2), won_by("b-v1", "c-v1", "1", 3), won_by("c-v1", "a-v1", "2", 4)]
    ranking = finals_ranking(run_of(tmp_path / "finals", games), {"a-v1": 1, "b-v1": 2, "c-v1": 3}, 2)
    assert [(row["version"], row["version_id"], row["deal_sets"]) for row in ranking] == [
        ("a-v1", 1, 1), ("b-v1", 2, 2), ("c-v1", 3, 1)]


async def test_a_newer_version_does_not_join_the_frozen_field(tmp_path: Path) -> None:
    """rand-v1 and greedy-v1 are frozen; then rand-v2 becomes ready, rand's active version. The finals (in-process,
    real bots in their sandbox) seat rand-v1, not rand-v2, and rank the frozen versions."""
    sync, served, work, ids = setup(sqlite_url(tmp_path), tmp_path, {"rand": EXAMPLES / "random_bot.py",
                                                                      "greedy": EXAMPLES / "greedy_bot.py"})
    league_id = served.league_id
    sync.freeze(league_id, [ids["rand"], ids["greedy"]])
    newer = newer_version(sync, sync.bot(league_id, "rand").id, work, "f" * 64, EXAMPLES / "random_bot.py")
    assert {version.id for _bot, version in sync.active_versions(league_id)} == {newer, ids["greedy"]}
    database = AsyncDatabase(sync)
    finals = Finals(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    frozen = await finals.begin(OPERATOR, 1, 0)
    with trio.fail_after(FINALS_S):
        await finals.play(frozen)
    ended = sync.frozen(league_id).finals
    assert (ended["state"], ended.get("error", "")) == ("done", "")
    assert sorted((row["version"], row["version_id"]) for row in ended["ranking"]) == [
        ("greedy-v1", ids["greedy"]), ("rand-v1", ids["rand"])]
    seated = [record["seats"] for record in iter_records(RunFolder(finals.run_folder).records)]
    assert sorted(map(sorted, seated)) == [["greedy-v1", "rand-v1"]] * 2  # one deal set: both rotations
    await database.close()
