"""A game with one belief in it, its scores worked out by hand: for the tests of what reads beliefs from records
(the standings' calibration, the replays, the Parquet export)."""

from __future__ import annotations

import math
from typing import Any

from arena.players import RandomPlayer
from arena.players.base import Decision, DecisionRequest, LocalPlayer
from arena.records.jsonform import game_record_dict
from arena.referee import play_match
from arena.rules import new_game
from arena.rules.beliefs import Belief

SEED = "calibrated"
BELIEF = ((0.25, 0.75), (1.0, 0.0))
"""The belief's probabilities (seat 1's hand, the boneyard) of the two bottom tiles of the boneyard."""
BRIER = (0.125 + 2.0) / 2
"""Both tiles were in the boneyard: 0.75 and 0 for the truth."""
LOG_LOSS = (-math.log(0.75) + math.log(1000)) / 2


class OneBelief:
    """Seat 0: the first legal action each time, and at its first decision a belief about the two tiles at the bottom
    of the boneyard (drawn last: still there), 1/4 in seat 1's hand and 3/4 in the boneyard for the lowest of them,
    and certainly in seat 1's hand for the other."""

    name = "believer"

    def __init__(self, bottom: tuple[int, int]) -> None:
        self.bottom = bottom
        self.sent = False

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        belief = None
        if not self.sent:
            belief = Belief(self.bottom, BELIEF)
            self.sent = True
        return Decision(request.legal_actions[0], 0.001, "", belief)

    async def round_ended(self, *args: Any) -> None:
        return None

    async def match_ended(self, *args: Any) -> None:
        return None


async def played_record() -> dict:
    game = new_game("draw", 2, {"target": 30})
    played = await play_match(game, [OneBelief(bottom_tiles()), LocalPlayer(RandomPlayer(2), "random")], seed=SEED,
                              match_id="m")
    assert played.belief_faults == []
    return game_record_dict(played, index=0, tournament="t", deal_key="0", rotation=0, side_of=game.side_of)


def bottom_tiles() -> tuple[int, int]:
    """The two tiles at the bottom of the boneyard of the game's first deal (drawn last: still there at the
    believer's first decision), the bottom one first, as the belief names them."""
    boneyard = new_game("draw", 2, {"target": 30}).new_match(SEED).round.deal.boneyard
    return boneyard[-1], boneyard[-2]
