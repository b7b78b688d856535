"""Authors (teams of members) and their tokens: who a call's token is, and the calls that check a caller against
the database.

The operator creates an author, or a team signs up by itself (the league's ``[signup]``: with an operator's invite
code, or awaiting the operator's approval); either way its first member, the captain, gets a random token **once**
(``secrets.token_urlsafe``, 256 bits), and so does each member the captain adds. The database keeps only a token's
SHA-256, so a copy of the database lets no one act as an author. A token is looked up by
its hash and the stored hash is compared again with :func:`hmac.compare_digest`: the lookup's timing can only tell
about hashes of guesses, which says nothing of a token. (A fast hash is enough for tokens this random; passwords
would need a slow one.) A revoked token is refused (a member's alone, or the whole team's); the operator may issue
the captain a new one. A team awaiting approval, or rejected, can do nothing.

The operator's token (given at the server's start, as ``--token-file``) does everything. A member's token resolves
to its team, through that member (what the audit log names: :func:`audit`). Who may do what is ruled in :mod:`arena.league.rules.permissions` (pure); here are the calls
that read what they check from the database, e.g. :func:`owned_version`, the one way a version is fetched on a
caller's behalf.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
from datetime import datetime

from arena.league.clock import utc_now
from arena.league.rules.config import AuthorLimits, SignupSettings
from arena.league.rules.errors import LeagueError, PermissionDenied, Unauthenticated
from arena.league.rules.lifecycle import READY, RETIRED, check_reinstatable
from arena.league.rules.model import (
    ACTIVE,
    CAPTAIN,
    PENDING,
    REJECTED,
    AuditEntry,
    Author,
    Invite,
    Member,
    Version,
)
from arena.league.rules.permissions import (
    OPERATOR,
    UPLOAD_WINDOW,
    Caller,
    require_captain_of,
    require_operator,
    require_owner,
    require_quota_left,
    retire_reason,
)
from arena.league.rules.teams import check_name, require_pending
from arena.league.storage.db import Database

TOKEN_BYTES = 32
AUTHOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
INVITE_CHARS = 22
"""An invite code's randomness (128 bits): too many to guess, short enough to paste."""


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_token(token: str) -> str:
    """What the database stores of a token: its SHA-256, in hexadecimal."""
    return hashlib.sha256(token.encode()).hexdigest()


def create_author(database: Database, name: str) -> tuple[Author, str]:
    """A new author and its token: the only time the token is seen (show it once, store it nowhere)."""
    if not AUTHOR_NAME.fullmatch(name):
        raise LeagueError(f"an author's name must be 1 to 64 letters, digits, '.', '-' or '_' (starting with a "
                          f"letter or digit), got {name!r}")
    token = new_token()
    return database.add_author(name, hash_token(token)), token


def issue_token(database: Database, name: str) -> str:
    """A new token for an existing author (a lost or revoked one): the old token stops working at once."""
    author = database.author(name)
    token = new_token()
    database.replace_token_hash(author.id, hash_token(token))
    return token


def revoke(database: Database, name: str) -> Author:
    """Revoke an author (a team): every later call with any of its members' tokens is refused (its bots and versions
    stay)."""
    database.revoke_author(database.author(name).id)
    return database.author(name)


def sign_up(database: Database, league_id: int, league: str, settings: SignupSettings, name: str, captain: str,
            address: str, invite: str | None) -> tuple[Author, str]:
    """A team signed up by itself through a league (its ``[signup]`` rules, :mod:`arena.league.rules.teams`), and
    its captain's token: the only time it is seen. A refusal is one line and writes nothing."""
    check_name(name, "a team's name")
    check_name(captain or CAPTAIN, "a member's name")
    token = new_token()
    author = database.sign_up(league_id, league, settings, name, captain or CAPTAIN, hash_token(token), address,
                              hash_token(invite) if invite else None)
    return author, token


INVITE_ALPHABET = string.ascii_letters + string.digits
"""An invite code's letters: no '-' or '_', so a code is never read as a command line's option (a URL-safe token
may start with '-', and `arena league sign-up TEAM --invite -xyz` then fails)."""


def invite_code() -> str:
    """A fresh invite code of about 130 random bits."""
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(INVITE_CHARS))


def new_invite(database: Database, caller: Caller, league_id: int, uses: int, hours: int) -> tuple[Invite, str]:
    """The operator's invite code to sign up to a league (``uses`` sign-ups, for ``hours``): shown once, only its
    hash stored."""
    require_operator(caller, "make an invite code")
    code = invite_code()
    return database.add_invite(league_id, hash_token(code), uses, hours), code


def decide_team(database: Database, caller: Caller, name: str, approve: bool) -> Author:
    """The operator approves a team awaiting approval (it may act from now on) or rejects it (it never may; its
    name stays taken)."""
    require_operator(caller, "approve or reject a team")
    team = database.author(name)
    require_pending(team)
    return database.set_team_state(team.id, ACTIVE if approve else REJECTED, PENDING)


def team_of(database: Database, caller: Caller, name: str) -> Author:
    """The team a call names (``name``), or the caller's own when it names none (the operator must name one)."""
    if name:
        return database.author(name)
    if caller.author is None:
        raise LeagueError("name the team (--team NAME): the operator's calls on members say whose")
    return caller.author


def add_member(database: Database, caller: Caller, team_name: str, name: str) -> tuple[Author, Member, str]:
    """A new member of a team, added by its captain (or the operator), and its token: the only time it is seen."""
    team = team_of(database, caller, team_name)
    require_captain_of(caller, team, "add a member to")
    check_name(name, "a member's name")
    token = new_token()
    return team, database.add_member(team.id, name, hash_token(token)), token


def revoke_member(database: Database, caller: Caller, team_name: str, name: str, remove: bool) -> tuple[Author, Member]:
    """Revoke one member's token (``remove``: and remove the member), by its team's captain or the operator; the
    captain's own is refused (the operator revokes the whole team, or issues the captain a new token)."""
    team = team_of(database, caller, team_name)
    require_captain_of(caller, team, "remove a member of" if remove else "revoke a member of")
    member = database.member(team.id, name)
    if member.captain:
        raise PermissionDenied(f"member {name!r} is the captain of team {team.name!r}, who stays: the operator "
                               f"revokes the whole team (arena league revoke {team.name})")
    if remove:
        database.remove_member(member.id)
        return team, member
    return team, database.revoke_member(member.id)


def audit(database: Database, caller: Caller, league_id: int | None, action: str, detail: str,
          team: Author | None = None) -> AuditEntry:
    """Record who did what (the caller, through which member) in the audit log. ``team``: the team acted on, when
    it is not the caller's own."""
    author = team or caller.author
    member_id = caller.member.id if caller.member is not None else None
    return database.record_audit(league_id, author.id if author else None, member_id, caller.actor(), action,
                                 detail)


class Authenticator:
    """Resolves a call's token to its :class:`Caller`, or refuses it with :class:`Unauthenticated`."""

    def __init__(self, database: Database, operator_token: str | None) -> None:
        self._database = database
        self._operator_hash = hash_token(operator_token) if operator_token else None

    def caller(self, token: str | None) -> Caller:
        """Blocking (it reads the database): from trio, through
        :class:`arena.league.storage.db.AsyncDatabase`'s thread."""
        if not token:
            raise Unauthenticated("missing token: an author's token or the operator's is needed")
        given = hash_token(token)
        if self._operator_hash is not None and hmac.compare_digest(given, self._operator_hash):
            return OPERATOR
        holder = self._database.token_holder(given)
        if holder is None or not hmac.compare_digest(given, holder[2]):
            raise Unauthenticated("wrong token: it is no author's (ask the operator for yours)")
        author, member, _ = holder
        return caller_of(author, member)


def caller_of(author: Author, member: Member) -> Caller:
    """The caller a member's valid credential is (its token, or the web's session of it), or the one line that
    refuses it: a revoked team or member, a team awaiting approval or rejected."""
    if author.revoked:
        raise Unauthenticated(f"the token of author {author.name!r} was revoked (ask the operator for a new one)")
    if member.revoked:
        raise Unauthenticated(f"the token of member {member.name!r} of team {author.name!r} was revoked (ask its "
                              f"captain to add you again)")
    if author.state == PENDING:
        raise PermissionDenied(f"team {author.name!r} is awaiting the operator's approval: it can do nothing until "
                               f"then")
    if author.state == REJECTED:
        raise PermissionDenied(f"team {author.name!r} was rejected by the operator: it can do nothing")
    return Caller(author, member)


def owned_version(database: Database, caller: Caller, version_id: int, action: str) -> Version:
    """The version ``version_id`` if the caller may ``action`` it, else :class:`PermissionDenied`: the one way later
    calls fetch a version on a caller's behalf, so none forgets the check."""
    version = database.version(version_id)
    require_owner(caller, version, action)
    return version


def retire_version(database: Database, caller: Caller, version_id: int) -> Version:
    """Retire a version of the caller's own (or any, for the operator): it plays no more; its games stay."""
    owned_version(database, caller, version_id, "retire")
    return database.transition(version_id, RETIRED, retire_reason(caller))


def reinstate_version(database: Database, caller: Caller, version_id: int) -> Version:
    """The operator puts a suspended version back: ready, its count of failed starts reset (what suspended it, a
    bot that could not start, may have been the machine's fault, e.g. a full disk, now mended)."""
    require_operator(caller, "reinstate a version")
    check_reinstatable(database.version(version_id))
    return database.transition(version_id, READY)


def require_upload_quota(database: Database, caller: Caller, league_id: int, limits: AuthorLimits,
                         now: datetime | None = None) -> None:
    """Refuse an author's upload past the league's ``uploads_per_day`` (:func:`require_quota_left`), counting its
    uploads of the last :data:`UPLOAD_WINDOW` in the database; the operator's are not counted."""
    if caller.author is None:
        return
    since = (now or utc_now()) - UPLOAD_WINDOW
    require_quota_left(caller, database.uploads_since(caller.author.id, league_id, since), limits)
