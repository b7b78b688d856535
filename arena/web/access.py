"""Who may see the web dashboard, by the rules of the gRPC side (:mod:`arena.server.auth`).

- No token on the server: the dashboard may listen on loopback only (as ``arena serve --listen``), and is open.
- A token on the server: every request carries it, as ``Authorization: Bearer <token>`` or as the session cookie
  the sign-in form sets (HttpOnly, SameSite=Strict; it holds an HMAC of the token, never the token itself).
- ``--http-public``: a spectators' site. Anyone without the token sees the *public* view (finished games and what
  is public about the tournament: no game in progress); with a token, its holders still see everything.

Every level sees only what ``arena watch`` may show (see :mod:`arena.web.data`); the levels differ in whether
games in progress can be followed.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
from dataclasses import dataclass

from ..server.auth import SCHEME, ConfigError, is_loopback

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
