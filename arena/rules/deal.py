"""Deals: who holds what, the boneyard order, who leads. The deal is what a record keeps.

A deal is dealt from the seeded stream of :mod:`arena.rules.rng` (label ``deal/<round index>``): the set is
shuffled, then each seat in turn from seat 0 takes ``hand_size`` consecutive tiles, and what is left is the
boneyard, top (next drawn) first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.rules.errors import RulesError
from arena.rules.rng import Rng
from arena.rules.tiles import NAMES, full_set


@dataclass(frozen=True)
class Deal:
    """The starting position of a round."""

    hands: tuple[tuple[int, ...], ...]
    boneyard: tuple[int, ...]
    """Tiles left after dealing, top (the next to be drawn) first. Out of play in Block."""
    leader: int
    lead_tile: int | None = None
    """A tile the leader must lead with (La Plaza partnership's first round: [6|6]); None means any tile."""
    engine: int | None = None
    """Mexican Train's engine double, which sits in the hub and belongs to no hand."""
    lot: tuple[tuple[int, int], ...] = field(default=())
    """How the first leader was drawn when tiles were revealed: (seat, tile) in reveal order. Informative."""

    def describe(self) -> str:
        hands = "; ".join(f"seat {s}: {' '.join(NAMES[t] for t in h)}" for s, h in enumerate(self.hands))
        return f"leader {self.leader}; {hands}; boneyard {len(self.boneyard)}"


def shuffled_set(double: int, seed: int | str, label: str) -> list[int]:
    """The double-N set shuffled by the stream ``label`` of ``seed``."""
    tiles = full_set(double)
    Rng(label, seed).shuffle(tiles)
    return tiles


def deal_hands(tiles: Sequence[int], players: int, hand_size: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Split a shuffled set into hands (consecutive runs, seat 0 first) and the boneyard."""
    hands = tuple(tuple(tiles[s * hand_size:(s + 1) * hand_size]) for s in range(players))
    return hands, tuple(tiles[players * hand_size:])


def check_deal(deal: Deal, players: int, double: int) -> None:
    """Refuse a deal that the set cannot hold: wrong seat count, a tile twice, a tile outside the set, bad leader."""
    if len(deal.hands) != players:
        raise RulesError(f"expected {players} hands, got {len(deal.hands)}")
    if not 0 <= deal.leader < players:
        raise RulesError(f"expected a leader between 0 and {players - 1}, got {deal.leader}")
    seen: set[int] = set()
    size = len(full_set(double))
    for tile in [t for hand in deal.hands for t in hand] + list(deal.boneyard) + (
        [deal.engine] if deal.engine is not None else []
    ):
        if not 0 <= tile < size:
            raise RulesError(f"expected tiles of the double-{double} set, got tile id {tile}")
        if tile in seen:
            raise RulesError(f"tile {NAMES[tile]} is dealt twice")
        seen.add(tile)
    if deal.lead_tile is not None and deal.lead_tile not in deal.hands[deal.leader]:
        raise RulesError(f"the leader (seat {deal.leader}) must hold the lead tile {NAMES[deal.lead_tile]}")
