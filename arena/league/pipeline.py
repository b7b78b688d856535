"""The version pipeline: every uploaded version is built, then checked, then ready (or failed, with why).

uploaded -> building -> checking -> ready | failed. One trio task takes the uploaded versions of the server's
leagues one at a time (a build and a check each take a core of a small machine), oldest first:

- **building**: the stored archive is extracted into a new folder of its own, ``<work>/<version id>/src`` (the
  store re-checks every member as it writes it), and handed to a :class:`Builder`, which gives back the command
  that runs the bot (or why it cannot be built) and a log. The real sandboxed builds plug in here; until then
  :class:`NoBuildNeeded` serves the kits whose bots run from their source (python, stdio).
- **checking**: the built bot plays ``check-bot``'s matches (:func:`arena.check_bot.check_bot`) against the random
  player, with the league's variant and time control and the league's limits, in its sandbox as every bot does.
  A pass makes the version ready; a start fault, a fault in a match, or a bot that does not play the league's
  variant makes it failed, with the first problem as its reason and the whole report kept.

Every step's outcome is one compare-and-set on the version's state in the database; anything that goes wrong (a
damaged archive, a sandbox that cannot start) fails the version with one line, never leaves it between states.
A server killed mid-step leaves the version building or checking: at the next start
:meth:`~arena.league.db.Database.requeue_interrupted` puts it back to uploaded and the pipeline redoes it from its
archive, in a fresh folder.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

import trio

from ..check_bot import CheckReport, check_bot
from ..players.process import BotSpec
from ..referee import TimeControl
from .config import BuildLimits, LeagueConfig
from .db import BUILDING, CHECKING, FAILED, READY, UPLOADED, AsyncDatabase, Database, Version
from .errors import LeagueError, StateError
from .manifest import MANIFEST_NAME, Manifest, parse_manifest
from .store import Store

CHECK_MATCHES = 2
"""Matches of the compliance check per version (as ``arena check-bot``'s default is a few quick ones)."""
LOG_KEPT_BYTES = 256 * 1024
"""The end of a build log kept in the database (a build that writes megabytes keeps its last words)."""
NO_BUILD_KITS = ("python", "stdio")
"""Kits whose bots run from their source with the arena's Python: nothing to build."""


@dataclass(frozen=True)
class BuildResult:
    """What a build gave: the command that runs the bot (from ``folder``), or why there is none, and its log."""

    ok: bool
    reason: str
    """Why the build failed (one line); empty when it succeeded."""
    command: tuple[str, ...]
    folder: Path
    """The bot's folder, visible read-only in its sandbox when it runs."""
    log_path: Path | None


class Builder(Protocol):
    """Builds a version's source (``source``, extracted from the store) in ``work``, within ``limits``."""

    async def build(self, source: Path, manifest: Manifest, work: Path, limits: BuildLimits) -> BuildResult: ...


class NoBuildNeeded:
    """The builder of the kits that need none (python, stdio): the entry must be a file of the version; the bot runs
    as the arena's Python on it. Any other kit fails with the reason that this server builds none of it."""

    async def build(self, source: Path, manifest: Manifest, work: Path, limits: BuildLimits) -> BuildResult:
        log_path = work / "build.log"
        if manifest.kit not in NO_BUILD_KITS:
            return _written(log_path, BuildResult(False, f"this server cannot build the {manifest.kit} kit yet (it "
                                                         f"runs {', '.join(NO_BUILD_KITS)} bots)", (), source,
                                                  log_path))
        entry = source / manifest.entry
        if not entry.is_file():
            return _written(log_path, BuildResult(False, f"the entry {manifest.entry!r} of bot.toml is not a file "
                                                         f"of the version", (), source, log_path))
        return _written(log_path, BuildResult(True, "", (sys.executable, str(entry)), source, log_path))


def _written(log_path: Path, result: BuildResult) -> BuildResult:
    """The no-build builder's log: what it decided, so every version has a build log to read."""
    outcome = "ok: " + " ".join(result.command) if result.ok else "failed: " + result.reason
    log_path.write_text(f"no build step for this kit; {outcome}\n")
    return result


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
            return await self._fail(version, f"build failed: {built.reason}", build_log=log_text)
        version = await self.database.run(Database.transition, version.id, CHECKING, build_log=log_text)
        self.log.info("league_version_checking", version=version.id, bot=bot_name)
        try:
            report = await self._check(version, bot_name, built, served.config)
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
        build, and the end of the build's log."""
        work = self.work / str(version.id)
        source = work / "src"

        def prepare() -> Manifest:
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(mode=0o700)
            os.chmod(work, 0o711)  # the bot's own user (a random one) must reach its folder, and list nothing else
            self.store.extract_to(version.sha256, source)
            open_to_the_bot(source)
            return parse_manifest((source / MANIFEST_NAME).read_bytes())

        manifest = await trio.to_thread.run_sync(prepare)
        built = await self.builder.build(source, manifest, work, config.build)
        return built, await trio.to_thread.run_sync(read_log_end, built.log_path)

    async def _check(self, version: Version, bot_name: str, built: BuildResult, config: LeagueConfig) -> CheckReport:
        manifest = await trio.to_thread.run_sync(
            lambda: parse_manifest((self.work / str(version.id) / "src" / MANIFEST_NAME).read_bytes()))
        spec = BotSpec(name=bot_name, command=built.command, folder=str(built.folder), sandbox=True,
                       limits=config.limits, protocol="stdio" if manifest.kit == "stdio" else "grpc")
        log_dir = self.work / str(version.id) / "check"
        log_dir.mkdir(mode=0o700, exist_ok=True)
        return await check_bot(spec, self.check_matches, time_control_of(config), config.time.startup_ms / 1000,
                               log_dir, variants=[config.variant])


class SourceBots:
    """A ready version's bot as the ladder starts it, from its source folder (``<work>/<id>/src``) as
    :class:`NoBuildNeeded` made it ready: the arena's Python on its entry, gRPC or stdio by its kit. (The seam for
    the sandboxed builds: their bot runs from the version's built folder with the recipe's command instead.)"""

    def __init__(self, work: Path) -> None:
        self.work = work

    def __call__(self, version: Version) -> BotSpec:
        source = self.work / str(version.id) / "src"
        try:
            manifest = parse_manifest((source / MANIFEST_NAME).read_bytes())
        except (OSError, LeagueError) as error:
            raise LeagueError(f"the folder of version {version.id} cannot be read ({_line(error)}): it cannot "
                              f"start") from None
        if manifest.kit not in NO_BUILD_KITS:
            raise LeagueError(f"version {version.id} is of the {manifest.kit} kit, whose built bot this server "
                              f"cannot start yet")
        return BotSpec(name=f"version-{version.id}", command=(sys.executable, str(source / manifest.entry)),
                       folder=str(source), sandbox=True,
                       protocol="stdio" if manifest.kit == "stdio" else "grpc")


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
    for check, variant in zip(report.variants, summary["variants"]):  # reply times: their median and worst only
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
