"""Teams joining a league by themselves, pure: the league's ``[signup]`` (:class:`SignupSettings`) against what the
database counts, each refusal one line that names the rule and its key.

A sign-up is checked in this order, and the first rule broken refuses it: the league's mode (``operator``: closed),
the team's name (a bot's name's characters), the rate limits (per client address and per league, in any hour), the
cap on teams, the invite code (in ``invite`` mode), the name's uniqueness regardless of case. What is counted is the
teams that signed up (a refused sign-up counts nothing: a refusal changes nothing). The database
(:mod:`arena.league.storage.teams`) asks these rules inside the transaction that writes the team.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from arena.league.rules.config import SignupSettings
from arena.league.rules.errors import LeagueError, PermissionDenied, StateError
from arena.league.rules.manifest import NAME_PATTERN
from arena.league.rules.model import ACTIVE, PENDING, Author, Invite

SIGNUP_WINDOW = timedelta(hours=1)
"""The window ``per_address_per_hour`` and ``per_league_per_hour`` count sign-ups in (any hour)."""
MAX_INVITE_USES = 10_000
MAX_INVITE_HOURS = 24 * 365


class SignupRefused(PermissionDenied):
    """A sign-up the league's rules refuse (gRPC PERMISSION_DENIED): nothing was written."""


class NameTaken(LeagueError):
    """A team or member name taken already, regardless of case (gRPC INVALID_ARGUMENT)."""


def check_name(name: str, what: str) -> str:
    """A team's or member's name: a bot's name's characters (1 to 64 letters, digits, '.', '-' or '_')."""
    if not NAME_PATTERN.fullmatch(name):
        raise LeagueError(f"{what} must be 1 to 64 letters, digits, '.', '-' or '_' (starting with a letter or "
                          f"digit), got {name!r}")
    return name


def name_key(name: str) -> str:
    """What two names are compared by: their lower case (names are ASCII)."""
    return name.lower()


def require_open(settings: SignupSettings, league: str) -> None:
    if settings.mode == "operator":
        raise SignupRefused(f"sign-up is closed in league {league!r}: its operator adds each team (arena league "
                            f"add-author)")


def require_rate(settings: SignupSettings, league: str, from_address: int, to_league: int) -> None:
    """Refuse past ``per_address_per_hour`` (sign-ups from the client's address in the last hour) or
    ``per_league_per_hour`` (sign-ups to the league in the last hour)."""
    if from_address >= settings.per_address_per_hour:
        raise SignupRefused(f"sign-up refused: {from_address} teams signed up from your address in the last hour, "
                            f"the limit of league {league!r} (signup.per_address_per_hour = "
                            f"{settings.per_address_per_hour}); try later")
    if to_league >= settings.per_league_per_hour:
        raise SignupRefused(f"sign-up refused: {to_league} teams signed up to league {league!r} in the last hour, "
                            f"its limit (signup.per_league_per_hour = {settings.per_league_per_hour}); try later")


def require_room(settings: SignupSettings, league: str, teams: int) -> None:
    """Refuse when ``teams`` signed up through the league already, its ``max_teams`` (0: no cap)."""
    if settings.max_teams and teams >= settings.max_teams:
        raise SignupRefused(f"sign-up refused: league {league!r} has {teams} teams signed up, its cap "
                            f"(signup.max_teams = {settings.max_teams})")


def require_invite(settings: SignupSettings, league: str, invite: Invite | None, given: bool,
                   now: datetime) -> None:
    """In ``invite`` mode, an invite code of this league (``invite``, found by the code's hash; None when no code of
    it matches), not expired, with a use left."""
    if settings.mode != "invite":
        return
    if not given:
        raise SignupRefused(f"sign-up refused: league {league!r} asks for an invite code (--invite CODE, from its "
                            f"operator)")
    if invite is None:
        raise SignupRefused(f"sign-up refused: that invite code is not one of league {league!r}")
    if invite.expires_at <= now:
        raise SignupRefused(f"sign-up refused: that invite code expired at {utc_text(invite.expires_at)}")
    if invite.used >= invite.uses:
        raise SignupRefused(f"sign-up refused: that invite code is used up (its {invite.uses} "
                            f"{'use' if invite.uses == 1 else 'uses'})")


def require_free(name: str, taken: str | None, what: str = "team", prefix: str = "") -> None:
    """Refuse a name another one (``taken``) already has, regardless of case."""
    if taken is not None:
        same = "" if taken == name else f" by {what} {taken!r} (names are unique regardless of case)"
        raise NameTaken(f"{prefix}the name {name!r} is taken{same}")


def state_after_signup(settings: SignupSettings) -> str:
    """A new team's state: pending the operator's approval in ``approval`` mode, else active."""
    return PENDING if settings.mode == "approval" else ACTIVE


def require_pending(author: Author) -> None:
    """The operator approves or rejects only a team awaiting approval."""
    if author.state != PENDING:
        raise StateError(f"team {author.name!r} is not awaiting approval (it is {author.state})")


def check_invite_terms(uses: int, hours: int) -> None:
    if not 1 <= uses <= MAX_INVITE_USES:
        raise LeagueError(f"an invite's uses must be 1 to {MAX_INVITE_USES:,}, got {uses}")
    if not 1 <= hours <= MAX_INVITE_HOURS:
        raise LeagueError(f"an invite lasts 1 to {MAX_INVITE_HOURS:,} hours, got {hours}")


def utc_text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
