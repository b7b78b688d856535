"""A seat's belief about the hidden tiles: what it is, when it is acceptable, and how it is scored against the truth.

A bot may send with a decision what it believes about the tiles it cannot see: for each such tile, the probability
of each *place* it may be in. The places of a seat are every other seat's hand, in seat order, then the boneyard
(which holds every tile not in a hand nor on the table: in Block the tiles out of play). A belief need not name every
hidden tile, but names each at most once.

A belief is checked against the round it was made in (:func:`belief_problem`): every tile it names must be one the
seat cannot see (not in its own hand, not on the table, a tile of the set), with one probability per place, each
from 0 to 1, summing to 1 within :data:`TOLERANCE`. The referee records a belief with a problem as a fault of the
belief alone; the move it came with is refereed as if it had none.

Records keep a belief quantised (:func:`quantised`): each probability in thousandths, rounded so that each tile's
still sum to exactly 1000 (largest remainders). Scores are computed from what the record keeps, per tile named:

- **Brier score**: ``sum over places (p - o)^2``, where o is 1 for the place the tile really was in, else 0: from 0
  (certain and right) to 2 (certain and wrong).
- **Log loss**: ``-ln(max(p_truth, 1/1000))``, in nats: 0 when certain and right; the floor of one thousandth (the
  record's quantum) bounds it at ln 1000, about 6.91.

Pure: no I/O; the truth comes from the round itself (:func:`truth`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.rules.tiles import NAMES, mask_of

if TYPE_CHECKING:
    from arena.rules.state import RoundState

BONEYARD = -1
"""The boneyard, as a place (the others are seat numbers)."""
TOLERANCE = 0.01
"""How far a tile's probabilities may sum from 1: room for a bot's rounding (three places of 0.33 each)."""
QUANTUM = 1000
"""Records keep probabilities in thousandths."""
LOG_FLOOR = 1 / QUANTUM
"""The smallest probability the log loss takes: one quantum, so that a recorded 0 for the truth costs ln 1000."""


@dataclass(frozen=True)
class Belief:
    """For some hidden tiles, a probability per place (:func:`places`: the other seats in order, then the
    boneyard). ``probabilities[i]`` belongs to ``tiles[i]``."""

    tiles: tuple[int, ...]
    probabilities: tuple[tuple[float, ...], ...]

    def __len__(self) -> int:
        return len(self.tiles)


def places(players: int, seat: int) -> tuple[int, ...]:
    """The places of ``seat``'s belief, in order: every other seat, then :data:`BONEYARD`."""
    return (*(s for s in range(players) if s != seat), BONEYARD)


def places_text(players: int, seat: int) -> str:
    """``seats 0, 2 and the boneyard``: the places of a seat's belief, for messages."""
    seats = [str(s) for s in places(players, seat) if s != BONEYARD]
    return f"{'seat' if len(seats) == 1 else 'seats'} {', '.join(seats)} and the boneyard"


def hidden_tiles(state: RoundState, seat: int) -> int:
    """The mask of the tiles ``seat`` cannot see now: the other hands and the boneyard."""
    mask = mask_of(state.boneyard)
    for other, hand in enumerate(state.hands):
        if other != seat:
            mask |= hand
    return mask


def belief_problem(belief: Belief, state: RoundState, seat: int) -> str | None:
    """What makes ``belief`` unacceptable from ``seat`` in ``state`` (before its move is applied), or None. The
    first problem found, in a line naming the tile."""
    hidden = hidden_tiles(state, seat)
    if len(belief.tiles) != len(belief.probabilities):
        return f"it names {len(belief.tiles)} tiles with {len(belief.probabilities)} rows of probabilities"
    if len(belief) > hidden.bit_count():
        return f"it has {len(belief)} entries; at most {hidden.bit_count()} (one per hidden tile)"
    width = len(places(state.game.players, seat))
    set_mask = state.game.all_tiles
    seen = 0
    for tile, probabilities in zip(belief.tiles, belief.probabilities, strict=True):
        name = NAMES[tile] if 0 <= tile < len(NAMES) else f"tile {tile}"
        if tile < 0 or not set_mask >> tile & 1:
            return f"{name} is not a tile of the double-{state.game.double} set"
        if seen >> tile & 1:
            return f"{name} is named twice"
        seen |= 1 << tile
        if not hidden >> tile & 1:
            where = "in its own hand" if state.hands[seat] >> tile & 1 else "on the table"
            return f"{name} is not hidden from seat {seat}: it is {where}"
        if len(probabilities) != width:
            return (f"{name} has {len(probabilities)} probabilities; seat {seat} of {state.game.players} has "
                    f"{width} places ({places_text(state.game.players, seat)})")
        problem = distribution_problem(probabilities)
        if problem:
            return f"{name}: {problem}"
    return None


def distribution_problem(probabilities: Sequence[float]) -> str | None:
    """What keeps ``probabilities`` from being a distribution, or None."""
    for p in probabilities:
        if not 0.0 <= p <= 1.0:  # NaN fails both
            return f"probability {p!r} is not from 0 to 1"
    total = math.fsum(probabilities)
    if abs(total - 1.0) > TOLERANCE + 1e-9:  # 0.99 from three 0.33s is within, whatever the binary rounding
        return f"the probabilities sum to {total:.4g}, not 1 (within {TOLERANCE})"
    return None


def quantised(belief: Belief) -> Belief:
    """The belief in thousandths (:data:`QUANTUM`) as records keep it: each tile's rounded by largest remainders,
    so that they sum to exactly 1; an acceptable belief stays acceptable."""
    return Belief(belief.tiles, tuple(tuple(n / QUANTUM for n in thousandths(row)) for row in belief.probabilities))


def thousandths(probabilities: Sequence[float]) -> tuple[int, ...]:
    """One tile's probabilities as whole thousandths summing to :data:`QUANTUM` (largest remainders; ties to the
    earlier place)."""
    total = math.fsum(probabilities)
    scaled = [p / total * QUANTUM for p in probabilities]
    counts = [math.floor(x) for x in scaled]
    short = QUANTUM - sum(counts)
    by_remainder = sorted(range(len(scaled)), key=lambda i: (counts[i] - scaled[i], i))
    for i in by_remainder[:short]:
        counts[i] += 1
    return tuple(counts)


def recorded(belief: Belief) -> list[int]:
    """A quantised belief's probabilities as records keep them: whole thousandths, tile after tile."""
    return [round(p * QUANTUM) for row in belief.probabilities for p in row]


def from_recorded(tiles: Sequence[int], values: Sequence[int], width: int) -> Belief:
    """The belief a record keeps (:func:`recorded`), ``width`` places per tile; ValueError when the values do not
    fill the tiles' rows or a row does not sum to :data:`QUANTUM`."""
    if len(values) != len(tiles) * width:
        raise ValueError(f"expected {len(tiles)} × {width} values, got {len(values)}")
    rows = tuple(tuple(values[i * width:(i + 1) * width]) for i in range(len(tiles)))
    for tile, row in zip(tiles, rows, strict=True):
        if sum(row) != QUANTUM:
            raise ValueError(f"the values of {NAMES[tile]} sum to {sum(row)}, not {QUANTUM}")
    return Belief(tuple(tiles), tuple(tuple(n / QUANTUM for n in row) for row in rows))


def truth(state: RoundState, seat: int, tiles: Sequence[int]) -> tuple[int, ...]:
    """Where each of ``tiles`` really is in ``state``, as an index into :func:`places` of ``seat``; -1 for a tile
    that is not hidden from it."""
    order = places(state.game.players, seat)
    boneyard = mask_of(state.boneyard)
    where = []
    for tile in tiles:
        place = BONEYARD if boneyard >> tile & 1 else next(
            (s for s, hand in enumerate(state.hands) if s != seat and hand >> tile & 1), None)
        where.append(order.index(place) if place is not None else -1)
    return tuple(where)


def brier(probabilities: Sequence[float], truth_index: int) -> float:
    """A tile's Brier score: the squared distance from the truth (0 to 2)."""
    return math.fsum((p - (1.0 if i == truth_index else 0.0)) ** 2 for i, p in enumerate(probabilities))


def log_loss(probabilities: Sequence[float], truth_index: int) -> float:
    """A tile's log loss in nats, the truth's probability floored at :data:`LOG_FLOOR`."""
    return -math.log(max(probabilities[truth_index], LOG_FLOOR))


@dataclass(frozen=True)
class Calibration:
    """Scores summed over beliefs: how many beliefs, how many tiles they named, and the totals of the per-tile Brier
    score and log loss (means: :attr:`brier`, :attr:`log_loss`)."""

    beliefs: int = 0
    tiles: int = 0
    brier_total: float = 0.0
    log_loss_total: float = 0.0

    @property
    def brier(self) -> float | None:
        """The mean Brier score per tile named; None before any."""
        return self.brier_total / self.tiles if self.tiles else None

    @property
    def log_loss(self) -> float | None:
        """The mean log loss per tile named, in nats; None before any."""
        return self.log_loss_total / self.tiles if self.tiles else None

    def __add__(self, other: Calibration) -> Calibration:
        return Calibration(self.beliefs + other.beliefs, self.tiles + other.tiles,
                           self.brier_total + other.brier_total, self.log_loss_total + other.log_loss_total)


def scored(belief: Belief, where: Sequence[int]) -> Calibration:
    """One belief scored against the truth (``where``: :func:`truth` of its tiles); tiles that were not hidden (a
    belief the referee refused is never scored) are left out."""
    pairs = [(row, place) for row, place in zip(belief.probabilities, where, strict=True) if place >= 0]
    return Calibration(1, len(pairs), math.fsum(brier(row, place) for row, place in pairs),
                       math.fsum(log_loss(row, place) for row, place in pairs))


def belief_from_counts(tiles: Sequence[int], counts: Sequence[Sequence[int]]) -> Belief:
    """A belief from how often each tile was found at each place (a search's guesses): the frequencies."""
    rows = []
    for row in counts:
        total = sum(row)
        rows.append(tuple(n / total for n in row))
    return Belief(tuple(tiles), tuple(rows))
