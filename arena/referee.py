"""The referee: plays one complete match of any variant between seats, and returns its complete record.

For each decision it builds the seat's observation (only what the seat may know), asks the seat's player under a
deadline, checks the answer against the legal actions, and applies it. Faults (timeout, illegal or malformed reply,
crash, failed start) are recorded with their kind, seat and move number; the fault policy then decides the result
(default: the faulting seat's side forfeits, the others are ranked by score at that moment). A belief sent with a
reply (:mod:`arena.rules.beliefs`) is checked apart, against the round before the move: a refused one is a fault of
the belief alone, recorded beside the others, and the move stands. A decision with a
single legal action (a forced draw or pass, or a sole placement) is applied without asking, as the computer
game's guide says of draws and passes ("there is never a choice"; docs/reference/rules.md#common-ground); every seat still
sees it in the public history.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import trio

from arena.players.base import Decision, DecisionRequest, SeatPlayer
from arena.players.faults import BotFailure, Fault, FaultKind
from arena.rules import Action, Deal, Game, Kind, Match, RoundResult, RoundState
from arena.rules.beliefs import Belief, belief_problem, quantised
from arena.rules.results import MatchResult
from arena.rules.scoring import ranking
from arena.time_control import GRACE_MS as GRACE_MS
from arena.time_control import MAX_GRACE_MS as MAX_GRACE_MS
from arena.time_control import TimeControl as TimeControl
from arena.time_control import grace_problem as grace_problem


class MoveRecord(NamedTuple):
    seat: int
    action: Action
    """As applied; a draw carries the drawn tile (the record is complete; observations hide it)."""
    think_ms: float
    forced: bool = False
    comment: str = ""
    belief: Belief | None = None
    """The belief sent with the move, as records keep it (:func:`~arena.rules.beliefs.quantised`); None when the
    bot sent none or one the referee refused (a belief fault)."""


_new_record = tuple.__new__
"""Makes a :class:`MoveRecord` from all its fields' tuple, as its own ``__new__`` does after a Python call more."""
_DRAW = Kind.DRAW
"""Read as a module name: an enum member read through its class takes five times as long."""


@dataclass
class RoundRecord:
    deal: Deal
    moves: list[MoveRecord] = field(default_factory=list)
    result: RoundResult | None = None
    scores_after: tuple[int, ...] = ()


@dataclass
class MatchRecord:
    """Everything that happened in a match: enough to replay and verify it."""

    match_id: str
    variant: str
    players: int
    options: dict[str, Any]
    seed: int | str
    seats: tuple[str, ...]
    rounds: list[RoundRecord] = field(default_factory=list)
    result: MatchResult | None = None
    faults: list[Fault] = field(default_factory=list)
    belief_faults: list[Fault] = field(default_factory=list)
    """Refused beliefs (:data:`FaultKind.MALFORMED_BELIEF`): faults of the belief alone, which never decide the game
    (``by_fault`` does not count them)."""
    started_at: float = 0.0
    duration_s: float = 0.0

    @property
    def by_fault(self) -> bool:
        return bool(self.faults)


def forfeit_result(game: Game, scores: tuple[int, ...], faulting_sides: set[int], rounds: int) -> MatchResult:
    """The faulting sides rank last; the others by score; the best of the others wins unless tied."""
    higher_better = game.higher_scores_win
    order = ranking(scores, higher_better)
    clean = [s for s in order if s not in faulting_sides]
    order = tuple(clean + [s for s in order if s in faulting_sides])
    winner = None
    if clean and (len(clean) == 1 or scores[clean[0]] != scores[clean[1]]):
        winner = clean[0]
    return MatchResult(tuple(scores), winner, order, rounds)


def forfeit_before_start(game: Game, seats: tuple[str, ...], faults: list[Fault], *, seed: int | str,
                         match_id: str) -> MatchRecord:
    """The record of a match that could not start because some seat's bot did not come up."""
    record = MatchRecord(match_id, game.name, game.players, dict(game.options), seed, seats, faults=list(faults),
                         started_at=time.time())
    record.result = forfeit_result(game, (0,) * game.num_sides, {game.side_of[f.seat] for f in faults}, 0)
    return record


async def play_match(
    game: Game,
    players: Sequence[SeatPlayer],
    *,
    seed: int | str,
    match_id: str,
    time_control: TimeControl = TimeControl(),
    first_deal: Deal | None = None,
    on_progress: Callable[[int, MoveRecord | RoundRecord], None] | None = None,
) -> MatchRecord:
    """Play a whole match; never raises for anything a player does (it becomes a recorded fault).

    ``on_progress(round_index, item)``, when given, is called with each move as recorded (a MoveRecord: a draw
    carries its tile, so hide it before showing it to anyone) and with each finished round (its RoundRecord).
    """
    if len(players) != game.players:
        raise ValueError(f"expected {game.players} players, got {len(players)}")
    record = MatchRecord(match_id, game.name, game.players, dict(game.options), seed,
                         tuple(p.name for p in players), started_at=time.time())
    started = time.perf_counter()
    match = game.new_match(seed, first_deal)
    banks = [time_control.bank_ms] * game.players
    decided = [False] * game.players
    move_number = 0
    while True:
        state = match.round
        current = RoundRecord(state.deal)
        record.rounds.append(current)
        while not state.is_over():
            seat = state.turn
            legal = state.legal_actions()
            if len(legal) == 1:
                _apply(match, state, seat, legal[0], 0.0, current, forced=True)
                move_number += 1
                if on_progress is not None:
                    on_progress(len(record.rounds) - 1, current.moves[-1])
                continue
            move_ms = time_control.move_time_ms(first=not decided[seat])
            decided[seat] = True
            deadline_ms = time_control.deadline_ms(banks[seat], first=move_ms != time_control.move_ms)
            request = DecisionRequest.of_round(match_id, game, state, move_number, move_ms, banks[seat], deadline_ms)
            timeout = deadline_ms / 1000
            try:
                decision = await _decide(players[seat], request, timeout)
                if decision.action not in legal:
                    raise BotFailure(FaultKind.ILLEGAL_ACTION, choice=str(decision.action))
            except BotFailure as failure:
                record.faults.append(Fault(failure.kind, seat, move_number, str(failure)))
                faulting = {game.side_of[seat]}
                record.result = forfeit_result(game, match.scores, faulting, len(match.results))
                await _notify_end(players, match_id, record.result, by_fault=True)
                record.duration_s = time.perf_counter() - started
                return record
            over_ms = max(0.0, decision.think_s * 1000 - move_ms)
            banks[seat] = max(0, banks[seat] - int(over_ms))
            belief = _accepted_belief(decision, state, seat, move_number, record.belief_faults)
            _apply(match, state, seat, decision.action, decision.think_s * 1000, current, comment=decision.comment,
                   belief=belief)
            move_number += 1
            if on_progress is not None:
                on_progress(len(record.rounds) - 1, current.moves[-1])
        current.result = state.result()
        current.scores_after = match.scores
        if on_progress is not None:
            on_progress(len(record.rounds) - 1, current)
        await _notify_round(players, match_id, len(record.rounds) - 1, current.result, match.scores)
        if match.is_over():
            record.result = match.result()
            await _notify_end(players, match_id, record.result, by_fault=False)
            record.duration_s = time.perf_counter() - started
            return record
        match.next_round()


def _apply(match: Match, state: RoundState, seat: int, action: Action, think_ms: float, current: RoundRecord, *,
           forced: bool = False, comment: str = "", belief: Belief | None = None) -> None:
    match.apply(action)
    if action.kind == _DRAW:
        action = state.history[-1][1]  # the drawn tile, for the record
    current.moves.append(_new_record(MoveRecord, (seat, action, round(think_ms, 3), forced, comment, belief)))


def _accepted_belief(decision: Decision, state: RoundState, seat: int, move_number: int,
                     faults: list[Fault]) -> Belief | None:
    """The decision's belief as the record keeps it, checked against the round before the move is applied; a belief
    that cannot be read or is refused (:func:`~arena.rules.beliefs.belief_problem`) is a fault of the belief, added
    to ``faults``, and the move stands."""
    problem = decision.belief_problem
    if decision.belief is not None and not problem:
        problem = belief_problem(decision.belief, state, seat) or ""
    if problem:
        faults.append(Fault.make(FaultKind.MALFORMED_BELIEF, seat, move_number, detail=problem))
        return None
    return quantised(decision.belief) if decision.belief is not None else None


async def _decide(player: SeatPlayer, request: DecisionRequest, timeout: float) -> Decision:
    """The player's decision; anything it raises other than a BotFailure is a fault too, never a crash."""
    try:
        return await player.act(request, timeout)
    except BotFailure:
        raise
    except Exception as error:  # a player must never take the match (or the tournament) down
        raise BotFailure(FaultKind.CRASHED, detail=f"{type(error).__name__}: {error}") from None


async def _quietly(call: Callable[..., Awaitable[object]], *args: object) -> None:
    """A notification: best effort, whatever the player does."""
    try:
        await call(*args)
    except Exception:
        pass


async def _notify_round(players: Sequence[SeatPlayer], match_id: str, index: int, result: RoundResult,
                        scores: tuple[int, ...]) -> None:
    async with trio.open_nursery() as nursery:
        for seat, player in enumerate(players):
            nursery.start_soon(_quietly, player.round_ended, match_id, seat, index, result, scores)


async def _notify_end(players: Sequence[SeatPlayer], match_id: str, result: MatchResult, by_fault: bool) -> None:
    async with trio.open_nursery() as nursery:
        for seat, player in enumerate(players):
            nursery.start_soon(_quietly, player.match_ended, match_id, seat, result, by_fault)
