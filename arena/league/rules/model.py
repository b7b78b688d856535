"""The league's domain values: what the league passes around, as plain frozen values.

A league, its authors (teams of members), bots and versions, the seats of a recorded game, a version's rating, a ladder table, a
challenge and a freeze. The database reads its rows into these and writes them from these
(:mod:`arena.league.storage`), but nothing here knows of a database: the rules, the intake and the play read and
compare them without any I/O, and a test makes one by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class League:
    id: int
    name: str
    title: str
    variant: str


ACTIVE, PENDING, REJECTED = "active", "pending", "rejected"
TEAM_STATES = (ACTIVE, PENDING, REJECTED)
"""Where a team is: active (it may act), pending (signed up, awaiting the operator's approval: it can do nothing)
or rejected by the operator (it can do nothing, its name stays taken)."""


@dataclass(frozen=True)
class Author:
    """An author: a team of one or more members (:class:`Member`), each with a token of its own."""

    id: int
    name: str
    created_at: datetime
    revoked_at: datetime | None
    state: str = ACTIVE
    league_id: int | None = None
    """The league it signed up through; None for a team the operator added."""

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


CAPTAIN = "captain"
"""The name of a team's first member, its captain, unless it chose another."""


@dataclass(frozen=True)
class Member:
    """One member of a team: its own token (only its hash is stored), revocable alone; the captain (the first
    member) adds and removes the others."""

    id: int
    author_id: int
    name: str
    captain: bool
    created_at: datetime
    revoked_at: datetime | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


@dataclass(frozen=True)
class Invite:
    """An operator's invite code to sign up to a league (only its hash is stored): ``uses`` sign-ups at most, until
    ``expires_at``."""

    id: int
    league_id: int
    uses: int
    used: int
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class AuditEntry:
    """One recorded action: when, in which league (None for a team's own business), which team (None for the
    operator's own), who (``"the operator"``, or ``team/member``), what and on what."""

    id: int
    at: datetime
    league_id: int | None
    author_id: int | None
    actor: str
    action: str
    detail: str


@dataclass(frozen=True)
class Bot:
    id: int
    league_id: int
    author_id: int
    name: str


@dataclass(frozen=True)
class Runnable:
    """How a built version runs: ``command`` in ``folder`` (relative to the league's versions folder), sandboxed,
    speaking ``protocol`` (``grpc`` or ``stdio``). Kept in the database so a ready version runs after a restart."""

    command: tuple[str, ...]
    folder: str
    protocol: str


@dataclass(frozen=True)
class Version:
    """A version with its bot's owner, so every authorisation check needs only the version."""

    id: int
    bot_id: int
    author_id: int
    number: int
    sha256: str
    state: str
    reason: str | None
    created_at: datetime
    updated_at: datetime
    build_log: str | None
    check_report: Any
    start_failures: int
    runnable: Runnable | None = None
    """Set once its build succeeded (cleared when it is deleted)."""
    deleted_at: datetime | None = None
    dial_in_sha256: str | None = None
    """Set for a dial-in version: the SHA-256 of its bot token (see
    :meth:`arena.league.storage.db.Database.add_dial_in_version`)."""

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def dial_in(self) -> bool:
        """Played by its author's machine over a dial-in stream: never built, playable only while connected."""
        return self.dial_in_sha256 is not None


@dataclass(frozen=True)
class Seat:
    """One seat of a recorded game."""

    version_id: int
    score: int
    points: float


@dataclass(frozen=True)
class Rating:
    version_id: int
    system: str
    mu: float
    sigma: float
    games: int


ONLINE = "openskill"
"""The rating system of the ladder's online rating (what the matchmaker reads and a finished table updates)."""
RateSides = Callable[[Sequence[Rating | None]], Sequence[tuple[float, float]]]
"""One online rating update of a table (its deal set, or one of its single games): the sides' ratings before (None
for a version not rated yet), in side order, to their (mu, sigma) after."""


@dataclass(frozen=True)
class LadderTable:
    """One table of the ladder's queue: its versions per side (the anchor first), why it was chosen, where it is."""

    id: int
    league_id: int
    versions: tuple[int, ...]
    reason: str
    state: str
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    error: str | None
    sequence: int | None
    single_games: bool = False
    """Rated game by game (its run had no duplicate deals), not as one deal set; see the ``tables`` table of
    :mod:`arena.league.storage.tables`."""


@dataclass(frozen=True)
class ChallengeRow:
    """One challenge: who asked, its version against the opponent, its deal sets (the SPRT's cap), where it is."""

    id: int
    league_id: int
    author_id: int | None
    version_id: int
    opponent_id: int
    deal_sets: int
    state: str
    result: Any
    error: str | None
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True)
class Freeze:
    """A league's freeze: when, its field (version ids), and its finals' JSON (None before they start)."""

    league_id: int
    frozen_at: datetime
    field: tuple[int, ...]
    finals: Any


@dataclass(frozen=True)
class Notice:
    """A recorded notice (:mod:`arena.league.rules.notices`): for one team (``author_id``) or everyone (None), of
    one league, with its stable ``uid`` (a feed's entry id, a webhook's delivery)."""

    id: int
    uid: str
    league_id: int
    author_id: int | None
    kind: str
    title: str
    text: str
    link: str
    at: datetime


@dataclass(frozen=True)
class Webhook:
    """A team's webhook in one league: the HTTPS address its notices are posted to, and the secret they are signed
    with."""

    league_id: int
    author_id: int
    url: str
    secret: str
    created_at: datetime


PENDING_DELIVERY, DELIVERED, DELIVERY_FAILED, DROPPED = "pending", "delivered", "failed", "dropped"
DELIVERY_STATES = (PENDING_DELIVERY, DELIVERED, DELIVERY_FAILED, DROPPED)


@dataclass(frozen=True)
class Delivery:
    """One notice to post to one team's webhook: pending (tried ``attempts`` times, next at ``next_at``),
    delivered, failed (given up) or dropped (past the team's queue)."""

    id: int
    notice_id: int
    league_id: int
    author_id: int
    state: str
    attempts: int
    next_at: datetime
    error: str | None
