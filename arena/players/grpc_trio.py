"""Await grpcio futures from trio, with cancellation that reaches the bot (docs/explanation/architecture.md#the-layers,
"trio owns concurrency").

A unary call is started with the sync stub's ``.future()`` and awaited with :func:`arena.futures.await_future` (shared
with the Ray backend's actor calls): if the trio task is cancelled while waiting, the future is cancelled, so the call
is cancelled on the wire and the bot sees CANCELLED. No thread is parked per call.
"""

from __future__ import annotations

from typing import TypeVar

import grpc

from arena.futures import await_future

T = TypeVar("T")


async def await_call(future: grpc.Future[T]) -> T:
    """The response of a started unary call; raises the call's ``grpc.RpcError``, or trio.Cancelled (the call then
    cancelled on the wire)."""
    return await await_future(future, future.cancel)
