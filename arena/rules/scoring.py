"""Scoring helpers shared by the variants: pip counts, round winners, rounding, match ends.

Each variant's module composes these; none repeats their logic.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.rules.results import MatchResult


def sole_lowest(values: Sequence[int]) -> int | None:
    """The index of the single lowest value, or None when the lowest is shared."""
    lowest = min(values)
    holders = [i for i, v in enumerate(values) if v == lowest]
    return holders[0] if len(holders) == 1 else None


def side_totals(pips: Sequence[int], side_of: Sequence[int], num_sides: int) -> list[int]:
    """Sum seat values into side values."""
    totals = [0] * num_sides
    for seat, value in enumerate(pips):
        totals[side_of[seat]] += value
    return totals


def opponents_minus_own(winner: int, pips: Sequence[int]) -> int:
    """Pagat's Draw and Block: the sum of the opponents' pips minus the winner's own (0 after a domino).

    With 3, 8 and 10 left the sole lowest scores 8 + 10 - 3 = 15.
    """
    return sum(pips) - 2 * pips[winner]


def round_to_five(value: int) -> int:
    """The nearest multiple of five (12 -> 10, 13 -> 15, 2 -> 0, 3 -> 5); halves cannot occur with integers."""
    return (value + 2) // 5 * 5


def ranking(scores: Sequence[int], higher_is_better: bool = True) -> tuple[int, ...]:
    """Sides ordered best first; equal scores keep side order."""
    sign = -1 if higher_is_better else 1
    return tuple(sorted(range(len(scores)), key=lambda s: (sign * scores[s], s)))


def best_or_draw(scores: Sequence[int], rounds: int, higher_is_better: bool = True) -> MatchResult:
    """The match result when the match is over: the single best side wins, a tie for best is a drawn match."""
    order = ranking(scores, higher_is_better)
    best = scores[order[0]]
    tied = sum(1 for s in scores if s == best) > 1
    return MatchResult(tuple(scores), None if tied else order[0], order, rounds)


def target_reached(scores: Sequence[int], target: int, rounds: int) -> MatchResult | None:
    """After a fully scored round: if any side reached ``target``, the highest wins (overshoot kept); else None."""
    if max(scores) < target:
        return None
    return best_or_draw(scores, rounds)
