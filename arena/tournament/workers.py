"""``arena run --workers N``: one run's games on N referee processes of this machine, its records still written once,
in order of completion, by the one process that keeps the schedule.

One arena process uses about one core (the referee's trio loop), so a fast-bot tournament is bound by it. Here the
parent process keeps everything the runner keeps (the schedule, the seeds, resume, the single writer of the records,
standings, events); each worker process holds a :class:`~arena.tournament.local_backend.LocalBackend` (the entrants' own
bot processes, sandboxed as in one process, kept alive from game to game) and plays the games it is handed, sending
each back as its game ends already made into its bytes in the record file's format and its outcome (a
:class:`~arena.tournament.backend.PreparedRecord`): the parent's serial work per game is then an append, an fsync and
the standings' update (``arena bench workers`` measures it), which is what bounds how many workers one writer
serves. The worker plugs into the runner's :class:`~arena.tournament.backend.GameBackend` seam, as the Ray backend
does: the runner does not know where games are played.

The wire: the parent starts ``python -c ...`` (:func:`worker_main`) with pipes on its stdin and stdout; each message
is a length-prefixed pickle (both ends are this arena, started by this user: no bot ever writes to these pipes). The
first message is the :class:`~arena.tournament.backend.BackendSetup`; then ``check``, ``play``, ``withdraw``,
``stop_lane`` and ``stop`` calls, each answered by its call number. A worker's stdin closing (the parent gone, even by kill -9) stops
its bots and ends it; its bots die with it (the sandbox's ``--die-with-parent``).

Deals are the schedule's: a game's seed and seats travel in its :class:`ScheduledGame`, and a worker picks the
entrant's process for each seat as one process does (``Schedule.process_for``), so a game's record is the same
game-for-game as a one-process run's, timing fields aside.

Faults: a worker that dies (kill -9, a crash) fails its calls in flight; each of those games is sent again, with the
same seed and seats, to a live worker, and only the call that returns is recorded (the runner records each schedule
index once), so no game is lost or recorded twice. When every worker is gone the run stops with a
:class:`~arena.tournament.errors.RunError`; the recorded games are safe and ``--resume`` continues. Workers are
started in a session of their own, so a terminal's Ctrl-C reaches the parent only, which cancels the games and
stops every worker in order (its bots first).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import structlog
import trio

from arena import guest
from arena.display import safe_name
from arena.records.run_folder import RunFolder
from arena.records.store import is_compact
from arena.referee import MatchRecord
from arena.tournament.backend import (
    BackendFactory,
    BackendSetup,
    OnProgress,
    PreparedRecord,
    merge_bot_info,
    record_message,
    replay_progress,
)
from arena.tournament.errors import RunError
from arena.tournament.local_backend import LocalBackend
from arena.tournament.schedule import ScheduledGame

MAX_WORKERS = 64
"""The most worker processes a run may ask for (each one starts every entrant's bot processes)."""
STOP_S = 30.0
"""How long a worker may take to stop its bots at the end of a run before it is killed."""
HEADER = struct.Struct("!I")
WORKER_CODE = "from arena.tournament.workers import worker_main; worker_main()"


class WorkersError(RunError):
    """The worker processes cannot play the run (every one of them is gone)."""


class _Lost(Exception):
    """The worker died with the call in flight."""


def check_workers(workers: int, concurrency: int) -> None:
    """A worker count the run can use, or one clear line (a :class:`ValueError`) saying why not."""
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")
    if workers > MAX_WORKERS:
        raise ValueError(f"--workers must be at most {MAX_WORKERS} (each worker starts every entrant's bots), got "
                         f"{workers}")
    if workers > concurrency:
        raise ValueError(f"--workers {workers} is more than the games in flight ({concurrency}, --concurrency or the "
                         f"file's 'concurrency'): each worker needs a game at a time")


def workers_factory(workers: int) -> BackendFactory:
    """The factory :func:`~arena.tournament.runner.run_tournament` takes: games on ``workers`` processes here."""
    return lambda setup: WorkersBackend(setup, workers)


# --- framing ------------------------------------------------------------------------------------------------------


async def send_message(stream: trio.abc.SendStream, message: Any) -> None:
    """One message: its pickle's length (4 bytes, big-endian), then the pickle, in one write."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    await stream.send_all(HEADER.pack(len(data)) + data)


class Reader:
    """Messages from a byte stream; None at its end (a partial message at the end is the writer's death)."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buffer = bytearray()

    async def _fill(self, size: int) -> bool:
        while len(self.buffer) < size:
            chunk = await self.stream.receive_some(1 << 20)
            if not chunk:
                return False
            self.buffer += chunk
        return True

    async def receive(self) -> Any:
        if not await self._fill(HEADER.size):
            return None
        (size,) = HEADER.unpack_from(self.buffer)
        if not await self._fill(HEADER.size + size):
            return None
        data = bytes(self.buffer[HEADER.size:HEADER.size + size])
        del self.buffer[:HEADER.size + size]
        return pickle.loads(data)


# --- the worker process -------------------------------------------------------------------------------------------


def worker_main() -> None:
    """A worker process: its stdout is the wire (anything else printed goes to stderr, the worker's log)."""
    wire = os.dup(1)
    os.dup2(2, 1)
    with contextlib.suppress(KeyboardInterrupt):
        guest.run(_serve, wire)


async def _serve(wire: int) -> None:
    reader = Reader(trio.lowlevel.FdStream(os.dup(0)))
    out = trio.lowlevel.FdStream(wire)
    lock = trio.Lock()

    async def reply(*message: Any) -> None:
        async with lock:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await send_message(out, message)

    setup: BackendSetup | None = await reader.receive()
    if setup is None:
        return
    backend = LocalBackend(setup)
    log, log_file = _open_worker_log(setup)
    try:
        async with trio.open_nursery() as nursery:
            async def call(number: int, method: str, args: tuple[Any, ...]) -> None:
                result = await _dispatch(backend, log, method, args)
                await reply(number, result)

            while True:
                message = await reader.receive()
                if message is None or message[1] == "stop":
                    break  # the parent is gone, or asks the end
                nursery.start_soon(call, *message)
            nursery.cancel_scope.cancel()
        with trio.CancelScope(shield=True):
            await backend.stop()
        if message is not None:
            await reply(message[0], (backend.info(), backend.given_up()))
    finally:
        log_file.close()


async def _dispatch(backend: LocalBackend, log: Any, method: str, args: tuple[Any, ...]) -> Any:
    if method == "check":
        return await backend.check(log), backend.info()
    if method == "play":
        scheduled, whole = args
        record = await backend.play(scheduled, None)
        if whole:
            return record
        message = record_message(backend.setup.spec, backend.game, scheduled, record)
        return PreparedRecord.of(message, is_compact(RunFolder(backend.setup.run).records))
    if method == "withdraw":
        return await backend.withdraw(*args)
    if method == "stop_lane":
        return await backend.stop_lane(*args)
    raise ValueError(f"unknown worker call {method!r}")


def _open_worker_log(setup: BackendSetup) -> tuple[Any, Any]:
    assert setup.logs is not None
    setup.logs.mkdir(parents=True, exist_ok=True)
    log_file = open(setup.logs / "worker.log", "a")
    log = structlog.wrap_logger(
        structlog.WriteLogger(log_file),
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                    structlog.processors.JSONRenderer()])
    return log, log_file


# --- the parent's side --------------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Worker:
    """The parent's view of one worker process."""

    number: int
    process: trio.Process
    reader: Reader
    """The process's stdout, where its replies come."""
    stdin: trio.abc.SendStream
    """The process's stdin, where its calls go."""
    send_lock: trio.Lock = dataclasses.field(default_factory=trio.Lock)
    calls: dict[int, list[Any]] = dataclasses.field(default_factory=dict)
    """Call number to [event, result] of the calls in flight."""
    next_call: int = 0
    in_flight: int = 0
    alive: bool = True
    ready: bool = False
    info: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    async def call(self, method: str, *args: Any) -> Any:
        """One call, answered by the worker; :class:`_Lost` when it died first."""
        if not self.alive:
            raise _Lost()
        number, self.next_call = self.next_call, self.next_call + 1
        slot: list[Any] = [trio.Event(), _Lost()]
        self.calls[number] = slot
        try:
            async with self.send_lock:
                await send_message(self.stdin, (number, method, args))
            await slot[0].wait()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self.lose()
        finally:
            self.calls.pop(number, None)
        if isinstance(slot[1], _Lost):
            raise slot[1]
        return slot[1]

    async def read_replies(self) -> None:
        """Hand each reply to its call; at the end of the stream (the worker died or ended) fail the rest."""
        try:
            while True:
                message = await self.reader.receive()
                if message is None:
                    break
                number, result = message
                slot = self.calls.get(number)
                if slot is not None:
                    slot[1] = result
                    slot[0].set()
        except Exception:  # noqa: BLE001 - a broken stream is a lost worker, said by the calls it fails
            pass
        finally:
            self.lose()

    def lose(self) -> None:
        self.alive = False
        for slot in self.calls.values():
            slot[0].set()


class WorkersBackend:
    """The run's games on ``workers`` processes of this machine (see the module's docstring)."""

    def __init__(self, setup: BackendSetup, workers: int) -> None:
        self.setup = setup
        self.count = workers
        self.workers: list[_Worker] = []
        self.replayed: list[tuple[int, int]] = []
        """(schedule index, worker) of every game sent again because the worker playing it died."""
        self._given_up: list[str] = []
        self._log: Any = None
        self._changed = trio.Event()

    def _logs_for(self, number: int) -> Path:
        return (self.setup.logs or RunFolder(self.setup.run).bot_logs) / f"worker-{number}"

    def _setup_for(self, number: int) -> BackendSetup:
        return dataclasses.replace(self.setup, logs=self._logs_for(number))

    async def _start(self, number: int) -> _Worker:
        setup = self._setup_for(number)
        assert setup.logs is not None
        setup.logs.mkdir(parents=True, exist_ok=True)
        try:
            with open(setup.logs / "worker.err", "ab") as errors:
                process = await trio.lowlevel.open_process(
                    [sys.executable, "-c", WORKER_CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                    start_new_session=True)  # a terminal's Ctrl-C is the parent's to handle
        except OSError as error:  # no process left to the user, a full disk for its log: one line
            raise WorkersError(f"cannot start worker process {number}: {error.strerror or error}; no game was "
                               f"played") from None
        assert process.stdin is not None and process.stdout is not None  # both opened as pipes
        worker = _Worker(number, process, Reader(process.stdout), process.stdin)
        trio.lowlevel.spawn_system_task(worker.read_replies, name=f"arena-worker-{number}")
        async with worker.send_lock:
            await send_message(process.stdin, setup)
        return worker

    async def check(self, log: Any) -> list[tuple[str, str]]:
        """Start every worker, and every entrant once in each, before the first game."""
        self._log = log
        for number in range(self.count):  # each kept as it starts: stop() ends those that did if a later one fails
            self.workers.append(await self._start(number))
        found_by: dict[int, list[tuple[str, str]]] = {}

        async def check_one(worker: _Worker) -> None:
            try:
                found_by[worker.number], worker.info = await worker.call("check")
            except _Lost:
                return
            worker.ready = not found_by[worker.number]

        async with trio.open_nursery() as nursery:
            for worker in self.workers:
                nursery.start_soon(check_one, worker)
        problems: dict[str, str] = {}
        for number in sorted(found_by):  # a bot that cannot start fails in every worker: named once, by the first
            for name, why in found_by[number]:
                problems.setdefault(name, why)
        if not problems and not any(worker.ready for worker in self.workers):
            raise WorkersError(f"the worker processes could not start (see {self._logs_for(0)}/worker.err); no "
                               f"game was played")
        order = {safe_name(bot.name): number for number, bot in enumerate(self.setup.spec.bots)}
        return sorted(problems.items(), key=lambda problem: (order.get(problem[0], len(order)), problem[1]))

    async def play(self, scheduled: ScheduledGame, on_progress: OnProgress | None) -> MatchRecord | PreparedRecord:
        """Play the game on the least busy live worker; when that worker dies mid-game, on another. The worker
        makes the game's record and its bytes in the record file's format (work the one writer need not do), unless
        a live watch (``on_progress``) needs the referee's record to replay its moves."""
        while True:
            worker = self._pick()
            worker.in_flight += 1
            try:
                record: MatchRecord | PreparedRecord = await worker.call("play", scheduled, on_progress is not None)
            except _Lost:
                self.replayed.append((scheduled.index, worker.number))
                self._note("game_replayed", index=scheduled.index, lost_on=worker.number)
                continue
            finally:
                worker.in_flight -= 1
            if isinstance(record, MatchRecord):
                replay_progress(record, on_progress)
            return record

    def _pick(self) -> _Worker:
        ready = [worker for worker in self.workers if worker.ready and worker.alive]
        if not ready:
            raise WorkersError(f"every worker process is gone (their logs: {self._logs_for(0).parent}/"
                               f"worker-*/worker.err); the recorded games are safe: resume the run")
        return min(ready, key=lambda worker: worker.in_flight)

    def _note(self, event: str, **fields: Any) -> None:
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.warning(event, **fields)

    def info(self) -> list[dict[str, Any]]:
        """``bots.json``: each entrant as the first worker saw it, its starts summed over every worker."""
        return _merge_info([worker.info for worker in self.workers if worker.info])

    def given_up(self) -> list[str]:
        return list(dict.fromkeys(self._given_up))

    async def withdraw(self, name: str, why: str) -> None:
        await self._on_every_worker("withdraw", name, why)

    async def stop_lane(self, lane: int) -> None:
        await self._on_every_worker("stop_lane", lane)

    async def _on_every_worker(self, method: str, *args: Any) -> None:
        """Call ``method`` on every live worker at once. A worker lost meanwhile took its bots with it (their
        sandboxes die with their parent), so it has nothing left to do."""
        async def one(worker: _Worker) -> None:
            with contextlib.suppress(_Lost):
                await worker.call(method, *args)

        async with trio.open_nursery() as nursery:
            for worker in self.workers:
                nursery.start_soon(one, worker)

    async def stop(self) -> None:
        """Every worker stops its bots and ends; one that does not in time is killed."""
        async def stop_one(worker: _Worker) -> None:
            with contextlib.suppress(_Lost):
                info, given_up = await worker.call("stop")
                worker.info = info or worker.info
                self._given_up.extend(given_up)

        with trio.move_on_after(STOP_S):
            async with trio.open_nursery() as nursery:
                for worker in self.workers:
                    nursery.start_soon(stop_one, worker)
        for worker in self.workers:
            with contextlib.suppress(OSError):
                worker.process.kill()
            with contextlib.suppress(trio.ClosedResourceError, OSError):
                await worker.stdin.aclose()
            await worker.process.wait()


def _merge_info(infos: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One ``bots.json`` entry per entrant: the first worker's, with starts and restarts summed."""
    return [{**entry, "workers": len(infos)} for entry in merge_bot_info(infos)]


__all__ = ["WorkersBackend", "WorkersError", "workers_factory", "check_workers", "worker_main", "MAX_WORKERS"]
