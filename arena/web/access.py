"""Who may see the web dashboard, by the rules of the gRPC side (:mod:`arena.server.auth`).

- No token on the server: the dashboard may listen on loopback only (as ``arena serve --listen``), and is open.
- A token on the server: every request carries it, as ``Authorization: Bearer <token>`` or as the session cookie
  the sign-in form sets (HttpOnly, SameSite=Strict; it holds an HMAC of the token, never the token itself).
- ``--http-public``: a spectators' site. Anyone without the token sees the *public* view (finished games and what
  is public about the tournament: no game in progress); with a token, its holders still see everything.

Every level sees only what ``arena watch`` may show (see :mod:`arena.web.data`); the levels differ in whether
games in progress can be followed.

Whatever the level, the dashboard answers only for its own names (:class:`HostNames`): a page on another site that
the operator visits could otherwise read an open loopback dashboard by DNS rebinding (its own name made to point at
127.0.0.1, so that the browser sends the dashboard that site's name in ``Host:``).
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import ipaddress
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

from arena.protocol.addresses import is_loopback
from arena.server.auth import SCHEME, ConfigError
from arena.server.defaults import MAX_SHARE_HOURS

COOKIE = "arena_session"
COOKIE_LABEL = b"dominoes-arena web session v1"
"""What the cookie's HMAC is of (keyed by the token): a cookie proves the token without holding it."""


class Access(enum.Enum):
    FULL = "full"
    """Everything the web shows: standings, games, and games in progress move by move."""
    PUBLIC = "public"
    """Finished and public data only (``--http-public`` without the token)."""
    NONE = "none"
    """Nothing but the sign-in form."""


@dataclass(frozen=True)
class AccessRules:
    token: str | None
    public: bool

    def session_cookie(self) -> str:
        """The cookie value that proves the token."""
        assert self.token is not None
        return hmac.new(self.token.encode(), COOKIE_LABEL, hashlib.sha256).hexdigest()

    def token_matches(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def level(self, authorization: str | None, cookie: str | None) -> Access:
        """The access of a request from its ``Authorization`` header and its session cookie."""
        if self.token is None:
            return Access.PUBLIC if self.public else Access.FULL
        if authorization is not None and authorization.startswith(SCHEME) and self.token_matches(
                authorization[len(SCHEME):]):
            return Access.FULL
        if cookie is not None and hmac.compare_digest(cookie.encode(), self.session_cookie().encode()):
            return Access.FULL
        return Access.PUBLIC if self.public else Access.NONE


def check_http_listen(address: str, token: str | None, public: bool) -> None:
    """Refuse to serve the dashboard beyond loopback to anyone without a token (unless it is the public site)."""
    if not is_loopback(address) and token is None and not public:
        raise ConfigError(f"refusing to serve the web dashboard on {address} without a token: beyond loopback every "
                          f"request must be authenticated; pass --token-file FILE, or --http-public for a read-only "
                          f"spectators' site, or serve on 127.0.0.1")


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""The names a browser on this machine uses for a dashboard on a loopback address (or on every interface)."""
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
HOST_NAME = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$")


@dataclass(frozen=True)
class HostNames:
    """The names the dashboard answers for in a request's ``Host:`` (any port): the host it listens on, the names
    the operator gives (``--http-host NAME``), and localhost, 127.0.0.1 and [::1] when it listens on loopback or on
    every interface."""

    names: frozenset[str]

    @classmethod
    def of(cls, listen_host: str, given: tuple[str, ...] = ()) -> HostNames:
        host = listen_host.strip("[]").lower()
        names = set(given)
        if host in WILDCARD_HOSTS or is_loopback(f"{host}:0" if ":" not in host else f"[{host}]:0"):
            names |= LOOPBACK_NAMES
        if host not in WILDCARD_HOSTS:
            names.add(_canonical(host))
        return cls(frozenset(names))

    def allows(self, header: str | None) -> bool:
        """Whether a request's ``Host:`` header names this dashboard (a missing or malformed one does not)."""
        name = host_of_header(header) if header is not None else None
        return name is not None and name in self.names


def host_of_header(header: str) -> str | None:
    """The host name of a ``Host:`` header (``name``, ``name:port``, ``[v6]:port``), lower case, or None when it is
    none of these."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        rest = header[end + 1:]
        if end < 0 or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        try:
            return str(ipaddress.IPv6Address(header[1:end]))
        except ValueError:
            return None
    name, colon, port = header.partition(":")
    if colon and not port.isdigit():
        return None
    return _canonical(name) if name and HOST_NAME.match(name) else None


def _canonical(name: str) -> str:
    """A name as compared: lower case, without a final dot; an IP address in its usual form."""
    name = name.lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(name.strip("[]")))
    except ValueError:
        return name


def check_host_name(name: str) -> str:
    """A ``--http-host`` name, checked: a DNS name or an IP address, without a port."""
    canonical = _canonical(name.strip())
    try:
        ipaddress.ip_address(canonical)
        return canonical
    except ValueError:
        pass
    if not HOST_NAME.match(canonical):
        raise ConfigError(f"--http-host {name!r}: expected a host name or an IP address, without a port (the "
                          f"dashboard answers for it on any port)")
    return canonical


# --- authors' sessions, forms' CSRF tokens and share links: each an HMAC keyed by the server's token --------------

AUTHOR_COOKIE = "arena_author"
AUTHOR_LABEL = b"dominoes-arena web author session v1"
AUTHOR_SESSION_S = 7 * 24 * 3600
"""How long an author's sign-in lasts (a new token or a revoke ends it sooner)."""
CSRF_LABEL = b"dominoes-arena web form v1"
SIGNUP_COOKIE = "arena_signup"
"""A random value the sign-up page sets (HttpOnly, SameSite=Strict): a visitor signing up has no session, so the
sign-up form's CSRF token is made from this (a double-submit: a page of another site can neither read the form's
token nor make the browser send this cookie with its post)."""
SHARE_COOKIE = "arena_share"
SHARE_LABEL = b"dominoes-arena share link v1"
SHARE_KINDS = {"t": "tournament", "l": "league"}
DEFAULT_SHARE_HOURS = 24
SHARE_PATH = "/share/"
"""Where a share link opens on the dashboard: ``/share/LINK``."""


def share_expiry(hours: int, now: float) -> int:
    """When a share link made now for ``hours`` expires (Unix seconds); a ValueError with its one line for a
    lifetime outside 1 to :data:`MAX_SHARE_HOURS` hours."""
    if not 1 <= hours <= MAX_SHARE_HOURS:
        raise ValueError(f"hours: a share link lasts 1 to {MAX_SHARE_HOURS} hours, got {hours}")
    return int(now) + hours * 3600


def _mac(key: str, label: bytes, *parts: str) -> str:
    message = label + b"".join(b"\0" + part.encode() for part in parts)
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


@dataclass(frozen=True)
class AuthorSession:
    """What an author's cookie says: who (the team's name for its captain, ``team/member`` for another member, see
    :func:`session_name`) and until when; its HMAC covers the stored hash of the member's token too, so a new token,
    a revoke or a removal ends every session of the old one."""

    name: str
    expires: int
    mac: str


@dataclass(frozen=True)
class Share:
    """A read-only link to one tournament (``kind`` "t", ``name`` its id) or one league ("l", its name)."""

    kind: str
    name: str
    expires: int

    def home(self) -> str:
        """The page the link opens."""
        return f"/t/{quote(self.name, safe='')}" if self.kind == "t" else f"/leagues/{quote(self.name, safe='')}"

    def describe(self) -> str:
        return f"{SHARE_KINDS[self.kind]} {self.name}"


INDEX = ("/", "all tournaments")
"""The dashboard's front page, the list of tournaments (where, what): the header's brand link and a refusal's way
back, for every viewer but a share link's."""


@dataclass(frozen=True)
class Viewer:
    """Whom a page is rendered for: its level, and the share link it came in by (None for the operator, an author,
    a spectator). A page offers only the links its viewer may follow: a share link opens its one tournament or
    league, so its pages show neither the list of tournaments nor an author's page. Hiding a link protects
    nothing: each route's gate still refuses what its viewer may not see (``app.create_app``'s ``shared``)."""

    access: Access
    share: Share | None = None

    def front(self) -> tuple[str, str]:
        """Where the viewer's dashboard starts (where, what): the list of tournaments, or the page a share link
        opens (the list is not its to see)."""
        return (self.share.home(), self.share.describe()) if self.share is not None else INDEX

    @property
    def confined(self) -> bool:
        """Whether it may open one tournament's or league's pages only (a share link's viewer)."""
        return self.share is not None


class ShareRefused(Exception):
    """A share link that opens nothing: tampered with (403) or expired (410)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Signer:
    """The server's HMACs of the web's own credentials, keyed by the server's token (never sent anywhere)."""

    secret: str

    def author_cookie(self, name: str, token_hash: str, now: float) -> str:
        expires = int(now) + AUTHOR_SESSION_S
        return f"{name}:{expires}:{_mac(self.secret, AUTHOR_LABEL, name, str(expires), token_hash)}"

    @staticmethod
    def author_session(value: str, now: float) -> AuthorSession | None:
        """The cookie's claim, unchecked against the author's token hash (the caller looks it up), or None when
        malformed or expired."""
        name, _, rest = value.partition(":")
        expires, _, mac = rest.partition(":")
        if not name or not expires.isdigit() or int(expires) <= now or len(mac) != 64:
            return None
        return AuthorSession(name, int(expires), mac)

    def author_matches(self, session: AuthorSession, token_hash: str) -> bool:
        return _same(session.mac, _mac(self.secret, AUTHOR_LABEL, session.name, str(session.expires), token_hash))

    def csrf(self, session: str) -> str:
        """The token each state-changing form of a session carries: a page of another site cannot read it."""
        return _mac(self.secret, CSRF_LABEL, session)

    def csrf_matches(self, session: str, given: str) -> bool:
        return _same(given, self.csrf(session))

    def share_link(self, kind: str, name: str, expires: int) -> str:
        payload = base64.urlsafe_b64encode(f"{kind}:{expires}:{name}".encode()).decode().rstrip("=")
        return f"{payload}.{_mac(self.secret, SHARE_LABEL, payload)}"

    def league_link(self, name: str, hours: int, now: float) -> tuple[str, int]:
        """A share link to league ``name`` for ``hours`` (0: :data:`DEFAULT_SHARE_HOURS`) from ``now``: its path on
        the dashboard and its expiry (``arena league share``; a ValueError for a lifetime out of bounds,
        :func:`share_expiry`)."""
        expires = share_expiry(hours or DEFAULT_SHARE_HOURS, now)
        return SHARE_PATH + self.share_link("l", name, expires), expires

    def share(self, value: str, now: float) -> Share:
        """The share a link's value names, or :class:`ShareRefused`: 403 for one whose signature does not match
        (tampered with, or of another server), 410 for an expired one."""
        payload, _, mac = value.partition(".")
        if not _same(mac, _mac(self.secret, SHARE_LABEL, payload)):
            raise ShareRefused(403, "this share link is not valid: it was changed or is of another server; ask its "
                                    "operator for a new one")
        text = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
        kind, expires, name = text.split(":", 2)
        if int(expires) <= now:
            raise ShareRefused(410, f"this share link of {SHARE_KINDS[kind]} {name} expired at "
                                    f"{_utc(int(expires))}; ask its operator for a new one")
        return Share(kind, name, int(expires))


def session_name(team: str, member: str, captain: bool) -> str:
    """Who an author's cookie names: the team (its captain), or ``team/member`` (no name holds ``/`` or ``:``)."""
    return team if captain else f"{team}/{member}"


def session_member(name: str) -> tuple[str, str | None]:
    """The team and member a cookie's name says (None: the team's captain)."""
    team, slash, member = name.partition("/")
    return team, member if slash else None


def _utc(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a form's ``Origin:`` (when the browser sends one) is this site's own: a page of another site that
    posts here sends its own (a request without one, from a script or curl, carries no cookie of a browser)."""
    if origin is None:
        return True
    return host is not None and urlsplit(origin).netloc.lower() == host.strip().lower()
