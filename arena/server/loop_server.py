"""``arena serve``'s gRPC server on grpc.aio, in the loop trio runs in as a guest (:func:`arena.guest.run`).

The dial-in stream's handler (:class:`~arena.server.dial_in.LoopDialInServicer`) runs on the loop itself, on the
thread of the referee. The other services' handlers are still grpcio's synchronous ones, which the grpc.aio server
runs on its thread pool (``migration_thread_pool``) as the grpcio server did, reaching the trio side through
``trio.from_thread``; the server's interceptors are grpcio's too, run for the grpc.aio server by
:class:`LoopInterceptor`. A synchronous handler run by grpc.aio is given a context without what grpcio's had and the
arena's handlers use (``is_active``, ``cancel``, the answer of ``add_callback``): :class:`ThreadContext` adds them.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
import grpc.aio

from arena.server.auth import ServerInterceptor

if TYPE_CHECKING:
    from arena.server.auth import Handler


class ThreadContext:
    """The context of a synchronous handler run by a grpc.aio server, with what grpcio's context had: ``is_active``
    (False once the call is over), ``add_callback`` saying whether the callback was taken, and ``cancel`` (the call
    is let go of at once: its handler stops at its next ``is_active``; the server's stop cancels it on the wire
    after its grace)."""

    def __init__(self, context: Any) -> None:
        self._context = context
        self._over = threading.Event()
        context.add_callback(self._over.set)

    def is_active(self) -> bool:
        return not self._over.is_set()

    def add_callback(self, callback: Callable[[], None]) -> bool:
        if self._over.is_set():
            return False
        self._context.add_callback(callback)
        return True

    def cancel(self) -> None:
        self._over.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def thread_context(context: Any) -> Any:
    """``context`` as a :class:`ThreadContext` (itself when it is one already)."""
    return context if isinstance(context, ThreadContext) else ThreadContext(context)


KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def with_thread_context(handler: Handler | None) -> Handler | None:
    """The handler, its synchronous behaviour given a :class:`ThreadContext`; an asynchronous one as it is."""
    if handler is None:
        return None
    for kind in KINDS:
        behaviour = getattr(handler, kind)
        if behaviour is None:
            continue
        if inspect.iscoroutinefunction(behaviour) or inspect.isasyncgenfunction(behaviour):
            return handler
        make = getattr(grpc, f"{kind}_rpc_method_handler")
        return make(_given_thread_context(behaviour), request_deserializer=handler.request_deserializer,  # type: ignore[no-any-return]
                    response_serializer=handler.response_serializer)
    return handler


def _given_thread_context(behaviour: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def run(request: Any, context: Any) -> Any:
        return behaviour(request, thread_context(context))
    return run


class LoopInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]  # it sees every service's calls
    """A grpcio server interceptor, run for a grpc.aio server: the handler the next one found is handed to it, and
    its answer's synchronous behaviour given a :class:`ThreadContext`."""

    def __init__(self, interceptor: ServerInterceptor) -> None:
        self.interceptor = interceptor

    async def intercept_service(self, continuation: Any, details: grpc.HandlerCallDetails) -> Any:
        handler = await continuation(details)
        return with_thread_context(self.interceptor.intercept_service(lambda _: handler, details))
