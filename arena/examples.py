"""Offline test data for bot authors: one real ``ActRequest`` per variant, in protobuf's JSON mapping, written by
the arena into ``proto/examples/`` so a policy can be unit-tested without the arena (and a test keeps them current).

Each is the first decision of a seeded match between greedy players at which a seat has at least three legal
actions, a few decisions in, so the layout, the history and the legal actions all have something in them.

Run: ``python -m arena.examples [FOLDER]`` (default ``proto/examples``). It lives above the referee, not in
:mod:`arena.protocol` or among the players, because it plays a match with the players on the referee's clock: the
protocol imports nothing above it, and the players nothing of the referee.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from google.protobuf import json_format

from arena.players.base import DecisionRequest
from arena.players.builtin import GreedyPlayer
from arena.protocol import bot_pb2
from arena.protocol.convert import act_request_pb
from arena.referee import TimeControl
from arena.rules import VARIANTS, new_game

FOLDER = Path(__file__).resolve().parents[1] / "proto" / "examples"
MIN_LEGAL = 3
MIN_DECISIONS = 4
"""Decisions played before the example's, so that its layout and history are not empty."""
EXAMPLE_TIME = TimeControl(move_ms=2000)
"""The example's clock: 2000 ms to move, no bank, the referee's default grace (its deadline is what a bot is told)."""


def example_request(variant: str) -> bot_pb2.ActRequest:
    """The example decision of ``variant`` at its usual player count."""
    game = new_game(variant)
    match = game.new_match(seed=f"example/{variant}")
    players = [GreedyPlayer(seed=f"example/{variant}/{s}") for s in range(game.players)]
    decisions = 0
    while not match.is_over():
        state = match.round
        while not state.is_over():
            seat = state.turn
            observation = state.observation(seat)
            legal = observation.legal_actions
            if len(legal) >= MIN_LEGAL and decisions >= MIN_DECISIONS:
                request = DecisionRequest(f"example-{variant}", game, seat, observation, decisions,
                                          EXAMPLE_TIME.move_ms, EXAMPLE_TIME.bank_ms, EXAMPLE_TIME.deadline_ms(0))
                return act_request_pb(request)
            if len(legal) > 1:
                decisions += 1
            match.apply(players[seat](observation))
        match.next_round()
    raise RuntimeError(f"no decision with {MIN_LEGAL} legal actions in the example match of {variant}")


def example_json(variant: str) -> str:
    """Every field written (zeros too, as the stdio protocol writes them); the options map in name order (a
    protobuf map has none of its own)."""
    data = json_format.MessageToDict(example_request(variant), always_print_fields_with_no_presence=True)
    data["options"] = dict(sorted(data["options"].items()))
    return json.dumps(data, indent=2) + "\n"


def write_examples(folder: Path = FOLDER) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for variant in VARIANTS:
        path = folder / f"{variant}.act.json"
        path.write_text(example_json(variant))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_examples(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER):
        print(path)
