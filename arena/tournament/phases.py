"""Fair play of duplicate deals, kept by the order a run hands out its games and by how long bot processes live.

The invariant: with duplicate deals, while any process of an entrant plays a deal under one rotation, no process of
that entrant that has seen that deal under another rotation is alive. A bot's processes can always talk to each
other somehow (a lock on a file both sandboxes see, the page cache, timing), so it is not enough that each process
sees a deal once: the process that saw the deal must be gone before the deal is played again from another seat.

The mechanism: the deal sets, in the schedule's order, are cut into blocks of ``block`` deal sets, and a *phase* is
one block under one rotation (phase number ``block_number * rotations + rotation``). Every game of a phase is played
by the entrants' processes of one *lane* (``lane = phase number % lanes``); a lane's processes are stopped (their
sandboxes killed, every process in them gone) once the phase's last game has ended, and the next phase of that lane
starts them afresh. A phase opens only once the block's previous rotation is over and the phase that last used its
lane is over: so the processes that saw a block's deals under one rotation are dead before any game plays them under
the next. Phases of different blocks share no deal, so they are played side by side: the next block's first
rotation keeps the workers busy while a block's phase drains. Two lanes are enough for that (``Schedule.lanes``: each
entrant then runs at most two processes a seat, as many as a two-player run always had).

Without duplicate deals every game has its own deal: one phase holds the whole run and its processes live as long.
Which game a worker gets is all this module decides; the records, seeds and game indices are the schedule's, so a
run's records do not depend on the block size (nor on the concurrency, as before).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import trio

from arena.tournament.schedule import Schedule, ScheduledGame

MAX_BLOCK = 1000
"""The most deal sets in a block of a run without a sequential test. Each phase costs the start of every entrant's
processes and a drain (its last games played while workers wait for the next phase to open), so blocks are as large
as they may be; their games wait in the standings until their deal set is complete (kept in memory), which this
bounds."""
BLOCK_GAMES_PER_WORKER = 8
"""With a sequential test, a block holds this many deal sets per game in flight (``concurrency``), but at least
:data:`MIN_BLOCK`: the test decides on complete deal sets, so when it does, the records may hold the first rotations
of up to a block of deal sets beyond it; small blocks keep that small, large enough ones keep the workers busy."""
MIN_BLOCK = 16
"""The fewest deal sets in a block of a run with a sequential test (a run with fewer has one block)."""


def block_size(schedule: Schedule, concurrency: int, sequential: bool = False) -> int:
    """Deal sets per block: as many as :data:`MAX_BLOCK` allows, or for a ``sequential`` test a few per game in
    flight; the run's deal sets cut into blocks of equal size (none a small remainder that pays a whole phase's starts
    for a few games)."""
    deal_sets = max(1, schedule.deal_sets())
    largest = max(MIN_BLOCK, BLOCK_GAMES_PER_WORKER * concurrency) if sequential else MAX_BLOCK
    blocks = math.ceil(deal_sets / largest)
    return math.ceil(deal_sets / blocks)


@dataclass
class _Phase:
    number: int
    lane: int
    games: Iterator[int]
    """The indices of the phase's games not yet handed out (and not recorded before a resume)."""
    next_index: int | None
    in_flight: int = 0
    closing: bool = False
    """Its last game has ended: its lane is being stopped (it is not closed until that is done)."""
    closed: bool = False


class PhasedOrder:
    """Hands a run's unplayed games to its workers phase by phase, and stops a lane's processes when its phase ends.

    ``stop_lane(lane)`` stops every entrant's processes of ``lane`` (wherever they run); it is awaited, shielded,
    before the next phase that depends on the ended one opens."""

    def __init__(self, schedule: Schedule, done: AbstractSet[int], block: int,
                 stop_lane: Callable[[int], Awaitable[None]]) -> None:
        self.schedule = schedule
        self.done = done
        self.rotations = schedule.group_size
        self.block = block if self.rotations > 1 else max(1, schedule.deal_sets())
        self.lanes = schedule.lanes
        self.phase_count = math.ceil(schedule.deal_sets() / self.block) * self.rotations if schedule.total() else 0
        self.stop_lane = stop_lane
        self._phases: dict[int, _Phase] = {}
        self._lowest_open = 0
        """Every phase below this number is closed."""
        self._changed = trio.Event()
        self._finished = False

    def finish(self) -> None:
        """No more games are handed out (a decided test, a failed write): every worker waiting for one gets None."""
        self._finished = True
        self._changed.set()

    def _games_of(self, number: int) -> Iterator[int]:
        block, rotation = divmod(number, self.rotations)
        last = min((block + 1) * self.block, self.schedule.deal_sets())
        for deal_set in range(block * self.block, last):
            index = self.schedule.first_index + deal_set * self.rotations + rotation
            if index not in self.done:
                yield index

    def _phase(self, number: int) -> _Phase:
        phase = self._phases.get(number)
        if phase is None:
            games = self._games_of(number)
            phase = _Phase(number, number % self.lanes, games, next(games, None))
            self._phases[number] = phase
        return phase

    def _closed(self, number: int) -> bool:
        return number < self._lowest_open or (number in self._phases and self._phases[number].closed)

    def _may_open(self, number: int) -> bool:
        """Open once the same block's previous rotation is over and the phase that last used this lane is over."""
        first_rotation = number % self.rotations == 0
        return (first_rotation or self._closed(number - 1)) and (number < self.lanes or
                                                                 self._closed(number - self.lanes))

    def _open_phases(self) -> Iterator[_Phase]:
        """The phases that may be played now, lowest first: at most ``lanes`` of them, from the lowest not closed."""
        for number in range(self._lowest_open, min(self._lowest_open + self.lanes, self.phase_count)):
            if not self._closed(number) and self._may_open(number):
                yield self._phase(number)

    async def next(self) -> ScheduledGame | None:
        """The next game to play (its ``lane`` set), waiting for a phase to open if every open one is handed out;
        None when every game is handed out."""
        while not self._finished:
            phases = list(self._open_phases())
            for phase in phases:
                if phase.next_index is not None:
                    index, phase.next_index = phase.next_index, next(phase.games, None)
                    phase.in_flight += 1
                    return replace(self.schedule.game_at(index), lane=phase.lane)
            for phase in phases:
                if phase.in_flight == 0 and not phase.closing:  # nothing left to play (a resumed run's): it ends
                    await self._close(phase)
                    break
            else:
                if self._lowest_open >= self.phase_count:
                    return None
                await self._changed.wait()
        return None

    async def ended(self, scheduled: ScheduledGame) -> None:
        """A game handed out has ended (recorded or not): when it was its phase's last, the phase closes."""
        phase = self._phases[self._phase_number(scheduled)]
        phase.in_flight -= 1
        if phase.in_flight == 0 and phase.next_index is None:
            await self._close(phase)

    def _phase_number(self, scheduled: ScheduledGame) -> int:
        deal_set, rotation = divmod(scheduled.index - self.schedule.first_index, self.rotations)
        return deal_set // self.block * self.rotations + rotation

    async def _close(self, phase: _Phase) -> None:
        """Stop the phase's lane, then let the phases that waited for it open."""
        if phase.closing:
            return
        phase.closing = True
        with trio.CancelScope(shield=True):
            await self.stop_lane(phase.lane)
        phase.closed = True
        while self._lowest_open in self._phases and self._phases[self._lowest_open].closed:
            del self._phases[self._lowest_open]
            self._lowest_open += 1
        self._changed.set()
        self._changed = trio.Event()
