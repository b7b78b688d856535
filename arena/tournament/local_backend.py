"""The games played here, by this machine's bot processes (:class:`LocalBackend`, the default
:class:`~arena.tournament.backend.GameBackend`): every entrant started once before the first game
(:func:`check_entrants`), each game's seats taken from the entrants' pools and given back when it ends, a process
that may be stuck restarted, an entrant that keeps failing to start named at the end. Worker processes
(:mod:`arena.tournament.workers`) and Ray actors (:mod:`arena.cluster.ray_backend`) each play their games with one
of these.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from arena.display import safe_name
from arena.players.base import SeatPlayer
from arena.players.faults import BotFailure, Fault, FaultKind
from arena.players.remote import new_match_id
from arena.records.run_folder import RunFolder
from arena.referee import MatchRecord, TimeControl, forfeit_before_start, play_match
from arena.rules import Game
from arena.tournament.backend import BackendSetup, OnProgress, time_control_of
from arena.tournament.pools import EntrantPool
from arena.tournament.schedule import ScheduledGame

STUCK = (FaultKind.TIMEOUT, FaultKind.BOT_ERROR)
"""Faults after which a bot process may be stuck, so it is restarted once no game uses it."""


class LocalBackend:
    """The games played here, by this machine's bot processes: one :class:`EntrantPool` per entrant. A Ray actor
    plays its games with one of these too (``arena/cluster/ray_backend.py``)."""

    def __init__(self, setup: BackendSetup) -> None:
        spec, run = setup.spec, setup.run
        self.setup = setup
        self.game = spec.game()
        self.names = [b.name for b in spec.bots]
        self.time_control = time_control_of(spec)
        self.pools = [EntrantPool(b, setup.schedule.processes_per_entrant(), setup.logs or RunFolder(run).bot_logs,
                                  spec.time.startup_ms / 1000, spec.variant, protected=(run, *setup.protected),
                                  lanes=setup.schedule.lanes)
                      for b in spec.bots]

    async def check(self, log: Any) -> list[tuple[str, str]]:
        return await check_entrants(self.pools, log)

    async def play(self, scheduled: ScheduledGame, on_progress: OnProgress | None) -> MatchRecord:
        return await _play_scheduled(self.game, self.pools, self.names, scheduled, self.time_control,
                                     self.setup.schedule.process_for, on_progress=on_progress)

    def info(self) -> list[dict[str, Any]]:
        return [pool.info() for pool in self.pools]

    def given_up(self) -> list[str]:
        return [_given_up_text(pool) for pool in self.pools if pool.given_up or pool.withdrawn is not None]

    async def withdraw(self, name: str, why: str) -> None:
        await self.pools[self.names.index(name)].withdraw(why)

    async def stop_lane(self, lane: int) -> None:
        async with trio.open_nursery() as nursery:
            for pool in self.pools:
                nursery.start_soon(pool.stop_lane, lane)

    async def stop(self) -> None:
        for pool in self.pools:
            await pool.stop()


async def check_entrants(pools: list[EntrantPool], log: Any) -> list[tuple[str, str]]:
    """Start every entrant's first process at once and wait for its handshake, before any game: a bot that cannot
    play (its program missing, a script path with a typo, a crash at start, silence, a wrong protocol version, a
    variant it does not play) is one clear problem now, not a tournament of forfeits. (name, why) per such
    entrant, in entrant order, printable, the why ending with the last lines its log got from this start."""
    problems: dict[int, tuple[str, str]] = {}

    async def start(number: int, pool: EntrantPool) -> None:
        if pool.withdrawn is not None:
            return  # it left: its games are forfeits, whether or not it could start
        if pool.builtin:
            return  # played in this process: nothing to start
        offset = _size(pool.log_path)  # a folder used before keeps its logs: show only this start's lines
        try:
            await pool.client(0)
            pool.release(0)
            with contextlib.suppress(OSError):  # a full disk is reported by the next write that matters
                log.info("bot_started", entrant=pool.name, hello=pool.info()["hello"])
        except BotFailure as failure:
            with contextlib.suppress(OSError):
                log.warning("bot_failed_to_start", entrant=pool.name, error=str(failure))
            problems[number] = (safe_name(pool.name), _start_problem(failure, pool.log_path, offset))

    async with trio.open_nursery() as nursery:
        for number, pool in enumerate(pools):
            nursery.start_soon(start, number, pool)
    return [problems[number] for number in sorted(problems)]


LOG_TAIL = 600
"""The most of a bot's log an error line quotes (its last bytes)."""
OUTPUT_MARK = "; its last output: "
"""Where a start failure's message (arena/players/process.py) begins quoting the log's end, which may hold an
earlier run's lines: :func:`_start_problem` quotes this start's lines instead."""


def _start_problem(failure: BotFailure, log_path: Path, offset: int) -> str:
    """Why a bot cannot play, on one printable line: the failure, then the last lines its log got since
    ``offset`` and where the log is."""
    why = str(failure).split(OUTPUT_MARK, 1)[0]
    tail = ""
    with contextlib.suppress(OSError):
        with open(log_path, "rb") as f:
            f.seek(max(offset, _size(log_path) - LOG_TAIL))
            tail = f.read(LOG_TAIL).decode(errors="replace").strip().replace("\n", " | ")
    where = f" (log: {log_path})" if log_path.exists() else ""
    return safe_name(why + (f"; its log ends: {tail}" if tail else "") + where, 2000)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


async def _play_scheduled(game: Game, pools: list[EntrantPool], names: list[str], scheduled: ScheduledGame,
                          time_control: TimeControl, process_for: Callable[[ScheduledGame, int], int], *,
                          on_progress: OnProgress | None = None) -> MatchRecord:
    """One scheduled game on the entrants' processes: each seat takes a process of its entrant's lane
    (``process_for``; a built-in entrant plays in this process), a seat whose bot cannot start forfeits the game
    before its first move, and every process taken is given back when the game ends, marked stuck after a fault
    that may have left it so."""
    seats = tuple(names[e] for e in scheduled.seats)
    match_id = new_match_id()
    occurrence: Counter[int] = Counter()
    players: list[SeatPlayer] = []
    held: list[tuple[int, int, int]] = []
    """(seat, entrant, occurrence) of every process this game holds, released when it ends."""
    faults: list[Fault] = []
    record = None
    try:
        for seat, entrant in enumerate(scheduled.seats):
            if pools[entrant].builtin:
                players.append(pools[entrant].local_player(f"{scheduled.seed}/{seat}"))
                continue
            index = process_for(scheduled, occurrence[entrant])
            occurrence[entrant] += 1
            try:
                players.append(await pools[entrant].client(index))
                held.append((seat, entrant, index))
            except BotFailure as failure:
                faults.append(Fault(failure.kind, seat, 0, str(failure)))
        if faults:
            return forfeit_before_start(game, seats, faults, seed=scheduled.seed, match_id=match_id)
        record = await play_match(game, players, seed=scheduled.seed, match_id=match_id, time_control=time_control,
                                  on_progress=on_progress)
        record.seats = seats
        return record
    finally:
        stuck = {f.seat for f in (record.faults if record is not None else ()) if f.kind in STUCK}
        for seat, entrant, index in held:
            pools[entrant].release(index, stuck=seat in stuck)


def _given_up_text(pool: EntrantPool) -> str:
    """Why an entrant's later games were forfeits, for the end of the run."""
    if pool.withdrawn is not None:
        return (f"bot {safe_name(pool.name)!r} was withdrawn mid-run ({safe_name(pool.withdrawn, 1000)}): its games in flight "
                f"and later were forfeits")
    return (f"bot {safe_name(pool.name)!r} failed to start {pool.failed_starts} times in a row and was given up: its "
            f"later games were forfeits; last failure: {safe_name(str(pool.last_failure), 1000)}")


__all__ = ["LocalBackend", "check_entrants"]
