"""The referee with real bot processes over real gRPC (Unix sockets): good bots play to the end, and every way a
bot can fail becomes the right recorded fault while the match ends, the arena goes on, and no process is left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from arena.players import RandomPlayer
from arena.players.base import Decision, DecisionRequest, LocalPlayer
from arena.players.faults import Fault, FaultKind
from arena.players.process import BotProcess, BotSpec
from arena.protocol.convert import act_request_pb
from arena.referee import TimeControl, play_match
from arena.rules import DRAW, Kind, new_game
from support.paths import ROOT
from support.processes import bot_processes

BAD_BOT = str(ROOT / "tests" / "bots" / "bad_bot.py")
RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")


def bad(mode: str, **env: str) -> BotSpec:
    return BotSpec(name=f"bad-{mode}", command=(sys.executable, BAD_BOT, "--mode", mode), env=env)


def tagged(spec: BotSpec, tag: str, **changes: object) -> BotSpec:
    """``spec`` with ``--tag TAG`` on its command line, by which :func:`bot_processes` finds its processes."""
    return replace(spec, command=(*spec.command, "--tag", tag), **changes)


def marks(log: Path) -> list[str]:
    """What the bad bot said it saw (``MARK <what>`` lines of its log)."""
    return [line.split(" ", 1)[1] for line in log.read_text().splitlines() if line.startswith("MARK ")]


def assert_gone(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def faulty_match(mode: str, tmp_path: Path, move_ms: int = 2000, **env: str):
    """Seat 0 is the bad bot, seat 1 the built-in random player; returns the record and the bot's pid."""
    process = BotProcess(bad(mode, **env), tmp_path, startup_s=15)
    pid = None
    try:
        bot = await process.ensure_running()
        pid = process._process.pid  # type: ignore[union-attr]
        game = new_game("draw", 2)
        record = await play_match(game, [bot, LocalPlayer(RandomPlayer(1))], seed=5, match_id=f"m-{mode}",
                                  time_control=TimeControl(move_ms=move_ms))
    finally:
        await process.stop()
    assert pid is not None
    assert_gone(pid)
    return record


@pytest.mark.parametrize(
    "mode, kind, text",
    [
        ("illegal_index", FaultKind.ILLEGAL_ACTION, "chose index 999 of"),
        ("illegal_action", FaultKind.ILLEGAL_ACTION, "chose "),
        ("garbage", FaultKind.MALFORMED_REPLY, "the reply is not an ActReply"),
        ("empty", FaultKind.MALFORMED_REPLY, "the reply sets neither index nor action"),
        ("error", FaultKind.BOT_ERROR, "UNKNOWN"),
        ("exit_mid", FaultKind.CRASHED, "unreachable or crashed"),
    ],
)
async def test_a_misbehaving_bot_forfeits_with_a_fault(mode, kind, text, tmp_path: Path) -> None:
    record = await faulty_match(mode, tmp_path)
    assert len(record.faults) == 1
    fault = record.faults[0]
    assert fault.kind is kind and fault.seat == 0
    assert text in fault.message
    assert record.result is not None and record.result.winner == 1 and record.result.ranking == (1, 0)
    if mode == "exit_mid":
        assert fault.move_number >= 3


async def test_a_hanging_bot_times_out_and_sees_cancelled(tmp_path: Path) -> None:
    with trio.fail_after(30):
        record = await faulty_match("hang", tmp_path, move_ms=300)
    fault = record.faults[0]
    assert fault.kind is FaultKind.TIMEOUT and fault.seat == 0
    assert "no reply within 550 ms" in fault.message
    assert marks(tmp_path / "bad-hang.log") == ["cancelled"]


@pytest.mark.parametrize("first_move_ms", [0, 3000])
async def test_a_first_decision_allowance_lets_a_bot_warm_up(first_move_ms: int, tmp_path: Path) -> None:
    process = BotProcess(bad("slow_first"), tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=5, match_id="warm",
                                  time_control=TimeControl(move_ms=300, first_move_ms=first_move_ms))
    finally:
        await process.stop()
    if first_move_ms:
        assert record.faults == []
        told = marks(process.log_path)
        assert told[0] == "move_ms 3000" and set(told[1:]) == {"move_ms 300"}  # the bot is told its time
    else:
        assert [(f.kind, f.seat) for f in record.faults] == [(FaultKind.TIMEOUT, 0)]
        assert "no reply within 550 ms" in record.faults[0].message


@pytest.mark.parametrize("grace_ms, timeout", [(20, True), (5000, False)], ids=["small-grace", "large-grace"])
async def test_a_reply_within_move_plus_grace_is_in_time(grace_ms: int, timeout: bool, tmp_path: Path) -> None:
    """The bot takes 1 s for its first decision against a move time of 100 ms: after a grace of 20 ms (deadline
    120 ms) it is a timeout; within a grace of 5 s it is in time (the default 250 ms would have timed it out). Both
    margins are seconds wide, so a busy machine cannot turn one case into the other."""
    process = BotProcess(bad("slow_first"), tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        with trio.fail_after(60):
            record = await play_match(new_game("draw", 2, {"target": 1}), [bot, LocalPlayer(RandomPlayer(1))],
                                      seed=5, match_id="grace", time_control=TimeControl(move_ms=100,
                                                                                         grace_ms=grace_ms))
    finally:
        await process.stop()
    if timeout:
        faults = [(f.kind, f.seat, f.message) for f in record.faults]
        assert faults == [(FaultKind.TIMEOUT, 0, "no reply within 120 ms")]
        assert not any(m.seat == 0 and not m.forced for r in record.rounds for m in r.moves)
    else:
        assert record.faults == [] and record.result is not None
        first = next(m for r in record.rounds for m in r.moves if m.seat == 0 and not m.forced)
        assert first.think_ms >= 1000, "the slow first reply came after its move time and still counted"


class Clocked(LocalPlayer):
    """A random player that says each decision took ``think_ms`` (so it spends the bank) and keeps every request it
    was asked with the timeout the referee gave it."""

    def __init__(self, seed: int, think_ms: float) -> None:
        super().__init__(RandomPlayer(seed))
        self.think_s = think_ms / 1000
        self.asked: list[tuple[DecisionRequest, float]] = []

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        self.asked.append((request, timeout_s))
        decision = await super().act(request, timeout_s)
        return Decision(decision.action, self.think_s)


@pytest.mark.fast
async def test_each_request_carries_the_referees_deadline() -> None:
    """The deadline a request tells (``deadline_ms``, sent as ``TimeControl.deadline_ms``) is the move time (the
    first decision's allowance included), plus the bank left, plus the grace; it is the timeout the referee gives."""
    players = [Clocked(1, think_ms=70), Clocked(2, think_ms=0)]
    time_control = TimeControl(move_ms=40, bank_ms=500, grace_ms=7, first_move_ms=90)
    await play_match(new_game("draw", 2, {"target": 30}), players, seed=3, match_id="deadline",
                     time_control=time_control)
    for player in players:
        assert len(player.asked) > 3
        requests = [request for request, _ in player.asked]
        assert [r.move_ms for r in requests] == [90] + [40] * (len(requests) - 1)
        for request, timeout_s in player.asked:
            assert request.deadline_ms == request.move_ms + request.bank_ms + 7
            assert timeout_s == request.deadline_ms / 1000
            assert act_request_pb(request).time.deadline_ms == request.deadline_ms
    slow_banks = [request.bank_ms for request, _ in players[0].asked]
    assert slow_banks[:3] == [500, 500, 470], "70 ms against 40: 30 ms of bank a decision (the first had 90)"
    assert slow_banks[-1] < 500 and {r.bank_ms for r, _ in players[1].asked} == {500}


async def test_a_cancelled_game_cancels_the_bots_call(tmp_path: Path) -> None:
    process = BotProcess(bad("hang"), tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        game = new_game("block", 2)
        with trio.move_on_after(1.0) as scope:
            await play_match(game, [bot, LocalPlayer(RandomPlayer(1))], seed=3, match_id="cancel",
                             time_control=TimeControl(move_ms=60_000))
        assert scope.cancelled_caught
        with trio.fail_after(10):
            while not marks(process.log_path):
                await trio.sleep(0.02)
    finally:
        await process.stop()
    assert marks(process.log_path) == ["cancelled"]


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_a_stopped_bot_ends_on_sigterm_in_its_grace(sandbox: bool, tmp_path: Path) -> None:
    """The promise the kits rely on to save their state: stopping is SIGTERM first. Inside a sandbox the signal must
    reach the bot itself: bubblewrap passes none on, and its end kills the sandbox at once."""
    tag = f"sigterm-{uuid.uuid4().hex}"
    process = BotProcess(tagged(bad("mark_sigterm"), tag, sandbox=sandbox), tmp_path, startup_s=15)
    try:
        bot = await process.ensure_running()
        record = await play_match(new_game("block", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=3,
                                  match_id="sigterm", time_control=TimeControl(move_ms=2000))
        assert len(bot_processes(tag)) >= 1
    finally:
        await process.stop()
    assert record.faults == []
    assert marks(process.log_path) == ["SIGTERM"]
    assert bot_processes(tag) == []


async def test_a_sandbox_is_never_signalled_by_its_stale_pid(tmp_path: Path) -> None:
    """The arena is not the parent of a sandbox's first process, so once it has ended its pid may be any process's
    (pids wrap around; a suite's thousands of bots recycle them): stopping must then signal no one by that number.
    Here a decoy, leading a process group of its own, takes the number's place."""
    decoy = subprocess.Popen([sys.executable, "-c", DECOY], stdout=subprocess.PIPE, text=True, start_new_session=True)
    process = BotProcess(bad("good"), tmp_path, startup_s=15)
    try:
        assert decoy.stdout is not None and decoy.stdout.readline() == "ready\n"
        await process.ensure_running()
        containment = process._containment
        os.kill(containment.sandbox_pid, signal.SIGKILL)  # the sandbox ends: the kernel takes the rest with it
        # Until bubblewrap reaps it, the dead process is a zombie that still holds its number (no other process can
        # have it, and its pidfd still answers); bubblewrap reaps it before it exits itself, so wait for that.
        with trio.fail_after(30):
            assert process._process is not None
            await process._process.wait()
        containment.sandbox_pid = decoy.pid  # its number, now another process's
        assert containment.signal_sandbox(signal.SIGTERM) is False
    finally:
        await process.stop()
        alive = decoy.poll() is None
        decoy.kill()
        decoy.wait()
    assert alive, "the decoy was signalled"


DECOY = """import signal, sys, threading
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
print("ready", flush=True)
threading.Event().wait(600)
"""


async def test_a_bot_ignoring_sigterm_is_killed_after_grace(tmp_path: Path) -> None:
    """A bot that will not stop is killed when its grace is over, with everything its sandbox holds."""
    tag = f"no-sigterm-{uuid.uuid4().hex}"
    process = BotProcess(tagged(bad("ignore_sigterm"), tag), tmp_path, startup_s=15)
    try:
        await process.ensure_running()
        assert len(bot_processes(tag)) >= 1
    finally:
        await process.stop()
    assert marks(process.log_path) == ["SIGTERM ignored"]
    assert bot_processes(tag) == []


@pytest.mark.parametrize(
    "mode, startup, text",
    [
        ("never_start", 15, "exited with status 4 before the handshake; its last output: "),
        ("no_listen", 1.5, "no handshake at unix:"),
        ("no_listen", 1.5, "within 1.5 s"),  # the start-up budget, not what was left of it (1.4993 s)
        ("bad_version", 15, "expected protocol version 1, got 99"),
    ],
)
async def test_a_failed_start_is_a_start_fault(mode, startup, text, tmp_path: Path) -> None:
    from arena.players.faults import BotFailure

    process = BotProcess(bad(mode), tmp_path, startup_s=startup)
    with pytest.raises(BotFailure) as failure:
        await process.ensure_running()
    expected = FaultKind.HANDSHAKE_FAILED if mode == "bad_version" else FaultKind.START_FAILED
    assert failure.value.kind is expected
    assert text in str(failure.value)
    if mode == "never_start":
        assert "refusing to start" in str(failure.value)
    assert process._process is None


@pytest.mark.parametrize("mode, text", [
    ("escape_name", "the bot's name 'bad\\x1b[2J\\x1b[Hbot' holds control characters"),
    ("long_name", "the bot's name is 100000 characters long; at most 64"),
])
async def test_a_long_or_unprintable_name_fails_the_handshake(mode: str, text: str, tmp_path: Path) -> None:
    from arena.players.faults import BotFailure

    process = BotProcess(bad(mode), tmp_path, startup_s=15)
    try:
        with pytest.raises(BotFailure) as failure:
            await process.ensure_running()
    finally:
        await process.stop()
    assert failure.value.kind is FaultKind.HANDSHAKE_FAILED
    assert text in str(failure.value)


@pytest.mark.fast
async def test_a_missing_command_is_a_start_fault(tmp_path: Path) -> None:
    from arena.players.faults import BotFailure

    process = BotProcess(BotSpec("nobody", command=("/nonexistent/bot",)), tmp_path)
    with pytest.raises(BotFailure, match="cannot run '/nonexistent/bot'"):
        await process.ensure_running()


async def test_a_crashed_bot_is_restarted_for_the_next_game(tmp_path: Path) -> None:
    process = BotProcess(bad("exit_mid"), tmp_path, startup_s=15)
    try:
        game = new_game("draw", 2)
        for match in range(2):
            bot = await process.ensure_running()
            record = await play_match(game, [bot, LocalPlayer(RandomPlayer(1))], seed=match, match_id=f"r{match}")
            assert record.faults[0].kind is FaultKind.CRASHED
        assert process.starts == 2
        log = process.log_path.read_text()
        assert log.count("--- start") == 2
    finally:
        await process.stop()


async def test_python_bots_play_a_fully_recorded_match(tmp_path: Path) -> None:
    processes = [BotProcess(BotSpec(f"py{i}", command=(sys.executable, RANDOM_BOT)), tmp_path) for i in range(3)]
    try:
        bots = [await p.ensure_running() for p in processes]
        game = new_game("draw", 3)
        record = await play_match(game, bots, seed=9, match_id="full", time_control=TimeControl(move_ms=5000))
    finally:
        for p in processes:
            await p.stop()
    assert record.faults == []
    assert record.result is not None and max(record.result.scores) >= 61
    # The record replays exactly through the rules engine.
    match = game.new_match(9)
    for index, rnd in enumerate(record.rounds):
        assert match.round.deal == rnd.deal
        for move in rnd.moves:
            assert match.turn == move.seat
            match.apply(DRAW if move.action.kind == Kind.DRAW else move.action)
        assert match.round.result() == rnd.result
        if index + 1 < len(record.rounds):
            match.next_round()
    assert match.result() == record.result
    assert all(m.think_ms >= 0 for r in record.rounds for m in r.moves)


@pytest.mark.fast
def test_the_faulter_ranks_last_in_lowest_wins_too() -> None:
    from arena.referee import forfeit_result

    draw = new_game("draw", 3)
    result = forfeit_result(draw, (40, 10, 30), {0}, 2)
    assert (result.winner, result.ranking) == (2, (2, 1, 0))
    mexican = new_game("mexican_train", 3)
    result = forfeit_result(mexican, (40, 10, 30), {1}, 2)
    assert (result.winner, result.ranking) == (2, (2, 0, 1))
    tied = forfeit_result(draw, (30, 0, 30), {1}, 2)
    assert tied.winner is None and tied.ranking == (0, 2, 1)


@pytest.mark.fast
async def test_a_fault_by_seat_2_forfeits_its_team() -> None:
    """Seats 0 and 2 are side 0. Seat 2 times out at its first decision, before anyone scored: side 0 forfeits and
    side 1 wins (taking the seat for the side would name a side the game does not have: nobody would forfeit, and
    the 0-0 match would be a draw). The same for a bot of seat 2 that never started."""
    from arena.referee import forfeit_before_start
    from support.players import fails_after

    game = new_game("la_plaza_teams")
    players = [LocalPlayer(RandomPlayer(s), name=f"p{s}") for s in range(4)]
    players[2] = fails_after("team", 0, name="p2")
    record = await play_match(game, players, seed=4, match_id="team-fault")
    assert [(f.kind, f.seat) for f in record.faults] == [(FaultKind.TIMEOUT, 2)]
    assert record.result is not None and record.result.scores == (0, 0)
    assert (record.result.winner, record.result.ranking) == (1, (1, 0))
    fault = Fault(FaultKind.START_FAILED, 2, 0, "did not start")
    unstarted = forfeit_before_start(game, ("p0", "p1", "p2", "p3"), [fault], seed=4, match_id="team-start")
    assert unstarted.result is not None and (unstarted.result.winner, unstarted.result.ranking) == (1, (1, 0))


async def test_a_bot_outlives_idle_worker_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots die with the arena (pdeathsig), which binds to the thread that started them; trio's idle worker
    threads exit (after 10 s; a fifth of a second here), so a bot started from one would be killed then. This waits
    until every idle worker thread has exited, then asks the bot."""
    monkeypatch.setattr(trio._core._thread_cache, "IDLE_TIMEOUT", 0.2)
    process = BotProcess(BotSpec("idle", command=(sys.executable, RANDOM_BOT)), tmp_path)
    try:
        await process.ensure_running()
        pid = process._process.pid  # type: ignore[union-attr]
        await trio.to_thread.run_sync(lambda: None)  # make sure a worker thread exists and then idles out
        with trio.fail_after(60):
            while any(thread.name.startswith("Trio thread") for thread in threading.enumerate()):
                await trio.sleep(0.05)
        os.kill(pid, 0)
        assert process.running()
        assert (await process.client.handshake(5)).name == "py-random"  # type: ignore[union-attr]
    finally:
        await process.stop()


@pytest.mark.fast
async def test_an_unopenable_log_is_a_start_failure_not_a_crash(tmp_path: Path) -> None:
    """The log folder is a file: the start fails with START_FAILED naming the log, and nothing is left running."""
    from arena.players.faults import BotFailure

    (tmp_path / "logs").write_text("not a folder")
    process = BotProcess(bad("exit_mid"), tmp_path / "logs", startup_s=15)
    with pytest.raises(BotFailure) as caught:
        await process.ensure_running()
    assert caught.value.kind is FaultKind.START_FAILED
    assert f"cannot open its log {tmp_path / 'logs'}" in str(caught.value)
    assert process._process is None and process._containment is None


# --- time: a bank is spent by slow decisions, and a timeout follows once it is gone ------------------------------


def told_times(log: Path) -> list[tuple[int, int, int]]:
    """(move_ms, bank_ms, deadline_ms) of every decision request the sleepy bot received, in order."""
    times = []
    for line in log.read_text().splitlines():
        if line.startswith("MARK time "):
            _, _, _, move_ms, _, bank_ms, _, deadline_ms = line.split()
            times.append((int(move_ms), int(bank_ms), int(deadline_ms)))
    return times


async def test_a_slow_bot_spends_its_bank_then_times_out(tmp_path: Path) -> None:
    """Guards: the referee spends a seat's bank by the time it takes beyond move_ms, tells the bot what is left
    (``time.bank_ms`` of each ActRequest), and gives it only move_ms + bank + grace, the deadline it tells the bot
    (``time.deadline_ms``). Each decision of the bot takes
    600 ms against a move time of 200 ms, so each costs its bank at least 400 ms: 750, then at most 350 (still in
    time: 600 ms < 200 + 350 + 250), then nothing, and it times out at 200 + 0 + 250 = 450 ms."""
    spec = BotSpec(name="sleepy", command=(sys.executable, BAD_BOT, "--mode", "sleepy", "--sleep-ms", "600"))
    process = BotProcess(spec, tmp_path, startup_s=15)
    time_control = TimeControl(move_ms=200, bank_ms=750, grace_ms=250)
    try:
        bot = await process.ensure_running()
        with trio.fail_after(60):
            record = await play_match(new_game("draw", 2, {"target": 1}), [bot, LocalPlayer(RandomPlayer(1))],
                                      seed=5, match_id="bank", time_control=time_control)
    finally:
        await process.stop()
    times = told_times(process.log_path)
    assert [move_ms for move_ms, _, _ in times] == [200] * len(times)
    banks = [bank for _, bank, _ in times]
    # Each request tells the real deadline: the move time, the bank left and the grace (450 for the last).
    assert [deadline for _, _, deadline in times] == [200 + bank + 250 for bank in banks]
    assert len(banks) == 3 and banks[0] == 750 and 0 < banks[1] <= 750 - 400 and banks[2] == 0, banks
    assert [(f.kind, f.seat, f.message) for f in record.faults] == [(FaultKind.TIMEOUT, 0, "no reply within 450 ms")]
    answered = [m for r in record.rounds for m in r.moves if m.seat == 0 and not m.forced]
    assert len(answered) == 2 and all(m.think_ms >= 600 for m in answered)
