"""Run a tournament: the schedule's games on a trio worker pool, every finished game appended to the record file
and fsynced before it counts, standings as games finish, and resume after any interruption (kill -9 included).

This module is the driver only: where the games are played is a backend's (:mod:`arena.tournament.backend`, this
machine's bot processes by default: :mod:`arena.tournament.local_backend`), what stops a run is said by
:mod:`arena.tournament.errors`, what a run did is a :class:`~arena.tournament.summary.RunSummary`, and what it prints
is :mod:`arena.tournament.console`'s. The run folder's files and what they mean are
:mod:`arena.records.run_folder`'s (:class:`RunFolder`): this module writes them through it.

What stops a run: an entrant that cannot play, found before the first game by starting every entrant once
(:class:`~arena.tournament.errors.EntrantsCannotPlay`); a write to the run folder that fails, which stops the games
in flight (:class:`~arena.tournament.errors.RecordsNotWritten`, after writing ``standings.json`` for the games that
are safe when it can). A bot that fails to start for good in the middle of a run (``pools.GIVE_UP_AFTER`` failed
starts in a row) is not a reason to stop: its games are forfeits and
:attr:`~arena.tournament.summary.RunSummary.given_up` names it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import structlog
import trio

from arena.records.jsonform import index_of
from arena.records.run_folder import STANDINGS, RunFolder, SeedCommitment, new_seed
from arena.records.schema import Record
from arena.records.store import ReadReport, RecordWriter, drop_torn_tail, iter_records
from arena.rules import Game
from arena.tournament.backend import (
    BackendFactory,
    BackendSetup,
    GameBackend,
    OnProgress,
    PreparedRecord,
    record_message,
)
from arena.tournament.balanced import VERSION as BALANCED_VERSION
from arena.tournament.console import Progress
from arena.tournament.errors import EntrantsCannotPlay, RecordsNotWritten, RunError, WriteFailed, writing
from arena.tournament.local_backend import LocalBackend
from arena.tournament.phases import PhasedOrder, block_size
from arena.tournament.rounds import Event, Wave, event_from_records, wave_schedule
from arena.tournament.schedule import (
    BY_TABLE,
    INTERLEAVED,
    KNOCKOUT,
    ORDERS,
    Schedule,
    ScheduledGame,
    schedule_misfit,
)
from arena.tournament.sequential import MatchupTest
from arena.tournament.spec import SpecError, TournamentSpec
from arena.tournament.standings import NOT_AN_OUTCOME, Standings, outcome_of
from arena.tournament.summary import RunSummary


def prepare_run(spec: TournamentSpec, spec_text: str, run: Path, resume: bool) -> SeedCommitment:
    """Create or check the run folder; the seed and its commitment."""
    return _resumed_seed(spec, spec_text, run) if resume else _new_run_folder(spec, spec_text, run)


def _resumed_seed(spec: TournamentSpec, spec_text: str, run: Path) -> SeedCommitment:
    """The kept seed of a run folder to resume, once the folder is known to hold this very run: its seed still
    secret, the same tournament file, the same entrants (a resume must play the games its start scheduled)."""
    folder = RunFolder(run)
    if not folder.keeps_secret():
        if folder.revealed_file.exists():
            raise SpecError(f"{run}: this tournament is finished (seed revealed); nothing to resume")
        raise SpecError(f"{run}: no tournament to resume here (no {folder.secret_file.name})")
    try:
        previous = folder.spec_copy.read_text() if folder.spec_copy.exists() else None
        if previous is not None and _digest(previous) != _digest(spec_text):
            raise SpecError(f"{run}: the tournament file differs from the one this run started with "
                            f"({folder.spec_copy}); resume with the same file")
        _check_entrants(spec, run)
        return folder.load_secret()
    except SpecError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:  # a damaged folder
        raise SpecError(f"{run}: cannot read the run folder to resume it: {error}") from None


def _new_run_folder(spec: TournamentSpec, spec_text: str, run: Path) -> SeedCommitment:
    """A new seed, its commitment published in a new run folder with the tournament file and the entrants it started
    with; refused in a folder that already holds a run's games, which a new run would mix with its own."""
    folder = RunFolder(run)
    if folder.is_finished():
        raise SpecError(f"{run}: this folder holds a finished tournament; give --out a new folder for a new run")
    if folder.holds_games():
        raise SpecError(f"{run}: this folder already holds a tournament's games; use --resume to continue it, "
                        f"or --out for a new folder")
    seed = new_seed(spec.seed)
    try:
        run.mkdir(parents=True, exist_ok=True)
        os.chmod(run, 0o700)  # the secret seed and unfinished records: the arena's user only
        folder.spec_copy.write_text(spec_text)
        started: dict[str, Any] = {"entrants": [b.name for b in spec.bots], "schedule": INTERLEAVED}
        if spec.tables:  # the drawing's version: a resume must draw the same tables
            started["balanced"] = BALANCED_VERSION
        folder.entrants.write_text(json.dumps(started) + "\n")
        folder.publish(seed)
    except OSError as error:
        raise SpecError(f"{run}: cannot write the run folder: {error.strerror or error}") from None
    return seed


def _started_with(run: Path) -> tuple[list[str] | None, str]:
    """The entrants and the schedule order a run folder was started with. ``entrants.json`` was a bare list of names
    before the order was interleaved: such a run (or one without the file) keeps the table-by-table order, so that
    its recorded game indices still mean the same games when it is resumed."""
    path = RunFolder(run).entrants
    if not path.exists():
        return None, BY_TABLE
    data = json.loads(path.read_text())
    if isinstance(data, list):
        return [str(name) for name in data], BY_TABLE
    order = data.get("schedule", BY_TABLE)
    if order not in ORDERS:
        raise ValueError(f"{path.name} names an unknown schedule order {order!r}")
    return [str(name) for name in data["entrants"]], order


def schedule_order(run: Path) -> str:
    """The order of the run's schedule: interleaved for a new run, what it was started with for a resumed one."""
    return _started_with(run)[1]


def _check_entrants(spec: TournamentSpec, run: Path) -> None:
    """A resumed run must have the same entrants in the same order (a bot skipped as missing changes the schedule)."""
    before, _ = _started_with(run)
    if before is None:
        return
    now = [b.name for b in spec.bots]
    if before != now:
        raise SpecError(f"{run}: the entrants differ from this run's start ({', '.join(before)}; now "
                        f"{', '.join(now) or 'none'}): a bot skipped as not installed changes the schedule; "
                        f"install it (or uninstall it) as it was, then resume")
    drawn = json.loads(RunFolder(run).entrants.read_text()).get("balanced") if spec.tables else BALANCED_VERSION
    if drawn != BALANCED_VERSION:
        raise SpecError(f"{run}: this run's balanced tables were drawn by version {drawn} of the drawing, this arena "
                        f"draws version {BALANCED_VERSION}: resume it with the arena that started it")


def write_json(path: Path, data: Any) -> None:
    """Replace a JSON file whole (write a temporary file, then rename): a kill never leaves half of one."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(temporary, path)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def open_log(run: Path) -> Any:
    """A structlog logger writing one JSON event per line to the run's arena.log (no global configuration)."""
    log_file = open(RunFolder(run).log, "a")
    return structlog.wrap_logger(
        structlog.WriteLogger(log_file),
        processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                    structlog.processors.JSONRenderer()],
    ), log_file


async def run_tournament(spec: TournamentSpec, spec_text: str, run: Path, *, resume: bool = False,
                         concurrency: int | None = None, console: Any = None,
                         on_game: Callable[[Record], None] | None = None,
                         limiter: trio.CapacityLimiter | None = None,
                         on_game_start: Callable[[ScheduledGame, tuple[str, ...]], OnProgress | None] | None = None,
                         protected: Sequence[Path] = (),
                         backend: BackendFactory | None = None,
                         on_resumed: Callable[[frozenset[int], RunSummary], None] | None = None,
                         ) -> RunSummary:
    """Play every game of the schedule that the run folder does not hold yet.

    ``limiter``, when given, is held by each game while it plays (a limit shared by several tournaments).
    ``on_game_start(scheduled, seats)`` is called as a game starts; what it returns, if not None, is the game's
    ``on_progress`` callback for :func:`~arena.referee.play_match` (each move and each finished round).
    ``protected`` are paths no bot may see besides the run folder (a server's data folder and token).
    ``on_resumed(done, summary)`` is called once the run folder's games are counted, before any is played: the
    indices taken as played and the standings (and test) they make, which a caller that keeps standings of its own
    starts from (a line resume refuses is not among them, and its game is played again).
    ``backend`` makes where the games are played (default :class:`LocalBackend`: this machine's bot processes;
    ``arena.cluster.RayBackend``: actors of a Ray cluster); the schedule, seeds and records stay here.

    Raises :class:`EntrantsCannotPlay` before the first game when an entrant's bot cannot be started, and
    :class:`RecordsNotWritten` when a write to the run folder fails (the games recorded until then stay, and a
    resume continues from them).
    """
    game = spec.game()
    seed = prepare_run(spec, spec_text, run, resume)
    try:
        order = schedule_order(run)
        log, log_file = open_log(run)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise SpecError(f"{run}: cannot use the run folder: {error}") from None
    schedule = spec.schedule(seed.seed, order)
    summary = RunSummary(run=run, total=spec.expected_games(), seed=seed, skipped_bots=spec.skipped,
                         standings=Standings(group_size=schedule.group_size),
                         sprt=MatchupTest.for_tournament(spec, schedule), candidates=spec.candidates)
    run_games = _RunGames(spec, game, schedule, summary, log, on_game, limiter, on_game_start)
    folder = RunFolder(run)
    waves = _EventWaves(spec, seed.seed, summary) if spec.event else None
    try:
        with writing(folder.records):
            if waves is not None:  # a Swiss or knockout event: the games of its first wave not yet complete
                done = waves.first()
                run_games.schedule = waves.schedule()
            else:
                done = _recorded_games(folder.records, summary, schedule, [b.name for b in spec.bots])
        summary.resumed_from = len(done)
        if on_resumed is not None:
            on_resumed(frozenset(done), summary)
        with writing(folder.log):
            log.info("tournament_started", name=spec.name, variant=spec.variant, games=summary.total,
                     already_recorded=len(done), commitment=seed.commitment, resume=resume,
                     skipped_bots=list(spec.skipped), schedule=order)
        await run_games.play(done, concurrency or spec.concurrency, console, protected, backend or LocalBackend,
                             waves.next if waves is not None else None)
        if summary.finished and not run_games.failures:
            with writing(folder.revealed_file):
                folder.reveal(seed)
                folder.secret_file.unlink(missing_ok=True)
            with writing(folder.log):
                log.info("tournament_finished", games=summary.total, seed=seed.seed, nonce=seed.nonce,
                         commitment=seed.commitment)
    except WriteFailed as failure:
        run_games.failures.insert(0, failure)
    finally:
        with contextlib.suppress(OSError):
            log_file.close()
    if run_games.failures:
        first = run_games.failures[0]
        not_written = RecordsNotWritten(first.path, first.error, summary.recorded, summary.total,
                                        run_games.standings_error)
        not_written.given_up = list(summary.given_up)
        raise not_written
    return summary


class _RunGames:
    """The games of one run: the entrants' pools, the workers, the record writer, and what stops them."""

    def __init__(self, spec: TournamentSpec, game: Game, schedule: Schedule, summary: RunSummary, log: Any,
                 on_game: Callable[[Record], None] | None, limiter: trio.CapacityLimiter | None,
                 on_game_start: Callable[[ScheduledGame, tuple[str, ...]], OnProgress | None] | None) -> None:
        self.spec, self.game, self.schedule, self.summary, self.log = spec, game, schedule, summary, log
        self.on_game, self.limiter, self.on_game_start = on_game, limiter, on_game_start
        self.run = summary.run
        self.folder = RunFolder(summary.run)
        self.names = [b.name for b in spec.bots]
        self.write_lock = trio.Lock()
        self.games = trio.CancelScope()
        self.failures: list[WriteFailed] = []
        """Every failed write, the first one first: it stopped the games."""
        self.standings_error: OSError | None = None
        self.progress: Progress | None = None
        self.writer: RecordWriter | None = None
        self.backend_error: RunError | None = None
        """Why the backend could not go on, if it could not (the games in flight are not recorded)."""

    @property
    def standings(self) -> Standings:
        assert self.summary.standings is not None
        return self.summary.standings

    def stop(self, failure: WriteFailed) -> None:
        """A failed write stops every game (those in flight are not recorded: a resume plays them again)."""
        self.failures.append(failure)
        self.games.cancel()

    async def play(self, done: set[int], concurrency: int, console: Any, protected: Sequence[Path],
                   make_backend: BackendFactory, next_wave: Callable[[], tuple[Schedule, set[int]] | None] | None = None
                   ) -> None:
        """Check every entrant, then play the games not in ``done`` on ``concurrency`` workers; always stop the bots
        and write ``bots.json`` and ``standings.json`` at the end, whatever ended the games. ``next_wave``, for a
        Swiss or knockout event, gives the next wave's schedule and its games already recorded once a wave is played
        (None when the event is over): its games are played the same way, by the same entrants' processes."""
        run, spec = self.run, self.spec
        backend = make_backend(BackendSetup(spec, self.schedule, run, tuple(protected)))
        try:
            with writing(self.folder.records):
                self.writer = RecordWriter(self.folder.records)
            problems = await backend.check(self.log)
            if problems:
                raise EntrantsCannotPlay(problems)
            with writing(self.folder.bots):
                write_json(self.folder.bots, backend.info())
            if console is not None:  # from here: the rate counts the games of this run over their own time
                self.progress = Progress(self.summary.total, len(done), console, console.is_terminal,
                                         eta=self.summary.sprt is None and spec.format != KNOCKOUT)
            with self.games:
                await self.play_schedule(backend, done, concurrency)
                while next_wave is not None and not self.failures and self.backend_error is None:
                    wave = next_wave()
                    if wave is None:
                        break
                    self.schedule, done = wave
                    await self.play_schedule(backend, done, concurrency)
            if self.backend_error is not None:
                raise self.backend_error
        except WriteFailed as failure:
            self.stop(failure)
        finally:
            await self.wrap_up(backend)

    async def play_schedule(self, backend: GameBackend, done: set[int], concurrency: int) -> None:
        """Play the games of ``self.schedule`` not in ``done``, phase by phase (:class:`PhasedOrder`)."""
        test = self.summary.sprt
        block = block_size(self.schedule, concurrency, sequential=test is not None)
        order = PhasedOrder(self.schedule, done, block, backend.stop_lane)

        async def worker() -> None:
            while (scheduled := await order.next()) is not None:
                if self.failures or (test is not None and test.decided):
                    order.finish()  # a decided test: games in flight finish and are recorded, no new one starts
                    return
                try:
                    await self.play_one(backend, scheduled)
                finally:
                    await order.ended(scheduled)

        async with trio.open_nursery() as nursery:
            for _ in range(concurrency):
                nursery.start_soon(worker)

    async def play_one(self, backend: GameBackend, scheduled: ScheduledGame) -> None:
        """Play one game, then record it (fsynced) before it counts anywhere: standings, log, callers."""
        async with (self.limiter if self.limiter is not None else contextlib.nullcontext()):
            on_progress = None
            if self.on_game_start is not None:
                on_progress = self.on_game_start(scheduled, tuple(self.names[e] for e in scheduled.seats))
            try:
                record = await backend.play(scheduled, on_progress)
            except RunError as error:  # the backend cannot go on (every node of a cluster lost): stop, say why
                self.backend_error = self.backend_error or error
                self.games.cancel()
                return
        if isinstance(record, PreparedRecord):
            prepared: PreparedRecord | None = record
            message, unit, outcome = record.head, record.unit, record.outcome
        else:
            prepared, message = None, record_message(self.spec, self.game, scheduled, record)
            unit, outcome = None, outcome_of(message)
        assert self.writer is not None
        try:
            async with self.write_lock:
                if self.failures:
                    return  # not recorded: a resume plays it again
                with writing(self.folder.records):
                    await trio.to_thread.run_sync(self.writer.write, message, unit)
            self.standings.add(outcome)
            if self.summary.sprt is not None:
                self.summary.sprt.add(outcome)
            self.summary.played_now += 1
            if self.summary.first_index is None:
                self.summary.first_index = scheduled.index
            result = message.get("result", {})
            with writing(self.folder.log):
                self.log.info("game_finished", index=scheduled.index, seats=message.get("seats"),
                              scores=[int(v) for v in result.get("scores", ())], winner=result.get("winner"),
                              faults=[f["kind"] for f in message.get("faults", ())])
        except WriteFailed as failure:
            self.stop(failure)
            return
        if self.on_game is not None:
            self.on_game(message if prepared is None else prepared.message())
        if self.progress is not None:
            self.progress.advance(self.standings.leaders(3),
                                  self.summary.sprt.progress_text() if self.summary.sprt is not None else "")

    async def wrap_up(self, backend: GameBackend) -> None:
        """Close the records, stop every bot, name the entrants given up on, and write ``bots.json`` and
        ``standings.json`` for what was played; a write that fails here is noted, never raised."""
        if self.writer is not None:
            with contextlib.suppress(OSError):  # a game counts once its write returned: nothing counted is lost
                self.writer.close()
        if self.progress is not None:
            self.progress.close()
        with trio.CancelScope(shield=True):
            await backend.stop()
        self.summary.given_up = backend.given_up()
        for path, data in ((self.folder.bots, backend.info),
                           (self.folder.standings, self.summary.standings_json)):
            try:
                write_json(path, data())
            except OSError as error:
                if path.name == STANDINGS:
                    self.standings_error = error
                self.failures.append(WriteFailed(path, error))


class _EventWaves:
    """A Swiss or knockout event's waves as the run plays them, each rebuilt from the record file
    (:func:`~arena.tournament.rounds.event_from_records`): the file is what a resume reads, so the run plays what a
    resume would."""

    def __init__(self, spec: TournamentSpec, master_seed: str, summary: RunSummary) -> None:
        self.spec, self.master_seed, self.summary = spec, master_seed, summary
        self.records = RunFolder(summary.run).records
        self.counted = 0

    def first(self) -> set[int]:
        """The games already recorded (a torn last line dropped) counted in the standings; every line that is not a
        usable record of its game goes to ``summary.bad_lines`` (its game is played again)."""
        self.summary.dropped_bytes = drop_torn_tail(self.records)
        event, report = self._rebuild()
        assert self.summary.standings is not None
        for outcome in event.outcomes:
            self.summary.standings.add(outcome)
        self.summary.bad_lines = [*report.bad_lines, *((-1, why) for _, why in event.rejected)]
        return set(event.done)

    def _rebuild(self) -> tuple[Event, ReadReport]:
        report = ReadReport()
        records = iter_records(self.records, report) if self.records.exists() else iter(())
        event = event_from_records(self.spec, self.master_seed, records)
        self.summary.event = event
        self.counted = len(event.done)
        return event, report

    def schedule(self) -> Schedule:
        """The schedule of the wave to play (no game once the event is over)."""
        event = self.summary.event
        assert event is not None
        wave = event.pending or Wave(len(event.waves) + 1, len(event.done), ())
        return wave_schedule(self.spec, self.master_seed, wave)

    def next(self) -> tuple[Schedule, set[int]] | None:
        """Once a wave is played: the next wave's schedule and its games recorded, or None when the event is over
        (or the wave just played is not complete: its games were stopped, and a resume plays them)."""
        before = self.counted
        event, _ = self._rebuild()
        if event.finished or self.counted == before:
            return None
        return self.schedule(), set(event.done)


def _recorded_games(records_path: Path, summary: RunSummary, schedule: Schedule, names: Sequence[str]) -> set[int]:
    """The indices of the games the record file already holds (a torn last line dropped), counted in the
    standings; every line that is not a usable record of its scheduled game goes to ``summary.bad_lines`` (its game
    is played again)."""
    standings = summary.standings
    assert standings is not None
    done: set[int] = set()
    summary.dropped_bytes = drop_torn_tail(records_path)
    if not records_path.exists():
        return done
    report = ReadReport()
    for record in iter_records(records_path, report):
        index = index_of(record)
        if index in done or index >= summary.total:
            continue
        misfit = schedule_misfit(record, schedule.game_at(index), names)
        if misfit:
            report.bad_lines.append((-1, f"game {index} does not fit the schedule ({misfit}); it is played again"))
            continue
        try:
            outcome = outcome_of(record)
            standings.add(outcome)
            if summary.sprt is not None:
                summary.sprt.add(outcome)
        except NOT_AN_OUTCOME as error:
            report.bad_lines.append((-1, f"game {index} is not a complete record ({error}); it is played again"))
            continue
        done.add(index)
    summary.bad_lines = report.bad_lines
    return done


__all__ = ["run_tournament", "prepare_run"]
