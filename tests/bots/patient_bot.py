"""A botkit bot that thinks until the arena gives up: its first ``--hang-first N`` decisions poll
``arena.botkit.cancelled()`` until it is true (at most 600 s), then answer; the others play the first legal action at
once. With ``--mark FILE`` it appends ``asked`` when a decision arrives and ``cancelled`` when it saw one given up on.

It runs as any botkit bot does: listening (started by the arena, or by ``arena connect``, whose cancelled local call
``cancelled()`` reports), or dialed in by itself with ``--connect`` (where the relay's cancel sets it)."""

from __future__ import annotations

import argparse
import threading
import time

from arena.botkit import cancelled, serve

parser = argparse.ArgumentParser()
parser.add_argument("--hang-first", type=int, default=1)
parser.add_argument("--mark")
args, _ = parser.parse_known_args()  # the rest is serve's: --listen, or --connect and its options
lock = threading.Lock()
asked = 0
PATIENCE_S = 600


def mark(text: str) -> None:
    if args.mark:
        with lock, open(args.mark, "a") as file:
            file.write(text + "\n")


def choose(request) -> int:
    global asked
    with lock:
        asked += 1
        number = asked
    mark("asked")
    if number <= args.hang_first:
        deadline = time.monotonic() + PATIENCE_S
        while not cancelled() and time.monotonic() < deadline:
            time.sleep(0.01)  # thinking, a step at a time
        if cancelled():
            mark("cancelled")
    return 0


serve(choose, name="patient")
