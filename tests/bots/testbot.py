"""What the test bots share: a raw gRPC server for the Bot service with hand-written handlers, so a test bot can
answer anything at all (even bytes that are not a reply), stopped by SIGTERM."""

from __future__ import annotations

import signal
import threading
from concurrent import futures
from typing import Any, Callable

import grpc

from arena.botkit import listen_address
from arena.protocol import bot_pb2


def serve_handlers(hello: Callable, act: Callable, notify: Callable, listen: str | None,
                   serialize_act: Callable[[Any], bytes] = bot_pb2.ActReply.SerializeToString,
                   on_sigterm: Callable[[], None] | None = None) -> None:
    """Serve until SIGTERM: ``hello``, ``act`` and ``notify`` are plain grpc handlers (request, context);
    ``on_sigterm`` runs when the signal comes, before the server stops."""
    handlers = {
        "Hello": grpc.unary_unary_rpc_method_handler(
            hello, bot_pb2.HelloRequest.FromString, bot_pb2.HelloReply.SerializeToString),
        "Act": grpc.unary_unary_rpc_method_handler(act, bot_pb2.ActRequest.FromString, serialize_act),
        "Notify": grpc.unary_unary_rpc_method_handler(
            notify, bot_pb2.Notification.FromString, bot_pb2.NotifyReply.SerializeToString),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("dominoes.v1.Bot", handlers),))
    server.add_insecure_port(listen_address(["--listen", listen] if listen else []))
    server.start()
    stop = threading.Event()
    def stopped(*_: Any) -> None:
        if on_sigterm is not None:
            on_sigterm()
        stop.set()

    signal.signal(signal.SIGTERM, stopped)
    stop.wait()
    server.stop(grace=0.5).wait()
