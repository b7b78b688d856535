"""Await a thread-world future (grpcio's call futures, Ray's ``ObjectRef.future()``) from trio, with cancellation
that reaches the other side (docs/architecture.md#the-layers, "trio owns concurrency").

A done-callback (run on the library's own thread) wakes a trio Event through the trio token; no thread is parked per
call. If the trio task is cancelled while waiting, ``cancel`` is called (a gRPC call is then cancelled on the wire, so
the bot sees CANCELLED; a Ray call is asked to stop), and trio.Cancelled goes on.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

import trio


class DoneFuture(Protocol):
    """What both grpcio's and concurrent.futures' futures offer."""

    def add_done_callback(self, fn: Callable[[Any], object]) -> object: ...

    def done(self) -> bool: ...

    def result(self) -> Any: ...


async def await_future(future: DoneFuture, cancel: Callable[[], object]) -> Any:
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
