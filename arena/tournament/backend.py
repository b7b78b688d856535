"""The seam between a run's driver and where its games are played: :class:`GameBackend`, what every backend is
given (:class:`BackendSetup`) and what it may hand back (the referee's record, or a :class:`PreparedRecord`), with
the helpers every backend shares (the clock, a game as the record file keeps it, the entrants' ``bots.json`` from
several places, a game played elsewhere replayed to a live watch).

The driver (:func:`arena.tournament.runner.run_tournament`) keeps the schedule, the seeds, resume, the records and
the standings; this machine's bot processes (:class:`arena.tournament.local_backend.LocalBackend`), worker
processes (:mod:`arena.tournament.workers`), Ray actors (:mod:`arena.cluster.ray_backend`) and the league's ladder
plug in here.
"""

from __future__ import annotations

import typing
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.records.jsonform import game_record_dict
from arena.records.schema import Record
from arena.records.store import record_of_unit, record_unit
from arena.referee import MatchRecord, MoveRecord, RoundRecord, TimeControl
from arena.rules import Game
from arena.tournament.schedule import Schedule, ScheduledGame
from arena.tournament.spec import TournamentSpec
from arena.tournament.standings import GameOutcome, outcome_of

OnProgress = Callable[[int, MoveRecord | RoundRecord], None]
"""A live watch of one game (the referee's ``on_progress``): each move as recorded and each round as it ends, with
the round's number."""


@dataclass(frozen=True)
class BackendSetup:
    """What any backend needs to play a run's games: plain data, so a cluster backend can ship it to its nodes."""

    spec: TournamentSpec
    schedule: Schedule
    run: Path
    protected: tuple[Path, ...] = ()
    """Paths no bot may see besides the run folder (a server's data folder and token)."""
    logs: Path | None = None
    """Where the bots' logs go (default: the run folder's ``logs/``)."""


def merge_bot_info(infos: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One ``bots.json`` entry per entrant from several places that ran its bots (worker processes, Ray nodes): the
    first place's, with starts and restarts summed and given up if any place gave up on it."""
    merged = []
    for entrant in zip(*infos, strict=False):
        first = dict(entrant[0])
        totals: Counter[str] = Counter()
        for data in entrant:
            totals.update({key: data.get(key) or 0 for key in ("starts", "restarts_after_timeouts")})
        first.update(totals, given_up=any(data.get("given_up") for data in entrant))
        merged.append(first)
    return merged


def replay_progress(record: MatchRecord, on_progress: OnProgress | None) -> None:
    """A game played elsewhere (a worker process, a Ray node) reaches the runner whole: its moves and round ends
    are passed to ``on_progress`` (a live watch) as it ends, in the order the referee made them."""
    if on_progress is None:
        return
    for number, round_record in enumerate(record.rounds):
        for move in round_record.moves:
            on_progress(number, move)
        if round_record.result is not None:
            on_progress(number, round_record)


def record_message(spec: TournamentSpec, game: Game, scheduled: ScheduledGame, record: MatchRecord) -> Record:
    """A played game as the record file keeps it (protobuf's JSON mapping, with its place in the schedule)."""
    return game_record_dict(record, index=scheduled.index, tournament=spec.name, deal_key=scheduled.deal_key,
                            rotation=scheduled.rotation, side_of=game.side_of)


@dataclass(frozen=True)
class PreparedRecord:
    """A played game already made into its bytes in the record file's format and its outcome, by a backend that has
    cores of its own to spare (``arena run --workers``): the single writer then only appends, fsyncs and counts. The
    rounds (nearly all of a record) do not travel as objects: a caller that wants the whole record (``on_game``)
    gets it read back from the bytes."""

    head: Record
    """The record as :func:`record_message` makes it, without its rounds: what the log and the progress need."""
    unit: bytes
    """As :func:`~arena.records.store.record_unit` makes it for the run's record file."""
    outcome: GameOutcome
    compact: bool
    """Whether ``unit`` is a compact unit (else a JSON line)."""

    @classmethod
    def of(cls, message: Record, compact: bool) -> PreparedRecord:
        return cls({key: value for key, value in message.items() if key != "rounds"}, record_unit(message, compact),
                   outcome_of(message), compact)

    def message(self) -> Record:
        """The whole record, as the record file's reader reads it back."""
        return record_of_unit(self.unit, self.compact)


class GameBackend(typing.Protocol):
    """Where a run's games are played. The driver (:func:`~arena.tournament.runner.run_tournament`) keeps the
    schedule, the seeds, resume, the single writer of the records, the standings and the progress; a backend only
    turns a scheduled game into the referee's record. It never records anything, so a game it plays twice (after a
    node died) is recorded once."""

    async def check(self, log: Any) -> list[tuple[str, str]]:
        """Start every entrant once before the first game: (name, why it cannot play) per entrant that cannot."""

    async def play(self, scheduled: ScheduledGame, on_progress: OnProgress | None) -> MatchRecord | PreparedRecord:
        """Play one scheduled game (its seed, its seats) to its end; faults are in the record, never raised. A
        :class:`PreparedRecord` only when ``on_progress`` is None (a live watch needs the referee's record)."""

    def info(self) -> list[dict[str, Any]]:
        """What ``bots.json`` says about the entrants."""

    def given_up(self) -> list[str]:
        """One line per entrant given up on (failed to start again and again, or withdrawn): its later games were
        forfeits."""

    async def withdraw(self, name: str, why: str) -> None:
        """The entrant ``name`` leaves the run now (:meth:`~arena.tournament.pools.EntrantPool.withdraw`): its games
        in flight end with its fault, its later ones are forfeits."""

    async def stop_lane(self, lane: int) -> None:
        """Stop every entrant's processes of ``lane``, wherever they run, and return once they are gone: the phase
        of deal sets they played has ended (:mod:`~arena.tournament.phases`)."""

    async def stop(self) -> None:
        """Stop every bot process (shielded by the caller)."""


BackendFactory = Callable[[BackendSetup], GameBackend]
"""What the driver is given to make its backend once the run's schedule is known (``--workers``, ``--backend ray``)."""


def time_control_of(spec: TournamentSpec) -> TimeControl:
    """The referee's clock of a tournament, from its ``[time]``."""
    return TimeControl(move_ms=spec.time.move_ms, bank_ms=spec.time.bank_ms, grace_ms=spec.time.grace_ms,
                       first_move_ms=spec.time.first_move_ms)


__all__ = ["BackendSetup", "GameBackend", "BackendFactory", "PreparedRecord", "record_message", "time_control_of",
           "merge_bot_info", "replay_progress"]
