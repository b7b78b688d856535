"""A bot for the server tests: ``--mode slow`` plays the first legal action after ``--delay`` seconds; ``--mode hang``
never answers an Act. With ``--mark FILE`` it appends ``asked`` when an Act arrives and ``cancelled`` when the arena
cancels one (what a bot sees when the arena stops a game in flight). With ``--gate FILE`` it answers its Act number
N (counted over every game it plays, from 1) only once FILE holds a number of at least N: the test that writes FILE
decides how far the game goes, however busy the machine (FILE is in the bot's own folder, which its sandbox shows
read-only). With ``--gate-unit seat`` FILE holds seat numbers instead: it answers in a seat only once FILE lists it
(the rotations of a deal set put it in each seat in turn, so the test lets one rotation through and holds the
other)."""

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
parser.add_argument("--gate")
parser.add_argument("--gate-unit", choices=("answer", "seat"), default="answer")
args = parser.parse_args()
answered = 0


def wait_at_gate(seat: int) -> None:
    """Block until the gate file lets this answer through (polling: the file is written by the test)."""
    global answered
    answered += 1
    while args.gate and not opened(seat):
        time.sleep(0.02)


def opened(seat: int) -> bool:
    try:
        with open(args.gate) as f:
            words = f.read().split()
        if args.gate_unit == "seat":
            return str(seat) in words
        return bool(words) and int(words[0]) >= answered
    except (OSError, ValueError):
        return False


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
    wait_at_gate(request.seat)
    time.sleep(args.delay)
    return bot_pb2.ActReply(index=0)


def notify(request, context):
    return bot_pb2.NotifyReply()


def main() -> None:
    serve_handlers(hello, act, notify, args.listen)

if __name__ == "__main__":
    main()
