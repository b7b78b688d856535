"""Building a league version: its kit's recipe (:mod:`arena.league.kits`) run in the build sandbox
(:mod:`arena.sandbox.build`), offline, with the kit's pre-fetched cache read-only; and the operator's
:func:`prepare_kits`, which fills that cache once, with the network.

The league's version pipeline calls :func:`build_version` with a version's extracted files; the result says whether it
built, why not in one line, and the command (and folder) that run the built bot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..sandbox.build import BuildJob, BuildLimits, inside_path, run_build
from ..sandbox.contain import SandboxError
from ..sandbox.host import SandboxUnavailable
from .errors import LeagueError
from .kits import RECIPES, REPO, Recipe
from .manifest import Manifest

__all__ = ["BuildLimits", "BuildResult", "KitCache", "KitCacheError", "build_version", "prepare_kits"]


class KitCacheError(LeagueError):
    """A kit's cache that is missing or cannot be filled; one line for the operator."""


@dataclass(frozen=True)
class KitCache:
    """The operator's cache folder, one subfolder per kit (``<root>/go/mod``, ``<root>/go/build``, ...)."""

    root: Path

    def of(self, kit: str) -> Path:
        return Path(self.root).resolve() / kit


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    why: str
    """One line: "built in 9.8 s", or why the build failed (the log has the rest)."""
    command: tuple[str, ...]
    """The built bot's command, relative to ``folder`` (run it with ``cwd=folder``); empty when the build failed."""
    folder: Path | None
    """The built bot's folder (the version's files and what its build made), read-only to its bot; None on failure."""
    protocol: str
    """``grpc`` or ``stdio``: how the arena talks to the built bot."""
    log: Path
    seconds: float = 0.0


async def build_version(source: Path, manifest: Manifest, work: Path, cache: KitCache,
                        limits: BuildLimits = BuildLimits(), log: Path | None = None,
                        protected: Sequence[Path] = ()) -> BuildResult:
    """Build the version whose files are in ``source`` (e.g. from ``Store.extract_to``; left unchanged) into
    ``work/bot`` (``work`` must exist; ``work/bot`` must not), contained and offline; its output goes to ``log``
    (default ``work/build.log``). ``protected`` are paths no build may see (the server's token, its data folder).
    Never raises for the version's faults: a failed build is a result with its reason."""
    log = log or Path(work) / "build.log"
    if (Path(work) / "bot").exists():
        raise ValueError(f"{Path(work) / 'bot'} exists already: each build needs a work folder of its own")
    recipe = RECIPES.get(manifest.kit)
    if recipe is None:
        return _failed(log, f"the {manifest.kit} kit cannot be built by this league yet (it builds "
                            f"{', '.join(RECIPES)})", recipe)
    if not (Path(source) / manifest.entry).is_file():
        return _failed(log, f"the entry {manifest.entry} is not a file of the version", recipe)
    kit_cache = cache.of(manifest.kit)
    job = _job(recipe, manifest, kit_cache)
    out = Path(work) / "bot"
    try:
        outcome = await run_build(job, Path(source), out, limits, log, protected)
    except (SandboxError, SandboxUnavailable) as error:
        return _failed(log, f"cannot contain the build: {error}", recipe)
    if not outcome.ok:
        return BuildResult(False, outcome.why, (), None, recipe.protocol, log, outcome.seconds)
    command = tuple(_fill(word, manifest, kit_cache) for word in recipe.run)
    return BuildResult(True, outcome.why, command, out, recipe.protocol, log, outcome.seconds)


def _job(recipe: Recipe, manifest: Manifest, kit_cache: Path) -> BuildJob:
    read_only = [Path(t) for t in recipe.toolchains if Path(t).exists()]
    if recipe.env or "{cache}" in recipe.script:
        read_only.append(kit_cache)
    return BuildJob(script=_fill(recipe.script, manifest, kit_cache),
                    env={k: _fill(v, manifest, kit_cache) for k, v in recipe.env.items()}, read_only=read_only)


def _fill(text: str, manifest: Manifest, kit_cache: Path) -> str:
    """A recipe's placeholders. The entry is a checked relative path (no quote, no '..': see manifest.path_problem),
    quoted anyway since the script is shell."""
    entry_dir = manifest.entry.rpartition("/")[0] or "."
    return (text.replace("{entry_dir}", _quote(entry_dir)).replace("{entry}", _quote(manifest.entry))
            .replace("{cache}", str(kit_cache)).replace("{proto}", str(REPO / "proto"))
            .replace("{path}", inside_path()))


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _failed(log: Path, why: str, recipe: Recipe | None) -> BuildResult:
    with open(log, "ab") as file:
        file.write(f"--- the build failed: {why} ---\n".encode())
    return BuildResult(False, why, (), None, recipe.protocol if recipe else "grpc", log)


def prepare_kits(cache: Path, kits: Iterable[str] = tuple(RECIPES), env: dict[str, str] | None = None) -> None:
    """Fill ``cache`` with each kit's dependencies, fetched for its example in bots/<kit>/ (with the network: the
    operator runs this once, outside any sandbox, before builds that have none). ``env`` adds to the environment
    (e.g. ``GOPROXY`` for a mirror). A KitCacheError names the kit and the step that failed."""
    root = KitCache(Path(cache))
    for kit in kits:
        recipe = RECIPES.get(kit)
        if recipe is None:
            raise KitCacheError(f"unknown kit {kit!r}; this league builds {', '.join(RECIPES)}")
        if not recipe.prepare:
            continue
        kit_cache = root.of(kit)
        kit_cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f"prepare-{kit}-") as scratch:
            example = Path(scratch) / kit
            shutil.copytree(REPO / "bots" / kit, example, ignore=shutil.ignore_patterns("bin", "gen", "node_modules",
                                                                                        "target"))
            _prepare_in(recipe, example, kit_cache, env or {})
        _readable(kit_cache)


def _prepare_in(recipe: Recipe, example: Path, kit_cache: Path, extra: dict[str, str]) -> None:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")])
    env = {**os.environ, **{k: v.replace("{cache}", str(kit_cache)).replace("{path}", path)
                            for k, v in recipe.prepare_env.items()}, **extra}
    for step in recipe.prepare:
        words = [w.replace("{cache}", str(kit_cache)) for w in step]
        result = subprocess.run(words, cwd=example, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            why = (result.stderr.strip().splitlines() or ["no message"])[-1]
            raise KitCacheError(f"kit {recipe.kit}: {' '.join(step[:3])} failed (exit {result.returncode}): {why}")


def _readable(folder: Path) -> None:
    """Builds run as users of their own: every file of the cache readable, every folder searchable, by all."""
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(Path(root) / name, os.stat(Path(root) / name).st_mode | 0o755)
        for name in files:
            path = Path(root) / name
            if not path.is_symlink():
                os.chmod(path, os.stat(path).st_mode | 0o444)
    os.chmod(folder, os.stat(folder).st_mode | 0o755)
