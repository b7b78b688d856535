"""The league put together: one call opens the database and makes every working part a server runs.

``arena serve --league FILE`` calls :func:`open_league` once, inside its trio loop, and gets an :class:`OpenLeague`:
the database (migrated, each league registered), the content-addressed store, the pipeline that builds and checks
uploads, each league's ladder, challenge slots, finals, timeline and webhooks' deliveries, and the
:class:`~arena.league.core.LeagueCore` whose
calls the gRPC service and the web pages answer. The parts are wired here and nowhere else, in the league's own
order (rules, storage, intake, play, the core), so a reader finds what runs a league in one function, and the
server only starts what it is handed (:meth:`OpenLeague.start`) and serves the core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import trio

from arena.league.authors import Authenticator
from arena.league.core import LeagueCore
from arena.league.intake.build import KitCache
from arena.league.intake.pipeline import BuiltBots, Pipeline, SandboxedBuilder, Served, kit_cache_problem
from arena.league.intake.store import Store
from arena.league.play.challenges import Challenges
from arena.league.play.finals import Finals
from arena.league.play.ladder import Ladder
from arena.league.play.table_run import LeagueRuns, league_folder
from arena.league.play.timeline import Timekeeper
from arena.league.play.webhooks import Webhooks
from arena.league.rules.config import LeagueConfig
from arena.league.storage.db import AsyncDatabase, Database, shown_url
from arena.tournament.backend import BackendFactory

VERSIONS = "versions"
"""The folder of the league's data folder that holds each built version (its bot runs from there)."""

Runs = TypeVar("Runs", bound=LeagueRuns)


class LeagueLog(Protocol):
    """The server's structured log, as the league writes to it: an event's name and its values."""

    def info(self, event: str, **values: Any) -> None: ...

    def warning(self, event: str, **values: Any) -> None: ...

    def error(self, event: str, **values: Any) -> None: ...


@dataclass(frozen=True)
class OpenLeague:
    """The leagues of a server, opened: their database, their core (what the gRPC calls and the web pages call),
    the store of uploads, the pipeline of their versions, and each league's ladder, challenges, finals and timeline
    by league name."""

    database: AsyncDatabase
    core: LeagueCore
    store: Store
    pipeline: Pipeline
    ladders: dict[str, Ladder]
    """Each league's ladder (arena/league/play/ladder.py), by league name."""
    challenges: dict[str, Challenges]
    """Each league's challenge slots (arena/league/play/challenges.py), by league name."""
    finals: dict[str, Finals]
    """Each league's finals (arena/league/play/finals.py), by league name."""
    timekeepers: dict[str, Timekeeper]
    """Each league's timeline at work (arena/league/play/timeline.py), by league name."""
    webhooks: dict[str, Webhooks]
    """Each league's deliveries to the teams' webhooks (arena/league/play/webhooks.py), by league name."""

    async def start(self, nursery: trio.Nursery) -> None:
        """Start every working part in ``nursery``, each once it has started (its restart work done): the pipeline
        first (it requeues what a dead server left half-built), then each ladder, challenge slot, finals and
        webhooks' deliveries, and last each timeline (it takes the steps whose moment passed while the server was
        down)."""
        await nursery.start(self.pipeline.run)
        parts: list[Ladder | Challenges | Finals | Webhooks | Timekeeper] = [
            *self.ladders.values(), *self.challenges.values(), *self.finals.values(), *self.webhooks.values(),
            *self.timekeepers.values()]
        for part in parts:
            await nursery.start(part.run)


async def open_league(leagues: Sequence[LeagueConfig], database_url: str, folder: Path, *,
                      operator_token: str | None, kit_cache: Path, build_protected: Sequence[Path],
                      play_protected: Sequence[Path], log: LeagueLog, limiter: trio.CapacityLimiter,
                      backend: BackendFactory | None, private_folder: Callable[[Path], None]) -> OpenLeague:
    """Open (and migrate) the league database at ``database_url``, register each league, and make the store, the
    pipeline, each league's ladder, challenges and finals, and the core, all in ``folder`` (made by
    ``private_folder`` once the database opened: the server's way of making a folder only it can enter).

    ``operator_token`` is the token that does everything; ``kit_cache`` the kits' prepared caches the builds read;
    ``build_protected`` and ``play_protected`` what no build and no league game may see; the games share the
    server's games-at-once ``limiter`` and its ``backend`` with its tournaments. A database that cannot be opened,
    or a league whose variant changed, is one :class:`~arena.league.rules.errors.LeagueError`."""
    database = await AsyncDatabase.open(database_url)
    served = {}
    for league in leagues:
        row = await database.run(Database.ensure_league, league.name, league.title, league.variant)
        served[league.name] = Served(league, row.id)
    private_folder(folder)
    store = Store(folder)
    cache = KitCache(kit_cache)
    builder = SandboxedBuilder(cache, tuple(build_protected))

    def made(kind: type[Runs]) -> dict[str, Runs]:
        """Each league's ladder, challenges or finals: the same runner's parts."""
        return {name: kind(database, league, league_folder(folder, name),
                           BuiltBots(folder / VERSIONS, league.config.limits), log, backend=backend,
                           limiter=limiter, protected=play_protected) for name, league in served.items()}

    ladders, challenges, finals = made(Ladder), made(Challenges), made(Finals)
    timekeepers = {name: Timekeeper(database, league, log, finals[name],
                                    woken=(ladders[name].wake, challenges[name].wake))
                   for name, league in served.items()}

    def wake_ladders() -> None:
        """A version became ready: every ladder looks again."""
        for ladder in ladders.values():
            ladder.wake()

    pipeline = Pipeline(database, store, served, folder / VERSIONS, builder, log, on_ready=wake_ladders)
    webhooks = {name: Webhooks(database, league, log) for name, league in served.items()}
    core = LeagueCore(database, Authenticator(database.database, operator_token), store, served, pipeline, ladders,
                      challenges, finals, timekeepers, log=log, webhooks=webhooks)
    log.info("leagues", leagues=", ".join(sorted(served)), database=shown_url(database_url),
             kit_cache=str(cache.root))
    for kit in sorted({kit for league in leagues for kit in league.kits}):
        problem = kit_cache_problem(cache, kit)
        if problem is not None:  # its uploads are refused, with the problem, until the operator prepares it
            log.warning("league_kit_not_prepared", kit=kit, cache=str(cache.of(kit)),
                        run=f"arena league prepare-kits --cache {cache.of(kit).parent} --kits {kit}")
    return OpenLeague(database, core, store, pipeline, ladders, challenges, finals, timekeepers, webhooks)
