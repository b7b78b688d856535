"""A bot for the server tests: ``--mode slow`` plays the first legal action after ``--delay`` seconds; ``--mode hang``
never answers an Act. With ``--mark FILE`` it appends ``asked`` when an Act arrives and ``cancelled`` when the arena
cancels one (what a bot sees when the arena stops a game in flight)."""

from __future__ import annotations

import argparse
import threading
import time


from arena.protocol import bot_pb2
from testbot import serve_handlers

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
    serve_handlers(hello, act, notify, args.listen)

if __name__ == "__main__":
    main()
