"""Block (variant ``block``): no drawing, pass when unable. A computer game's guide names it; scoring follows
Pagat's Block (docs/reference/rules.md#block).

Double-6, 2 to 4 players, 7 tiles each with 2 players, 5 with 3 or 4; the rest is out of play. Must place if able,
else pass; blocked when every player in turn has passed. Scoring and match end as in Draw. The first leader is
drawn by lot (as that guide says); then the previous round's winner leads, and after a block with no sole winner
the seat after the previous leader.
"""

from __future__ import annotations

from arena.rules.game import Game, target_option
from arena.rules.options import Option
from arena.rules.registry import register
from arena.rules.scoring import opponents_minus_own


@register
class BlockGame(Game):
    name = "block"
    title = "Block (no drawing)"
    player_counts = (2, 3, 4)
    default_players = 2
    options_declared = (
        target_option(),
        Option("hand_size", "tiles dealt to each player; the rest is out of play",
               default=lambda p: 7 if p == 2 else 5, minimum=1, default_doc="7 with 2 players, 5 with 3 or 4"),
    )
    drawing = False

    def hand_points(self, winner: int, pips: tuple[int, ...]) -> int:
        return opponents_minus_own(winner, pips)
