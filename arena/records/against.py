"""``arena replay PATH --game ID --against -- COMMAND``: replay a recorded game to a bot and report where it differs.

The game is re-simulated by the engine from its recorded deals and actions. At every recorded decision of a replayed
seat, the bot is sent exactly the ``ActRequest`` the referee built at that moment (the same match id, seat,
observation and move number; the time control is this replay's: ``move_ms`` and no bank, as a record does not keep
the tournament's), its choice is compared with the recorded action, and the game always goes on with the RECORDED
action, so one divergence never shifts the positions that follow.

Decisions of this module:

- **Seats.** By default every seat that made at least one decision in the record (a move not marked ``forced``) is
  replayed; ``seat=K`` replays seat K only. As in ``arena play``, each replayed seat gets its own bot process, so a
  bot that keeps memory per match sees one seat's stream only, and each process is sent the round-end and match-end
  notifications it would have had.
- **Forced moves** (a single legal action, applied by the referee without asking) are not asked.
- **Comparison.** Actions are compared exactly, except draws, which are compared by kind (a record's draw carries the
  drawn tile; a bot only says ``draw``).
- **Faults** (timeout, crash, illegal action, malformed reply, bot error) count as divergences and carry the fault's
  message; the replay goes on, a crashed bot is restarted for its seat's next decision.
- **Move numbers** count every move of the game, forced ones included, and are shown from 1 as in every other view
  (:func:`~.replay.move_label`); the bot was sent the same number from 0 (``ActRequest.move_number``), as fault
  records keep it. Rounds are shown from 1.
- **Exit status** (``AgainstReport.ok``): True when every bot started and answered every decision, whatever it
  chose: a different choice is information, not failure. False when a bot could not start or restart, does not
  claim the variant, or faulted at any decision (the faults are all reported and the replay still runs to the end).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from rich.console import Console

from arena import guest
from arena.display import move_label, safe_name
from arena.players.base import DecisionRequest
from arena.players.faults import BotFailure, FaultKind
from arena.players.process import BotProcess, BotSpec
from arena.records.jsonform import index_of
from arena.records.replay import RecordError, game_of, steps
from arena.records.schema import Record
from arena.referee import TimeControl, forfeit_result
from arena.rules import Action, Kind, Match


@dataclass(frozen=True)
class Divergence:
    """A decision where the bot did not choose the recorded action, or could not choose at all."""

    move_number: int
    """As the bot was sent it (``ActRequest.move_number``, from 0); shown from 1 (:func:`~.replay.move_label`)."""
    round: int
    """From 0 (shown from 1)."""
    seat: int
    recorded: Action
    chosen: Action | None
    """None when the bot faulted."""
    fault: FaultKind | None = None
    message: str = ""

    def __str__(self) -> str:
        where = f"{move_label(self.move_number)} (round {self.round + 1}), seat {self.seat}"
        if self.fault is not None:
            return f"{where}: recorded {_shown(self.recorded)}; {self.fault.value}: {self.message}"
        return f"{where}: recorded {_shown(self.recorded)}, bot chose {_shown(self.chosen)}"


@dataclass
class SeatTally:
    decisions: int = 0
    agreements: int = 0
    faults: int = 0


@dataclass
class AgainstReport:
    """What a replay against a bot found."""

    game: int
    variant: str
    command: tuple[str, ...]
    seats: tuple[int, ...]
    log_dir: Path
    bot: str = ""
    decisions: int = 0
    agreements: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    by_seat: dict[int, SeatTally] = field(default_factory=dict)
    restarts: int = 0
    error: str | None = None
    """Why the replay could not start or stopped early (the bot did not start or restart)."""
    notes: list[str] = field(default_factory=list)

    @property
    def faults(self) -> int:
        return sum(1 for d in self.divergences if d.fault is not None)

    @property
    def agreement_rate(self) -> float | None:
        return self.agreements / self.decisions if self.decisions else None

    @property
    def first_divergence(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    @property
    def ok(self) -> bool:
        """The bot started and answered every decision (divergent choices do not count against it)."""
        return self.error is None and self.faults == 0


def replay_against(record: Record, command: Sequence[str], *, seat: int | None = None, startup_s: float = 15.0,
                   move_ms: int = 2000, log_dir: Path | None = None, sandbox: bool = True) -> AgainstReport:
    """Replay a recorded game to the bot started by ``command``; synchronous (runs trio inside).

    Raises :class:`RecordError` for a record that does not replay or a seat the game does not have; everything the
    bot does is in the report.
    """
    if not command:
        raise RecordError("expected a bot command to replay the game against")
    game = game_of(record)
    index = index_of(record)
    if seat is not None and not 0 <= seat < game.players:
        raise RecordError(f"game {index}: expected a seat from 0 to {game.players - 1}, got {seat}")
    seats = (seat,) if seat is not None else _deciding_seats(record)
    log_dir = log_dir if log_dir is not None else Path(tempfile.mkdtemp(prefix="arena-replay-logs-"))
    report = AgainstReport(index, game.name, tuple(command), seats, log_dir,
                           by_seat={s: SeatTally() for s in seats})
    if seat is not None and seat not in _deciding_seats(record):
        report.notes.append(f"seat {seat} made no decisions in this game (every move of it was forced)")
    guest.run(_replay, record, report, startup_s, move_ms, sandbox)
    return report


def _deciding_seats(record: Record) -> tuple[int, ...]:
    return tuple(sorted({move.get("seat", 0) for rnd in record.get("rounds", ()) for move in rnd.get("moves", ())
                         if not move.get("forced", False)}))


class _Stop(Exception):
    """A bot did not (re)start: the replay ends here, with ``report.error`` set."""


async def _replay(record: Record, report: AgainstReport, startup_s: float, move_ms: int, sandbox: bool) -> None:
    processes = {s: BotProcess(BotSpec(f"seat{s}", command=report.command, sandbox=sandbox), report.log_dir,
                               startup_s) for s in report.seats}
    try:
        await _start_all(processes, report)
        await _walk(record, report, processes, move_ms)
    except _Stop:
        pass
    finally:
        for process in processes.values():
            await process.stop()
        report.restarts = sum(max(0, p.starts - 1) for p in processes.values())


async def _start_all(processes: dict[int, BotProcess], report: AgainstReport) -> None:
    failures: dict[int, BotFailure] = {}

    async def start(seat: int, process: BotProcess) -> None:
        try:
            await process.ensure_running()
        except BotFailure as failure:
            failures[seat] = failure

    async with trio.open_nursery() as nursery:
        for seat, process in processes.items():
            nursery.start_soon(start, seat, process)
    if failures:
        report.error = str(failures[min(failures)])
        raise _Stop
    hellos = [p.hello for p in processes.values() if p.hello is not None]
    if hellos:
        report.bot = f"{hellos[0].name} {hellos[0].version}".strip()
    for process in processes.values():
        if process.client is not None and not process.client.plays(report.variant):
            claimed = ", ".join(process.hello.variants) if process.hello is not None else ""
            report.error = f"the bot does not play {report.variant} (its handshake claims: {claimed})"
            raise _Stop


async def _walk(record: Record, report: AgainstReport, processes: dict[int, BotProcess], move_ms: int) -> None:
    game = game_of(record)
    match_id = record.get("matchId", "")
    deadline_ms = TimeControl(move_ms=move_ms).deadline_ms(0)
    timeout_s = deadline_ms / 1000
    match: Match | None = None
    for step in steps(record):
        match = step.match
        if step.kind == "move":
            move, recorded = step.recorded or {}, step.action
            seat = move.get("seat", 0)
            if seat in processes and not move.get("forced", False):
                state = match.round
                request = DecisionRequest(match_id, game, seat, state.observation(seat), step.number, move_ms, 0,
                                          deadline_ms)
                await _ask(processes[seat], request, state.legal_actions(), recorded, step.round, timeout_s, report)
        elif step.kind == "end":
            await _notify_round(processes, match_id, step.round, match)
    if match is not None:
        await _notify_end(record, processes, match_id, match)
    for fault in record.get("faults", ()):
        report.notes.append(f"the record ends with a fault of seat {fault.get('seat', 0)} at "
                            f"{move_label(int(fault.get('moveNumber', 0)))} ({fault.get('kind', '?')}): that "
                            f"decision has no recorded action to compare")


async def _ask(process: BotProcess, request: DecisionRequest, legal: list[Action], recorded: Action, round_: int,
               timeout_s: float, report: AgainstReport) -> None:
    """One decision: the bot's choice against the recorded action (the caller applies the recorded one)."""
    try:
        bot = await process.ensure_running()  # restarts a bot that crashed at an earlier decision
    except BotFailure as failure:
        report.error = (f"seat {request.seat}: the bot did not restart at {move_label(request.move_number)}: "
                        f"{failure}")
        raise _Stop from None
    tally = report.by_seat[request.seat]
    report.decisions += 1
    tally.decisions += 1
    try:
        decision = await bot.act(request, timeout_s)
        if decision.action not in legal:
            raise BotFailure(FaultKind.ILLEGAL_ACTION, choice=str(decision.action))
    except BotFailure as failure:
        tally.faults += 1
        report.divergences.append(Divergence(request.move_number, round_, request.seat, recorded, None,
                                             failure.kind, str(failure)))
        if failure.kind is FaultKind.CRASHED:
            await process.stop()  # the next decision starts it again
        return
    if same_choice(decision.action, recorded):
        report.agreements += 1
        tally.agreements += 1
    else:
        report.divergences.append(Divergence(request.move_number, round_, request.seat, recorded, decision.action))


def same_choice(chosen: Action, recorded: Action) -> bool:
    """Equal actions; draws by kind only (a recorded draw names the drawn tile)."""
    if chosen.kind == Kind.DRAW or recorded.kind == Kind.DRAW:
        return chosen.kind == recorded.kind
    return chosen == recorded


async def _notify_round(processes: dict[int, BotProcess], match_id: str, index: int, match: Match) -> None:
    result, scores = match.round.result(), match.scores
    async with trio.open_nursery() as nursery:
        for seat, process in processes.items():
            if process.running() and process.client is not None:
                nursery.start_soon(process.client.round_ended, match_id, seat, index, result, scores)


async def _notify_end(record: Record, processes: dict[int, BotProcess], match_id: str, match: Match) -> None:
    game = match.game
    faults = record.get("faults", ())
    if faults:
        faulting = {game.side_of[f.get("seat", 0)] for f in faults if f.get("seat", 0) < game.players}
        result = forfeit_result(game, match.scores, faulting, len(match.results))
    elif match.is_over():
        result = match.result()
    else:
        return
    async with trio.open_nursery() as nursery:
        for seat, process in processes.items():
            if process.running() and process.client is not None:
                nursery.start_soon(process.client.match_ended, match_id, seat, result, bool(faults))


# --- printing -----------------------------------------------------------------------------------------------------


def _shown(action: Any) -> str:
    return "nothing" if action is None else str(action)


def print_against(report: AgainstReport, console: Console) -> None:
    """Every divergence, then the summary (and the error that stopped the replay, if any)."""
    def out(text: str) -> None:  # a bot's error message or name may hold escape sequences: never print them raw
        console.print(safe_name(text, 4000), highlight=False, markup=False, soft_wrap=True)

    seats = ", ".join(map(str, report.seats)) or "none"
    bot = f" ({report.bot})" if report.bot else ""
    out(f"game {report.game} ({report.variant}) replayed against {' '.join(report.command)}{bot}, seats {seats}")
    for divergence in report.divergences:
        out(f"{'FAULT' if divergence.fault is not None else 'DIVERGENCE'} {divergence}")
    for note in report.notes:
        out(f"note: {note}")
    if report.error is not None:
        out(f"error: {report.error}")
    rate = report.agreement_rate
    if rate is None:
        out("summary: no decisions compared")
    else:
        first = report.first_divergence
        first_text = (f"first divergence at {move_label(first.move_number)} (round {first.round + 1}, seat "
                      f"{first.seat})" if first is not None else "no divergence")
        out(f"summary: {report.decisions} decisions compared, {report.agreements} agreements ({rate:.1%}), "
            f"{len(report.divergences)} divergences ({report.faults} faults); {first_text}")
        if len(report.seats) > 1:
            for seat, tally in report.by_seat.items():
                out(f"  seat {seat}: {tally.decisions} decisions, {tally.agreements} agreements, {tally.faults} faults")
    if report.restarts:
        out(f"the bot was restarted {report.restarts} time(s) after crashing")
    out(f"bot logs: {report.log_dir}")
