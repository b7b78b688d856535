"""The rest of issue 12: one move numbering everywhere (per game, from 1), `arena watch --moves` numbering moves
per game, `arena status` standings as the local ones, fractional points kept by the server, unreadable record lines
logged and named by GetGame, a tournament failed by a write error resumed by a restarted server, and the entrants
given up on kept and shown by the server.

Real bot processes over real gRPC, real server processes (tests/test_server.py's ``Server``), real subprocesses of
the CLI; no sleeps (output lines, watch streams and files are waited on with deadlines)."""

from __future__ import annotations

import json
import re
import resource
import shutil
import signal
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import grpc
import pytest

from arena.check_bot import _describe
from arena.players.faults import Fault, FaultKind
from arena.protocol import arena_pb2 as apb
from arena.records.jsonform import index_of
from arena.records.schema import RecordFormatError, parse_record
from arena.records.store import ReadReport, iter_records
from arena.cli.server import WatchView, standings_table
from arena.server.events import entrant_json, standings_pb
from arena.tournament.runner import outcome_of
from arena.tournament.standings import TIE_RULE, GameOutcome, Standings, row_cells
from support.processes import bot_processes
from support.servers import (
    BackgroundWatch, FINISHED, Server, bot_entry, index, named, random_bot, records, registry, submit, tournament,
    watch,
)
from support.tables import rendered

ROOT = Path(__file__).resolve().parents[1]
BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


# --- item 1: moves numbered per game from 1 wherever people read them ---------------------------------------------


def test_a_fault_and_a_check_bot_line_show_the_recorded_move_plus_one() -> None:
    fault = Fault.make(FaultKind.TIMEOUT, 1, 4, allowed_ms=250)
    assert fault.move_number == 4, "the stored number keeps counting from 0"
    assert str(fault) == "seat 1, move 5: timeout: no reply within 250 ms"
    assert _describe(fault) == "timeout at move 5: no reply within 250 ms"


def test_arena_play_numbers_the_faulting_move_after_the_moves_it_printed() -> None:
    """The bot exits after 3 decisions; the moves printed before the fault are the game's moves 1 to N, so the
    fault is at move N + 1."""
    out = arena("play", "--variant", "block", "--seed", "3", f"{sys.executable} {BAD_BOT} --mode exit_mid",
                "builtin:random")
    assert out.returncode == 1, out.stdout + out.stderr
    played = len(re.findall(r"^  seat \d: ", out.stdout, re.M))
    faults = re.findall(r"^FAULT seat 0, move (\d+): crashed: ", out.stdout, re.M)
    assert played > 3 and faults == [str(played + 1)], out.stdout


# --- items 3 and 4: `arena status` standings read as the local ones, fractional points kept -----------------------


def outcome(index: int, seats: tuple[str, ...], scores: tuple[int, ...], ranking: tuple[int, ...],
            deal_key: str) -> GameOutcome:
    return GameOutcome(index=index, deal_key=deal_key, seats=seats, side_of=tuple(range(len(seats))), scores=scores,
                       ranking=ranking, winner=ranking[0], fault_seats=(), think_ms=(3.0,) * len(seats),
                       decisions=(2,) * len(seats))


TWO_SIDED = [outcome(i, ("ann", "bob") if i % 2 else ("bob", "ann"), (3 + i, 1) if i % 3 else (0, 2 + i),
                     (0, 1) if i % 3 else (1, 0), f"d{i // 2}") for i in range(8)]
"""Two-sided games in deal sets of two: the Elo column with its by-deal interval."""
SHARED_SEATS = [outcome(0, ("ann", "bob", "ann", "cid"), (10, 3, 5, 0), (0, 2, 1, 3), "a"),
                outcome(1, ("cid", "ann", "bob", "bob"), (4, 9, 1, 6), (1, 3, 0, 2), "b")]
"""Four sides, two of them held by one entrant: OpenSkill, and points that are means of several sides."""


@pytest.mark.parametrize("games, group_size", [(TWO_SIDED, 2), (SHARED_SEATS, 1)], ids=["elo", "openskill"])
def test_the_server_standings_print_as_the_local_table(games: list[GameOutcome], group_size: int) -> None:
    """The same games through standings.json and the Standings message print the same table as `arena run`:
    header, cells (points as 14.5, never 14), caption with the tie-break rule."""
    local = Standings(group_size=group_size)
    for game in games:
        local.add(game)
    served = standings_table(standings_pb(local.to_json()), "the title")
    assert rendered(served) == rendered(local.table("the title"))
    assert TIE_RULE in rendered(served)


def test_fractional_points_reach_the_message_exactly_and_rounded() -> None:
    standings = Standings()
    for game in SHARED_SEATS:
        standings.add(game)
    ann = next(e for e in standings_pb(standings.to_json()).entrants if e.name == "ann")
    assert (ann.scored_exact, ann.scored) == (7.5 + 9, 16), "ann scored (10 + 5) / 2 and 9"
    assert ann.conceded == pytest.approx((3 + 0) / 2 + (4 + 1 + 6) / 3)


def test_the_elo_cell_of_the_message_is_the_local_one() -> None:
    message = apb.EntrantStanding(score=0.6, elo=70.4, elo_low_by_deal=-12.6, elo_high_by_deal=160.2,
                                  elo_low=1.0, elo_high=2.0)
    def rating_text(e: apb.EntrantStanding) -> str:
        return row_cells(1, entrant_json(e), "elo").rating

    assert rating_text(message) == "+70 [-13, +160]"
    assert rating_text(apb.EntrantStanding(score=1.0)) == "+∞"
    assert rating_text(apb.EntrantStanding()) == "-"


# --- a real server: watch numbering (item 2), status (item 3), entrants given up on (item 7) ------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose registry has alpha and beta (random bots) and dying: a bad bot that crashes after 3 decisions,
    run from a folder of its own so a test can delete its program (its restarts then fail)."""
    folder = tmp_path_factory.mktemp("hardening-server")
    dying = folder / "dying"
    dying.mkdir()
    for name in ("bad_bot.py", "testbot.py"):
        shutil.copy(ROOT / "tests" / "bots" / name, dying / name)
    tag = uuid.uuid4().hex
    bots = (random_bot("alpha", tag) + random_bot("beta", tag)
            + bot_entry("dying", str(dying / "bad_bot.py"), "--mode", "exit_mid", "--tag", tag))
    running = Server(folder / "data", *registry(folder, bots))
    running.dying = dying / "bad_bot.py"
    yield running
    running.stop()


def lines_of_watch(events: list[apb.TournamentEvent]) -> list[str]:
    """What `arena watch --moves` prints for these events (its WatchView, its lines captured)."""
    lines: list[str] = []
    view = WatchView(moves=True)
    view.out = lines.append  # type: ignore[method-assign]
    for ev in events:
        view.show(ev)
    return lines


def move_rounds(record: dict) -> list[int]:
    """The round (from 1) of each of the game's moves, in order."""
    return [r + 1 for r, rnd in enumerate(record["rounds"]) for _ in rnd.get("moves", ())]


def test_watch_numbers_moves_per_game_from_1_and_status_prints_the_local_table(server: Server) -> None:
    """Matches of several rounds: every game watched from its start shows moves 1 to N with each move's round, N
    being the record's move count; a game joined late shows the end of that sequence. `arena status ID` then prints
    the table `arena run` would, from the same records."""
    stub = server.stub()
    text = tournament(games=2, concurrency=1).replace("target = 1", "target = 40")
    info = submit(stub, text)
    events = watch(stub, info.id, moves=True)
    assert events[-1].finished.tournament.state == FINISHED, events[-1]
    stored = {index(r): r for r in records(server.data / "tournaments" / info.id)}
    assert sorted(stored) == [0, 1, 2, 3]
    shown: dict[int, list[tuple[int, int]]] = {}
    for line in lines_of_watch(events):
        move = re.match(r"  game (\d+) round (\d+) move (\d+): seat \d \((alpha|beta)\): ", line)
        if move:
            game, round_number, number = map(int, move.groups()[:3])
            shown.setdefault(game, []).append((number, round_number))
    started = {e.game_started.index for e in events if e.HasField("game_started")}
    assert {1, 2, 3} <= started, "concurrency 1: games 1 to 3 start after the watch"
    assert any(len(stored[g]["rounds"]) > 1 for g in started), "some match has several rounds"
    for game, record in stored.items():
        rounds = move_rounds(record)
        expected = list(zip(range(1, len(rounds) + 1), rounds))
        if game in started:
            assert shown.get(game) == expected, (game, lines_of_watch(events)[:8])
        else:
            assert shown.get(game, []) == expected[len(expected) - len(shown.get(game, [])):], game

    status = server.cli("status", info.id)
    assert status.returncode == 0, status.stderr
    local = Standings(group_size=2)
    for record in stored.values():
        local.add(outcome_of(record))
    assert rendered(local.table("standings after 4 games")) in status.stdout, status.stdout


def test_the_server_keeps_and_shows_the_entrants_given_up_on(server: Server) -> None:
    """dying passes the check before the first game; its program is deleted after a game is recorded, so its
    restarts fail until its pool gives up on it: the tournament finishes with forfeits, and the server says so in
    the watch, in status, in server.json and in its log."""
    stub = server.stub()
    info = submit(stub, tournament(games=6, concurrency=1, bots=named("dying", "alpha")))
    live = BackgroundWatch(stub, info.id)
    live.wait_games(1, 120)
    server.dying.unlink()
    live.join(180)
    final = live.events[-1].finished.tournament
    assert final.state == FINISHED and final.games_done == 12, final
    assert len(final.given_up) == 1, final
    line = final.given_up[0]
    assert line.startswith("bot 'dying' failed to start 3 times in a row and was given up: its later games were "
                           "forfeits; last failure: the bot did not start: "), line
    server.wait_line(rf"^arena: entrant given up \(id={info.id} detail=bot 'dying' failed to start 3 times ", 30)
    status = server.cli("status", info.id)
    assert status.returncode == 0, status.stderr
    assert f"warning: {line}" in status.stdout.splitlines()
    saved = json.loads((server.data / "tournaments" / info.id / "server.json").read_text())
    assert saved["given_up"] == [line]
    watched = server.cli("watch", info.id)
    assert watched.stdout.splitlines()[-1] == f"warning: {line}"


# --- items 5 and 6: a write error leaves the tournament resumable; unreadable lines are logged and named -----------


def corrupt_in_place(path: Path) -> tuple[int, int, str]:
    """Overwrite the first complete line that names its game in its first bytes with garbage of the same length
    (the file keeps its size and inode, as a server reading it expects); (line number, game, problem)."""
    lines = path.read_bytes().split(b"\n")
    offset = 0
    for number, line in enumerate(lines[:-1], 1):
        prefix = re.match(rb'\{"recordVersion":1,"index":"(\d+)",', line)
        if prefix:
            bad = prefix.group(0) + b"#" * (len(line) - len(prefix.group(0)))
            with open(path, "r+b") as f:
                f.seek(offset)
                f.write(bad)
            with pytest.raises(RecordFormatError) as problem:
                parse_record(bad)
            return number, int(prefix.group(1)), str(problem.value)
        offset += len(line) + 1
    raise AssertionError(f"no line of {path} names its game")


def fail_by_a_file_size_limit(server: Server, limit: int) -> tuple[Any, apb.TournamentInfo, apb.TournamentInfo]:
    """Limit the running server's files to ``limit`` bytes (RLIMIT_FSIZE: its writes get EFBIG, as on a full disk),
    submit 40 games and watch them until the tournament ends FAILED and resumable: (stub, submitted, failed)."""
    resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, (limit, limit))
    stub = server.stub()
    info = submit(stub, tournament(games=20, concurrency=2))
    failed = watch(stub, info.id)[-1].finished.tournament
    assert failed.state == apb.TOURNAMENT_STATE_FAILED and failed.resumable, failed
    return stub, info, failed


def test_a_write_error_fails_resumably_and_a_restart_resumes_with_every_game_once(tmp_path: Path) -> None:
    """The server's files may not grow past 30,000 bytes (RLIMIT_FSIZE, set on the running server: its writes get
    EFBIG, as on a full disk): the tournament ends FAILED, resumable, saying what is safe. A line then broken by
    hand: GetGame on its game names the line. The restarted server (no limit) logs the broken line, resumes, and
    finishes with every game recorded exactly once, the safe lines kept as they were."""
    tag = uuid.uuid4().hex
    data = tmp_path / "data"
    bots = registry(tmp_path, random_bot("alpha", tag) + random_bot("beta", tag))
    first = Server(data, *bots)
    try:
        stub, info, failed = fail_by_a_file_size_limit(first, 30_000)
        folder = data / "tournaments" / info.id
        kept = (folder / "games.jsonl").read_bytes()
        safe = kept.count(b"\n")
        assert 0 < safe < 40 and len(kept) == 30_000
        assert failed.error == (f"cannot write {folder}/games.jsonl: File too large; {safe} of 40 games are recorded "
                                f"and safe in {folder} (standings.json holds their standings); raise the file size "
                                f"limit (ulimit -f), then restart the server: it resumes this tournament")
        status = first.cli("status", info.id)
        assert "resumable: its recorded games are safe; the server resumes it at its next start" in status.stdout

        line, game, problem = corrupt_in_place(folder / "games.jsonl")
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetGame(apb.GetGameRequest(id=info.id, index=game), timeout=30)
        assert refused.value.code() == grpc.StatusCode.DATA_LOSS
        assert refused.value.details() == (f"game {game} of tournament {info.id}: its record, line {line} of "
                                           f"games.jsonl, is unreadable: {problem}")
        first.stop()
    finally:
        first.stop(signal.SIGKILL)
    before = (folder / "games.jsonl").read_bytes()
    complete = before[:before.rfind(b"\n") + 1]

    again = Server(data, *bots)
    try:
        again.wait_line(rf"^arena: record line skipped \(id={info.id} file=games.jsonl line={line} "
                        rf"problem={re.escape(problem)}\)$", 30)
        stub = again.stub()
        finished = watch(stub, info.id)[-1].finished.tournament
        assert finished.state == FINISHED and not finished.resumable and finished.error == "", finished
        assert finished.games_done == 40
        after = (folder / "games.jsonl").read_bytes()
        assert after.startswith(complete), "the safe lines (and the broken one) are kept as they were"
        report = ReadReport()
        indices = Counter(index_of(record) for record in iter_records(folder / "games.jsonl", report))
        assert indices == Counter(range(40)), "every game exactly once, the broken line's game played again"
        assert [number for number, _ in report.bad_lines] == [line]
        assert stub.GetGame(apb.GetGameRequest(id=info.id, index=game), timeout=30).record.index == game
        saved = json.loads((folder / "server.json").read_text())
        assert (saved["state"], saved["resumable"]) == ("finished", False)
    finally:
        again.stop()
    assert not bot_processes(tag)


def test_a_tournament_failed_by_a_write_error_can_be_cancelled_and_is_then_not_resumed(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    data = tmp_path / "data"
    bots = registry(tmp_path, random_bot("alpha", tag) + random_bot("beta", tag))
    first = Server(data, *bots)
    try:
        stub, info, failed = fail_by_a_file_size_limit(first, 20_000)
        cancelled = stub.CancelTournament(apb.CancelTournamentRequest(id=info.id), timeout=30).tournament
        assert cancelled.state == apb.TOURNAMENT_STATE_CANCELLED and not cancelled.resumable
        assert cancelled.error == f"cancelled by request after it failed: {failed.error}"
        with pytest.raises(grpc.RpcError) as again:
            stub.CancelTournament(apb.CancelTournamentRequest(id=info.id), timeout=30)
        assert again.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        first.stop()
    finally:
        first.stop(signal.SIGKILL)
    games = (data / "tournaments" / info.id / "games.jsonl").read_bytes()
    restarted = Server(data, *bots)
    try:
        stub = restarted.stub()
        state = stub.GetStandings(apb.GetStandingsRequest(id=info.id), timeout=30).tournament
        assert state.state == apb.TOURNAMENT_STATE_CANCELLED and not state.resumable
        assert (data / "tournaments" / info.id / "games.jsonl").read_bytes() == games, "not resumed"
    finally:
        restarted.stop()
    assert not bot_processes(tag)
