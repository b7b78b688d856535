"""The league's timeline at work: one task per league that wakes at each moment of its ``[timeline]`` and takes the
step it implies (:mod:`arena.league.rules.timeline` says which, from the clock and what the database records).

- at ``opens``: the ladder and the challenge slots are woken (they look at the phase before they choose anything);
- at ``freeze``: the league is frozen, as ``arena league freeze`` freezes it (:func:`.finals.freeze_now`);
- at ``finals``: the finals start with the league file's ``[finals]`` (:meth:`.finals.Finals.start_by_timeline`),
  after a freeze when nobody froze the league;
- at ``results``: nothing is written; from then on the finals' results are shown to everyone.

**Idempotent, and picked up after a restart.** Each step is written to the database once (the freeze row, the
finals' state), and a step the database records already is not taken again. At its start the task takes every step
whose moment passed while the server was down, in order: a server started after ``finals`` passed freezes the league
(unless frozen) and starts the finals, or finds them playing and lets the finals' task resume them, as always.
Meanwhile nothing plays that the clock no longer allows: the ladder and the challenges read the phase, which the
clock leads (a passed ``freeze`` is the frozen phase before its row is written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import trio

from arena.league.clock import utc_now
from arena.league.intake.pipeline import Served
from arena.league.play.finals import Finals, freeze_now
from arena.league.rules.errors import LeagueError
from arena.league.rules.notices import OPEN_PHASE
from arena.league.rules.timeline import (
    DONE,
    FINALS_STEP,
    FREEZE_STEP,
    OPEN,
    Status,
    due_steps,
    next_boundary,
    phase_of,
    recorded_of,
    status_of,
)
from arena.league.storage.db import AsyncDatabase, Database

LOOK_S = 60.0
"""The longest the task waits without looking at the clock again (a clock set forward, a machine that slept)."""
RETRY_S = 5.0
"""How soon a step the database refused is taken again."""


async def league_status(database: AsyncDatabase, served: Served) -> Status:
    """Where the league is now: its phase, the next one and when (:func:`~arena.league.rules.timeline.status_of`)."""
    frozen = await database.run(Database.frozen, served.league_id)
    return status_of(served.config.timeline, utc_now(), recorded_of(frozen))


async def league_phase(database: AsyncDatabase, served: Served) -> str:
    """The league's phase now."""
    frozen = await database.run(Database.frozen, served.league_id)
    return phase_of(served.config.timeline, utc_now(), recorded_of(frozen))


class Timekeeper:
    """One league's timeline on the trio loop: :meth:`run` until cancelled. ``finals`` is the league's finals (the
    step at ``finals`` starts them); ``woken`` what looks again when the phase moves (the ladder, the challenge
    slots)."""

    def __init__(self, database: AsyncDatabase, served: Served, log: Any, finals: Finals | None = None,
                 woken: Sequence[Callable[[], None]] = ()) -> None:
        self.database = database
        self.served = served
        self.log = log
        self.finals = finals
        self.woken = list(woken)
        self.phase = ""
        """The phase at the last look ("" before the first)."""
        self.changes = 0
        """Times the phase moved since the server started (the web's pages redraw when it moves)."""
        self._wake = trio.Event()
        self._retry = False

    @property
    def config(self) -> Any:
        return self.served.config

    def wake(self) -> None:
        """Something moved the phase (the operator's freeze or finals): look again now (on the trio thread)."""
        self._wake.set()

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Take the steps whose moment passed (also while the server was down), then wake at each next moment."""
        await self.look()
        task_status.started()
        while True:
            self._wake = trio.Event()
            boundary = next_boundary(self.config.timeline, utc_now())
            wait = LOOK_S if boundary is None else min(LOOK_S, (boundary - utc_now()).total_seconds())
            if self._retry:
                wait = min(wait, RETRY_S)
            with trio.move_on_after(max(wait, 0.0)):
                await self._wake.wait()
            await self.look()

    async def look(self) -> None:
        """Take every step due now, in order, then note the phase (and wake those that act on it when it moved). A
        step the database refused (it could not be reached) is logged and taken again at the next look, which comes
        within :data:`RETRY_S`."""
        try:
            await self._look()
        except LeagueError as error:
            self.log.error("timeline_step_failed", league=self.config.name, error=str(error))
            self._retry = True

    async def _tell(self, phase: str) -> None:
        """The notices of the timeline's own moments, once each (a restarted server looks again): the opening, and
        the finals' ranking at ``results``. The freeze and the finals tell their own, with their rows."""
        league_id, timeline = self.served.league_id, self.config.timeline
        if phase == OPEN and timeline.opens is not None:
            await self.database.run(Database.phase_changed_once, league_id, OPEN_PHASE)
        elif phase == DONE and timeline.results is not None:
            await self.database.run(Database.publish_finals, league_id)

    async def _look(self) -> None:
        self._retry = False
        league_id = self.served.league_id
        timeline = self.config.timeline
        steps = due_steps(timeline, utc_now(), recorded_of(await self.database.run(Database.frozen, league_id)))
        for step in steps:
            if step == FREEZE_STEP:
                frozen = await self.database.run(freeze_now, league_id)
                if frozen is not None:
                    self.log.info("league_frozen", league=self.config.name, by="the timeline",
                                  field=len(frozen.field))
            elif step == FINALS_STEP and self.finals is not None:
                await self.finals.start_by_timeline()
        phase = phase_of(timeline, utc_now(), recorded_of(await self.database.run(Database.frozen, league_id)))
        await self._tell(phase)
        if phase != self.phase:
            self.log.info("league_phase", league=self.config.name, phase=phase,
                          was=self.phase or "(the server started)")
            self.phase = phase
            self.changes += 1
            for wake in self.woken:
                wake()
