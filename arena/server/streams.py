"""Long-lived calls (watch streams, health watches, reflection) apart from the quick ones.

The server runs every call but the dial-in streams on one thread of one pool (grpc.aio's ``migration_thread_pool``,
arena/server/loop_server.py), and such a stream holds its thread for as long as it is open, reading or not; a
dial-in stream runs on the loop and holds no thread, but is counted all the same. Streams are therefore counted
here, over all clients and per client (its address without the port: one machine), and one beyond either limit is
refused at once with RESOURCE_EXHAUSTED saying which limit and its flag. The pool has room for every stream allowed
plus :data:`UNARY_WORKERS` threads that streams can never take, and the server's limit on calls in flight leaves
:data:`UNARY_BACKLOG` more for quick calls waiting for a thread: however many streams are open, a
``ListTournaments`` is answered.
"""

from __future__ import annotations

import inspect
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import grpc

MAX_STREAMS = 200
"""Streams open at once over every client (``--max-streams``)."""
MAX_STREAMS_PER_CLIENT = 100
"""Streams open at once from one client address (``--max-streams-per-client``): half the total, so that one client
never holds every stream."""
UNARY_WORKERS = 32
"""Threads of the pool that only quick calls can have (streams beyond the limits are refused before they hold one
for long)."""
UNARY_BACKLOG = 1024
"""Quick calls that may wait for a thread beside the streams; beyond, gRPC itself answers RESOURCE_EXHAUSTED."""

if TYPE_CHECKING:
    # The stubs' ServerInterceptor is generic in its calls' messages, the runtime class is not subscriptable; this
    # one sees the calls of every service, so their messages are Any.
    ServerInterceptor = grpc.ServerInterceptor[Any, Any]
    Handler = grpc.RpcMethodHandler[Any, Any]
else:
    ServerInterceptor = grpc.ServerInterceptor


class StreamRefused(Exception):
    """A stream beyond a limit; its message names the limit and the flag that sets it."""


class StreamLimits:
    """The streams open now, in total and by client; used from every gRPC thread."""

    def __init__(self, total: int = MAX_STREAMS, per_client: int = MAX_STREAMS_PER_CLIENT) -> None:
        self.total = total
        self.per_client = per_client
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    def pool_size(self) -> int:
        """Threads for the server's pool: every stream allowed, and the quick calls' own."""
        return self.total + UNARY_WORKERS

    def calls_in_flight(self) -> int:
        """The server's ``maximum_concurrent_rpcs``: every stream allowed, and the quick calls with their backlog."""
        return self.total + UNARY_WORKERS + UNARY_BACKLOG

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
    """Counts every call that streams (either way) in :class:`StreamLimits` for as long as it is open; refuses one
    beyond the limits with RESOURCE_EXHAUSTED. Quick calls pass untouched."""

    def __init__(self, limits: StreamLimits) -> None:
        self.limits = limits

    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Handler | None],
                          details: grpc.HandlerCallDetails) -> Handler | None:
        handler = continuation(details)
        if handler is None or not (handler.request_streaming or handler.response_streaming):
            return handler
        serialization = {"request_deserializer": handler.request_deserializer,
                         "response_serializer": handler.response_serializer}
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(self._streaming(handler.unary_stream), **serialization)
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(self._streaming(handler.stream_stream), **serialization)
        assert handler.stream_unary is not None  # it streams requests, and neither stream_stream nor unary_stream
        return grpc.stream_unary_rpc_method_handler(self._single(handler.stream_unary), **serialization)

    def _open(self, context: grpc.ServicerContext) -> Callable[[], None]:
        """A slot for this call, released when it ends however it ends; or the call aborted with the refusal."""
        try:
            release = self.limits.acquire(client_of(context))
        except StreamRefused as refusal:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(refusal))
        if not context.add_callback(release):
            release()  # already over
        return release

    def _streaming(self, behaviour: Callable[[Any, grpc.ServicerContext], Iterator[Any]]
                   ) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
        if inspect.iscoroutinefunction(behaviour):
            return self._on_loop(behaviour)  # type: ignore[return-value]  # grpc.aio's handler of a stream

        def limited(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            release = self._open(context)
            try:
                yield from behaviour(request, context)
            finally:
                release()
        return limited

    def _on_loop(self, behaviour: Callable[[Any, Any], Awaitable[Any]]) -> Callable[[Any, Any], Awaitable[Any]]:
        """As :meth:`_streaming`, for a grpc.aio handler running on the loop (the dial-in stream)."""
        async def limited(request: Any, context: Any) -> Any:
            try:
                release = self.limits.acquire(client_of(context))
            except StreamRefused as refusal:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(refusal))
            context.add_done_callback(lambda _: release())
            try:
                return await behaviour(request, context)
            finally:
                release()
        return limited

    def _single(self, behaviour: Callable[[Any, grpc.ServicerContext], Any]
                ) -> Callable[[Any, grpc.ServicerContext], Any]:
        def limited(request: Any, context: grpc.ServicerContext) -> Any:
            release = self._open(context)
            try:
                return behaviour(request, context)
            finally:
                release()
        return limited


__all__ = ["MAX_STREAMS", "MAX_STREAMS_PER_CLIENT", "StreamLimitInterceptor", "StreamLimits", "StreamRefused",
           "client_of"]
