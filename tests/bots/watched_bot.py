"""A bot for the server tests: ``--mode slow`` plays the first legal action after ``--delay`` seconds; ``--mode hang``
never answers an Act. With ``--mark FILE`` it appends ``asked`` when an Act arrives and ``cancelled`` when the arena
cancels one (what a bot sees when the arena stops a game in flight)."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from concurrent import futures

import grpc

from arena.botkit import listen_address
from arena.protocol import bot_pb2

parser = argparse.ArgumentParser()
parser.add_argument("--mode", choices=("slow", "hang"), required=True)
parser.add_argument("--delay", type=float, default=0.2)
parser.add_argument("--mark")
parser.add_argument("--listen")
parser.add_argument("--tag", help="ignored: lets a test find its bot processes")
args = parser.parse_args()


def mark(text: str) -> None:
    if args.mark:
        with open(args.mark, "a") as f:
            f.write(text + "\n")


def hello(request, context):
    return bot_pb2.HelloReply(name=f"watched-{args.mode}", version="0", protocol_version=1)


def act(request, context):
    mark("asked")
    if args.mode == "hang":
        over = threading.Event()
        context.add_callback(over.set)  # the call ended without an answer: the arena cancelled it
        over.wait(600)
        mark("cancelled")
        return bot_pb2.ActReply(index=0)
    time.sleep(args.delay)
    return bot_pb2.ActReply(index=0)


def notify(request, context):
    return bot_pb2.NotifyReply()


def main() -> None:
    handlers = {
        "Hello": grpc.unary_unary_rpc_method_handler(
            hello, bot_pb2.HelloRequest.FromString, bot_pb2.HelloReply.SerializeToString),
        "Act": grpc.unary_unary_rpc_method_handler(
            act, bot_pb2.ActRequest.FromString, bot_pb2.ActReply.SerializeToString),
        "Notify": grpc.unary_unary_rpc_method_handler(
            notify, bot_pb2.Notification.FromString, bot_pb2.NotifyReply.SerializeToString),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("dominoes.v1.Bot", handlers),))
    server.add_insecure_port(listen_address(["--listen", args.listen] if args.listen else []))
    server.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=0.5).wait()


if __name__ == "__main__":
    main()
