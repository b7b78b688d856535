"""A league bot for the tests: it plays the first legal action, but in a seat only once the file ``gate`` beside it
lists that seat (with no such file it plays freely, as in the league's check of a new version). Held at the gate, it
says so once per seat on stderr, ``waiting in seat N``, which the arena copies into its log at the table: the test
reads there which rotation of the deal set is being played, lets that one through and holds the other. Uploaded to
a league as an author's bot, it runs in its sandbox, where its own folder is visible read-only: the test writes the
gate into the version's built folder."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from arena.botkit import cancelled, serve

GATE = Path(__file__).with_name("gate")
POLL_S = 0.02
said: set[int] = set()


def opened(seat: int) -> bool:
    try:
        return str(seat) in GATE.read_text().split()
    except FileNotFoundError:
        return True


def choose(request) -> int:
    while not opened(request.seat) and not cancelled():
        if request.seat not in said:
            said.add(request.seat)
            print(f"waiting in seat {request.seat}", file=sys.stderr, flush=True)
        time.sleep(POLL_S)  # the bot's own wait for the test's file; the test waits on what it logs
    return 0


if __name__ == "__main__":
    serve(choose, name="seat-gated")
