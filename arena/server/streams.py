"""Long-lived calls (watch streams, health watches, reflection, dial-ins) apart from the quick ones.

Every handler runs on the loop (grpc.aio's, the thread trio runs on as its guest) and holds no thread, but an open
stream still holds a call, its buffers and its watcher for as long as it is open, read or not. Streams are
therefore counted here, over all clients and per client (its address without the port: one machine), and one
beyond either limit is refused at once with RESOURCE_EXHAUSTED saying which limit and its flag. The server's limit
on calls in flight leaves :data:`UNARY_BACKLOG` calls beside every stream allowed: however many streams are open, a
``ListTournaments`` is answered.
"""

from __future__ import annotations

import inspect
import threading
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

import grpc
import grpc.aio

from arena.server.auth import Continuation, Handler, ServerInterceptor, behaviour_of, with_behaviour

MAX_STREAMS = 200
"""Streams open at once over every client (``--max-streams``)."""
MAX_STREAMS_PER_CLIENT = 100
"""Streams open at once from one client address (``--max-streams-per-client``): half the total, so that one client
never holds every stream."""
UNARY_BACKLOG = 1024
"""Quick calls that may be in flight beside every stream allowed; beyond, gRPC itself answers RESOURCE_EXHAUSTED."""


class StreamRefused(Exception):
    """A stream beyond a limit; its message names the limit and the flag that sets it."""


class StreamLimits:
    """The streams open now, in total and by client (used on the loop; locked, so that any thread may ask)."""

    def __init__(self, total: int = MAX_STREAMS, per_client: int = MAX_STREAMS_PER_CLIENT) -> None:
        self.total = total
        self.per_client = per_client
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def calls_in_flight(self) -> int:
        """The server's ``maximum_concurrent_rpcs``: every stream allowed, and the quick calls beside them."""
        return self.total + UNARY_BACKLOG

    def open_now(self) -> int:
        with self._lock:
            return sum(self._open.values())

    def acquire(self, client: str) -> Callable[[], None]:
        """Count a new stream of ``client``; returns the function that ends it (once, however often called)."""
        with self._lock:
            if sum(self._open.values()) >= self.total:
                raise StreamRefused(f"too many streams open on this server ({self.total}, arena serve "
                                    f"--max-streams); try again when one has ended")
            if self._open[client] >= self.per_client:
                raise StreamRefused(f"too many streams open from {client} ({self.per_client}, arena serve "
                                    f"--max-streams-per-client); end one first")
            self._open[client] += 1
        ended = threading.Event()

        def release() -> None:
            with self._lock:
                if ended.is_set():
                    return
                ended.set()
                self._open[client] -= 1
                if not self._open[client]:
                    del self._open[client]
        return release


def client_of(context: grpc.ServicerContext) -> str:
    """The calling machine: the peer's address without its port (``ipv4:127.0.0.1``), or ``unix`` for a Unix
    socket."""
    peer = context.peer() or ""
    if peer.startswith("unix"):
        return "unix"
    kind, _, address = peer.partition(":")
    host, colon, port = address.rpartition(":")
    return f"{kind}:{host}" if colon and port.isdigit() else peer


class StreamLimitInterceptor(ServerInterceptor):
    """Counts every call that streams (either way) in :class:`StreamLimits` for as long as its handler runs;
    refuses one beyond the limits with RESOURCE_EXHAUSTED before its handler starts. Quick calls pass untouched.

    A stream's handler is served as a coroutine that writes with ``context.write`` (an async generator's messages
    are written so, the generator closed however the call ends): grpc.aio cancels the handler's task when its
    client cancels or the server stops, and the slot is released as the task ends."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits

    async def intercept_service(self, continuation: Continuation, details: grpc.HandlerCallDetails
                                ) -> Handler:
        handler = await continuation(details)
        if handler is None or not (handler.request_streaming or handler.response_streaming):
            return handler
        return with_behaviour(handler, self._limited(behaviour_of(handler)))

    def _limited(self, behaviour: Callable[..., Any]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def limited(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                release = self.limits.acquire(client_of(context))  # type: ignore[arg-type]  # the same peer()
            except StreamRefused as refusal:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(refusal))
            try:
                if inspect.isasyncgenfunction(behaviour):
                    await write_all(behaviour(request, context), context)
                    return None
                return await behaviour(request, context)
            finally:
                release()
        return limited


async def write_all(responses: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """Every response of an async generator written to its call, the generator closed however the call ends."""
    async with aclosing(responses) as each:  # type: ignore[type-var]  # an async generator has aclose
        async for response in each:
            await context.write(response)


__all__ = ["MAX_STREAMS", "MAX_STREAMS_PER_CLIENT", "StreamLimitInterceptor", "StreamLimits", "StreamRefused",
           "client_of"]
