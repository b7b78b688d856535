"""Live events: what a watcher is sent, and the bounded buffer between the trio side and a watcher's gRPC handler.

Events are made on the trio side as games progress and handed to every watcher of the tournament in batches
(:meth:`Watcher.push`). The watcher's handler, a grpc.aio task on the same thread (trio runs as the guest of the
loop, :mod:`arena.guest`), waits for a batch without a thread or a poll (:meth:`Watcher.wait`: a push wakes it),
takes everything queued at once (:meth:`Watcher.take`) and sends it as one ``WatchReply``. The games never wait for
a watcher: ``push`` only appends, and sheds when the buffer is full (the policy is in
``proto/dominoes/v1/arena.proto``, ``WatchReply``):

1. move events and round results go first, oldest first; the watcher is told how many with one ``EventsDropped``;
2. then older standings snapshots (only the newest matters);
3. game started/finished and the final event are never dropped: if they alone overflow, the watch ends with
   RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import grpc
from google.protobuf import json_format

from arena.protocol import arena_pb2 as apb
from arena.protocol import tournament_pb2 as tpb
from arena.protocol.convert import action_pb, round_result_pb
from arena.records.store import to_message
from arena.referee import MoveRecord, RoundRecord
from arena.rules import Action, Kind
from arena.rules.beliefs import Calibration
from arena.tournament.sequential import MatchupTest
from arena.tournament.sprt import SprtError
from arena.tournament.standings import (
    EloEstimate,
    EntrantStanding,
    StandingsTable,
    calibration_from_json,
    calibration_json,
)

WATCH_BUFFER_EVENTS = 1024
"""Events a watcher may have waiting before the server sheds (see the module docstring)."""
MOVE_KINDS = frozenset({"move", "round_finished"})
"""Events only watchers that asked for moves get, and the first to be dropped."""


@dataclass(frozen=True)
class Ending:
    """How a watch stream ends once its queued events are sent."""

    code: grpc.StatusCode
    details: str = ""


class Watcher:
    """One WatchTournament stream: its bounded buffer, filled from trio, drained by its handler. Both run on one
    thread (the loop's), so nothing is locked: a push, an end or a close wakes the handler's :meth:`wait`."""

    def __init__(self, tournament_id: str, moves: bool, capacity: int = WATCH_BUFFER_EVENTS,
                 cancel: Callable[[], None] | None = None) -> None:
        self.tournament_id = tournament_id
        self.moves = moves
        self.capacity = capacity
        self._cancel = cancel
        self._events: deque[apb.TournamentEvent] = deque()
        self._dropped_moves = 0
        self._dropped_standings = 0
        self._ending: Ending | None = None
        self._waiter: asyncio.Future[None] | None = None
        self.ended_at: float | None = None
        """When the stream was told to end (monotonic); a stream still open long after is cancelled."""
        self.done = False
        """The handler has returned (the stream is over)."""

    # --- the trio side ---

    def push(self, events: Iterable[apb.TournamentEvent]) -> None:
        """Queue a batch; never blocks on the reader. Sheds when the buffer is full."""
        if self._ending is not None or self.done:
            return
        self._events.extend(e for e in events if self.moves or e.WhichOneof("kind") not in MOVE_KINDS)
        if len(self._events) > self.capacity:
            self._shed()
        self._wake()

    def _shed(self) -> None:
        kept: deque[apb.TournamentEvent] = deque()
        excess = len(self._events) - self.capacity
        for event in self._events:  # oldest first
            if excess > 0 and event.WhichOneof("kind") in MOVE_KINDS:
                self._dropped_moves += 1
                excess -= 1
            else:
                kept.append(event)
        if excess > 0:  # every standings snapshot but the newest (it supersedes them)
            newest = max((i for i, e in enumerate(kept) if e.WhichOneof("kind") == "standings"), default=-1)
            trimmed: deque[apb.TournamentEvent] = deque()
            for i, event in enumerate(kept):
                if event.WhichOneof("kind") == "standings" and i != newest:
                    self._dropped_standings += 1
                    excess -= 1
                else:
                    trimmed.append(event)
            kept = trimmed
        self._events = kept
        if excess > 0:
            self.end(grpc.StatusCode.RESOURCE_EXHAUSTED,
                     f"watcher too slow: more than {self.capacity} game events waiting to be sent; reconnect, and "
                     f"catch up with GetStandings and ListGames", discard=True)

    def end(self, code: grpc.StatusCode = grpc.StatusCode.OK, details: str = "", *, discard: bool = False) -> None:
        """End the stream after the queued events (or at once, dropping them, with ``discard``)."""
        if self._ending is not None:
            return
        self._ending = Ending(code, details)
        self.ended_at = time.monotonic()
        if discard:
            self._events.clear()
        self._wake()

    @property
    def ending(self) -> Ending | None:
        return self._ending

    # --- the handler's side ---

    async def wait(self) -> None:
        """Until there is something to take (events, the ending) or the stream is over."""
        while not self._events and self._ending is None and not self.done:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter

    def take(self) -> tuple[list[apb.TournamentEvent], Ending | None]:
        """Everything queued (without waiting), and the ending once nothing is left."""
        events = list(self._events)
        self._events.clear()
        if self._dropped_moves or self._dropped_standings:
            notice = apb.TournamentEvent(time=time.time(), dropped=apb.EventsDropped(
                moves=self._dropped_moves, standings=self._dropped_standings))
            events.insert(0, notice)
            self._dropped_moves = self._dropped_standings = 0
        return events, self._ending

    def close(self) -> None:
        """The client went away (or the handler returned)."""
        self.done = True
        self._events.clear()
        self._wake()

    def cancel_call(self) -> None:
        """Cancel the stream's gRPC call, when it has one (a stream whose client stopped reading)."""
        if self._cancel is not None:
            self._cancel()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __len__(self) -> int:
        return len(self._events)


# --- making events -----------------------------------------------------------------------------------------------


def event(**kind: Any) -> apb.TournamentEvent:
    return apb.TournamentEvent(time=time.time(), **kind)


def public_action(action: Action) -> Action:
    """What every seat saw: a draw without its tile."""
    return Action(Kind.DRAW) if action.kind == Kind.DRAW else action


class MoveNumbers:
    """The numbers of a game's moves as they come: within their round and within the game, both from 0."""

    def __init__(self) -> None:
        self.round = -1
        self.in_round = 0
        self.in_game = 0

    def next(self, round_index: int) -> tuple[int, int]:
        """(number in its round, number in the game) of the next move, which belongs to round ``round_index``."""
        if round_index != self.round:
            self.round, self.in_round = round_index, 0
        numbers = (self.in_round, self.in_game)
        self.in_round += 1
        self.in_game += 1
        return numbers


def move_event(game: int, round_index: int, number: int, in_game: int, move: MoveRecord) -> apb.TournamentEvent:
    """A move as every seat saw it; ``number`` counts the moves of its round, ``in_game`` those of its game (both
    from 0, forced moves included)."""
    return event(move=apb.MoveEvent(game=game, round_index=round_index, move_number=number, seat=move.seat,
                                    action=action_pb(public_action(move.action)), forced=move.forced,
                                    think_ms=move.think_ms, move_number_in_game=in_game))


def round_event(game: int, round_index: int, record: RoundRecord) -> apb.TournamentEvent:
    assert record.result is not None
    return event(round_finished=apb.RoundFinished(
        game=game, result=round_result_pb(record.result, round_index, record.scores_after)))


def game_summary(record: Mapping[str, Any]) -> apb.GameSummary:
    """The brief form of a stored record (a dict in protobuf's JSON mapping)."""

    summary = apb.GameSummary(
        index=int(record.get("index", 0)), seats=record.get("seats", []), side_of_seat=record.get("sideOfSeat", []),
        deal_key=record.get("dealKey", ""), rotation=record.get("rotation", 0),
        started_at=record.get("startedAt", 0.0), duration_s=record.get("durationS", 0.0),
    )
    if "result" in record:
        json_format.ParseDict(record["result"], summary.result)
    for fault in record.get("faults", ()):
        json_format.ParseDict(fault, summary.faults.add())
    return summary


def standings_pb(table: StandingsTable | Mapping[str, Any]) -> apb.Standings:
    """The message for the standings (a ``standings.json`` file, as read, goes through
    :meth:`StandingsTable.from_json` first)."""
    if not isinstance(table, StandingsTable):
        table = StandingsTable.from_json(table)
    message = apb.Standings(games=table.games, group_size=table.group_size, rating=table.rating)
    for rank, e in enumerate(table.entrants, start=1):
        entrant = message.entrants.add(
            rank=rank, name=e.name, games=e.games, wins=e.wins, draws=e.draws, losses=e.losses,
            match_points=e.match_points, scored=round(e.scored), scored_exact=float(e.scored),
            conceded=float(e.conceded), faults=e.faults, decisions=e.decisions,
        )
        if e.think_ms_per_decision is not None:
            entrant.think_ms_per_decision = e.think_ms_per_decision
        if e.elo.score is not None:
            entrant.score = e.elo.score
        if e.elo.elo is not None:
            entrant.elo = e.elo.elo
        if e.elo.elo_interval:
            entrant.elo_low, entrant.elo_high = e.elo.elo_interval
        if e.elo.elo_interval_by_deal:
            entrant.elo_low_by_deal, entrant.elo_high_by_deal = e.elo.elo_interval_by_deal
        entrant.openskill_mu = e.openskill_mu
        entrant.openskill_sigma = e.openskill_sigma
        entrant.openskill_ordinal = e.openskill_ordinal
        if e.calibration.beliefs:
            entrant.calibration.CopyFrom(calibration_pb(e.calibration))
    for a, row in table.pairwise.items():
        for b, cell in row.items():
            message.pairwise.add(entrant=a, opponent=b, wins=cell.wins, draws=cell.draws, losses=cell.losses)
    if table.sprt is not None:
        sprt = sprt_pb(table.sprt, message.group_size, recorded=table.games)
        if sprt is not None:
            message.sprt.CopyFrom(sprt)
    return message


def calibration_pb(calibration: Calibration) -> apb.Calibration:
    """An entrant's calibration as ``standings.json`` writes it (:meth:`EntrantStanding.to_json`): the beliefs, the
    tiles and the mean scores per tile."""
    data = calibration_json(calibration)
    return apb.Calibration(beliefs=data["beliefs"], tiles=data["tiles"], brier=data["brier"] or 0.0,
                           log_loss=data["log_loss"] or 0.0)


def entrant_standing(e: apb.EntrantStanding) -> EntrantStanding:
    """An entrant of a Standings message (what :func:`standings_pb` put in), for
    :func:`arena.tournament.standings.row_cells`: a client prints the server's row as ``arena run`` prints its own.
    The message has no total think time (its product of per-decision time and decisions stands for it) and no
    count of deal sets (0)."""
    def present(name: Literal["think_ms_per_decision", "score", "elo"]) -> float | None:
        return getattr(e, name) if e.HasField(name) else None

    per_decision = present("think_ms_per_decision")
    low, high = (e.elo_low, e.elo_high) if e.HasField("elo_low") else (None, None)
    low_by_deal, high_by_deal = (e.elo_low_by_deal, e.elo_high_by_deal) if e.HasField("elo_low_by_deal") \
        else (None, None)
    return EntrantStanding(
        name=e.name, games=e.games, wins=e.wins, draws=e.draws, losses=e.losses, match_points=e.match_points,
        scored=e.scored_exact if e.HasField("scored_exact") else e.scored, conceded=e.conceded, faults=e.faults,
        decisions=e.decisions, think_ms=0.0 if per_decision is None else per_decision * e.decisions,
        think_ms_per_decision=per_decision,
        elo=EloEstimate(score=present("score"), elo=present("elo"), low=low, high=high, low_by_deal=low_by_deal,
                        high_by_deal=high_by_deal, games=e.games, deal_sets=0),
        openskill_mu=e.openskill_mu, openskill_sigma=e.openskill_sigma, openskill_ordinal=e.openskill_ordinal,
        calibration=calibration_from_json(json_format.MessageToDict(e.calibration, preserving_proto_field_name=True))
        if e.HasField("calibration") else Calibration())


def sprt_pb(data: Mapping[str, Any], group_size: int, recorded: int | None = None) -> apb.SprtState | None:
    """The message for a test as ``MatchupTest.to_json`` (and standings.json's "sprt") gives it, with its verdict
    line (saying why when the standings beside it count ``recorded`` games more than the test); None when the
    saved test is unreadable (the standings are shown without it)."""

    try:
        test = MatchupTest.from_json(data, group_size)
    except SprtError:
        return None
    estimate = test.test.elo_estimate()
    message = apb.SprtState(candidate=test.candidate, opponent=test.opponent, unit=test.unit_name(),
                            state=test.test.state, llr=test.test.llr, lower_bound=test.test.lower,
                            upper_bound=test.test.upper, units=test.test.units, games=test.games,
                            elo0=test.test.elo0, elo1=test.test.elo1, counts=test.test.counts,
                            summary=test.summary(recorded))
    for name, value in (("elo", estimate.elo), ("score", estimate.score), ("decided_at", test.test.decided_at)):
        if value is not None:
            setattr(message, name, value)
    if estimate.interval is not None:
        message.elo_low, message.elo_high = estimate.interval
    return message


def record_message(record: Mapping[str, Any], withhold_seed: bool) -> tpb.GameRecord:

    message = to_message(dict(record))
    if withhold_seed:
        message.seed = ""
    return message
