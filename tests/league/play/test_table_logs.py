"""A version's bot logs at a ladder table (arena/league/play/table_logs.py, ``GetTableLog``, ``arena league table-log``):
its author reads what its bot wrote at a table that ended, and nothing else. In-process with real bot processes
(the ladder playing a table that waits on a stuck bot: refused while it plays, given once it ended), and through a
real ``arena serve --league`` with the CLI (the status codes, the one ``error:`` line, no escape sequence reaching
the terminal)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import trio

from arena.league.authors import create_author, retire_version
from arena.league.rules.permissions import OPERATOR, Caller
from arena.league.rules.lifecycle import PLAYING
from arena.league.storage.db import AsyncDatabase, sqlite_url
from arena.league.rules.errors import NotFound, PermissionDenied, StateError
from arena.league.play.ladder import Ladder
from arena.league.intake.pipeline import BuiltBots
from arena.league.play.table_logs import table_log
from arena.protocol import league_pb2 as lpb
from support.ladder import PATIENT, STUCK, Log, asked, setup, until_table_done
from support.league import LADDER_LEAGUE, bearer, bot_folder, league_in
from support.paths import ROOT
from support.waiting import wait_for

CHATTY = """import random
import sys

from arena.botkit import serve

rng = random.Random()


def say():
    print("CHATTY SAYS HELLO \\x1b[2J\\x1b]0;pwned\\x07 and goes on", file=sys.stderr, flush=True)


def choose(request):
    say()
    return rng.randrange(len(request.observation.legal_actions))


if __name__ == "__main__":
    say()
    serve(choose, name="chatty")
"""
"""A random bot that writes a known line to its log as it starts and at every decision, with escape sequences (clear
the screen, retitle the terminal) that must never reach an author's terminal raw."""
MARKER = "CHATTY SAYS HELLO"
LADDER_S = 600
"""Generous: the pipeline builds and checks two bots in their sandbox, then the ladder plays a table."""


def author_of(sync, version_id: int) -> Caller:
    """The caller who is the version's author (tests/support/ladder.py makes an author per bot)."""
    return Caller(sync.author_by_id(sync.version(version_id).author_id))


async def test_a_log_goes_to_its_author_only_once_the_table_ended(tmp_path: Path) -> None:
    bots = {"chatty": CHATTY, "stuck": STUCK}
    sync, served, work, ids = setup(sqlite_url(tmp_path / "data"), tmp_path, bots, PATIENT, concurrency=1,
                                    coverage=1, placement=1)
    lurker = create_author(sync, "lurker")[0]
    unseated = sync.add_version(sync.add_bot(served.league_id, lurker.id, "idle").id, "ab" * 32)[0].id
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    folder = tmp_path / "league" / "tables" / "1"
    chatty, stuck = ids["chatty"], ids["stuck"]
    alice, bob = author_of(sync, chatty), author_of(sync, stuck)

    def read(caller: Caller, table_id: int, version_id: int):
        return table_log(sync, caller, table_id, version_id, ladder.table_folder)

    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        # The table's first rotation waits on the stuck bot; its second waits for the first (the run's phases).
        await trio.to_thread.run_sync(wait_for, asked(folder, 1), 300, "the first game to wait on the stuck bot")
        assert sync.table(1).state == PLAYING
        with pytest.raises(StateError, match="table 1 is playing: its logs are given once it has ended"):
            read(bob, 1, stuck)  # its own version, its own log: not while the deal set is being played
        ladder.withdraw(stuck, "retired")  # as RetireVersion does: the table ends now, its games forfeit
        retire_version(sync, OPERATOR, stuck)
        await until_table_done(ladder, sync, 1)
        nursery.cancel_scope.cancel()

    mine = read(alice, 1, chatty)
    assert mine.version == "chatty-v1" and mine.table.id == 1
    assert [log.name for log in mine.logs] == ["chatty-v1.0.log", "chatty-v1.1.log"]  # one per rotation
    assert any(MARKER.encode() in log.tail for log in mine.logs) and not any(log.truncated for log in mine.logs)
    assert all(b"ASKED" not in log.tail for log in mine.logs)  # never another version's log
    theirs = read(bob, 1, stuck)
    assert theirs.logs and all(b"ASKED" in log.tail and MARKER.encode() not in log.tail for log in theirs.logs)
    assert read(OPERATOR, 1, chatty).logs == mine.logs  # the operator reads any version's
    with pytest.raises(PermissionDenied, match=f"author 'author-stuck' may not read the table logs of version "
                                               f"{chatty}: it is another author's"):
        read(bob, 1, chatty)
    with pytest.raises(PermissionDenied):
        read(bob, 99, chatty)  # another author's version tells nothing, not even that the table is unknown
    with pytest.raises(NotFound, match="no table number 99"):
        read(alice, 99, chatty)
    with pytest.raises(NotFound, match=f"version {unseated} did not sit at table 1"):
        read(Caller(lurker), 1, unseated)
    cut = table_log(sync, alice, 1, chatty, ladder.table_folder, budget=64)
    assert all(log.truncated and len(log.tail) == 32 and log.size > 32 for log in cut.logs)  # the budget shared
    assert [log.tail for log in cut.logs] == [log.tail[-32:] for log in mine.logs]  # each log's tail
    await database.close()


def test_an_author_reads_its_log_by_cli_with_no_escape_codes(tmp_path: Path) -> None:
    league = league_in(tmp_path, LADDER_LEAGUE)
    try:
        league.add_author("alice")
        league.add_author("bob")
        league.upload("alice", bot_folder(tmp_path / "chatty-bot", CHATTY), "chatty")
        league.upload("bob", bot_folder(tmp_path / "rand-bot", ROOT / "bots" / "python" /
                                        "random_bot.py"), "rand")
        chatty = league.settled(league.token("alice"), "chatty")
        rand = league.settled(league.token("bob"), "rand")
        assert (chatty.state, rand.state) == (lpb.VERSION_STATE_READY, lpb.VERSION_STATE_READY)
        stub, operator = league.stub(), bearer(league.operator.read_text().strip())
        done: list[lpb.LadderTable] = []

        def a_table_done() -> bool:
            queue = stub.GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30, metadata=operator)
            done[:] = [t for t in queue.recent if t.state == lpb.TABLE_STATE_DONE]
            return bool(done)

        wait_for(a_table_done, LADDER_S, "the ladder to finish a table")
        table = str(done[0].id)

        shown = league.league("table-log", table, "--version", str(chatty.id), token=league.tokens["alice"])
        assert shown.returncode == 0, shown.stderr
        assert MARKER in shown.stdout and "[2J" in shown.stdout and "--- chatty-v1.0.log ---" in shown.stdout
        assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout  # the ESC and BEL never reach a terminal
        assert shown.stderr.startswith(f"table {table}: ") and "(done; " in shown.stderr
        assert shown.stderr.endswith("; the logs of 'chatty-v1':\n")

        refused = league.league("table-log", table, "--version", str(chatty.id), token=league.tokens["bob"])
        assert refused.returncode == 1 and MARKER not in refused.stdout + refused.stderr
        assert refused.stderr == (f"error: permission denied: author 'bob' may not read the table logs of version "
                                  f"{chatty.id}: it is another author's\n")

        def status(metadata, table_id: int, version_id: int) -> grpc.StatusCode:
            with pytest.raises(grpc.RpcError) as error:
                stub.GetTableLog(lpb.GetTableLogRequest(table_id=table_id, version_id=version_id), timeout=30,
                                 metadata=metadata)
            return error.value.code()

        assert status(bearer(league.token("bob")), int(table), chatty.id) == grpc.StatusCode.PERMISSION_DENIED
        assert status(bearer(league.token("alice")), 10_000, chatty.id) == grpc.StatusCode.NOT_FOUND
        assert status((), int(table), chatty.id) == grpc.StatusCode.UNAUTHENTICATED
        given = stub.GetTableLog(lpb.GetTableLogRequest(table_id=int(table), version_id=chatty.id), timeout=30,
                                 metadata=operator)
        assert given.version == "chatty-v1" and any(MARKER.encode() in log.tail for log in given.logs)
        theirs = stub.GetTableLog(lpb.GetTableLogRequest(table_id=int(table), version_id=rand.id), timeout=30,
                                  metadata=bearer(league.token("bob")))
        assert theirs.logs and not any(MARKER.encode() in log.tail for log in theirs.logs)
    finally:
        league.server.stop()
