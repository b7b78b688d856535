"""Run a tournament: the schedule's games on a trio worker pool, every finished game appended to the record file
and fsynced before it counts, standings as games finish, and resume after any interruption (kill -9 included).

The run folder holds: ``tournament.toml`` (the file as run), ``commitment.txt`` (published before the first game),
``seed.secret`` (until the end) then ``seed.json`` (revealed), ``bots.json`` (handshakes), ``games.jsonl`` (one
record per game), ``standings.json``, ``arena.log`` (structlog JSON events) and ``logs/`` (each bot's output).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import structlog
import trio

from ..players.faults import BotFailure, Fault, FaultKind
from ..players.remote import new_match_id
from ..records.jsonform import game_record_dict, index_of
from ..records.store import ReadReport, Record, RecordWriter, drop_torn_tail, iter_records
from ..referee import TimeControl, forfeit_before_start, play_match
from ..rules import Game
from .pools import EntrantPool
from .schedule import Schedule, ScheduledGame
from .seed import SECRET_FILE, SeedCommitment, load_secret, new_seed, publish, reveal
from .spec import SpecError, TournamentSpec
from .standings import GameOutcome, OutcomeError, Standings

STUCK = (FaultKind.TIMEOUT, FaultKind.BOT_ERROR)
"""Faults after which a bot process may be stuck, so it is restarted once no game uses it."""
RECORDS = "games.jsonl"
SPEC_COPY = "tournament.toml"
ENTRANTS = "entrants.json"


@dataclass
class RunSummary:
    run: Path
    total: int
    played_now: int = 0
    resumed_from: int = 0
    dropped_bytes: int = 0
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    standings: Standings | None = None
    seed: SeedCommitment | None = None
    skipped_bots: tuple[str, ...] = ()
    first_index: int | None = None


def outcome_of(record: Record) -> GameOutcome:
    """What standings need from a record (a dict in protobuf's JSON mapping)."""
    seats = record.get("seats", [])
    think = [0.0] * len(seats)
    decisions = [0] * len(seats)
    for rnd in record.get("rounds", ()):
        for move in rnd.get("moves", ()):
            if not move.get("forced", False):
                seat = move.get("seat", 0)
                think[seat] += move.get("thinkMs", 0.0)
                decisions[seat] += 1
    result = record.get("result", {})
    return GameOutcome(
        index=index_of(record), deal_key=record.get("dealKey", ""), seats=tuple(seats),
        side_of=tuple(record.get("sideOfSeat", [0] * len(seats))),
        scores=tuple(int(v) for v in result.get("scores", ())), ranking=tuple(result.get("ranking", ())),
        winner=result.get("winner"), fault_seats=tuple(sorted({f.get("seat", 0) for f in record.get("faults", ())})),
        think_ms=tuple(think), decisions=tuple(decisions),
    )


def prepare_run(spec: TournamentSpec, spec_text: str, run: Path, resume: bool) -> SeedCommitment:
    """Create or check the run folder; the seed and its commitment."""
    records = run / RECORDS
    if resume:
        if not (run / SECRET_FILE).exists():
            if (run / "seed.json").exists():
                raise SpecError(f"{run}: this tournament is finished (seed revealed); nothing to resume")
            raise SpecError(f"{run}: no tournament to resume here (no {SECRET_FILE})")
        previous = (run / SPEC_COPY).read_text() if (run / SPEC_COPY).exists() else None
        if previous is not None and _digest(previous) != _digest(spec_text):
            raise SpecError(f"{run}: the tournament file differs from the one this run started with "
                            f"({run / SPEC_COPY}); resume with the same file")
        _check_entrants(spec, run)
        return load_secret(run)
    if records.exists() and records.stat().st_size > 0:
        raise SpecError(f"{run}: this folder already holds a tournament's games; use --resume to continue it, "
                        f"or --out for a new folder")
    seed = new_seed(spec.seed)
    try:
        run.mkdir(parents=True, exist_ok=True)
        os.chmod(run, 0o700)  # the secret seed and unfinished records: the arena's user only
        (run / SPEC_COPY).write_text(spec_text)
        (run / ENTRANTS).write_text(json.dumps([b.name for b in spec.bots]) + "\n")
        publish(run, seed)
    except OSError as error:
        raise SpecError(f"{run}: cannot write the run folder: {error.strerror or error}") from None
    return seed


def _check_entrants(spec: TournamentSpec, run: Path) -> None:
    """A resumed run must have the same entrants in the same order (a bot skipped as missing changes the schedule)."""
    path = run / ENTRANTS
    if not path.exists():
        return
    before = json.loads(path.read_text())
    now = [b.name for b in spec.bots]
    if before != now:
        raise SpecError(f"{run}: the entrants differ from this run's start ({', '.join(before)}; now "
                        f"{', '.join(now) or 'none'}): a bot skipped as not installed changes the schedule; "
                        f"install it (or uninstall it) as it was, then resume")


def write_json(path: Path, data: Any) -> None:
    """Replace a JSON file whole (write a temporary file, then rename): a kill never leaves half of one."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(temporary, path)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def open_log(run: Path) -> Any:
    """A structlog logger writing one JSON event per line to the run's arena.log (no global configuration)."""
    log_file = open(run / "arena.log", "a")
    return structlog.wrap_logger(
        structlog.WriteLogger(log_file),
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                    structlog.processors.JSONRenderer()],
    ), log_file


class Progress:
    """A live bar on a terminal; plain lines (at most one every few seconds) otherwise."""

    def __init__(self, total: int, done: int, console: Any, live: bool) -> None:
        self.total, self.done, self.console = total, done, console
        self.started = time.perf_counter()
        self.start_done = done
        self.last_line = 0.0
        self._bar = None
        if live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeRemainingColumn

            self._bar = Bar(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                            TimeRemainingColumn(), TextColumn("{task.fields[leaders]}"), console=console,
                            transient=False)
            self._task = self._bar.add_task("games", total=total, completed=done, rate="", leaders="")
            self._bar.start()

    def advance(self, leaders: str) -> None:
        self.done += 1
        elapsed = time.perf_counter() - self.started
        rate = (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{rate:.1f}/s", leaders=leaders)
            return
        now = time.perf_counter()
        if now - self.last_line >= 5 or self.done == self.total:
            self.last_line = now
            left = self.total - self.done
            eta = f"{left / rate:.0f}s" if rate > 0 else "?"
            self.console.print(f"games {self.done}/{self.total} ({100 * self.done / max(1, self.total):.0f}%), "
                               f"{rate:.1f}/s, ETA {eta}; leaders: {leaders}", highlight=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


async def run_tournament(spec: TournamentSpec, spec_text: str, run: Path, *, resume: bool = False,
                         concurrency: int | None = None, console: Any = None,
                         on_game: Callable[[Record], None] | None = None,
                         limiter: trio.CapacityLimiter | None = None,
                         on_game_start: Callable[[ScheduledGame, tuple[str, ...]], Callable | None] | None = None,
                         protected: Sequence[Path] = (),
                         ) -> RunSummary:
    """Play every game of the schedule that the run folder does not hold yet.

    ``limiter``, when given, is held by each game while it plays (a limit shared by several tournaments).
    ``on_game_start(scheduled, seats)`` is called as a game starts; what it returns, if not None, is the game's
    ``on_progress`` callback for :func:`~arena.referee.play_match` (each move and each finished round).
    ``protected`` are paths no bot may see besides the run folder (a server's data folder and token).
    """
    game = spec.game()
    seed = prepare_run(spec, spec_text, run, resume)
    log, log_file = open_log(run)
    records_path = run / RECORDS
    summary = RunSummary(run=run, total=0, seed=seed, skipped_bots=spec.skipped)
    schedule = Schedule(len(spec.bots), game, spec.games, spec.duplicate, seed.seed)
    summary.total = schedule.total()
    standings = Standings(group_size=schedule.group_size)
    summary.standings = standings
    done: set[int] = set()
    summary.dropped_bytes = drop_torn_tail(records_path)
    if records_path.exists():
        report = ReadReport()
        for record in iter_records(records_path, report):
            index = index_of(record)
            if index in done or index >= summary.total:
                continue
            try:
                standings.add(outcome_of(record))
            except (OutcomeError, ValueError, KeyError, TypeError, IndexError) as error:
                report.bad_lines.append((-1, f"game {index} is not a complete record ({error}); it is played again"))
                continue
            done.add(index)
        summary.bad_lines = report.bad_lines
    summary.resumed_from = len(done)
    log.info("tournament_started", name=spec.name, variant=spec.variant, games=summary.total,
             already_recorded=len(done), commitment=seed.commitment, resume=resume,
             skipped_bots=list(spec.skipped))
    names = [b.name for b in spec.bots]
    time_control = TimeControl(move_ms=spec.time.move_ms, bank_ms=spec.time.bank_ms,
                               first_move_ms=spec.time.first_move_ms)
    pools = [EntrantPool(b, schedule.processes_per_entrant(), run / "logs", spec.time.startup_ms / 1000,
                         spec.variant, protected=(run, *protected)) for b in spec.bots]
    writer = RecordWriter(records_path)
    write_lock = trio.Lock()
    live = console is not None and console.is_terminal
    progress = Progress(summary.total, len(done), console, live) if console is not None else None
    pending = (g for g in schedule if g.index not in done)

    async def play_one(scheduled: ScheduledGame) -> None:
        async with (limiter if limiter is not None else contextlib.nullcontext()):
            on_progress = None
            if on_game_start is not None:
                on_progress = on_game_start(scheduled, tuple(names[e] for e in scheduled.seats))
            record = await _play_scheduled(game, pools, names, scheduled, time_control, schedule.process_for,
                                           on_progress=on_progress)
        message = game_record_dict(record, index=scheduled.index, tournament=spec.name,
                                   deal_key=scheduled.deal_key, rotation=scheduled.rotation, side_of=game.side_of)
        async with write_lock:
            await trio.to_thread.run_sync(writer.write, message)
        standings.add(outcome_of(message))
        summary.played_now += 1
        if summary.first_index is None:
            summary.first_index = scheduled.index
        result = message.get("result", {})
        log.info("game_finished", index=scheduled.index, seats=message.get("seats"),
                 scores=[int(v) for v in result.get("scores", ())], winner=result.get("winner"),
                 faults=[f["kind"] for f in message.get("faults", ())])
        if on_game is not None:
            on_game(message)
        if progress is not None:
            progress.advance(", ".join(f"{n} {p:.1f}" for n, p in standings.leaders(3)))

    async def worker() -> None:
        for scheduled in pending:
            await play_one(scheduled)

    try:
        await _start_pools(pools, log)
        write_json(run / "bots.json", [p.info() for p in pools])
        async with trio.open_nursery() as nursery:
            for _ in range(concurrency or spec.concurrency):
                nursery.start_soon(worker)
    finally:
        writer.close()
        if progress is not None:
            progress.close()
        with trio.CancelScope(shield=True):
            for pool in pools:
                await pool.stop()
        write_json(run / "bots.json", [p.info() for p in pools])
        write_json(run / "standings.json", standings.to_json())
        log_file.flush()
    if len(done) + summary.played_now >= summary.total:
        reveal(run, seed)
        (run / SECRET_FILE).unlink(missing_ok=True)
        log.info("tournament_finished", games=summary.total, seed=seed.seed, nonce=seed.nonce,
                 commitment=seed.commitment)
    log_file.close()
    return summary


async def _start_pools(pools: list[EntrantPool], log: Any) -> None:
    """Start every entrant's first process concurrently; a failure is logged, its games become forfeits."""
    async def start(pool: EntrantPool) -> None:
        try:
            await pool.client(0)
            pool.release(0)
            log.info("bot_started", entrant=pool.name, hello=pool.info()["hello"])
        except BotFailure as failure:
            log.warning("bot_failed_to_start", entrant=pool.name, error=str(failure))

    async with trio.open_nursery() as nursery:
        for pool in pools:
            nursery.start_soon(start, pool)


async def _play_scheduled(game: Game, pools: list[EntrantPool], names: list[str], scheduled: ScheduledGame,
                          time_control: TimeControl, process_for: Callable[[ScheduledGame, int], int], *,
                          on_progress: Callable | None = None):
    seats = tuple(names[e] for e in scheduled.seats)
    match_id = new_match_id()
    occurrence: Counter[int] = Counter()
    players = []
    held: list[tuple[int, int, int]] = []
    """(seat, entrant, occurrence) of every process this game holds, released when it ends."""
    faults: list[Fault] = []
    record = None
    try:
        for seat, entrant in enumerate(scheduled.seats):
            index = process_for(scheduled, occurrence[entrant])
            occurrence[entrant] += 1
            try:
                players.append(await pools[entrant].client(index))
                held.append((seat, entrant, index))
            except BotFailure as failure:
                faults.append(Fault(failure.kind, seat, 0, str(failure)))
        if faults:
            return forfeit_before_start(game, seats, faults, seed=scheduled.seed, match_id=match_id)
        record = await play_match(game, players, seed=scheduled.seed, match_id=match_id, time_control=time_control,
                                  on_progress=on_progress)
        record.seats = seats
        return record
    finally:
        stuck = {f.seat for f in (record.faults if record is not None else ()) if f.kind in STUCK}
        for seat, entrant, index in held:
            pools[entrant].release(index, stuck=seat in stuck)


def print_summary(summary: RunSummary, console: Any, title: str) -> None:
    """The standings, the pairwise table, where the records are, and how to replay a game."""
    assert summary.standings is not None
    console.print(summary.standings.table(title))
    console.print(summary.standings.pairwise_table())
    if summary.skipped_bots:
        console.print(f"skipped (not installed): {', '.join(summary.skipped_bots)}")
    for number, problem in summary.bad_lines:
        where = f"line {number}" if number > 0 else "resume"
        console.print(f"warning: {summary.run / RECORDS} {where}: {problem}", soft_wrap=True, highlight=False)
    console.print(f"records: {summary.run / RECORDS} ({summary.total} games); standings: "
                  f"{summary.run / 'standings.json'}")
    if summary.seed is not None and (summary.run / "seed.json").exists():
        console.print(f"master seed revealed: {summary.seed.seed} (commitment {summary.seed.commitment[:16]}…)")
    console.print(f"replay a game: arena replay {summary.run} --game 0", soft_wrap=True, highlight=False)


__all__ = ["run_tournament", "print_summary", "RunSummary", "outcome_of", "prepare_run"]
