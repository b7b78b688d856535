"""Await grpcio futures from trio, with cancellation that reaches the bot (DESIGN.md, "trio owns concurrency").

A unary call is started with the sync stub's ``.future()``; a done-callback (run on a grpc thread) wakes a trio
Event through the trio token. If the trio task is cancelled while waiting, the future is cancelled, so the call is
cancelled on the wire and the bot sees CANCELLED. No thread is parked per call.
"""

from __future__ import annotations

from typing import Any

import grpc
import trio


async def await_call(future: grpc.Future) -> Any:
    """The response of a started unary call; raises the call's ``grpc.RpcError``, or trio.Cancelled."""
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
            future.cancel()
    return future.result()
