"""Await a thread-world future (grpcio's call futures, Ray's ``ObjectRef.future()``) from trio, with cancellation
that reaches the other side (docs/explanation/architecture.md#the-layers, "trio owns concurrency").

A done-callback (run on the library's own thread) wakes a trio Event through the trio token; no thread is parked per
call. If the trio task is cancelled while waiting, ``cancel`` is called (a gRPC call is then cancelled on the wire, so
the bot sees CANCELLED; a Ray call is asked to stop), and trio.Cancelled goes on.

Also :func:`until_interrupted`: a command's work cancelled cleanly by SIGINT or SIGTERM.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import trio

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class DoneFuture(Protocol[T_co]):
    """What both grpcio's and concurrent.futures' futures offer: a future of a ``T_co``."""

    def add_done_callback(self, fn: Callable[[Any], None]) -> object: ...

    def done(self) -> bool: ...

    def result(self) -> T_co: ...


async def await_future(future: DoneFuture[T], cancel: Callable[[], object]) -> T:
    """The future's result (or its exception); ``cancel()`` when the wait ends before the future is done."""
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def wake(_: Any) -> None:
        try:
            token.run_sync_soon(done.set)
        except trio.RunFinishedError:
            pass

    future.add_done_callback(wake)
    try:
        await done.wait()
    finally:
        if not future.done():
            cancel()
    return future.result()


async def until_interrupted(work: Callable[[], Awaitable[T]],
                            passing: tuple[type[BaseException], ...] = ()) -> T | None:
    """Run ``work()`` until it returns or SIGINT/SIGTERM arrives; on a signal, cancel it cleanly (bots are stopped,
    records stay whole) and return None. Not KeyboardInterrupt: that can land inside grpc and leave it stuck. An
    exception of ``passing`` (a user's mistake, a bot that does not start) is raised as itself, not inside an
    exception group."""
    outcome: dict[str, Any] = {}
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            async def run_work() -> None:
                try:
                    outcome["result"] = await work()
                except passing as error:
                    outcome["error"] = error
                nursery.cancel_scope.cancel()

            async def watch_signals() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(run_work)
            nursery.start_soon(watch_signals)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("result")
