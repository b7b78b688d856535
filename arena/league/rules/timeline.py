"""A league's phases, pure: where the league is, from its timeline, the moment now and what the database records.

The phases, in order:

- **upcoming**, before ``timeline.opens``: authors upload and their versions are built and checked, but the ladder
  plays nothing and challenges are refused, with the moment it opens;
- **open**: the ladder plays, challenges are taken;
- **frozen**, from ``timeline.freeze`` (or the operator's ``arena league freeze``): the field is fixed, the ladder
  and the challenges stop;
- **finals**, from ``timeline.finals`` (or the operator's ``arena league finals --start``) until their results are
  published: the finals are played, then, until ``timeline.results``, their ranking is the operator's alone;
- **done**: the finals ended (done or failed) and their results are published.

The clock leads: a moment of the timeline that has passed moves the phase at once, even before the running league
has written the step it implies (:func:`due_steps`: the freeze row, the finals' start), which it does at its next
look, also at a start after the server was down. What was written moves the phase too, whatever the clock says:
a league the operator froze is frozen. A league file without ``[timeline]`` has only what the database records:
open, then frozen, finals and done as the operator's commands go.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from arena.league.rules.config import LeagueConfig, Timeline, shown_moment
from arena.league.rules.errors import StateError
from arena.league.rules.model import Freeze

UPCOMING, OPEN, FROZEN, FINALS, DONE = "upcoming", "open", "frozen", "finals", "done"
PHASES = (UPCOMING, OPEN, FROZEN, FINALS, DONE)
"""The phases, in the order a league goes through them."""
FREEZE_STEP, FINALS_STEP = "freeze", "finals"
"""The steps the running league writes to the database when their moment has passed (:func:`due_steps`)."""
FINALS_PLAYING = "playing"
FINALS_ENDED = ("done", "failed")
"""The finals' states, as their JSON records them (arena/league/play/finals.py)."""


@dataclass(frozen=True)
class Recorded:
    """What the database records of the league's phases: whether it is frozen, and its finals' state (None before
    they start, then ``"playing"``, ``"done"`` or ``"failed"``)."""

    frozen: bool = False
    finals: str | None = None

    @property
    def ended(self) -> bool:
        return self.finals in FINALS_ENDED


def recorded_of(freeze: Freeze | None) -> Recorded:
    """What a league's freeze row (None: not frozen) says of its phases."""
    if freeze is None:
        return Recorded()
    return Recorded(frozen=True, finals=None if freeze.finals is None else str(freeze.finals.get("state")))


def passed(moment: datetime | None, now: datetime) -> bool:
    """Whether the timeline's moment (None: not given) has come."""
    return moment is not None and now >= moment


def published(timeline: Timeline, now: datetime) -> bool:
    """Whether the finals' results may be shown to everyone now: from ``timeline.results``, or at once without it."""
    return timeline.results is None or now >= timeline.results


def phase_of(timeline: Timeline, now: datetime, recorded: Recorded) -> str:
    """The league's phase (:data:`PHASES`) at ``now``."""
    if recorded.ended:
        return DONE if published(timeline, now) else FINALS
    if recorded.finals is not None or passed(timeline.finals, now):
        return FINALS
    if recorded.frozen or passed(timeline.freeze, now):
        return FROZEN
    if timeline.opens is not None and now < timeline.opens:
        return UPCOMING
    return OPEN


def due_steps(timeline: Timeline, now: datetime, recorded: Recorded) -> list[str]:
    """The steps the timeline owns whose moment has passed and that the database does not record yet, in order: the
    freeze, then the finals' start (which freezes a league nobody froze first). What a running league does at each
    look, and at its start after the server was down."""
    steps = []
    if not recorded.frozen and (passed(timeline.freeze, now) or passed(timeline.finals, now)):
        steps.append(FREEZE_STEP)
    if recorded.finals is None and passed(timeline.finals, now):
        steps.append(FINALS_STEP)
    return steps


def next_boundary(timeline: Timeline, now: datetime) -> datetime | None:
    """The timeline's next moment after ``now`` (None when every one has passed): when the running league looks
    again."""
    return next((moment for _key, moment in timeline.given() if moment > now), None)


@dataclass(frozen=True)
class Status:
    """Where the league is: its phase, the next one and when it comes (None: when the operator moves it, or never),
    in one line (``freezes in 2 h 14 min (at 2026-12-05 18:00 UTC)``), and whether the finals' results are public."""

    phase: str
    next_phase: str
    next_at: datetime | None
    next: str
    published: bool


def status_of(timeline: Timeline, now: datetime, recorded: Recorded) -> Status:
    """The league's :class:`Status` at ``now``."""
    phase = phase_of(timeline, now, recorded)
    shown = recorded.ended and published(timeline, now)
    if phase == UPCOMING:
        assert timeline.opens is not None
        return Status(phase, OPEN, timeline.opens, f"opens {coming(timeline.opens, now)}", shown)
    if phase == OPEN:
        if timeline.freeze is not None:
            return Status(phase, FROZEN, timeline.freeze, f"freezes {coming(timeline.freeze, now)}", shown)
        if timeline.finals is not None:
            return Status(phase, FROZEN, timeline.finals,
                          f"freezes and starts its finals {coming(timeline.finals, now)}", shown)
        return Status(phase, FROZEN, None, "the operator freezes it for its finals (arena league freeze)", shown)
    if phase == FROZEN:
        if timeline.finals is not None:
            return Status(phase, FINALS, timeline.finals, f"the finals start {coming(timeline.finals, now)}", shown)
        return Status(phase, FINALS, None, "the operator starts the finals (arena league finals --start)", shown)
    if phase == FINALS:
        if timeline.results is not None and now < timeline.results:
            return Status(phase, DONE, timeline.results, f"results are published {coming(timeline.results, now)}",
                          shown)
        return Status(phase, DONE, None, "results are published when the finals end", shown)
    return Status(phase, "", None, "the finals' results are published", shown)


def coming(moment: datetime, now: datetime) -> str:
    """``in 2 h 14 min (at 2026-12-05 18:00 UTC)``: how long until a moment of the timeline, and the moment."""
    return f"in {duration(moment - now)} (at {shown_moment(moment)})"


def duration(left: timedelta) -> str:
    """A time left as a person reads it: ``45 s``, ``14 min``, ``2 h 14 min``, ``3 days 4 h`` (cut, not rounded up,
    past the minute; never less than 1 s)."""
    seconds = max(1, math.ceil(left.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    days, hours, minutes = minutes // (24 * 60), minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} day{'s' if days > 1 else ''} {hours} h" if hours else f"{days} day{'s' if days > 1 else ''}"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min"


def require_manual(config: LeagueConfig, step: str) -> None:
    """Refuse the operator's freeze (``step`` "freeze") or finals' start ("finals") when the league's timeline owns
    that step: it happens by itself at its moment."""
    moment = getattr(config.timeline, step)
    if moment is None:
        return
    if step == FREEZE_STEP:
        raise StateError(f"league {config.name!r} freezes by its timeline at {shown_moment(moment)} "
                         f"(timeline.freeze): the operator does not freeze it")
    raise StateError(f"league {config.name!r} starts its finals by its timeline at {shown_moment(moment)} "
                     f"(timeline.finals, with its [finals]): the operator does not start them")


def not_open_yet(config: LeagueConfig) -> str:
    """Why an upcoming league plays nothing: the moment it opens."""
    assert config.timeline.opens is not None
    return f"league {config.name!r} opens at {shown_moment(config.timeline.opens)}"
