"""The lifecycles the league's rows go through, pure: which state may follow which, and when a version is suspended.

A version: uploaded -> building -> checking -> ready (or failed, with why); a ready version that keeps failing to
start is suspended; any version may be retired, and a retired one stays retired. A ladder table and a challenge:
queued -> playing -> done (or failed, with why). The database enforces these (:mod:`arena.league.storage`) by
asking here before it writes a state; what a version *is* never changes (its archive's SHA-256), only its state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.league.rules.errors import StateError
from arena.league.rules.model import Version

UPLOADED, BUILDING, CHECKING, READY, FAILED, SUSPENDED, RETIRED = (
    "uploaded", "building", "checking", "ready", "failed", "suspended", "retired")
STATES = (UPLOADED, BUILDING, CHECKING, READY, FAILED, SUSPENDED, RETIRED)
TRANSITIONS: Mapping[str, frozenset[str]] = {
    UPLOADED: frozenset({BUILDING, FAILED, RETIRED}),
    BUILDING: frozenset({CHECKING, FAILED, UPLOADED}),  # back to uploaded: a build cut short by a restart, redone
    CHECKING: frozenset({READY, FAILED, UPLOADED}),
    READY: frozenset({SUSPENDED, RETIRED}),
    SUSPENDED: frozenset({READY, RETIRED}),  # the operator reinstates a suspended version, or it is retired
    FAILED: frozenset({RETIRED}),
    RETIRED: frozenset(),
}
"""A version's lifecycle: uploaded -> building -> checking -> ready (or failed, with why). A ready version that keeps
failing to start is suspended; any version may be retired, and a retired one stays retired. What a version *is*
never changes (its archive's SHA-256); only its state does."""
NEEDS_REASON = frozenset({FAILED, SUSPENDED})
INTERRUPTED = (BUILDING, CHECKING)
"""States only a running server's worker holds: found at start, they mean the server died mid-step."""

START_FAILURES = 3
"""Failures to start in a row that suspend a ready version."""

QUEUED, PLAYING, DONE, TABLE_FAILED = "queued", "playing", "done", "failed"
TABLE_STATES = (QUEUED, PLAYING, DONE, TABLE_FAILED)
"""A ladder table's states, and a challenge's: queued -> playing -> done (or failed, with why)."""
UNFINISHED = (QUEUED, PLAYING)
"""Tables a server that died left behind: the next start plays them (resumed from their run folder) and rates them."""


def check_target(to: str, reason: str | None) -> None:
    """Refuse, with one :class:`StateError`, a state that is none of a version's, and a move to ``failed`` or
    ``suspended`` without a reason (whatever state the version is in)."""
    if to not in STATES:
        raise StateError(f"unknown version state {to!r}; states: {', '.join(STATES)}")
    if to in NEEDS_REASON and not reason:
        raise StateError(f"a version becomes {to} only with a reason")


def check_transition(version: Version, to: str) -> None:
    """Refuse, with one :class:`StateError`, a move of ``version`` to state ``to`` that its lifecycle does not allow
    from the state it is in (:data:`TRANSITIONS`)."""
    if to not in TRANSITIONS[version.state]:
        allowed = ", ".join(sorted(TRANSITIONS[version.state])) or "none"
        raise StateError(f"version {version.number} of its bot is {version.state}: it cannot become {to} "
                         f"(from {version.state}: {allowed})")


def suspension(version: Version, failure: str, limit: int = START_FAILURES) -> str | None:
    """Why ``version``, which has just failed to start with ``failure``, is to be suspended: ``limit`` failures in a
    row of a ready version, as a tournament gives up on an entrant; None while it may go on."""
    if version.state == READY and version.start_failures >= limit:
        return f"failed to start {version.start_failures} times in a row; last: {failure}"
    return None


def check_reinstatable(version: Version) -> None:
    """Refuse (:class:`StateError`) to reinstate a version that is not suspended: reinstating puts a suspended
    version back to ready, nothing else."""
    if version.state != SUSPENDED:
        raise StateError(f"version {version.id} is {version.state}, not suspended: only a suspended version can be "
                         f"reinstated")


def active_version(versions: Sequence[Version]) -> Version | None:
    """A bot's active version: its newest ready one that is not deleted (a deleted version's files are gone)."""
    ready = [v for v in versions if v.state == READY and not v.deleted]
    return max(ready, key=lambda v: v.number) if ready else None
