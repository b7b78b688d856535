"""The version pipeline: every uploaded version is built, then checked, then ready (or failed, with why).

uploaded -> building -> checking -> ready | failed. One trio task takes the uploaded versions of the server's
leagues one at a time (a build and a check each take a core of a small machine), oldest first:

- **building**: the stored archive is extracted into a new folder of its own, ``<work>/<version id>/src`` (the
  store re-checks every member as it writes it), and handed to a :class:`Builder`. The server's is
  :class:`SandboxedBuilder`: its kit's recipe in the build sandbox, offline, with the kit's prepared cache
  read-only and the server's secrets out of its view (:func:`arena.league.intake.build.build_version`). It builds into
  ``<work>/<version id>/bot`` and keeps its log at ``<work>/<version id>/build.log``; the extracted source is then
  removed (the archive stays in the store).
- **checking**: the built bot (the build's command, run in its built folder) plays ``check-bot``'s matches
  (:func:`arena.check_bot.check_bot`) against the random player, with the league's game (its variant, players and
  options), time control and limits, in its sandbox as every bot does. A pass makes the version ready; a start
  fault, a fault in a match, or a bot that does not play the league's variant makes it failed, with the first
  problem as its reason and the whole report kept.

**A ready version stays runnable.** When its build succeeds, how it runs (the command, its built folder relative to
``<work>``, its protocol) is written to its row (:class:`~arena.league.storage.db.Runnable`) and the built folder is kept,
so after a restart :meth:`Pipeline.bot_spec` gives the ladder the same bot without a rebuild; a version deleted to
respect ``authors.versions_kept`` loses its folder and its archive (:meth:`Pipeline.delete_versions`).

Every step's outcome is one compare-and-set on the version's state in the database; anything that goes wrong (a
damaged archive, a sandbox that cannot start) fails the version with one line, never leaves it between states.
A server killed mid-step leaves the version building or checking: at the next start
:meth:`~arena.league.storage.db.Database.requeue_interrupted` puts it back to uploaded and the pipeline redoes it from its
archive, in a fresh folder.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import trio

from arena.check_bot import CheckReport, check_bot
from arena.league.intake.build import BuildResult, KitCache, build_version, interpreter_check
from arena.league.intake.kits import RECIPES
from arena.league.intake.store import Store
from arena.league.rules.config import LeagueConfig
from arena.league.rules.errors import LeagueError, StateError
from arena.league.rules.lifecycle import BUILDING, CHECKING, FAILED, READY, SUSPENDED, UPLOADED
from arena.league.rules.manifest import MANIFEST_NAME, Manifest, parse_manifest
from arena.league.rules.model import Runnable, Version
from arena.league.storage.db import AsyncDatabase, Database
from arena.players.process import BotSpec
from arena.referee import TimeControl
from arena.sandbox import Limits
from arena.sandbox.build import BuildLimits

CHECK_MATCHES = 2
"""Matches of the compliance check per version (as ``arena check-bot``'s default is a few quick ones)."""
LOG_KEPT_BYTES = 256 * 1024
"""The end of a build log kept in the database (a build that writes megabytes keeps its last words)."""
KIT_CACHE_ENV = "ARENA_KIT_CACHE"
KIT_CACHE_HOME = Path("~/.cache/dominoes-arena/league-kits")


def default_kit_cache() -> Path:
    """Where the kits' prepared caches are by default, for ``arena league prepare-kits`` and ``arena serve
    --league`` alike: ``$ARENA_KIT_CACHE``, else ``~/.cache/dominoes-arena/league-kits``."""
    return Path(os.environ.get(KIT_CACHE_ENV) or KIT_CACHE_HOME).expanduser()


def kit_cache_problem(cache: KitCache, kit: str) -> str | None:
    """Why a kit's versions cannot be built here (its recipe needs a prepared cache that is not there), in one line
    telling the operator what to run; None when nothing is missing."""
    recipe = RECIPES.get(kit)
    if recipe is None or not recipe.needs_cache or cache.prepared(kit):
        return None
    folder = cache.of(kit)
    where = (f"{folder} is not complete: its prepare-kits was interrupted, or was an older arena's" if folder.is_dir()
             else str(folder))
    return (f"the {kit} kit's cache is not prepared on this server ({where}): the operator runs "
            f"arena league prepare-kits --cache {Path(cache.root).resolve()} --kits {kit}")


class Builder(Protocol):
    """Builds a version's source (``source``, extracted from the store) into ``work/bot``, within ``limits``."""

    async def build(self, source: Path, manifest: Manifest, work: Path, limits: BuildLimits) -> BuildResult: ...

    def problem(self, kit: str) -> str | None:
        """Why this server cannot build a kit's versions now (one line for the author and the operator), or None:
        an upload of such a kit is refused before anything is stored."""
        ...


@dataclass(frozen=True)
class SandboxedBuilder:
    """The server's builder: each kit's recipe in the build sandbox, offline, reading ``cache`` (prepared by
    ``arena league prepare-kits``); ``protected`` (the server's token file, data folder, database file) may be in
    no build's view."""

    cache: KitCache
    protected: tuple[Path, ...] = ()

    def problem(self, kit: str) -> str | None:
        return kit_cache_problem(self.cache, kit)

    async def build(self, source: Path, manifest: Manifest, work: Path, limits: BuildLimits) -> BuildResult:
        log = work / "build.log"
        problem = self.problem(manifest.kit)  # uploads were refused, but the cache may have gone since
        if problem is not None:
            log.write_text(f"--- the build failed: {problem} ---\n")
            return BuildResult(False, problem, (), None, RECIPES[manifest.kit].protocol, log)
        return await build_version(source, manifest, work, self.cache, limits, log, self.protected)


@dataclass(frozen=True)
class Served:
    """A league the server runs: its file and its row's id."""

    config: LeagueConfig
    league_id: int


class Pipeline:
    """Takes uploaded versions through build and check, one at a time, on the trio loop; :meth:`wake` after an
    upload."""

    def __init__(self, database: AsyncDatabase, store: Store, leagues: Mapping[str, Served], work: Path,
                 builder: Builder, log: Any, check_matches: int = CHECK_MATCHES,
                 on_ready: Callable[[], None] | None = None) -> None:
        """``on_ready`` is called (on the trio thread) each time a version becomes ready: the ladder looks again."""
        self.database = database
        self.on_ready = on_ready
        self.store = store
        self.leagues = dict(leagues)
        self.work = work
        self.builder = builder
        self.log = log
        self.check_matches = check_matches
        self._wake = trio.Event()

    def wake(self) -> None:
        """Something was uploaded: look again (on the trio thread)."""
        self._wake.set()

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Requeue what a dead server left half-done, then process versions as they come, until cancelled."""
        self.work.mkdir(mode=0o700, parents=True, exist_ok=True)
        for version in await self.database.run(Database.requeue_interrupted):
            self.log.warning("league_version_requeued", version=version.id, was="building or checking")
        task_status.started()
        while True:
            self._wake = trio.Event()
            pending = await self.database.run(Database.versions_in, UPLOADED)
            owners = await self._bot_leagues()
            stalled = False
            for version in sorted(pending, key=lambda v: v.id):
                if version.bot_id in owners:  # a bot of a league this server does not run waits for its server
                    stalled |= not await self._process_or_log(version, *owners[version.bot_id])
            if stalled or all(v.bot_id not in owners for v in pending):
                await self._wake.wait()

    async def _process_or_log(self, version: Version, served: Served, bot_name: str) -> bool:
        """:meth:`process`, with a database that refuses a step logged (the version stays where it was, to be
        taken again at the next upload or start) rather than ending the server; False then."""
        try:
            await self.process(version, served, bot_name)
        except LeagueError as error:
            self.log.error("league_pipeline_step_failed", version=version.id, error=str(error))
            return False
        return True

    async def _bot_leagues(self) -> dict[int, tuple[Served, str]]:
        """Each bot of the served leagues: its league and its name."""
        found: dict[int, tuple[Served, str]] = {}
        for served in self.leagues.values():
            for bot in await self.database.run(Database.bots, served.league_id):
                found[bot.id] = (served, bot.name)
        return found

    async def process(self, version: Version, served: Served, bot_name: str) -> Version:
        """One version from uploaded to ready or failed; any error of a step fails it with its one line."""
        try:
            version = await self.database.run(Database.transition, version.id, BUILDING)
        except StateError:  # retired (or taken) since it was listed
            return await self.database.run(Database.version, version.id)
        self.log.info("league_version_building", version=version.id, bot=bot_name, sha256=version.sha256)
        try:
            built, log_text = await self._build(version, served.config)
        except Exception as error:  # a damaged archive, a disk error: the version fails, the server goes on
            return await self._fail(version, f"the build could not run: {_line(error)}")
        if not built.ok:
            return await self._fail(version, f"build failed: {built.why}", build_log=log_text)
        assert built.folder is not None  # a build that went well has its folder
        runnable = Runnable(built.command, str(built.folder.relative_to(self.work)), built.protocol)
        version = await self.database.run(Database.transition, version.id, CHECKING, build_log=log_text,
                                          runnable=runnable)
        self.log.info("league_version_checking", version=version.id, bot=bot_name)
        try:
            report = await self._check(version, bot_name, served.config)
        except Exception as error:
            return await self._fail(version, f"the check could not run: {_line(error)}")
        summary = report_json(report)
        problem = check_problem(report, served.config.variant)
        if problem is not None:
            return await self._fail(version, f"check failed: {problem}", check_report=summary)
        version = await self.database.run(Database.transition, version.id, READY, check_report=summary)
        self.log.info("league_version_ready", version=version.id, bot=bot_name)
        if self.on_ready is not None:
            self.on_ready()
        return version

    async def _fail(self, version: Version, reason: str, **kept: Any) -> Version:
        self.log.warning("league_version_failed", version=version.id, reason=reason)
        return await self.database.run(Database.transition, version.id, FAILED, reason, **kept)

    async def _build(self, version: Version, config: LeagueConfig) -> tuple[BuildResult, str]:
        """A fresh folder for the version (a leftover of an interrupted run is removed first), its files, its
        build, and the end of the build's log. The extracted source goes once the build is done: the built folder
        holds the version's files and what the build made, and the archive stays in the store."""
        work = self.work / str(version.id)
        source = work / "src"

        def prepare() -> Manifest:
            shutil.rmtree(work, ignore_errors=True)
            self.work.mkdir(mode=0o700, parents=True, exist_ok=True)
            work.mkdir(mode=0o700)
            os.chmod(work, 0o711)  # the bot's own user (a random one) must reach its folder, and list nothing else
            self.store.extract_to(version.sha256, source)
            open_to_the_bot(source)
            return parse_manifest((source / MANIFEST_NAME).read_bytes())

        manifest = await trio.to_thread.run_sync(prepare)
        refusal = config.interpreter_refusal(manifest)  # the league file may have changed since the upload
        try:
            if refusal is not None:
                log = work / "build.log"
                await trio.to_thread.run_sync(log.write_text, f"--- the build failed: {refusal} ---\n")
                built = BuildResult(False, refusal, (), None, "stdio", log)
            else:
                built = await self.builder.build(source, manifest, work, config.build)
        finally:
            await trio.to_thread.run_sync(lambda: shutil.rmtree(source, ignore_errors=True))
        return built, await trio.to_thread.run_sync(read_log_end, built.log)

    async def _check(self, version: Version, bot_name: str, config: LeagueConfig) -> CheckReport:
        """check-bot's matches of the league's own game (variant, players, options), the bot sandboxed."""
        spec = await trio.to_thread.run_sync(self.bot_spec, version, bot_name, config.limits)
        log_dir = self.work / str(version.id) / "check"
        log_dir.mkdir(mode=0o700, exist_ok=True)
        return await check_built(spec, config, log_dir, self.check_matches)

    # --- for the ladder: running ready versions, counting their starts, deleting old ones ---------------------

    def bot_spec(self, version: Version, bot_name: str, limits: Limits) -> BotSpec:
        """How to start a built version of this pipeline's leagues: :func:`runnable_spec` in its work folder."""
        return runnable_spec(self.work, version, bot_name, limits)

    async def record_start(self, version_id: int, failure: str | None) -> Version:
        """A ready version's start, as the ladder saw it: None when it started (its count of failures in a row goes
        back to 0), else the failure's one line; the third failure in a row suspends it with that reason."""
        version = await self.database.run(Database.record_start, version_id, failure)
        if failure is not None and version.state == SUSPENDED:
            self.log.warning("league_version_suspended", version=version_id, reason=version.reason)
        return version

    async def delete_versions(self, versions: Sequence[Version], reason: str) -> list[Version]:
        """Delete versions to make room for a new one: their rows stay (retired, marked deleted: their games and
        ratings keep them), their built folders go, and their archives unless another version has the same one."""
        deleted = await self.database.run(Database.mark_deleted, [v.id for v in versions], reason)
        for version in deleted:
            in_use = await self.database.run(Database.archive_in_use, version.sha256)
            await trio.to_thread.run_sync(self._remove_files, version, in_use)
            self.log.info("league_version_deleted", version=version.id, reason=reason)
        return deleted

    def _remove_files(self, version: Version, archive_in_use: bool) -> None:
        shutil.rmtree(self.work / str(version.id), ignore_errors=True)
        if not archive_in_use:
            self.store.remove(version.sha256)


def runnable_spec(work: Path, version: Version, bot_name: str, limits: Limits) -> BotSpec:
    """How to start a built version (sandboxed, read-only in its built folder under ``work``), from its row alone:
    the same after a restart as right after its build. A LeagueError when it has no built bot (never built, or
    deleted) or its folder is gone (for the ladder, a failed start: :meth:`Pipeline.record_start`)."""
    if version.runnable is None:
        raise LeagueError(f"version {version.id} has no built bot (it is {version.state})")
    folder = work / version.runnable.folder
    if not folder.is_dir():
        raise LeagueError(f"the built folder of version {version.id} is missing ({folder})")
    if version.runnable.protocol == "stdio":  # the stdio kit's interpreter: still a program of the sandbox's own
        problem = interpreter_check(version.runnable.command[0])
        if problem is not None:
            raise LeagueError(f"version {version.id}: {problem}")
    return BotSpec(name=bot_name, command=version.runnable.command, cwd=str(folder), folder=str(folder),
                   sandbox=True, limits=limits, protocol=version.runnable.protocol)


def dial_in_spec(version: Version, name: str) -> BotSpec:
    """A dial-in version's bot, named as at its tables: nothing to start, its stream taken from the server's dial-in
    registry (which knows it by that name and its token's SHA-256)."""
    assert version.dial_in_sha256 is not None
    return BotSpec(name=name, dial_in=True, token_sha256=version.dial_in_sha256)


class BuiltBots:
    """A ready version's bot as the ladder starts it: :func:`runnable_spec` of its row (its built folder, the recipe's
    command), with the league's limits, or a dial-in version's :func:`dial_in_spec`; a LeagueError (a failed start
    for the ladder) when it cannot start."""

    def __init__(self, work: Path, limits: Limits) -> None:
        self.work = work
        self.limits = limits

    def __call__(self, version: Version) -> BotSpec:
        name = f"version-{version.id}"  # each table names it again (table_run.named)
        if version.dial_in:
            return dial_in_spec(version, name)
        return runnable_spec(self.work, version, name, self.limits)


async def check_built(spec: BotSpec, config: LeagueConfig, log_dir: Path, matches: int = CHECK_MATCHES) -> CheckReport:
    """The compliance check of a built bot: check-bot's matches of the league's own game (its variant, players and
    options) against the random player, with the league's clock; :func:`check_problem` reads the report."""
    return await check_bot(spec, matches, time_control_of(config), config.time.startup_ms / 1000, log_dir,
                           variants=[config.variant], games={config.variant: config.game()})


def time_control_of(config: LeagueConfig) -> TimeControl:
    """The referee's clock of a league's games, from its ``[time]``."""
    time = config.time
    return TimeControl(move_ms=time.move_ms, bank_ms=time.bank_ms, grace_ms=time.grace_ms,
                       first_move_ms=time.first_move_ms)


def check_problem(report: CheckReport, variant: str) -> str | None:
    """Why a check failed, in one line; None when it passed."""
    if report.start_fault is not None:
        return report.start_fault
    if not report.variants:
        return f"the bot does not play the league's variant {variant!r} (its hello: {report.hello})"
    for check in report.variants:
        if check.faults:
            return f"{check.variant}: {check.faults[0]}" + (f" (and {len(check.faults) - 1} more faults)"
                                                             if len(check.faults) > 1 else "")
        if check.matches == 0:
            return f"{check.variant}: no match was played"
    return None


def report_json(report: CheckReport) -> dict[str, Any]:
    """The check's report as the database keeps it (and GetBuildLog sends it)."""
    summary = dataclasses.asdict(report)
    for check, variant in zip(report.variants, summary["variants"], strict=False):  # reply times: their median and worst only
        del variant["reply_ms"]
        variant.update(median_ms=check.median_ms, worst_ms=check.worst_ms, passed=check.passed)
    return {"passed": report.passed, **summary}


def open_to_the_bot(folder: Path) -> None:
    """The bot runs as a user of its own: its folders must be enterable and its files readable by others (never
    writable: the store's modes are 0644 and 0755 for files)."""
    os.chmod(folder, 0o755)
    for root, folders, files in os.walk(folder):
        for name in folders:
            os.chmod(os.path.join(root, name), 0o755, follow_symlinks=False)
        for name in files:
            path = os.path.join(root, name)
            os.chmod(path, os.stat(path, follow_symlinks=False).st_mode & 0o777 | 0o444, follow_symlinks=False)


def read_log_end(path: Path | None) -> str:
    """The last :data:`LOG_KEPT_BYTES` of a log, as text (a build's output may be any bytes)."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as log:
            size = log.seek(0, os.SEEK_END)
            log.seek(max(0, size - LOG_KEPT_BYTES))
            data = log.read()
    except FileNotFoundError:
        return ""
    prefix = f"[the first {size - LOG_KEPT_BYTES} bytes are left out]\n" if size > LOG_KEPT_BYTES else ""
    return prefix + data.decode("utf-8", errors="replace")


def _line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
