"""The server's refusals as gRPC status codes, for every service it runs (the Arena's and the league's): one table,
:data:`STATUS_OF`, and one decorator, :func:`handled`, that turns a refusal into its status code with its one line.
Nothing escapes a handler as UNKNOWN with a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import trio

from arena.league.rules.errors import LeagueError, NotFound, PermissionDenied, StateError, Unauthenticated
from arena.server.core import SHUTTING_DOWN, ApiError, Refusal
from arena.tournament.spec import SpecError

STATUS_OF: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (StateError, grpc.StatusCode.FAILED_PRECONDITION),
    (LeagueError, grpc.StatusCode.INVALID_ARGUMENT),  # a bad archive or manifest is a LeagueError
    (SpecError, grpc.StatusCode.INVALID_ARGUMENT),
    (trio.RunFinishedError, grpc.StatusCode.UNAVAILABLE),
    (trio.Cancelled, grpc.StatusCode.UNAVAILABLE),
)
"""The domain's errors as status codes, the first match wins. An :class:`ApiError` says why (:data:`CODE_OF`)."""
CODE_OF: dict[Refusal, grpc.StatusCode] = {
    Refusal.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    Refusal.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Refusal.FAILED_PRECONDITION: grpc.StatusCode.FAILED_PRECONDITION,
    Refusal.RESOURCE_EXHAUSTED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Refusal.DATA_LOSS: grpc.StatusCode.DATA_LOSS,
    Refusal.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
}
"""Each refusal of the server's own calls as its status code."""


def status_of(error: BaseException) -> tuple[grpc.StatusCode, str] | None:
    """The status code and message a refusal is answered with, or None for what is no refusal (a bug)."""
    if isinstance(error, ApiError):
        return CODE_OF[error.code], error.message
    for kind, code in STATUS_OF:
        if isinstance(error, kind):
            shutting_down = isinstance(error, (trio.RunFinishedError, trio.Cancelled))
            return code, SHUTTING_DOWN if shutting_down else str(error)
    return None


REFUSALS = (ApiError, LeagueError, SpecError, trio.RunFinishedError, trio.Cancelled)
"""What a handler may raise that is a refusal (:func:`status_of` answers each); anything else is a bug."""


async def abort_with(context: Any, error: BaseException) -> None:
    """End the call (a grpc.aio context's) with the refusal's status code and its one line; raises grpc.aio's
    AbortError, as ``context.abort`` does."""
    found = status_of(error)
    assert found is not None
    await context.abort(*found)


def handled(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """A grpc.aio handler whose refusals become their status codes with their one line (:func:`status_of`)."""
    @functools.wraps(method)
    async def handler(self: Any, request: Any, context: Any, *more: Any) -> Any:
        try:
            return await method(self, request, context, *more)
        except REFUSALS as error:
            await abort_with(context, error)
    return handler
