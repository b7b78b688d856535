"""Plain results: how a round ended and what it scored, how a match ended. No logic beyond formatting."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from arena.rules.tiles import NAMES


# str and Enum, not StrEnum: a StrEnum prints as its value ("domino"), not as Ending.DOMINO
class Ending(str, Enum):  # noqa: UP042
    """How a round ended."""

    DOMINO = "domino"
    """A player emptied their hand."""
    BLOCK = "block"
    """Nobody could move."""


@dataclass(frozen=True)
class RoundResult:
    """The outcome of one round (hand). Scores are per side (a seat, or a team in partnership games)."""

    ending: Ending
    winner: int | None
    """The winning side, or None when nobody won the round (a tied block; Mexican Train has no round winner)."""
    points: tuple[int, ...]
    """Everything each side scored in this round, including points scored during play (All Fives)."""
    play_points: tuple[int, ...]
    """The part of ``points`` scored during play (All Fives' multiples of five); zeros elsewhere."""
    pips: tuple[int, ...]
    """Each seat's pips left in hand, as the variant counts them ([0|0] is 50 in Mexican Train)."""
    hands: tuple[tuple[int, ...], ...]
    """The hands at the end of the round, revealed."""
    out_seat: int | None
    """The seat that emptied its hand (domino), else None."""
    last_placer: int | None
    """The seat that placed the last tile of the round (in a block, the blocking tile)."""
    capicu: bool = False
    """The domino was a non-double that fitted both (different) open ends. Recorded, never scored."""

    def describe(self) -> str:
        how = f"domino by seat {self.out_seat}" if self.ending is Ending.DOMINO else "block"
        who = "nobody scores" if self.winner is None else f"side {self.winner} wins"
        extra = ", capicú" if self.capicu else ""
        hands = " ".join("".join(NAMES[t] for t in hand) or "-" for hand in self.hands)
        return f"{how}{extra}: {who}, points {list(self.points)}, hands {hands}"


@dataclass(frozen=True)
class MatchResult:
    """The outcome of a match, with scores per side."""

    scores: tuple[int, ...]
    winner: int | None
    """The winning side, or None for a drawn match."""
    ranking: tuple[int, ...]
    """Sides from best to worst (ties keep side order)."""
    rounds: int

    @property
    def drawn(self) -> bool:
        return self.winner is None
