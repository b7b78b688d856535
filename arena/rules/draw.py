"""Draw (variant ``draw``): Pagat's individual Draw game (docs/reference/rules.md#draw).

Double-6, 2 to 4 players each for themselves, 7 tiles each (6 with 4 players). A player may draw while the
boneyard holds more than the two protected tiles, even holding a playable tile, and must draw when unable to
place; the turn goes on after a draw. No points for placing. Domino: the winner scores the opponents' pips. Block:
the sole lowest hand scores opponents' total minus its own; a tie scores nothing. Next leader rotates from the
previous leader (option ``next_leader = "winner"`` for the computer game's rule). Target 100 with 2 players,
61 with 3-4.

A computer game's guide describes a stricter Draw (draw only when unable to place, no protected tiles, winner
leads): set ``voluntary_draw = false``, ``protected_tiles = 0``, ``next_leader = "winner"``.
"""

from __future__ import annotations

from arena.rules.deal import Deal
from arena.rules.errors import OptionError
from arena.rules.game import Game, target_option
from arena.rules.options import Option
from arena.rules.registry import register
from arena.rules.results import RoundResult
from arena.rules.scoring import opponents_minus_own
from arena.rules.tiles import set_size


@register
class DrawGame(Game):
    name = "draw"
    title = "Draw (Pagat's individual Draw game)"
    player_counts = (2, 3, 4)
    default_players = 2
    options_declared = (
        target_option(),
        Option("hand_size", "tiles dealt to each player", default=lambda p: 7 if p <= 3 else 6, minimum=1,
               default_doc="7 with 2 or 3 players, 6 with 4"),
        Option("protected_tiles", "boneyard tiles that are never drawn", default=2, minimum=0),
        Option("next_leader", "who leads the next round: one seat after the previous leader, or the winner",
               default="rotate", type=str, choices=("rotate", "winner")),
        Option("voluntary_draw", "a player holding a playable tile may draw anyway", default=True, type=bool),
    )
    drawing = True

    def configure(self) -> None:
        self.hand_size = self.options["hand_size"]
        self.protected_tiles = self.options["protected_tiles"]
        self.voluntary_draw = self.options["voluntary_draw"]
        most = set_size(self.double) - self.players
        if self.protected_tiles > most:
            raise OptionError(
                f"option 'protected_tiles' of variant 'draw' must be between 0 and {most} with {self.players} players "
                f"(each needs a tile), got {self.protected_tiles}"
            )
        self.check_hand_size(reserve=self.protected_tiles)

    def next_leader(self, previous: Deal, result: RoundResult) -> int:
        if self.options["next_leader"] == "rotate":
            return (previous.leader + 1) % self.players
        return super().next_leader(previous, result)

    def hand_points(self, winner: int, pips: tuple[int, ...]) -> int:
        return opponents_minus_own(winner, pips)

