"""All Fives (variant ``all_fives``): a computer game's All Fives, completed from Pagat's All Fives
(docs/reference/rules.md#all-fives).

Double-6, 2 to 4 players each for themselves, 7 tiles each with 2 players, 5 with 3 or 4 (boneyard 14, 13, 8).
Must place if able; otherwise draw one tile at a time until a tile fits, and pass only when the boneyard is empty;
no voluntary drawing. Blocked when the boneyard is empty and every player in turn has passed.

The layout is the spinner layout (:mod:`arena.rules.spinner`): the first double played is the only spinner, and
once both its long sides are covered its short sides (side C, side D) open. After every placement, if the layout
count is a positive multiple of 5 the placer scores it (the lead too: [6|4], [3|2], [5|5] score 10, 5, 10), and
keeps it whatever happens next.

Hand end: the winner (the domino, or in a block the sole lowest pip total) scores the other hands' pips, summed then
rounded to the nearest 5 (12 -> 10, 13 -> 15, 2 -> 0, 3 -> 5); the winner's own pips are not subtracted; a block
with a tie for lowest scores nothing. The winner leads the next hand; after a block with no sole winner, the seat
after the previous leader. First leader by lot. The match ends after the hand in which someone reaches the target
(150); the highest score wins, a tie for highest is a drawn match.
"""

from __future__ import annotations

from arena.rules.actions import Action
from arena.rules.deal import Deal
from arena.rules.game import Game
from arena.rules.options import Option
from arena.rules.registry import register
from arena.rules.scoring import round_to_five
from arena.rules.spinner import Spinner
from arena.rules.state import RoundState

TARGET = Option(
    "target", "points to reach; the match ends after the hand in which a player reaches it", default=150, minimum=1
)
HAND_SIZE = Option(
    "hand_size", "tiles dealt to each player; the rest is the boneyard",
    default=lambda players: 7 if players == 2 else 5, minimum=1, default_doc="7 with 2 players, 5 with 3 or 4",
)


def points_in_play(count: int) -> int:
    """What a placement scores at once: the layout count when it is a positive multiple of five, else nothing."""
    return count if count > 0 and count % 5 == 0 else 0


class AllFivesRound(RoundState):
    """A round on the spinner layout that scores every positive multiple of five in the count."""

    __slots__ = ()

    layout: Spinner

    def _after_place(self, seat: int, action: Action) -> None:
        points = points_in_play(self.layout.count())
        if points:
            self.play_points[self.game.side_of[seat]] += points


@register
class AllFivesGame(Game):
    name = "all_fives"
    title = "All Fives (points in play for multiples of five, with a spinner)"
    player_counts = (2, 3, 4)
    default_players = 2
    options_declared = (TARGET, HAND_SIZE)
    round_class = AllFivesRound
    drawing = True
    voluntary_draw = False

    def new_layout(self, deal: Deal) -> Spinner:
        return Spinner()

    def hand_points(self, winner: int, pips: tuple[int, ...]) -> int:
        """The other hands' pips, summed, then rounded to the nearest 5; the winner's own are not subtracted."""
        return round_to_five(sum(pips) - pips[winner])
