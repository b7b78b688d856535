"""The ladder: a league plays its active versions against each other without end, one table at a time per free
slot, up to its ``[ladder] concurrency`` tables at once, while the league is open (:mod:`arena.league.rules.timeline`:
nothing before its timeline's ``opens``, no new table once it is frozen).

Each round: the active ready versions' state is read from the database (online rating, deal sets in the last hour
and in all, recent opponents, tables being played included), the matchmaker (:mod:`.matchmaking`) chooses the
tables for the free slots, each with its one-line reason, and they are queued in the database (``tables``) and
started. A table is one deal set under every seat rotation, played as an ordinary tournament run in its own folder,
``<league folder>/tables/<table id>/`` (:mod:`.table_run`). When it ends:

- **played**: its games, its versions' online ratings (the deal set as the unit; each game, for a table whose run
  had no duplicate deals, as a dial-in version's has) and its state ``done`` go into the database in one
  transaction; every version at it started, so its count of failed starts is reset; its result
  goes to the maximum-likelihood leaderboard (:mod:`.leaderboard`), refitted on a worker thread;
- **a bot could not start**: that version's failed start is counted (:meth:`~.db.Database.record_start`; three
  in a row suspend it, and a suspended version is no longer active, so it leaves the matchmaker's input); the table
  is ``failed`` with why, and nothing is rated. A bot given up on mid-run (the runner's rule) counts one failed
  start, and its games there are forfeits, recorded and rated as played.

**A version that leaves mid-table** (retired by its author or the operator, or suspended by its failed starts at
another table) is withdrawn from every table of it being played (:meth:`Ladder.withdraw`), as a tournament lets go
of an entrant it gave up on (:meth:`arena.tournament.pools.EntrantPool.withdraw`): its bots are stopped at once, so
a game in flight ends with its fault and its side forfeits, and its games not started yet are forfeits without a
start. The table is then complete: recorded and rated once like any other, the forfeits counting as the losses they
are; the withdrawal is no failed start. A version that left before its table played a game (queued, or found
queued at a restart) fails the table instead, with why, and nothing is rated.

**Nothing lost, nothing twice.** A table's row is queued before its run starts, and marked done in the same
transaction that records its games and ratings. A server killed at any moment (``kill -9``) leaves a table queued
or playing: at the next start the ladder plays it again from its run folder (the runner resumes it: the games
recorded stay, the missing ones are played; a run already complete is only read) and rates it once. A SIGTERM
cancels the runs in flight; they stay playing, and resume likewise.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter, deque
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import trio

from arena.league.clock import utc_now
from arena.league.intake.pipeline import Served
from arena.league.play.dial_in import DialInVersions
from arena.league.play.leaderboard import Fitter, Leaderboard, table_results
from arena.league.play.table_run import (
    RECORD,
    TABLES,
    BotOf,
    LeagueRuns,
    authors_apart,
    entrant_name,
    named,
    results,
    rotations,
    table_file,
    table_spec,
)
from arena.league.rules.errors import LeagueError
from arena.league.rules.lifecycle import READY, SUSPENDED, UNFINISHED
from arena.league.rules.matchmaking import MatchmakingRules, Plan, VersionState, choose_tables
from arena.league.rules.model import ONLINE, LadderTable, Rating, Version
from arena.league.rules.rating import MODEL, deal_set_totals, rate_deal_set, table_updates
from arena.league.rules.timeline import OPEN, UPCOMING, not_open_yet, phase_of, recorded_of
from arena.league.storage.db import AsyncDatabase, Database
from arena.records.run_folder import RunFolder
from arena.tournament.backend import BackendFactory, BackendSetup, GameBackend
from arena.tournament.errors import EntrantsCannotPlay, RunError
from arena.tournament.likelihood import fit
from arena.tournament.local_backend import LocalBackend
from arena.tournament.runner import run_tournament

RECENT = timedelta(hours=1)
"""The matchmaker's recent window: coverage is deal sets per hour."""
IDLE_S = 5.0
"""How often an idle ladder looks again (a version became ready, or was retired or reinstated)."""
HISTORY = 256
"""Ended tables a watcher can catch up on (one that falls further behind skips to the newest)."""
FROZEN = "the league is frozen for its finals: the ladder chooses no more tables"


def upcoming_note(config: Any) -> str:
    """The queue's note before the league opens."""
    return f"{not_open_yet(config)}: the ladder plays nothing before"


class Ladder(LeagueRuns):
    """One league's ladder on the trio loop: :meth:`run` until cancelled. Its tables go in ``tables/`` of the
    league's folder."""

    def __init__(self, database: AsyncDatabase, served: Served, folder: Path, bot_of: BotOf, log: Any, *,
                 backend: Any = None, limiter: trio.CapacityLimiter | None = None,
                 protected: Sequence[Path] = (), fitter: Fitter = fit) -> None:
        """``folder``: the league's own folder (its tables go in ``tables/``). ``backend``, ``limiter`` and
        ``protected`` are the runner's (a Ray backend, the server's games-at-once limit, paths no bot may see);
        ``fitter`` the leaderboard's fit."""
        super().__init__(database, served, folder, bot_of, log, backend=backend, limiter=limiter, protected=protected)
        self.playing: dict[int, LadderTable] = {}
        self.leaderboard = Leaderboard(log, fitter)
        """The maximum-likelihood board: rebuilt from the database at the start, refitted as tables are rated."""
        self.note = ""
        """Why the last round chose fewer tables than it had slots for (the queue shows it)."""
        self.ended = trio.Event()
        """Set (and replaced) each time a table ends: what a watcher waits on."""
        self.serial = 0
        """Tables ended since the server started; ``history`` holds the last ones as (serial, table id)."""
        self.history: deque[tuple[int, int]] = deque(maxlen=HISTORY)
        self.leaving: dict[int, dict[int, str]] = {}
        """Per table being played, the versions withdrawn from it (version id to why)."""
        self._backends: dict[int, GameBackend] = {}
        self._names: dict[int, dict[int, str]] = {}
        self._wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        self.dial_ins = DialInVersions()
        """The league's dial-in versions, waited for by the server's registry; the ladder plays them while connected."""

    @property
    def rules(self) -> MatchmakingRules:
        ladder = self.config.ladder
        return MatchmakingRules(sides=rotations(self.config), coverage=ladder.coverage,
                                pairing_penalty=ladder.pairing_penalty, authors_apart=authors_apart(self.config))

    def wake(self) -> None:
        """Something changed (a version became ready): look again now (on the trio thread)."""
        self._wake.set()

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Play the tables a dead server left unfinished, then choose and play tables for every free slot."""
        (self.folder / TABLES).mkdir(mode=0o700, parents=True, exist_ok=True)
        league_id = self.served.league_id
        await self.leaderboard.rebuild(self.database, league_id)
        self.dial_ins.registry.on_attach.append(self.wake)
        try:
            await self._run(league_id, task_status)
        finally:
            self.dial_ins.registry.on_attach.remove(self.wake)
            self.dial_ins.close()

    async def _run(self, league_id: int, task_status: Any) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self.leaderboard.run, name=f"leaderboard of {self.config.name}")
            for table in await self.database.run(Database.tables_in, league_id, UNFINISHED):
                self.log.info("ladder_table_resumed", league=self.config.name, table=table.id, state=table.state)
                self._start(table)
            task_status.started()
            while True:
                self._wake = trio.Event()
                await self.sync_dial_ins()  # every round, so that a new dial-in version may connect at once
                free = self.config.ladder.concurrency - len(self.playing)
                phase = await self.phase()
                if free > 0 and phase == UPCOMING:
                    self.note = upcoming_note(self.config)
                elif free > 0 and phase != OPEN:
                    self.note = FROZEN
                elif free > 0:
                    plan = await self.plan(free)
                    self.note = plan.note
                    if plan.tables:
                        chosen = [([int(v) for v in t.versions], t.reason) for t in plan.tables]
                        for table in await self.database.run(Database.queue_tables, league_id, chosen):
                            self._start(table)
                        continue
                with trio.move_on_after(IDLE_S):
                    await self._wake.wait()

    async def phase(self) -> str:
        """The league's phase now (:mod:`arena.league.rules.timeline`): the ladder plays only while it is open."""
        frozen = await self.database.run(Database.frozen, self.served.league_id)
        return phase_of(self.config.timeline, utc_now(), recorded_of(frozen))

    async def plan(self, free: int) -> Plan:
        """The matchmaker's tables for ``free`` slots, from the database's state now (nothing is stored)."""
        absent = await self.sync_dial_ins()
        states = await self.database.run(version_states, self.served.league_id, self.config.ladder.placement)
        present = [state for state in states if int(state.id) not in absent]
        return choose_tables(present, free, self.rules)

    async def sync_dial_ins(self) -> set[int]:
        """Have the server's registry wait for the league's ready dial-in versions (and only them); the ids of those
        not connected now, which the matchmaker leaves out: a dial-in version plays only while it is connected."""
        return self.dial_ins.sync(await self.database.run(Database.dial_in_versions, self.served.league_id))

    def _start(self, table: LadderTable) -> None:
        assert self._nursery is not None
        self.playing[table.id] = table
        self._nursery.start_soon(self._play, table, name=f"ladder table {table.id}")

    async def _play(self, table: LadderTable) -> None:
        try:
            await self.play(table)
        except LeagueError as error:  # the database refused a step: the table stays as it was, for the next start
            self.log.error("ladder_table_step_failed", league=self.config.name, table=table.id, error=str(error))
        finally:
            del self.playing[table.id]
            for kept in (self.leaving, self._backends, self._names):
                kept.pop(table.id, None)
            self.serial += 1
            self.history.append((self.serial, table.id))
            self.ended.set()
            self.ended = trio.Event()
            self._wake.set()

    async def play(self, table: LadderTable) -> None:
        """Play one table to its end (or resume it), then record and rate it, or fail it with why."""
        if RunFolder(self.table_folder(table)).is_finished() or await self.run_table(table):
            await self.ingest(table)

    def table_folder(self, table: LadderTable) -> Path:
        return self.folder / TABLES / str(table.id)

    async def _entrants(self, table: LadderTable) -> tuple[list[Version], list[str]]:
        """The table's versions per side and their names at the table."""
        sides = [await self.database.run(Database.version, v) for v in table.versions]
        return sides, [entrant_name(await self._bot_name(v), v) for v in sides]

    async def run_table(self, table: LadderTable) -> bool:
        """The table's tournament run (resumed when its folder holds one), its starts counted; False when it could
        not be played (the table is failed, with why)."""
        folder = self.table_folder(table)
        sides, names = await self._entrants(table)
        left = self.leaving.setdefault(table.id, {})
        left.update({version.id: left_because(version) for version in sides
                     if version.state != READY and version.id not in left})
        if left and not RunFolder(folder).holds_games():  # it left before a game: nothing to forfeit or to rate
            why = "; ".join(f"{text} before its table started" for text in left.values())
            await self.database.run(Database.fail_table, table.id, why)
            self.log.warning("ladder_table_failed", league=self.config.name, table=table.id, error=why)
            return False
        bots, failures = [], {}
        for version, name in zip(sides, names, strict=True):
            try:
                bots.append(named(self.bot_of(version), name))
            except LeagueError as error:  # no command for its bot (its folder is gone): a failed start
                failures[version.id] = str(error)
        if failures:
            await self._cannot_play(table, failures, sides)
            return False
        text = table_file(self.config, table, bots, folder)
        spec = table_spec(text)
        await self.database.run(Database.start_table, table.id)
        self.log.info("ladder_table_started", league=self.config.name, table=table.id, versions=", ".join(names),
                      reason=table.reason)
        self._names[table.id] = {version.id: name for version, name in zip(sides, names, strict=True)}
        try:
            summary = await run_tournament(spec, text, folder, resume=RunFolder(folder).keeps_secret(),
                                           limiter=self.limiter, protected=self.protected,
                                           backend=self._backend_of(table))
        except EntrantsCannotPlay as error:
            by_name = dict(zip(names, sides, strict=True))
            await self._cannot_play(table, {by_name[name].id: why for name, why in error.problems
                                            if name in by_name}, sides)
            return False
        except RunError as error:  # the run folder cannot be written (a full disk): nothing rated
            await self.database.run(Database.fail_table, table.id, str(error))
            self.log.error("ladder_table_failed", league=self.config.name, table=table.id, error=str(error))
            return False
        for version, name in zip(sides, names, strict=True):  # given up on mid-run: one failed start; else a good one
            if version.id in left:
                continue  # it left: no start of it failed
            given_up = next((line for line in summary.given_up if line.startswith(f"bot {name!r} ")), None)
            await self._record_start(table, version, given_up)
        return True

    def _backend_of(self, table: LadderTable) -> BackendFactory:
        """The runner's backend for this table (the ladder's, else this machine's), kept while the table plays so
        that a version leaving can be withdrawn from it; versions withdrawn already are, as it is made."""
        def make(setup: BackendSetup) -> GameBackend:
            backend = (self.backend or LocalBackend)(setup)
            self._backends[table.id] = backend
            for version_id, why in self.leaving.get(table.id, {}).items():
                assert self._nursery is not None, "a version left a table the ladder is not running"
                self._nursery.start_soon(backend.withdraw, self._names[table.id][version_id], why)
            return backend
        return make

    def withdraw(self, version_id: int, why: str, *, but: int | None = None) -> None:
        """The version left the league (retired, or suspended): withdraw it from every table of it being played
        (but the table ``but``, whose run ended), see the module's docstring; a table not started yet fails at its
        start. On the trio thread."""
        for table_id, table in list(self.playing.items()):
            leaving = self.leaving.setdefault(table_id, {})
            if version_id not in table.versions or version_id in leaving or table_id == but:
                continue
            leaving[version_id] = why
            self.log.warning("ladder_version_withdrawn", league=self.config.name, table=table_id, version=version_id,
                             reason=why)
            backend = self._backends.get(table_id)
            if backend is not None:  # in the ladder's nursery: the caller (a RetireVersion call) never waits on it
                assert self._nursery is not None
                self._nursery.start_soon(backend.withdraw, self._names[table_id][version_id], why)

    async def _record_start(self, table: LadderTable, version: Version, failure: str | None) -> None:
        """A version's start at ``table`` counted; the failure that suspends it withdraws it from its other tables."""
        after = await self.database.run(Database.record_start, version.id, failure)
        if failure is not None and version.state == READY and after.state == SUSPENDED:
            self.log.warning("league_version_suspended", version=version.id, reason=after.reason)
            self.withdraw(version.id, left_because(after), but=table.id)

    async def _cannot_play(self, table: LadderTable, failures: dict[int, str], sides: list[Version]) -> None:
        """A bot could not start: its failed start counted (the others' starts reset theirs), the table failed."""
        for version in sides:
            await self._record_start(table, version, failures.get(version.id))
        why = "; ".join(f"version {vid} cannot play: {text}" for vid, text in failures.items()) or "cannot play"
        await self.database.run(Database.fail_table, table.id, why)
        self.log.warning("ladder_table_failed", league=self.config.name, table=table.id, error=why)

    async def ingest(self, table: LadderTable) -> bool:
        """The played table's games, ratings and done state, in one transaction, then its result counted for the
        leaderboard; False (and nothing changed) for a table rated already."""
        folder = self.table_folder(table)
        sides, names = await self._entrants(table)
        version_of = {name: version.id for name, version in zip(names, sides, strict=True)}
        run = await trio.to_thread.run_sync(results, folder, rotations(self.config), version_of)
        seats = [seats for _, seats in run.games]
        totals = deal_set_totals(seats, table.versions)
        updates = [functools.partial(rate_deal_set, totals=unit)
                   for unit in table_updates(seats, table.versions, run.single_games)]
        rated = await self.database.run(Database.finish_table, table.id, RECORD.format(id=table.id), run.games,
                                        *updates, single_games=run.single_games)
        if rated:
            for places in table_results(dataclasses.replace(table, single_games=run.single_games), seats):
                self.leaderboard.add(places)
            self.log.info("ladder_table_done", league=self.config.name, table=table.id,
                          result=", ".join(f"{name} {points:g}" for name, points in zip(names, totals, strict=False)))
        return rated

    async def _bot_name(self, version: Version) -> str:
        for bot in await self.database.run(Database.bots, self.served.league_id):
            if bot.id == version.bot_id:
                return bot.name
        raise LeagueError(f"version {version.id} is of no bot of league {self.config.name!r}")


def left_because(version: Version) -> str:
    """Why a version plays no more, in one line: ``version 7 retired by its author``, ``version 7 suspended: failed
    to start 3 times in a row; last: ...``."""
    reason = version.reason or ""
    if reason.startswith(version.state):
        return f"version {version.id} {reason}"
    return f"version {version.id} {version.state}" + (f": {reason}" if reason else "")


def version_states(database: Database, league_id: int, placement: int) -> list[VersionState]:
    """What the matchmaker knows of each active version: its online rating, its deal sets in the last hour (tables
    being played or queued included) and in all, whether its placement is done, its recent opponents, and its bot's
    author (one author's versions are kept apart at tables of three or more sides)."""
    active = database.active_versions(league_id)
    rated = {r.version_id: r for r in database.ratings(league_id, ONLINE)}
    recent: Counter[int] = Counter()
    met: dict[int, Counter[int]] = {}
    since = utc_now() - RECENT
    for table in database.recent_tables(league_id, since):
        for version_id in table.versions:
            recent[version_id] += 1
            met.setdefault(version_id, Counter()).update(v for v in table.versions if v != version_id)
    fresh = MODEL.rating()
    states = []
    for _bot, version in active:
        rating = rated.get(version.id) or Rating(version.id, ONLINE, fresh.mu, fresh.sigma, 0)
        opponents = {str(v): n for v, n in met.get(version.id, Counter()).items()}
        states.append(VersionState(str(version.id), rating.mu, rating.sigma, recent[version.id], rating.games,
                                   rating.games >= placement, opponents, str(version.author_id)))
    return states
