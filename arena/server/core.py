"""The server's tournaments, run by trio: :class:`Arena` and the refusals of its calls (:class:`ApiError`).

:class:`Arena` owns every tournament and lives on the trio thread: it starts each tournament's
:func:`~arena.tournament.runner.run_tournament` in its own run folder, all of them sharing one
:class:`trio.CapacityLimiter` of games in flight, and turns their progress into events. Its clients are the gRPC
service (:class:`arena.server.service.ArenaServicer`, grpc.aio handlers on the loop trio is the guest of: the same
thread) and the web dashboard (arena/web, on trio). Events go out to the watchers' handlers in batches
(:meth:`Arena.flush`, every ``FLUSH_S``).
"""

from __future__ import annotations

import copy
import enum
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import trio

from arena.errors import ArenaError
from arena.players.dial_in import REGISTRY
from arena.protocol import arena_pb2 as apb
from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records
from arena.referee import MoveRecord
from arena.server.admission import DEFAULT_MAX_BOT_PROCESSES, Admission
from arena.server.events import (
    WATCH_BUFFER_EVENTS,
    MoveNumbers,
    Watcher,
    event,
    game_summary,
    move_event,
    round_event,
    standings_pb,
)
from arena.server.tournaments import STATE_NAMES, Tournament
from arena.tournament.backend import OnProgress
from arena.tournament.errors import RecordsNotWritten
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import Schedule, ScheduledGame
from arena.tournament.sequential import MatchupTest
from arena.tournament.spec import SpecError, TournamentSpec
from arena.tournament.standings import NOT_AN_OUTCOME, Standings, outcome_of
from arena.tournament.summary import RunSummary

FLUSH_S = 0.05
"""How often queued events go out to the watchers (one batch per tournament per flush)."""
REAP_S = 5.0
"""A watch stream told to end that is still open this long after (a client that stopped reading) is cancelled."""
SHUTTING_DOWN = "server shutting down"
NO_ADMISSION = Admission()
"""An Arena's admission unless it is given one: no registry, no commands (immutable, so one serves every Arena)."""


class Refusal(enum.Enum):
    """Why the server refuses a call, whichever client asked; each edge says it its own way (the gRPC services as
    the status code of the same name, :mod:`arena.server.status`)."""

    INVALID_ARGUMENT = "invalid argument"
    NOT_FOUND = "not found"
    FAILED_PRECONDITION = "failed precondition"
    RESOURCE_EXHAUSTED = "resource exhausted"
    DATA_LOSS = "data loss"
    UNAVAILABLE = "unavailable"


class ApiError(Exception):
    """A call the server refuses: why (:class:`Refusal`) and a message naming the problem."""

    def __init__(self, code: Refusal, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Arena:
    """Every tournament of the server; used only on the trio thread."""

    def __init__(self, data: Path, *, concurrency: int, max_tournaments: int, log: Any,
                 watch_buffer: int = WATCH_BUFFER_EVENTS,
                 admission: Admission = NO_ADMISSION, max_bot_processes: int = DEFAULT_MAX_BOT_PROCESSES,
                 backend: Any = None) -> None:
        self.data = data
        self.backend = backend
        """Where the games are played (the runner's backend factory: ``--backend ray``), None for this machine."""
        self.admission = admission
        """What submissions may run (the registry, --allow-commands, --max-entrants, the protected paths)."""
        self.max_bot_processes = max_bot_processes
        self.root = data / "tournaments"
        self.limiter = trio.CapacityLimiter(concurrency)
        self.slots = trio.CapacityLimiter(max_tournaments)
        self.log = log
        self.watch_buffer = watch_buffer
        self.tournaments: dict[str, Tournament] = {}
        self.stopping = False
        self._nursery: trio.Nursery | None = None
        self._closing: list[Watcher] = []
        """Watchers told to end whose streams are not over yet (reaped after REAP_S)."""
        self._runners = 0
        self._idle = trio.Event()
        self.game_observers: list[Callable[[Tournament, ScheduledGame, tuple[str, ...]], OnProgress]] = []
        """Told of each game as it starts (the web dashboard follows live games so); each returns the callback to
        give every move and finished round of that game, on the trio thread."""

    # --- life of the server ---

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Load the data folder, resume unfinished tournaments, and flush events until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.load()
            task_status.started()
            while True:
                await trio.sleep(FLUSH_S)
                self.flush()

    def load(self) -> None:
        make_private_folder(self.root)
        found = []
        for folder in sorted(self.root.iterdir()):
            if not (folder / "server.json").exists():
                continue
            try:
                found.append(Tournament.load(folder))
            except (OSError, ValueError, KeyError) as error:
                self.log.warning("tournament_unreadable", folder=str(folder), error=str(error))
        for t in sorted(found, key=lambda t: t.created_at):
            self.tournaments[t.id] = t
            if not t.active and not t.resumable:
                continue
            if t.resumable:  # FAILED by a write error: its recorded games are safe, and it goes on from them
                self.log.info("tournament_resuming_after_write_error", id=t.id, error=t.error)
                t.resumable, t.error, t.finished_at = False, "", 0.0
            if RunFolder(t.folder).is_finished():
                self._end(t, apb.TOURNAMENT_STATE_FINISHED)  # it finished just before the server stopped
                continue
            try:
                t.spec_text = RunFolder(t.folder).spec_copy.read_text()
                t.spec, _ = self.admission.validate(None, t.spec_text)
                t.processes = bot_processes(t.spec)
            except (OSError, SpecError) as error:
                t.error = f"cannot resume: {error}"
                self._end(t, apb.TOURNAMENT_STATE_FAILED)
                continue
            t.state = apb.TOURNAMENT_STATE_QUEUED
            t.save()
            self.log.info("tournament_resuming", id=t.id, name=t.name)  # its games are counted when it runs
            self._start(t)

    async def shutdown(self) -> None:
        """Refuse new calls, end every watch with UNAVAILABLE, cancel every tournament (they stay QUEUED or
        RUNNING on disk, to resume at the next start) and wait until their bots are stopped."""
        self.stopping = True
        for t in self.tournaments.values():
            for watcher in t.watchers:
                watcher.end(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN, discard=True)
            self._closing.extend(t.watchers)
            t.watchers = []
            t.cancel_scope.cancel()
        if self._runners:
            await self._idle.wait()

    def cancel_stuck_streams(self) -> None:
        """Cancel every watch stream still open (those whose client stopped reading)."""
        for watcher in self._closing:
            if not watcher.done:
                watcher.cancel_call()

    # --- the runner of one tournament ---

    def _start(self, t: Tournament) -> None:
        """Run the tournament; its dial-in entrants may connect from now on (until it ends)."""
        assert self._nursery is not None and t.spec is not None
        REGISTRY.expect(t.spec.bots)
        self._nursery.start_soon(self._run, t, name=f"tournament {t.id}")

    async def _run(self, t: Tournament) -> None:
        self._runners += 1
        try:
            await self._run_one(t)
        finally:
            assert t.spec is not None
            REGISTRY.forget(t.spec.bots)
            self._runners -= 1
            t.ended_event.set()
            if self._runners == 0 and self.stopping:
                self._idle.set()

    async def _run_one(self, t: Tournament) -> None:
        assert t.spec is not None
        try:
            with t.cancel_scope:
                await self._load_results(t)
                async with self.slots:
                    t.state = apb.TOURNAMENT_STATE_RUNNING
                    t.started_at = time.time()
                    t.save()
                    self.log.info("tournament_running", id=t.id, name=t.name, games_recorded=t.games_done)
                    self._queue(t, event(standings=self._standings_event(t)))
                    summary = await run_tournament(
                        t.spec, t.spec_text, t.folder, resume=RunFolder(t.folder).keeps_secret(),
                        on_game=lambda record: self._game_finished(t, record), limiter=self.limiter,
                        on_game_start=lambda scheduled, seats: self._game_started(t, scheduled, seats),
                        protected=self.admission.protected, backend=self.backend,
                        on_resumed=lambda done, summary: self._resumed(t, done, summary))
                    self._note_given_up(t, summary.given_up)
            if t.cancel_scope.cancelled_caught:
                if t.cancel_requested:
                    t.error = "cancelled by request"
                    self._end(t, apb.TOURNAMENT_STATE_CANCELLED)
                else:  # the server is stopping: it stays RUNNING on disk and resumes at the next start
                    t.ended = True
                    t.in_progress.clear()
                    t.save()
            else:
                self._end(t, apb.TOURNAMENT_STATE_FINISHED)
        except RecordsNotWritten as error:  # a full disk: nothing recorded is lost, and it can go on later
            t.error = f"{error}; {error.remedy}, then restart the server: it resumes this tournament"
            t.resumable = True
            self._note_given_up(t, error.given_up)
            self.log.error("tournament_failed", id=t.id, error=t.error, resumable=True)
            self._end(t, apb.TOURNAMENT_STATE_FAILED)
        except Exception as error:  # a failure of the arena itself (bot faults never get here)
            t.error = _describe(error)
            self.log.error("tournament_failed", id=t.id, error=t.error)
            self._end(t, apb.TOURNAMENT_STATE_FAILED)

    def _resumed(self, t: Tournament, done: frozenset[int], summary: RunSummary) -> None:
        """The live standings start again from the runner's own count of what the folder holds: its resume also
        refuses a line that does not fit the schedule (another run's game, a seat renamed), which the first look
        at the folder (:meth:`_load_results`, without the run's seed) cannot tell. Copies: the runner goes on
        adding its games to its own, and the server adds each to these as it is reported."""
        t.standings = copy.deepcopy(summary.standings)
        t.sprt = copy.deepcopy(summary.sprt)
        t.done = set(done)
        t.games_done = len(t.done)
        t.standings_dirty = True

    def _note_given_up(self, t: Tournament, lines: list[str]) -> None:
        """Keep the entrants given up on (their later games were forfeits), for GetStandings and the log."""
        t.given_up = list(lines)
        for line in lines:
            self.log.warning("entrant_given_up", id=t.id, detail=line)

    async def _load_results(self, t: Tournament) -> None:
        """The live standings and the set of recorded games, from what the run folder already holds."""
        report = ReadReport()

        assert t.spec is not None
        test = MatchupTest.for_tournament(t.spec, schedule_of(t.spec))

        def load() -> tuple[Standings, set[int]]:
            standings, done = Standings(group_size=t.group_size), set()
            path = RunFolder(t.folder).records
            if path.exists():
                for record in iter_records(path, report):
                    index = index_of(record)
                    if index not in done and index < t.games_total:
                        try:
                            outcome = outcome_of(record)
                            standings.add(outcome)
                        except NOT_AN_OUTCOME as error:  # as the runner's resume: its game is played again
                            report.bad_lines.append((-1, f"game {index} is not a complete record ({error})"))
                            continue
                        done.add(index)
                        if test is not None:  # in file order, as the runner rebuilds its own test on resume
                            test.add(outcome)
            return standings, done

        t.standings, t.done = await trio.to_thread.run_sync(load)
        t.sprt, t.has_sprt = test, test is not None
        t.games_done = len(t.done)
        for number, problem in report.bad_lines:  # the resume plays their games again
            self.log.warning("record_line_skipped", id=t.id, file=t.records.path.name, line=number, problem=problem)

    def _end(self, t: Tournament, state: apb.TournamentState.ValueType) -> None:
        t.state = state
        t.ended = True
        t.finished_at = time.time()
        t.games_done = max(t.games_done, len(t.done))
        if t.standings is not None:
            t.final_standings = t.standings_view()
            t.standings, t.sprt = None, None
        t.in_progress.clear()
        t.held.clear()
        t.save()
        self.log.info("tournament_ended", id=t.id, state=apb.TournamentState.Name(state), error=t.error)
        self._queue(t, event(finished=apb.TournamentFinished(tournament=t.info(),
                                                             standings=standings_pb(t.standings_view()))))

    # --- progress of the games -> events ---

    def _queue(self, t: Tournament, ev: apb.TournamentEvent) -> None:
        if t.watchers:
            t.pending.append(ev)

    def _game_started(self, t: Tournament, scheduled: ScheduledGame, seats: tuple[str, ...]) -> OnProgress:
        started = apb.GameStarted(index=scheduled.index, seats=seats, deal_key=scheduled.deal_key,
                                  rotation=scheduled.rotation)
        t.in_progress[scheduled.index] = started
        self._queue(t, event(game_started=started))
        index = scheduled.index
        numbers = MoveNumbers()
        followers = [observe(t, scheduled, seats) for observe in self.game_observers]

        def progress(round_index: int, item: Any) -> None:
            for follow in followers:
                follow(round_index, item)
            if isinstance(item, MoveRecord):
                number, in_game = numbers.next(round_index)  # even unwatched: a watcher may come mid-game
                if t.move_watchers:
                    self._queue_move(t, index, move_event(index, round_index, number, in_game, item))
            elif t.move_watchers:
                self._queue_move(t, index, round_event(index, round_index, item))

        return progress

    def _queue_move(self, t: Tournament, index: int, ev: apb.TournamentEvent) -> None:
        """Live, unless another game of the same deal set is still to finish (its seats were dealt these very
        tiles): then held, in order, until every other game of the set has finished."""
        if index in t.held or any(other != index and other not in t.done for other in t.deal_set(index)):
            t.held.setdefault(index, []).append(ev)
        else:
            self._queue(t, ev)

    def _game_finished(self, t: Tournament, record: dict[str, Any]) -> None:
        index = index_of(record)
        if index in t.done:
            return
        t.done.add(index)
        t.games_done = len(t.done)
        t.in_progress.pop(index, None)
        if t.standings is not None:
            outcome = outcome_of(record)
            t.standings.add(outcome)
            if t.sprt is not None:
                t.sprt.add(outcome)
        t.standings_dirty = True
        if t.watchers:
            self._queue(t, event(game_finished=apb.GameFinished(game=game_summary(record), games_done=t.games_done,
                                                               games_total=t.games_total)))
        for game in t.deal_set(index):  # release the held moves of games whose other games are all finished now
            if game in t.held and all(other == game or other in t.done for other in t.deal_set(game)):
                for ev in t.held.pop(game):
                    self._queue(t, ev)

    def _standings_event(self, t: Tournament) -> apb.StandingsUpdated:
        return apb.StandingsUpdated(standings=standings_pb(t.standings_view()), games_done=t.games_done,
                                    games_total=t.games_total)

    def flush(self) -> None:
        """Send every tournament's queued events to its watchers, one batch each; reap finished streams."""
        for t in self.tournaments.values():
            self._flush(t)
        now = time.monotonic()
        still = []
        for w in self._closing:
            if w.done:
                continue
            if w.ended_at is not None and now - w.ended_at > REAP_S:
                w.cancel_call()  # a stream that stopped reading: end its call
                w.close()
                self.log.warning("watch_stream_cancelled", id=w.tournament_id, reason="the client stopped reading")
                continue
            still.append(w)
        self._closing = still

    def _flush(self, t: Tournament) -> None:
        if t.watchers:
            kept = [w for w in t.watchers if not w.done and w.ending is None]
            if len(kept) != len(t.watchers):
                for w in t.watchers:
                    if not w.done and w.ending is not None:
                        self.log.warning("watcher_cut", id=t.id, status=w.ending.code.name)
                        self._closing.append(w)
                t.watchers = kept
                t.move_watchers = sum(1 for w in kept if w.moves)
        if not t.watchers:
            t.pending.clear()
            t.standings_dirty = False
            return
        batch, t.pending = t.pending, []
        if t.standings_dirty and not t.ended:
            batch.append(event(standings=self._standings_event(t)))
        t.standings_dirty = False
        if batch:
            for w in t.watchers:
                w.push(batch)
        if t.ended:
            for w in t.watchers:
                w.end()
            self._closing.extend(t.watchers)
            t.watchers = []
            t.move_watchers = 0

    # --- what the handlers ask for (called from the loop: guest.from_loop, guest.await_trio) ---

    def _check_open(self) -> None:
        if self.stopping:
            raise ApiError(Refusal.UNAVAILABLE, SHUTTING_DOWN)

    def lookup(self, tournament_id: str) -> Tournament:
        self._check_open()
        t = self.tournaments.get(tournament_id)
        if t is None:
            known = ", ".join(list(self.tournaments)[-5:]) or "none yet"
            raise ApiError(Refusal.NOT_FOUND,
                           f"no tournament {tournament_id!r} on this server (latest: {known}; see `arena status`)")
        return t

    def submit(self, spec: TournamentSpec, spec_text: str) -> apb.TournamentInfo:
        """Accept an admitted tournament if its bot processes fit beside the others' (checked here, on the trio
        thread, so two submissions at once cannot both take the last room)."""
        self._check_open()
        if self.backend is not None and any(b.dial_in for b in spec.bots):
            raise ApiError(Refusal.INVALID_ARGUMENT,
                           "this server plays its games on a cluster (--backend), whose nodes cannot reach a dial-in "
                           "bot's stream: dial-in bots play on a server that plays its games itself")
        schedule = schedule_of(spec)
        processes = len(spec.bots) * schedule.processes_per_entrant()
        self._check_room(processes, len(spec.bots), schedule.processes_per_entrant())
        tournament_id = uuid.uuid4().hex[:10]
        folder = self.root / tournament_id
        make_private_folder(folder)
        t = Tournament(id=tournament_id, folder=folder, name=spec.name, variant=spec.variant, players=spec.players,
                       entrants=[b.name for b in spec.bots], games_total=spec.expected_games(),
                       group_size=schedule.group_size, spec=spec, spec_text=spec_text, processes=processes,
                       has_sprt=spec.sprt is not None)
        RunFolder(folder).spec_copy.write_text(spec_text)
        t.save()
        self.tournaments[t.id] = t
        self.log.info("tournament_submitted", id=t.id, name=t.name, variant=t.variant, games=t.games_total)
        if spec.duplicate_off:
            self.log.info("tournament_duplicate_deals_off", id=t.id, note=spec.duplicate_off)
        self._start(t)
        return t.info()

    def _check_room(self, processes: int, entrants: int, per_entrant: int) -> None:
        """At most ``max_bot_processes`` bot processes over the tournaments that are queued or running."""
        need = f"{processes} bot processes ({entrants} entrants x {per_entrant} each)"
        if processes > self.max_bot_processes:
            raise ApiError(Refusal.INVALID_ARGUMENT,
                           f"this tournament needs {need}; this server runs at most {self.max_bot_processes} at once "
                           f"(arena serve --max-bot-processes)")
        taken = sum(t.processes for t in self.tournaments.values() if t.active and not t.ended)
        if taken + processes > self.max_bot_processes:
            raise ApiError(Refusal.RESOURCE_EXHAUSTED,
                           f"this tournament needs {need}, and {taken} of this server's {self.max_bot_processes} "
                           f"are taken by queued or running tournaments (arena serve --max-bot-processes); "
                           f"submit it again when one has ended")

    def list_infos(self) -> list[apb.TournamentInfo]:
        self._check_open()
        return [t.info() for t in self.tournaments.values()]

    def standings(self, tournament_id: str) -> apb.GetStandingsReply:
        t = self.lookup(tournament_id)
        return apb.GetStandingsReply(tournament=t.info(), standings=standings_pb(t.standings_view()))

    def game_access(self, tournament_id: str) -> tuple[Tournament, apb.TournamentInfo]:
        t = self.lookup(tournament_id)
        return t, t.info()

    async def cancel(self, tournament_id: str) -> apb.TournamentInfo:
        """Cancel, and answer once the tournament's games are stopped and its bots too."""
        t = self.lookup(tournament_id)
        if t.resumable:  # FAILED by a write error and waiting for the next start to resume: it will not
            t.resumable, t.error = False, f"cancelled by request after it failed: {t.error}"
            self._end(t, apb.TOURNAMENT_STATE_CANCELLED)
            return t.info()
        if not t.active or t.cancel_requested:
            raise ApiError(Refusal.FAILED_PRECONDITION,
                           f"tournament {t.id} is already {STATE_NAMES.get(t.state, '?')}"
                           + (" (being cancelled)" if t.cancel_requested and t.active else ""))
        t.cancel_requested = True
        t.cancel_scope.cancel()
        await t.ended_event.wait()
        return t.info()

    def subscribe(self, tournament_id: str, moves: bool, cancel: Callable[[], None] | None = None) -> Watcher:
        """A new watcher of the tournament, its snapshot queued first; ``cancel`` ends its call (a stream whose
        client stopped reading is cancelled so, :data:`REAP_S` after it was told to end)."""
        t = self.lookup(tournament_id)
        self._flush(t)  # what happened before this watcher is in its snapshot, not in its first batch
        watcher = Watcher(t.id, moves, self.watch_buffer, cancel)
        snapshot = apb.Snapshot(tournament=t.info(), standings=standings_pb(t.standings_view()),
                                in_progress=[t.in_progress[i] for i in sorted(t.in_progress)])
        watcher.push([event(snapshot=snapshot)])
        if t.ended or not t.active:
            watcher.push([event(finished=apb.TournamentFinished(tournament=t.info(),
                                                                standings=standings_pb(t.standings_view())))])
            watcher.end()
            return watcher
        t.watchers.append(watcher)
        t.move_watchers += moves
        return watcher


def schedule_of(spec: TournamentSpec) -> Schedule:
    """The tournament's schedule without its seed: the games, deal sets and processes are the same for any seed."""
    return spec.schedule()


def bot_processes(spec: TournamentSpec) -> int:
    """The bot processes a tournament keeps alive: each entrant's, as the runner starts them."""
    return len(spec.bots) * schedule_of(spec).processes_per_entrant()


def make_private_folder(folder: Path) -> None:
    """A folder only the server's user can enter (mkdir's mode is cut by the umask, so chmod as well)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        return _describe(error.exceptions[0])
    text = str(error)
    return f"{type(error).__name__}: {text}" if not isinstance(error, ArenaError) else text
