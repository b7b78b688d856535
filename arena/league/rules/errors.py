"""The league's errors: each one line a CLI prints as it is and the gRPC service maps onto a status code.

They are :class:`~arena.errors.ArenaError` errors, which every ``arena`` command prints as one line; a league file's
:class:`ConfigError` is also a tournament file's :class:`~arena.tournament.errors.SpecError` (a league file shares its
keys' checks with tournament files).
"""

from __future__ import annotations

from arena.errors import ArenaError
from arena.tournament.errors import SpecError


class LeagueError(ArenaError):
    """Anything the league refuses."""


class ConfigError(LeagueError, SpecError):
    """A league file that cannot be run, with the file, the key and the allowed values in the message."""


class DatabaseError(LeagueError):
    """A database that cannot be opened or migrated (a bad URL, a server that is not there)."""


class NotFound(LeagueError):
    """An author, bot or version that does not exist (gRPC NOT_FOUND)."""


class Unauthenticated(LeagueError):
    """A token that is no author's, or a revoked one (gRPC UNAUTHENTICATED)."""


class PermissionDenied(LeagueError):
    """A call the caller may not make: another author's bot or version, or an operator's call (PERMISSION_DENIED)."""


class StateError(LeagueError):
    """A version's state change that its lifecycle does not allow, e.g. ready -> building (FAILED_PRECONDITION)."""
