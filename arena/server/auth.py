"""Who may talk to the server: loopback by default; beyond loopback only with a token; TLS with given files.

Every call must carry ``authorization: Bearer <token>`` when the server has a token; a server interceptor (grpc.aio's,
on the loop) checks it with :func:`hmac.compare_digest` before any handler runs, and refuses with UNAUTHENTICATED
otherwise: the call's handler is replaced by one of the same kind that only refuses, so the refused call reads no
request stream and takes no stream slot.
"""

from __future__ import annotations

import hmac
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
import grpc.aio

from arena.errors import ArenaError, read_named_file
from arena.protocol.addresses import is_loopback as is_loopback  # re-exported: also where the server's modules find it

AUTH_HEADER = "authorization"
SCHEME = "Bearer "


class ConfigError(ArenaError, ValueError):
    """A server or client setting that cannot work (a usage error: exit status 2)."""


def read_token(path: str | Path) -> str:
    """The token in a file (surrounding whitespace ignored); at least 16 characters, printable, no spaces."""
    path = Path(path)
    token = read_named_file(path, "token file", ConfigError).strip()
    if len(token) < 16 or not token.isprintable() or any(c.isspace() for c in token):
        raise ConfigError(f"{path}: expected a token of at least 16 printable characters without spaces "
                          f"(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))' > {path}`)")
    return token


def check_private(path: str | Path, what: str) -> None:
    """Refuse a secret that other users of this machine can read or replace (as ssh refuses a private key): a token
    anyone can read is no token."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what}: {error.strerror or error}") from None
    if mode & 0o077:
        raise ConfigError(f"{path}: the {what} is open to other users (mode {mode:04o}); make it private with "
                          f"`chmod 600 {path}`")


def read_file(path: str | Path, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what}: {error.strerror or error}") from None


def server_credentials(cert: str | None, key: str | None) -> grpc.ServerCredentials | None:
    """TLS credentials from a PEM certificate (chain) and its private key; None without TLS."""
    if (cert is None) != (key is None):
        raise ConfigError("expected both --tls-cert and --tls-key (or neither)")
    if cert is None or key is None:
        return None
    check_private(key, "TLS key")  # whoever reads it can pose as this server
    return grpc.ssl_server_credentials([(read_file(key, "TLS key"), read_file(cert, "TLS certificate"))])


def check_listen(address: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token."""
    if not is_loopback(address) and token is None:
        raise ConfigError(f"refusing to listen on {address} without a token: beyond loopback every call must be "
                          f"authenticated; pass --token-file FILE (and preferably --tls-cert/--tls-key), or listen "
                          f"on 127.0.0.1")


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata carrying the token."""
    return ((AUTH_HEADER, SCHEME + token),)


if TYPE_CHECKING:
    # The stubs' ServerInterceptor is generic in its calls' messages, the runtime class is not subscriptable; these
    # see the calls of every service, so their messages are Any.
    ServerInterceptor = grpc.aio.ServerInterceptor[Any, Any]
    Handler = grpc.RpcMethodHandler[Any, Any]
else:
    ServerInterceptor = grpc.aio.ServerInterceptor
    Handler = grpc.RpcMethodHandler

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable["Handler"]]
"""What a grpc.aio interceptor is handed: the next interceptors' (then the server's) handler for a call (None, for
a method the server does not have, whatever the stubs say)."""
KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")
"""The four kinds of a method handler, as grpc names their behaviours and factories."""


def kind_of(handler: Handler) -> str:
    """Which of :data:`KINDS` a method handler is (from whether it streams requests, responses)."""
    return f"{'stream' if handler.request_streaming else 'unary'}_{'stream' if handler.response_streaming else 'unary'}"


def behaviour_of(handler: Handler) -> Callable[..., Any]:
    """The function that serves a method handler's calls."""
    behaviour: Callable[..., Any] = getattr(handler, kind_of(handler))
    return behaviour


def with_behaviour(handler: Handler, behaviour: Callable[..., Any]) -> Handler:
    """A method handler of the same kind and (de)serialisation as ``handler``, served by ``behaviour``."""
    make = getattr(grpc, f"{kind_of(handler)}_rpc_method_handler")
    made: Handler = make(behaviour, request_deserializer=handler.request_deserializer,
                         response_serializer=handler.response_serializer)
    return made


class TokenInterceptor(ServerInterceptor):
    """Refuses every call without the right bearer token with UNAUTHENTICATED."""

    def __init__(self, token: str, own_checks: tuple[str, ...] = ()) -> None:
        self._expected = (SCHEME + token).encode()
        self._own_checks = own_checks
        """Path prefixes of services that check every call's token themselves (the league's: authors have tokens
        of their own), let through here."""

    def _authorized(self, details: grpc.HandlerCallDetails) -> bool:
        if self._own_checks and details.method.startswith(self._own_checks):
            return True
        given = b""
        for key, value in details.invocation_metadata or ():
            if key == AUTH_HEADER:
                given = value.encode() if isinstance(value, str) else bytes(value)
                break
        return hmac.compare_digest(given, self._expected)

    async def intercept_service(self, continuation: Continuation, details: grpc.HandlerCallDetails
                                ) -> Handler:
        handler = await continuation(details)
        if handler is None or self._authorized(details):
            return handler
        missing = not any(key == AUTH_HEADER for key, _ in details.invocation_metadata or ())
        message = ("missing token: send the metadata 'authorization: Bearer <token>' (arena ... --token-file F)"
                   if missing else "wrong token")

        async def refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

        return with_behaviour(handler, refuse)
