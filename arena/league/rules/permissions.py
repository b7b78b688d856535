"""Who may do what in the league, pure: the caller of a call, and the checks every call makes before it reads or
changes anything.

The operator does everything. An author is a team of members: each member acts on its team's bots and versions
only (one team cannot list, read or retire another's), and the team's uploads are counted against the league's
daily limit; the team's captain also adds and removes its members. Which caller a token is, is found
by :class:`arena.league.authors.Authenticator` (it reads the database); the rules here need only the caller and
what it touches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from arena.league.rules.config import AuthorLimits
from arena.league.rules.errors import PermissionDenied
from arena.league.rules.model import Author, Bot, Member, Version


@dataclass(frozen=True)
class Caller:
    """Who is calling: the operator, or one author (a team) through one of its members. What a caller may do is
    its team's: two members of a team are the same caller to every permission (``member`` is not compared)."""

    author: Author | None
    member: Member | None = field(default=None, compare=False)

    @property
    def is_operator(self) -> bool:
        return self.author is None

    @property
    def is_captain(self) -> bool:
        return self.member is not None and self.member.captain

    def describe(self) -> str:
        return "the operator" if self.author is None else f"author {self.author.name!r}"

    def actor(self) -> str:
        """Who did it, as the audit log says: ``the operator``, or ``team/member``."""
        if self.author is None:
            return "the operator"
        return f"{self.author.name}/{self.member.name}" if self.member is not None else self.author.name


OPERATOR = Caller(author=None)


def owns(caller: Caller, author_id: int) -> bool:
    """Whether the caller may act on what belongs to the author ``author_id``: its own things, or anything for the
    operator."""
    return caller.author is None or caller.author.id == author_id


def require_operator(caller: Caller, action: str) -> None:
    """Refuse ``action`` (e.g. "create an author") to anyone but the operator."""
    if not caller.is_operator:
        raise PermissionDenied(f"{caller.describe()} may not {action}: only the operator may")


def require_captain_of(caller: Caller, author: Author, action: str) -> None:
    """Refuse ``action`` (e.g. "add a member to") on a team to anyone but the operator and that team's captain."""
    if caller.is_operator:
        return
    assert caller.author is not None
    if caller.author.id != author.id:
        raise PermissionDenied(f"{caller.describe()} may not {action} team {author.name!r}: it is another team")
    if not caller.is_captain:
        member = caller.member.name if caller.member is not None else "?"
        raise PermissionDenied(f"member {member!r} of team {author.name!r} may not {action} its team: only its "
                               f"captain may")


def require_member(caller: Caller, action: str) -> Author:
    """The caller's team, for ``action`` (e.g. "set a webhook") that only a team's member may take: the operator
    has no team."""
    if caller.author is None:
        raise PermissionDenied(f"the operator may not {action}: only a member of a team may (for its own team)")
    return caller.author


def require_bot_owner(caller: Caller, bot: Bot, action: str) -> None:
    """Refuse ``action`` (e.g. "upload to") on another author's bot."""
    if not owns(caller, bot.author_id):
        raise PermissionDenied(f"{caller.describe()} may not {action} bot {bot.name!r}: it is another author's")


def require_owner(caller: Caller, version: Version, action: str) -> None:
    """Refuse ``action`` (e.g. "retire", "read the build log of") on another author's version."""
    if not owns(caller, version.author_id):
        raise PermissionDenied(f"{caller.describe()} may not {action} version {version.id}: it is another "
                               f"author's")


UPLOAD_WINDOW = timedelta(days=1)
"""The window the league's ``uploads_per_day`` counts an author's uploads in (any 24 hours)."""


def require_quota_left(caller: Caller, uploaded: int, limits: AuthorLimits) -> None:
    """Refuse an author's upload when it has ``uploaded`` versions in the last :data:`UPLOAD_WINDOW` already, the
    league's ``uploads_per_day`` or more (the operator has no quota): each new version costs a sandboxed build, so
    one author cannot flood the builders."""
    if caller.author is not None and uploaded >= limits.uploads_per_day:
        raise PermissionDenied(f"{caller.describe()} has uploaded {uploaded} versions in the last 24 hours, the "
                               f"league's limit (authors.uploads_per_day = {limits.uploads_per_day}); try later")


def sees_finals_results(caller: Caller | None, published: bool) -> bool:
    """Whether the caller (None: a spectator of the web's pages, who gave no token) sees the finals' ranking and
    game scores: everyone once the league's timeline published them (``timeline.results``,
    :func:`arena.league.rules.timeline.published`), the operator alone before. Reading the league's status,
    standings, queue and the finals' progress needs only a valid token."""
    return published or (caller is not None and caller.is_operator)


def retire_reason(caller: Caller) -> str:
    """The reason a retired version shows: who retired it."""
    return "retired by its author" if caller.author else "retired by the operator"
