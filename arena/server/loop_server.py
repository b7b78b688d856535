"""``arena serve``'s gRPC server on grpc.aio, in the loop trio runs in as a guest (:func:`arena.guest.run`).

The dial-in stream's handler (:class:`~arena.server.dial_in.DialInServicer`) runs on the loop itself, on the
thread of the referee. The other services' handlers are still grpcio's synchronous ones, which the grpc.aio server
runs on its thread pool (``migration_thread_pool``) as the grpcio server did, reaching the trio side through
``trio.from_thread``; the server's interceptors are grpcio's too, run for the grpc.aio server by
:class:`LoopInterceptor`. A synchronous handler run by grpc.aio is given a context without what grpcio's had and the
arena's handlers use (``is_active``, ``cancel``, the answer of ``add_callback``): :class:`ThreadContext` adds them.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
import grpc.aio

from arena.server.auth import ServerInterceptor

if TYPE_CHECKING:
    from arena.server.auth import Handler


class ThreadContext:
    """The context of a synchronous handler run by a grpc.aio server, with what grpcio's context had: ``is_active``
    (False once the call is over), ``add_callback`` saying whether the callback was taken (its callbacks run when
    the call ends, however it ends), and ``cancel`` (the call ended at once with CANCELLED, even when its client
    stopped reading). Made on the loop for the call's task (grpc.aio runs the context's own callbacks only when the
    handler returns, not when its client cancels it)."""

    def __init__(self, task: asyncio.Task[Any] | None) -> None:
        self._context: Any = None
        self._lock = threading.Lock()
        self._over = False
        self._callbacks: list[Callable[[], None]] = []
        LIVE.add(self)
        if task is not None:
            task.add_done_callback(lambda _: self.end())

    def given(self, context: Any) -> ThreadContext:
        """This call's context, around grpc.aio's ``context`` (once; itself when handed on to an inner handler)."""
        if self._context is None and context is not self:
            self._context = context
        return self

    def is_active(self) -> bool:
        return not self._over

    def add_callback(self, callback: Callable[[], None]) -> bool:
        with self._lock:
            if self._over:
                return False
            self._callbacks.append(callback)
            return True

    def end(self) -> None:
        """The call is over: its callbacks run (once), and ``is_active`` is False from now on."""
        with self._lock:
            if self._over:
                return
            self._over = True
            callbacks, self._callbacks = self._callbacks, []
        LIVE.discard(self)
        for callback in callbacks:
            callback()

    def cancel(self) -> None:
        """End the call with CANCELLED. grpc.aio's abort waits on the loop, which may be this thread's: it is sent
        from a thread of its own."""
        threading.Thread(target=self._abort, daemon=True, name="cancel a call").start()
        self.end()

    def _abort(self) -> None:
        try:
            self._context.abort(grpc.StatusCode.CANCELLED, "cancelled by the server")
        except Exception:  # noqa: BLE001, S110 (grpc.aio's AbortError, or the call over already: ended either way)
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


LIVE: weakref.WeakSet[ThreadContext] = weakref.WeakSet()
"""The synchronous handlers' calls not yet over."""
_CALLS: weakref.WeakKeyDictionary[asyncio.Task[Any], ThreadContext] = weakref.WeakKeyDictionary()
"""The context of each call's task, made by the first interceptor that sees the call."""


def end_all() -> None:
    """The server has stopped: every synchronous handler's call is over (a handler still looping on ``is_active``
    returns, its callbacks run), so that the thread pool's threads end and the process can exit."""
    for context in list(LIVE):
        context.end()


KINDS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def with_thread_context(handler: Handler | None, call: ThreadContext) -> Handler | None:
    """The handler, its synchronous behaviour given ``call`` as its context; an asynchronous one as it is."""
    if handler is None:
        return None
    for kind in KINDS:
        behaviour = getattr(handler, kind)
        if behaviour is None:
            continue
        if inspect.iscoroutinefunction(behaviour) or inspect.isasyncgenfunction(behaviour):
            return handler
        make = getattr(grpc, f"{kind}_rpc_method_handler")
        wrapped: Handler = make(_given(behaviour, call), request_deserializer=handler.request_deserializer,
                                response_serializer=handler.response_serializer)
        return wrapped
    return handler


def _given(behaviour: Callable[[Any, Any], Any], call: ThreadContext) -> Callable[[Any, Any], Any]:
    def run(request: Any, context: Any) -> Any:
        return behaviour(request, call.given(context))
    return run


class LoopInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]  # it sees every service's calls
    """A grpcio server interceptor, run for a grpc.aio server: the handler the next one found is handed to it, and
    its answer's synchronous behaviour given the call's :class:`ThreadContext`."""

    def __init__(self, interceptor: ServerInterceptor) -> None:
        self.interceptor = interceptor

    async def intercept_service(self, continuation: Any, details: grpc.HandlerCallDetails) -> Any:
        task = asyncio.current_task()
        call = _CALLS.get(task) if task is not None else None
        if call is None:
            call = ThreadContext(task)
            if task is not None:
                _CALLS[task] = call
        handler = await continuation(details)
        return with_thread_context(self.interceptor.intercept_service(lambda _: handler, details), call)


class Opening(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]  # it sees every service's calls
    """Holds the calls that come before :meth:`open`: the server is started before the arena's own tasks are (so
    that starting it, which waits on the loop, lets none of them run before the server says where it listens), and
    takes calls once they are."""

    def __init__(self) -> None:
        self._open = asyncio.Event()

    def open(self) -> None:
        self._open.set()

    async def intercept_service(self, continuation: Any, details: grpc.HandlerCallDetails) -> Any:
        if not self._open.is_set():
            await self._open.wait()
        return await continuation(details)
