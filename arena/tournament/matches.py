"""One match of a Swiss round or a knockout bracket (:class:`Match`), and how its games decide it.

A match is two entrants (two-sided variants only: two players, or two teams each held by one entrant) playing a
number of duplicate deal sets, every deal set under every seat rotation. Its result is what the standings count a
pairing by: each entrant's total match points over the match's games (:func:`entrant_points`, from the standings'
own :func:`~arena.tournament.standings.side_points`), the higher total winning and equal totals a draw. Pure: no
I/O, the same answer from the same games.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.tournament.standings import GameOutcome, side_points, sides_held

BYE = "bye"
"""``decided_by`` of a match with one entrant: a Swiss bye, or a knockout walkover (no opponent to play)."""
SCORE = "score"
"""``decided_by`` of a match its games decided (or drew, in a Swiss round)."""
TIEBREAK = "tiebreak"
"""``decided_by`` of a knockout match tied on its deal sets that a sudden-death deal set decided."""
SEED = "seed"
"""``decided_by`` of a knockout match still tied after every tie-break deal set: the higher seed advances."""


@dataclass(frozen=True)
class Match:
    """One pairing of a Swiss round or one match of a bracket, with its result once known."""

    id: str
    """``R2-3`` (Swiss: round 2, third pairing), ``W1-1``, ``L2-1``, ``GF``, ``GF2`` (knockout)."""
    round: int
    """Its round, from 1 (a knockout's winners' and losers' brackets count their rounds apart; the grand finals 1)."""
    entrants: tuple[int, ...]
    """Entrant indices (the file's order, so the seed minus one); entrants[0] sits first under rotation 0. One
    entrant for a bye or a walkover."""
    score: tuple[float, float] | None = None
    """Each entrant's total match points over the match's games (tie-break deal sets included); None until decided
    (and for a bye)."""
    winner: int | None = None
    """The entrant index that won (or advances); None for a drawn Swiss pairing and before the result."""
    games: tuple[int, ...] = ()
    """The game indices (in the run's records) that belong to the match."""
    deal_sets: int = 0
    """Deal sets played (tie-break deal sets included)."""
    decided_by: str = ""
    """How it was decided: :data:`SCORE`, :data:`TIEBREAK`, :data:`SEED` or :data:`BYE`; "" while undecided."""

    @property
    def bye(self) -> bool:
        return len(self.entrants) == 1

    @property
    def decided(self) -> bool:
        return self.decided_by != ""

    @property
    def loser(self) -> int | None:
        """The entrant that lost (None for a bye, a draw or an undecided match)."""
        if self.winner is None or self.bye:
            return None
        return self.entrants[1] if self.winner == self.entrants[0] else self.entrants[0]

    def to_json(self, names: list[str]) -> dict[str, object]:
        """The match as ``standings.json`` holds it (entrants by name)."""
        return {"id": self.id, "round": self.round, "entrants": [names[e] for e in self.entrants],
                "score": list(self.score) if self.score is not None else None,
                "winner": names[self.winner] if self.winner is not None else None,
                "decided_by": self.decided_by, "deal_sets": self.deal_sets, "games": list(self.games)}


def entrant_points(outcome: GameOutcome) -> dict[str, float]:
    """Each entrant's match points in one game (1 a win, ½ a draw, 0 a loss), as the standings count them: the mean
    over the sides it holds of :func:`~arena.tournament.standings.side_points`. Halves, so exact as floats."""
    points = side_points(outcome)
    return {name: float(sum(points[s] for s in sides) / len(sides)) for name, sides in sides_held(outcome).items()}


def totals_of(outcomes: Iterable[GameOutcome], entrants: tuple[int, ...], names: list[str]) -> tuple[float, float]:
    """The two entrants' total match points over some games (a match's, or one deal set's)."""
    totals = [0.0, 0.0]
    for outcome in outcomes:
        points = entrant_points(outcome)
        for side, entrant in enumerate(entrants):
            totals[side] += points.get(names[entrant], 0.0)
    return totals[0], totals[1]


def bye_match(match_id: str, round_number: int, entrant: int) -> Match:
    """A bye (Swiss) or a walkover (knockout): the entrant advances without a game."""
    return Match(match_id, round_number, (entrant,), winner=entrant, decided_by=BYE)


def winner_of(entrants: tuple[int, ...], score: tuple[float, float]) -> int | None:
    """The entrant with the higher total, None when equal."""
    if score[0] == score[1]:
        return None
    return entrants[0] if score[0] > score[1] else entrants[1]


__all__ = ["BYE", "SCORE", "SEED", "TIEBREAK", "Match", "bye_match", "entrant_points", "totals_of",
           "winner_of"]
