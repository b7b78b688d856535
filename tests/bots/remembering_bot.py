"""A bot that remembers every deal it was shown, as a dial-in bot's author's machine can: the attack that duplicate
deals would open to a bot the arena does not hold.

For every round it plays (two-sided Block: no boneyard draws, so a hand is the tiles held plus the tiles placed) it
keeps the hand it was dealt (its hand at its first decision and the tiles it had placed before it) and what it
learns of its opponent's (the tiles the opponent placed, and its hand revealed when the round ends). When a round
ends it compares it with every round it saw end before, in other matches, and writes one ``RECOGNISED`` line when
the deal is one it has seen:

- the same hand again (the deal under the same seats), or
- seats swapped: its hand now holds every tile it knew of the opponent's then, and the opponent's now every tile it
  held then (with at least 8 such tiles known, a false alarm is one chance in millions).

It also writes one ``DEALT`` line per round ended: the match, the round, its seat and its dealt hand (JSON). It
answers the first legal action at once. Run as any botkit bot: ``--listen`` (behind ``arena connect``), or dialing
in itself with ``--connect``; ``--log FILE`` is where its lines go (its author's disk: nothing stops it)."""

from __future__ import annotations

import argparse
import json
import threading
from dataclasses import dataclass, field

from arena.botkit import serve
from arena.protocol import types_pb2

parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
args, _ = parser.parse_known_args()  # the rest is serve's
lock = threading.Lock()
EVIDENCE = 8
"""Tiles that must be known on both sides before a swap of seats is called a recognised deal."""
Tile = tuple[int, int]


@dataclass
class Round:
    """What the bot knows of one round of one match."""

    seat: int = -1
    dealt: set[Tile] = field(default_factory=set)
    exact: bool = False
    """``dealt`` is its whole dealt hand (it was asked for a decision in the round)."""
    placed: dict[int, set[Tile]] = field(default_factory=dict)
    """Tiles each seat placed, as far as the bot saw the history."""
    theirs: set[Tile] = field(default_factory=set)
    """After the round's end: every tile the opponent is known to have been dealt."""


rounds: dict[tuple[str, int], Round] = {}
ended: list[tuple[str, int, Round]] = []


def tile(value: types_pb2.Tile) -> Tile:
    return (value.low, value.high)


def write(line: str) -> None:
    with open(args.log, "a") as file:
        file.write(line + "\n")


def choose(request) -> int:
    """Note the hand dealt (at the first decision of a round) and the tiles placed so far; play the first action."""
    seen = request.observation
    with lock:
        known = rounds.setdefault((request.match_id, seen.round_index), Round())
        known.seat = seen.seat
        for event in seen.history:
            if event.action.kind == types_pb2.ACTION_KIND_PLACE:
                known.placed.setdefault(event.seat, set()).add(tile(event.action.tile))
        if not known.exact:
            known.dealt = {tile(t) for t in seen.hand} | known.placed.get(seen.seat, set())
            known.exact = True
    return 0


def notified(message) -> None:
    """A round ended: its hands are revealed; compare it with every round that ended before."""
    if message.WhichOneof("event") != "round_end":
        return
    result = message.round_end
    with lock:
        key = (message.match_id, result.round_index)
        known = rounds.setdefault(key, Round())
        known.seat = message.seat
        if not known.exact:  # never asked this round: what it still holds is all it knows it was dealt
            known.dealt = {tile(t) for t in result.hands[message.seat].tiles}
        other = 1 - message.seat
        known.theirs = {tile(t) for t in result.hands[other].tiles} | known.placed.get(other, set())
        write("DEALT " + json.dumps({"match": message.match_id, "round": result.round_index, "seat": message.seat,
                                     "hand": sorted(known.dealt)}))
        for match, number, before in ended:
            if match != message.match_id and seen_before(before, known):
                write("RECOGNISED " + json.dumps({"match": message.match_id, "round": result.round_index,
                                                  "seen_in": match, "seen_round": number}))
        ended.append((message.match_id, result.round_index, known))


def seen_before(before: Round, now: Round) -> bool:
    """The deal of ``now`` is the deal of ``before``: the same hand, or the two hands swapped."""
    if before.exact and now.exact and before.dealt == now.dealt:
        return True
    return (bool(before.dealt) and not before.dealt & now.dealt and before.theirs <= now.dealt
            and now.theirs <= before.dealt and len(before.theirs) + len(now.theirs) >= EVIDENCE)


serve(choose, name="remembering", author="dominoes arena tests", on_notify=notified)
