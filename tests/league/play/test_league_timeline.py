"""A league's timeline in a real ``arena serve --league``: while upcoming, versions are built and checked but nothing
is played, challenges and the steps the timeline owns are refused with one line; then, on a timeline seconds long
(computed as the test writes the file), it opens and the ladder plays, it freezes by itself, a server stopped while
frozen and started again after the finals' moment starts them at its start, and their ranking is the operator's
alone until the timeline publishes it, to the CLI, gRPC and the web alike. A league file with a time without its
offset, or with its times out of order, is refused in one line before the server starts."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest

from arena.league.rules.config import shown_moment
from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import league_pb2 as lpb
from support.league import (LADDER_LEAGUE, PHASE_S, League, bearer, ladder_uploaded, league_in, start_league, status,
                            wait_phase, whole_seconds)
from support.paths import ROOT
from support.waiting import wait_for
from support.web import get_json, http

FINALS_S = 120
"""Generous: the finals are two games of Block to 1 point between two sandboxed Python bots."""
TITLE = "Timeline cup"
GAME_SHOWN = "Block (no drawing), 2 players · 2 s a move"
"""What the league's tables play, as its pages' header says it."""


def league_text(opens: datetime, freeze: datetime, finals: datetime, results: datetime) -> str:
    """The quick ladder's league with a [timeline] (as TOML datetimes and one Z string) and one deal set of
    finals."""
    def toml(moment: datetime) -> str:
        return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

    return (f'title = "{TITLE}"\n' + LADDER_LEAGUE + f'[timeline]\nopens = {toml(opens)}\nfreeze = {toml(freeze)}\n'
            f'finals = {toml(finals)}\nresults = "{toml(results)}"\n[finals]\ndeal_sets = 1\n')


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def finals_of(league: League, token: str) -> lpb.FinalsResponse:
    return league.stub().Finals(lpb.FinalsRequest(), timeout=30, metadata=bearer(token))


def refusal(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    return refused.value.code(), refused.value.details()


def league_header(league: League, path: str) -> str:
    """The phase in the header of one of the league's pages, as served."""
    code, _, page = http(f"{league.server.web}{path}")
    assert code == 200, page[:300]
    text = page.decode()
    return text[text.index('<span id="league-phase"'):text.index("</span>", text.index('id="league-phase"')) + 7]


def restart(league: League) -> League:
    server = start_league(league.root / "data", league.operator, league.root / "league.toml", None, web=True)
    return League(server, league.root, league.operator, league.tokens)


def test_a_league_moves_through_its_phases_by_itself_and_a_restart_picks_up(tmp_path: Path) -> None:
    far = whole_seconds(3600)
    hour = timedelta(hours=1)
    league = league_in(tmp_path, league_text(far, far + hour, far + 2 * hour, far + 3 * hour), web=True)
    try:
        ladder_uploaded(league)  # built and checked while upcoming
        rand, greedy = league.token("author-rand"), league.token("author-greedy")
        operator_token = league.operator.read_text().strip()
        ids = {bot: league.versions(token, bot)[-1].id for bot, token in (("rand", rand), ("greedy", greedy))}
        now = status(league, rand)
        assert (now.league, now.title, now.variant, now.phase, now.next_phase) == (
            "test", TITLE, "block", "upcoming", "open")
        assert now.next_at == far.timestamp() and now.opens == far.timestamp()
        assert now.results == (far + 3 * hour).timestamp() and not now.results_published
        shown = league.league("status", token=league.tokens["author-rand"])
        assert shown.returncode == 0, shown.stderr
        assert re.fullmatch(rf"{TITLE} \(test\): block, upcoming; opens in (59|60) min \(at "
                            rf"{re.escape(shown_moment(far))}\)\n", shown.stdout), shown.stdout
        opens_line = f"league 'test' opens at {shown_moment(far)}"
        queue = league.stub().GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30, metadata=bearer(rand))
        assert (list(queue.playing), list(queue.next), list(queue.recent)) == ([], [], [])
        assert queue.note == f"{opens_line}: the ladder plays nothing before"
        assert one_line(league.league("challenge", str(ids["rand"]), "--against", str(ids["greedy"]),
                                      token=league.tokens["author-rand"])) == (
            f"error: failed precondition: {opens_line}: it takes no challenges before")
        assert one_line(league.league("freeze", token=league.operator)) == (
            f"error: failed precondition: league 'test' freezes by its timeline at {shown_moment(far + hour)} "
            f"(timeline.freeze): the operator does not freeze it")
        assert refusal(lambda: league.stub().Freeze(lpb.FreezeRequest(), timeout=30, metadata=bearer(rand))) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "author 'author-rand' may not freeze a league: only the operator may")
        assert refusal(lambda: league.stub().Finals(lpb.FinalsRequest(start=True), timeout=30,
                                                    metadata=bearer(operator_token))) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            f"league 'test' starts its finals by its timeline at {shown_moment(far + 2 * hour)} (timeline.finals, "
            f"with its [finals]): the operator does not start them")
        assert league_header(league, "/leagues/test/queue").startswith(
            '<span id="league-phase" data-phase="upcoming"><b id="league-title">Timeline cup</b> · '
            f'{GAME_SHOWN} · <b>upcoming</b> · opens in ')
        league.server.stop()

        # the operator moves the timeline to seconds from now (the results an hour away, for now)
        opens = whole_seconds(3)
        freeze, finals, results = opens + timedelta(seconds=12), opens + timedelta(seconds=15), opens + hour
        (tmp_path / "league.toml").write_text(league_text(opens, freeze, finals, results))
        league = restart(league)
        assert status(league, rand).phase in ("upcoming", "open")
        wait_phase(league, rand, "open")

        def a_table() -> bool:
            queue = league.stub().GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30, metadata=bearer(rand))
            return bool(queue.playing or queue.recent)

        wait_for(a_table, PHASE_S, "a ladder table")
        frozen = wait_phase(league, rand, "frozen")
        assert re.fullmatch(rf"the finals start in \d+ s \(at {re.escape(shown_moment(finals))}\)", frozen.next)
        assert frozen.next_at == finals.timestamp()
        assert league_header(league, "/leagues/test").startswith(
            '<span id="league-phase" data-phase="frozen"><b id="league-title">Timeline cup</b> · '
            f'{GAME_SHOWN} · <b>frozen</b> · the finals start in ')
        league.server.stop()  # stopped while frozen, started again once the finals' moment has passed
        wait_for(lambda: time.time() > finals.timestamp() + 0.5, PHASE_S, "the finals' moment")
        league = restart(league)
        wait_for(lambda: any(line.startswith("arena: finals started (league=test format=round_robin deal_sets=1 games=2 "
                                                         "by=the timeline)")
                             for line in league.server.output), PHASE_S, "the finals started by the timeline")
        wait_for(lambda: finals_of(league, rand).state in ("done", "failed"), FINALS_S, "the finals to end")

        withheld = finals_of(league, rand)  # the results are withheld from an author until their moment
        assert (withheld.state, withheld.error, withheld.games, withheld.scheduled) == ("done", "", 2, 2)
        assert list(withheld.ranking) == [] and withheld.results_at == results.timestamp()
        now = status(league, rand)
        assert (now.phase, now.next_phase, now.results_published) == ("finals", "done", False)
        assert re.fullmatch(rf"results are published in (59|60) min \(at {re.escape(shown_moment(results))}\)",
                            now.next), now.next
        printed = league.league("finals", token=league.tokens["author-rand"])
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout.splitlines()[-1] == f"results are published at {shown_moment(results)}"
        assert "rank" not in printed.stdout
        seen = finals_of(league, operator_token)  # the operator sees them
        assert {row.version_id for row in seen.ranking} == set(ids.values()) and seen.results_at == 0
        page = get_json(f"{league.server.web}/api/leagues/test/finals")
        assert (page["state"], page["ranking"], page["results"]) == ("done", [], [])
        assert page["results_at"] == results.isoformat()
        code, _, html = http(f"{league.server.web}/leagues/test/finals")
        assert code == 200 and html.decode().count(f"Results are published at {shown_moment(results)}.") == 3
        code, _, html = http(f"{league.server.web}/leagues/test/finals/games/0")  # nor a game of them
        assert code == 409 and (f"the finals&#x27; games are shown when their results are published, at "
                                f"{shown_moment(results)}") in html.decode(), html.decode()
        assert "/games/" not in html.decode()  # no finals game a click away while its results are withheld
        assert league_header(league, "/leagues/test/finals").startswith(
            '<span id="league-phase" data-phase="finals"><b id="league-title">Timeline cup</b> · '
            f'{GAME_SHOWN} · <b>finals</b> · results are published in ')
        league.server.stop()

        # the operator brings the results forward to seconds from now
        results = whole_seconds(3)
        (tmp_path / "league.toml").write_text(league_text(opens, freeze, finals, results))
        league = restart(league)
        done = wait_phase(league, rand, "done")
        assert time.time() >= results.timestamp()
        assert done.results_published and (done.next_phase, done.next_at, done.next) == (
            "", 0, "the finals' results are published")
        published = finals_of(league, rand)
        assert [(r.version_id, r.rank) for r in published.ranking] == [(r.version_id, r.rank) for r in seen.ranking]
        assert published.results_at == 0
        page = get_json(f"{league.server.web}/api/leagues/test/finals")
        assert len(page["ranking"]) == 2 and len(page["results"]) == 2 and page["results_at"] is None
        assert http(f"{league.server.web}{page['results'][1]['url']}")[0] == 200

        database = open_database(sqlite_url(tmp_path / "data"))
        league_id = database.league("test").id
        recorded = database.frozen(league_id)
        assert recorded is not None and set(recorded.field) == set(ids.values())
        assert freeze <= recorded.frozen_at < finals
        assert recorded.finals["started_at"] >= finals.timestamp()
        tables = database.tables_in(league_id, ["queued", "playing", "done", "failed"])
        assert tables, "the ladder played no table while the league was open"
        assert all(opens <= t.created_at <= recorded.frozen_at for t in tables)  # only while open
        database.close()
    finally:
        league.server.stop()


@pytest.mark.parametrize(("timeline", "line"), [
    ("opens = 2026-12-05T18:00:00\n", "key 'timeline.opens' must say its offset (UTC: 2026-12-05T18:00:00Z), got "
                                      "2026-12-05T18:00:00 without one: a time without an offset is no one moment"),
    ('freeze = "2026-12-05T18:00:00Z"\nfinals = 2026-12-05T09:00:00Z\n',
     "key 'timeline.finals' (2026-12-05 09:00 UTC) must come after timeline.freeze (2026-12-05 18:00 UTC): the "
     "steps are opens, freeze, finals, results, in that order"),
])
def test_a_bad_timeline_stops_the_server_before_it_starts(tmp_path: Path, timeline: str, line: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text(LADDER_LEAGUE + "[timeline]\n" + timeline)
    operator = tmp_path / "operator.token"
    operator.write_text("x" * 43)
    operator.chmod(0o600)
    done = subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data",
                           str(tmp_path / "data"), "--league", str(path), "--token-file", str(operator)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"error: {path}: {line}"
    assert not (tmp_path / "data" / "league.db").exists()
