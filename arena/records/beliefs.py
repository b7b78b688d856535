"""The beliefs a record keeps, each beside the truth: where every tile it names really was when it was sent.

A record keeps a belief with its move (``MoveRecord.belief``), never the truth, which the deal and the moves already
hold: :func:`recorded_beliefs` replays the game through the rules (:func:`.replay.steps`) and reads, at each move with
a belief, where each named tile was just before the move. The replay page shows them side by side
(:mod:`.html`), and the standings score them (:func:`calibration_by_seat`, :mod:`arena.rules.beliefs`). A game
without beliefs is not replayed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from arena.records.jsonform import belief_from
from arena.records.replay import Step, steps
from arena.rules.beliefs import Belief, Calibration, scored, truth


class RecordedBelief(NamedTuple):
    """One move's belief and the truth."""

    number: int
    """The move's number within the match, from 0 (as the protocol and faults count)."""
    seat: int
    belief: Belief
    truth: tuple[int, ...]
    """For each tile of the belief, the index of the place it was really in (:func:`arena.rules.beliefs.places`)."""


def has_beliefs(record: Mapping[str, Any]) -> bool:
    """Whether any move of the record carries a belief."""
    return any("belief" in move for rnd in record.get("rounds", ()) for move in rnd.get("moves", ()))


def recorded_beliefs(record: Mapping[str, Any]) -> Iterator[RecordedBelief]:
    """Every recorded belief of the game, in move order, with the truth; RecordError if the game does not replay
    (FormatError for a belief that does not fit its tiles)."""
    if not has_beliefs(record):
        return
    for step in steps(record):
        item = belief_at(step)
        if item is not None:
            yield item


def belief_at(step: Step) -> RecordedBelief | None:
    """The belief recorded with a step's move, with the truth (the step's match is the round just before the
    move), or None (not a move, or no belief); FormatError for a belief that does not fit its tiles. For walks of
    :func:`.replay.steps` that read more than the beliefs (the Parquet export)."""
    move = step.recorded
    if step.kind != "move" or move is None or "belief" not in move:
        return None
    state = step.match.round
    seat = int(move.get("seat", 0))
    belief = belief_from(move["belief"], state.game.players)
    return RecordedBelief(step.number, seat, belief, truth(state, seat, belief.tiles))


def calibration_by_seat(record: Mapping[str, Any]) -> dict[int, Calibration]:
    """Each seat's beliefs of the game scored against the truth (seats that sent none are left out)."""
    by_seat: dict[int, Calibration] = {}
    for item in recorded_beliefs(record):
        by_seat[item.seat] = by_seat.get(item.seat, Calibration()) + scored(item.belief, item.truth)
    return by_seat
