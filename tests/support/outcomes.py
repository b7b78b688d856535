"""Game outcomes made by hand, as the standings and the SPRT are fed them."""

from __future__ import annotations

from arena.tournament.standings import GameOutcome


def outcome(deal: str, seats: tuple[str, ...], winner_seat: int, sides: tuple[int, ...] | None = None) -> GameOutcome:
    sides = sides if sides is not None else tuple(range(len(seats)))
    count = len(set(sides))
    scores = tuple(10 if side == sides[winner_seat] else 0 for side in range(count))
    ranking = (sides[winner_seat], *[s for s in range(count) if s != sides[winner_seat]])
    return GameOutcome(index=0, deal_key=deal, seats=seats, side_of=sides, scores=scores, ranking=ranking,
                       winner=sides[winner_seat], fault_seats=(), think_ms=(0.0,) * len(seats),
                       decisions=(1,) * len(seats))
