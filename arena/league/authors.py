"""Authors and their tokens: who a call's token is, and the calls that check a caller against the database.

The operator creates an author, which gives back a random token **once** (``secrets.token_urlsafe``, 256 bits); the
database keeps only its SHA-256, so a copy of the database lets no one act as an author. A token is looked up by
its hash and the stored hash is compared again with :func:`hmac.compare_digest`: the lookup's timing can only tell
about hashes of guesses, which says nothing of a token. (A fast hash is enough for tokens this random; passwords
would need a slow one.) A revoked token is refused; the operator may issue a new one.

The operator's token (given at the server's start, as ``--token-file``) does everything. An author's token resolves
to that author only. Who may do what is ruled in :mod:`arena.league.rules.permissions` (pure); here are the calls
that read what they check from the database, e.g. :func:`owned_version`, the one way a version is fetched on a
caller's behalf.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime

from arena.league.clock import utc_now
from arena.league.rules.config import AuthorLimits
from arena.league.rules.errors import LeagueError, Unauthenticated
from arena.league.rules.lifecycle import READY, RETIRED, check_reinstatable
from arena.league.rules.model import Author, Version
from arena.league.rules.permissions import (
    OPERATOR,
    UPLOAD_WINDOW,
    Caller,
    require_operator,
    require_owner,
    require_quota_left,
    retire_reason,
)
from arena.league.storage.db import Database

TOKEN_BYTES = 32
AUTHOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


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
    """Revoke an author's token: every later call with it is refused (its bots and versions stay)."""
    database.revoke_author(database.author(name).id)
    return database.author(name)


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
        if holder is None or not hmac.compare_digest(given, holder[1]):
            raise Unauthenticated("wrong token: it is no author's (ask the operator for yours)")
        author = holder[0]
        if author.revoked:
            raise Unauthenticated(f"the token of author {author.name!r} was revoked (ask the operator for a new one)")
        return Caller(author)


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
