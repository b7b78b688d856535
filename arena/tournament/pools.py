"""Each entrant's bot processes: one per seat it may hold at a table in each process lane, each serving many
concurrent matches. With duplicate deals a lane's processes are stopped when the phase of deal sets they played
ends (:meth:`EntrantPool.stop_lane`, called by the run's :mod:`~arena.tournament.phases`), so the next phase starts
them afresh: no process that saw a deal is alive while the deal is played from another seat.

A process that crashed is restarted for the next game that needs it. A process that timed out or answered with an
error may be stuck: it is restarted too, but only once no game is using it (new games wait for the games in flight
to end, which their deadlines bound), so a bot's other games are not cut short. An entrant whose bot fails to
start several times in a row is given up on: its later games are forfeits without waiting for yet another start.
An entrant withdrawn by whoever runs the tournament (:meth:`EntrantPool.withdraw`: a league version retired or
suspended while its table plays) leaves the same way, at once: its bots are stopped, so a game in flight ends with
its fault (the fault rule: its side forfeits), and its later games are forfeits without a start.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from arena.players.base import LocalPlayer
from arena.players.builtin import builtin_player
from arena.players.client import BotClient
from arena.players.faults import BotFailure, FaultKind
from arena.players.process import BotProcess, BotSpec, log_file_name

GIVE_UP_AFTER = 3


def process_name(entrant: str, index: int) -> str:
    """The name of an entrant's ``index``-th process when it has several (``greedy-v3.1``): its log's name too."""
    return f"{entrant}.{index}"


def entrant_logs(logs: Path, entrant: str) -> list[Path]:
    """The log files of ``entrant``'s processes under a run's logs folder, by path: in the folder itself, and in the
    subfolders a backend gives each of its workers or Ray actors (``worker-1/``, ``node-<id>/``). An entrant has at
    most as many processes as there are files, so their names (:func:`process_name`) are looked for up to that."""
    files = [path for path in sorted(logs.rglob("*")) if path.is_file() and not path.is_symlink()] \
        if logs.is_dir() else []
    wanted = {log_file_name(entrant)} | {log_file_name(process_name(entrant, i)) for i in range(len(files))}
    return [path for path in files if path.name in wanted]


class EntrantPool:
    """The processes of one entrant."""

    def __init__(self, spec: BotSpec, processes: int, log_dir: Path, startup_s: float, variant: str,
                 protected: tuple[Path, ...] = (), lanes: int = 1) -> None:
        """``processes`` in ``lanes`` equal lanes (lane l holds the processes ``l * processes // lanes`` on)."""
        self.spec = spec
        self.lanes = lanes
        self.variant = variant
        self.processes = [
            # A dial-in bot keeps its name in every "process": each is a seat's client on the bot's one stream.
            BotProcess(replace(spec, name=spec.name if processes == 1 or spec.dial_in else process_name(spec.name, i)),
                       log_dir, startup_s,
                       protected=protected)
            for i in range(processes)
        ]
        self._locks = [trio.Lock() for _ in range(processes)]
        self._in_use = [0] * processes
        self._suspect = [False] * processes
        self._idle = [trio.Event() for _ in range(processes)]
        self.restarts_after_faults = 0
        self.failed_starts = 0
        self.last_failure: BotFailure | None = None
        self.withdrawn: str | None = None
        """Why the entrant was withdrawn from the run (:meth:`withdraw`), if it was."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def builtin(self) -> str | None:
        """The built-in player's kind when the entrant is one (``command = "builtin:greedy"``): no process."""
        return self.spec.builtin

    def local_player(self, seed: str) -> LocalPlayer:
        """A fresh built-in player for one seat of one game, seeded from that game's seed and the seat, so a game's
        moves do not depend on which games the entrant played before or beside it."""
        assert self.builtin is not None
        return LocalPlayer(builtin_player(self.builtin, seed=seed), name=self.name)

    @property
    def given_up(self) -> bool:
        """The bot failed to start ``GIVE_UP_AFTER`` times in a row: every later game of this entrant is a forfeit
        without another try, so the run reports it at the end (and exits non-zero) instead of finishing quietly."""
        return self.failed_starts >= GIVE_UP_AFTER and self.last_failure is not None

    @property
    def log_path(self) -> Path:
        """The log of the entrant's first process (the one started before the first game)."""
        return self.processes[0].log_path

    async def client(self, occurrence: int) -> BotClient:
        """The running bot for the entrant's ``occurrence``-th seat at a table (started or restarted if needed).

        Every successful call must be paired with :meth:`release` when the game ends.
        """
        if self.given_up:
            raise BotFailure(FaultKind.START_FAILED,
                             detail=f"gave up after {self.failed_starts} failed starts; last: {self.last_failure}")
        self._refuse_if_withdrawn()
        process = self.processes[occurrence]
        async with self._locks[occurrence]:
            self._refuse_if_withdrawn()  # withdrawn while this game waited for the process
            if self._suspect[occurrence]:
                while self._in_use[occurrence] > 0:
                    self._idle[occurrence] = trio.Event()
                    await self._idle[occurrence].wait()
                await process.stop()
                self._suspect[occurrence] = False
                self.restarts_after_faults += 1
            try:
                client = await process.ensure_running()
            except BotFailure as failure:
                self.failed_starts += 1
                self.last_failure = failure
                raise
            self.failed_starts = 0
            self._in_use[occurrence] += 1
        if not client.plays(self.variant):
            self.release(occurrence)
            assert client.hello is not None  # without a handshake a bot plays every variant
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=f"the bot does not play {self.variant!r} "
                                                                 f"(it plays {', '.join(client.hello.variants)})")
        return client

    def _refuse_if_withdrawn(self) -> None:
        if self.withdrawn is not None:
            raise BotFailure(FaultKind.START_FAILED, detail=f"withdrawn from the run: {self.withdrawn}")

    async def withdraw(self, why: str) -> None:
        """The entrant leaves the run now, as a tournament lets an entrant go that it gave up on: every later game of
        it is a forfeit without a start, and its bots are stopped (each once no start of it is under way), so a game
        in flight ends with its fault and its side forfeits. Nothing waits for a game to end."""
        self.withdrawn = why
        with trio.CancelScope(shield=True):
            for lock, process in zip(self._locks, self.processes, strict=True):
                async with lock:
                    await process.stop()

    async def stop_lane(self, lane: int) -> None:
        """Stop the processes of ``lane`` (no game uses them: their phase has ended); the next game that needs one
        starts it afresh. A process that never started, or a built-in player, has nothing to stop."""
        per_lane = len(self.processes) // self.lanes
        with trio.CancelScope(shield=True):
            for index in range(lane * per_lane, (lane + 1) * per_lane):
                async with self._locks[index]:
                    await self.processes[index].stop()
                    self._suspect[index] = False

    def release(self, occurrence: int, stuck: bool = False) -> None:
        """A game is done with this process; ``stuck`` when the bot timed out or erred in it (restart it when idle)."""
        self._in_use[occurrence] -= 1
        if stuck:
            self._suspect[occurrence] = True
        if self._in_use[occurrence] == 0:
            self._idle[occurrence].set()

    def info(self) -> dict[str, Any]:
        """What bots.json says about this entrant."""
        hello = next((p.hello for p in self.processes if p.hello is not None), None)
        return {
            "name": self.name,
            "command": list(self.spec.command),
            "address": self.spec.address,
            "dial_in": self.spec.dial_in,
            "processes": 0 if self.builtin else len(self.processes),
            "starts": sum(p.starts for p in self.processes),
            "restarts_after_timeouts": self.restarts_after_faults,
            "containment": next((p.containment_report for p in self.processes if p.containment_report), None),
            "hello": None if hello is None else {
                "name": hello.name, "version": hello.version, "author": hello.author,
                "protocol_version": hello.protocol_version, "variants": list(hello.variants),
            },
            "last_start_failure": str(self.last_failure) if self.last_failure else None,
            "given_up": self.given_up,
            "withdrawn": self.withdrawn,
        }

    async def stop(self) -> None:
        with trio.CancelScope(shield=True):
            for process in self.processes:
                await process.stop()
