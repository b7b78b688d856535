"""The ladder inside a real ``arena serve --league``: versions uploaded with the CLI and made ready by the pipeline
play tables continuously (real bot processes in their sandbox, real gRPC, SQLite and PostgreSQL); the standings,
queue and watch verbs show them; a ``kill -9`` of the server mid-table loses and doubles nothing.
"""

from __future__ import annotations

import secrets
import signal
from pathlib import Path

import grpc
import pytest

from arena.league.rules.lifecycle import DONE, PLAYING
from arena.league.rules.model import ONLINE
from arena.league.storage.db import Database, open_database, sqlite_url
from arena.league.play.ladder import RECORD
from arena.protocol import league_pb2 as lpb
from arena.protocol import league_pb2_grpc as lpb_grpc
from arena.records.run_folder import COMPACT_RECORDS, FORMAT_VARIABLE, RECORDS, RunFolder
from arena.tournament.likelihood import ORDER_DIGITS
from support.league import (League, bearer, bot_folder, check_once, database_of, mid_table, private_file,
                            restarted, start_league, tables_folder, verified)
from support.ladder import QUICK_SEARCH
from support.paths import ROOT
from support.waiting import wait_for


LADDER_S = 600
"""Generous: every table starts two bots in their sandbox and plays two games, on a busy 2-core machine."""
LEAGUE = """name = "test"
variant = "block"
[options]
target = {target}
[time]
move_ms = 2000
startup_ms = 30000
[ladder]
concurrency = {concurrency}
coverage = {coverage}
placement = 1
"""
EXAMPLES = ROOT / "bots" / "python"
STRENGTHS = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py",
             "search": QUICK_SEARCH, "stdio": ROOT / "bots" / "stdio"}
"""Four ready versions of different strength: the Python kit's random and greedy examples, a quick search bot and the
stdio kit's (random, over JSON lines)."""


def start(root: Path, database: str | None, **settings: int) -> League:
    operator = private_file(root / "operator.token", secrets.token_urlsafe(32))
    league_file = root / "league.toml"
    league_file.write_text(LEAGUE.format(**{"target": 1, "concurrency": 2, "coverage": 2, **settings}))
    server = start_league(root / "data", operator, league_file, database)
    return League(server, root, operator, {})


def uploaded(league: League, names: list[str]) -> None:
    """Each bot by an author of its own, from its folder, through the CLI and the pipeline to ready."""
    for name in names:
        league.add_author(f"author-{name}")
        source = STRENGTHS[name]
        folder = source if source.is_dir() else bot_folder(league.root / f"{name}-bot", source)
        league.upload(f"author-{name}", folder, name)
    for name in names:
        assert league.settled(league.token(f"author-{name}"), name).state == lpb.VERSION_STATE_READY


def stub(league: League) -> lpb_grpc.LeagueServiceStub:
    return lpb_grpc.LeagueServiceStub(grpc.insecure_channel(league.server.address))


def open_db(league: League, database: str | None) -> Database:
    return open_database(database or sqlite_url(league.root / "data"))


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> str | None:
    return database_of(request)


def test_a_league_covers_every_version_with_verified_records(
        tmp_path: Path, database: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)  # the league's default records (compact), not the suite's readable ones
    league = start(tmp_path, database, coverage=2)
    try:
        uploaded(league, list(STRENGTHS))
        db = open_db(league, database)
        league_id = db.league("test").id
        ids = {v.id for _, v in db.active_versions(league_id)}
        assert len(ids) == 4

        def covered() -> bool:  # every version rated on at least the coverage target of deal sets
            rated = {r.version_id: r.games for r in db.ratings(league_id, ONLINE)}
            return set(rated) == ids and min(rated.values()) >= 2

        wait_for(covered, LADDER_S, "every version to play its coverage of 2 deal sets")
        operator = bearer(league.operator.read_text().strip())
        queue = stub(league).GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30, metadata=operator)
        assert queue.concurrency == 2 and len(queue.next) == 2 and queue.recent
        assert all(t.reason for t in (*queue.playing, *queue.next, *queue.recent))
        assert all(len(t.versions) == 2 and t.versions[0] != t.versions[1] for t in queue.next)
        done_recent = [t for t in queue.recent if t.state == lpb.TABLE_STATE_DONE]
        assert done_recent and all(sum(t.points) == 2.0 for t in done_recent)  # a deal set: two games' points

        listed: list = []

        def fitted() -> bool:  # the leaderboard's refit (on its worker thread) holds every version
            listed[:] = [stub(league).GetLadderStandings(lpb.GetLadderStandingsRequest(), timeout=30,
                                                         metadata=bearer(league.token("author-greedy")))]
            return all(row.fitted for row in listed[0].standings)

        wait_for(fitted, LADDER_S, "the leaderboard's fit to hold every version")
        board = listed[0]
        assert board.rating.startswith("maximum likelihood (Plackett-Luce)") and board.rank_rule.startswith("rank a")
        assert 0 < board.deal_sets_fitted <= board.deal_sets_rated
        assert {row.bot for row in board.standings} == set(STRENGTHS)
        assert [row.rank for row in board.standings] == [1, 2, 3, 4]
        assert all(row.deal_sets >= 2 and row.games == 2 * row.deal_sets for row in board.standings)
        assert all(row.rating_low < row.rating < row.rating_high for row in board.standings)
        assert all(row.rank_best <= row.rank <= row.rank_worst and row.sigma > 0 and row.online_mu
                   for row in board.standings)
        names = {f"{row.bot}-v{row.number}" for row in board.standings}
        assert all(set(row.tied_with) <= names - {f"{row.bot}-v{row.number}"} for row in board.standings)
        shown_order = [round(row.rating, ORDER_DIGITS) for row in board.standings]  # as the board orders them
        assert shown_order == sorted(shown_order, reverse=True)
        shown = league.league("standings", token=league.tokens["author-rand"])  # public to any author
        assert shown.returncode == 0, shown.stderr
        said = " ".join(shown.stdout.split())
        for name in STRENGTHS:
            assert f"author-{name}" in shown.stdout
        assert "95% intervals; fit of " in said and "online mu" in said and said.count(" to ") >= 4
        assert ("not yet told apart from" in said) == any(row.tied_with for row in board.standings)

        queued = league.league("queue", token=league.tokens["author-search"])
        assert queued.returncode == 0, queued.stderr
        assert "of 2 tables playing" in queued.stdout and "next (if chosen now):" in queued.stdout
        assert "placement" in queued.stdout or "coverage: " in queued.stdout or "needs games: " in queued.stdout

        watched = league.league("watch", "--tables", "1", token=league.tokens["author-rand"])
        assert watched.returncode == 0, watched.stderr
        assert watched.stdout.startswith("table ") and " vs " in watched.stdout
        assert "(done; " in watched.stdout and ": online " in watched.stdout and "leaderboard" in watched.stdout

        done = check_once(db, league_id)
        assert {v for t in done for v in t.versions} == ids
        for table in done[:3]:
            files = {path.name for path in (tables_folder(league) / str(table.id)).iterdir()}
            assert COMPACT_RECORDS in files and RECORDS not in files
            verified(tables_folder(league) / str(table.id), 2)
        with pytest.raises(grpc.RpcError) as refused:
            stub(league).GetLadderStandings(lpb.GetLadderStandingsRequest(), timeout=30,
                                            metadata=bearer("not-a-token"))
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        db.close()
    finally:
        league.server.stop()


def test_a_kill_loses_and_doubles_nothing_sigterm_stops(tmp_path: Path, database: str | None) -> None:
    league = start(tmp_path, database, target=60, concurrency=1, coverage=50)
    uploaded(league, ["rand", "greedy"])
    db = open_db(league, database)
    league_id = db.league("test").id

    try:
        wait_for(lambda: mid_table(db, league_id, tables_folder(league)), LADDER_S,
                 "a table with one of its games recorded")
    finally:
        league.server.stop(signal.SIGKILL)
    cut = db.tables_in(league_id, [PLAYING])
    assert len(cut) == 1
    before = len(db.tables_in(league_id, [DONE]))
    check_once(db, league_id)

    again = restarted(league, database)
    try:
        wait_for(lambda: db.table(cut[0].id).state == DONE and len(db.tables_in(league_id, [DONE])) >= before + 2,
                 LADDER_S, "the cut table resumed and rated, and the ladder going on")
        assert again.server.stop(signal.SIGTERM) >= 0 and again.server.process.returncode == 0
    finally:
        again.server.stop(signal.SIGKILL)
    assert "arena: stopped" in "".join(again.server.output)
    done = check_once(db, league_id)
    records = RunFolder(tables_folder(league) / str(cut[0].id)).records.read_text().splitlines()
    assert len(records) == 2  # the game recorded before the kill kept, the other played once
    assert [key for key, _ in db.games_of_record(league_id, RECORD.format(id=cut[0].id))] == ["0", "1"]
    for table in (cut[0], done[-1]):
        verified(tables_folder(league) / str(table.id), 2)
    db.close()
