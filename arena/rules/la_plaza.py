"""La Plaza, Puerto Rico style (docs/reference/rules.md#la-plaza): ``la_plaza`` (1 v 1 with a boneyard) and ``la_plaza_teams``.

Double-6, 7 tiles each. 1 v 1: 14 tiles in the boneyard; a player who cannot place draws one tile at a time until
one fits, and passes only when the boneyard is empty; no voluntary drawing. Partnership: 4 players, seats 0+2
against 1+3, no boneyard, pass when unable.

First lead of a match: 1 v 1 by lot (each player reveals a random tile of the shuffled set, the higher pip total
leads, redraw on a tie; then the set is reshuffled and dealt); partnership: the holder of [6|6] leads it.
Domino: the side that went out scores every pip left in every hand (partner's included). Block: the side with the
lower pip total scores every pip in all hands; equal totals score nothing. Next lead: the round's winner (the seat
that went out); after a block, the player who placed the blocking tile. Capicú is recorded, never scored.
Match: first side to reach the target (100).
"""

from __future__ import annotations

from arena.rules.deal import Deal
from arena.rules.game import Game
from arena.rules.options import Option
from arena.rules.registry import register
from arena.rules.results import Ending, RoundResult
from arena.rules.rng import Rng
from arena.rules.tiles import DOUBLE_OF, PIPS, full_set

TARGET = Option("target", "points to reach (tables play 50, 100, 150, 200 or 500)", default=100, minimum=1)
HAND_SIZE = 7


class LaPlazaGame(Game):
    """What both La Plaza variants share: scoring, next leader, a fixed hand of 7."""

    options_declared = (TARGET,)

    def configure(self) -> None:
        self.hand_size = HAND_SIZE

    def hand_points(self, winner: int, pips: tuple[int, ...]) -> int:
        """The winning side scores every pip left in every hand, both sides'."""
        return sum(pips)

    def next_leader(self, previous: Deal, result: RoundResult) -> int:
        """The seat that went out leads; after a block, the seat that placed the blocking tile."""
        if result.ending is Ending.DOMINO:
            seat = result.out_seat
            assert seat is not None  # a domino: a seat went out
            return seat
        return result.last_placer if result.last_placer is not None else previous.leader


@register
class LaPlazaSingles(LaPlazaGame):
    name = "la_plaza"
    title = "La Plaza, 1 v 1 with a boneyard"
    player_counts = (2,)
    default_players = 2
    drawing = True
    voluntary_draw = False

    def first_deal(self, seed: int | str) -> Deal:
        leader, lot = reveal_lot(seed, self.players)
        deal = self.deal(seed, 0, leader)
        return Deal(deal.hands, deal.boneyard, leader, lot=lot)


@register
class LaPlazaTeams(LaPlazaGame):
    name = "la_plaza_teams"
    title = "La Plaza, partnership (seats 0+2 against 1+3)"
    player_counts = (4,)
    default_players = 4
    teams = True
    drawing = False

    def lead_tile(self, round_index: int) -> int | None:
        return DOUBLE_OF[6] if round_index == 0 else None

    def first_deal(self, seed: int | str) -> Deal:
        """Whoever holds [6|6] leads it."""
        six_six = DOUBLE_OF[6]
        probe = self.deal(seed, 0, 0)
        holder = next(s for s, hand in enumerate(probe.hands) if six_six in hand)
        return Deal(probe.hands, probe.boneyard, holder, lead_tile=six_six)


def reveal_lot(seed: int | str, players: int) -> tuple[int, tuple[tuple[int, int], ...]]:
    """Each player reveals a tile of the shuffled set; the higher pip total leads; a tie redraws.

    Returns the leader and every (seat, tile) revealed, in order, so the record shows how the lot fell.
    """
    rng = Rng("lot", seed)
    reveals: list[tuple[int, int]] = []
    while True:
        tiles = full_set(6)
        rng.shuffle(tiles)
        shown = tiles[:players]
        reveals.extend(enumerate(shown))
        best = max(PIPS[t] for t in shown)
        holders = [s for s, t in enumerate(shown) if PIPS[t] == best]
        if len(holders) == 1:
            return holders[0], tuple(reveals)
