"""Building a league version: its kit's recipe (:mod:`arena.league.intake.kits`) run in the build sandbox
(:mod:`arena.sandbox.build`), offline, with the kit's pre-fetched cache read-only; and the operator's
:func:`prepare_kits`, which fills that cache once, with the network.

The league's version pipeline calls :func:`build_version` with a version's extracted files; the result says whether it
built, why not in one line, and the command (and folder) that run the built bot.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.league.intake.kits import RECIPES, REPO, Recipe, rust_host, rust_toolchain
from arena.league.rules.errors import LeagueError
from arena.league.rules.manifest import (
    DEFAULT_INTERPRETER,
    STDIO,
    Manifest,
    ManifestError,
    check_static_elf,
    parse_manifest,
)
from arena.sandbox.build import (
    DEFAULT_BUILD_LIMITS,
    PROTO_INSIDE,
    BuildJob,
    BuildLimits,
    inside_path,
    proto_digest,
    run_build,
)
from arena.sandbox.contain import SandboxError, system_program_problem
from arena.sandbox.host import SandboxUnavailable

PREPARE_FORMAT = 3
"""The way a kit's cache is prepared and a recipe filled in; bumped when a prepared cache (its warm folders) no longer
fits the builds (2: builds name the .proto files at /proto; 3: a prepared cache carries its completion file), so caches
kept between runs are prepared again."""
COMPLETE = ".complete"
"""The file a kit's cache gets last, in the folder it is filled in before that folder is renamed into place: a kit's
folder without it (filled by hand, by an older arena, or half by an interrupted prepare) is not prepared."""

__all__ = ["BuildLimits", "BuildResult", "KitCache", "KitCacheError", "build_version", "prepare_kits"]


class KitCacheError(LeagueError):
    """A kit's cache that is missing or cannot be filled; one line for the operator."""


@dataclass(frozen=True)
class KitCache:
    """The operator's cache folder, one subfolder per kit (``<root>/go/mod``, ``<root>/go/build``, ...)."""

    root: Path

    def of(self, kit: str) -> Path:
        """The kit's folder with every link resolved: the build sees it at that path (a link would lead nowhere
        inside the sandbox)."""
        return (Path(self.root) / kit).resolve()

    def prepared(self, kit: str) -> bool:
        """Whether the kit's cache is complete: :func:`prepare_kits` puts it in place, with its :data:`COMPLETE`
        file, only once every step filled it, so a server never builds against half a cache."""
        return (self.of(kit) / COMPLETE).is_file()


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
                        limits: BuildLimits = DEFAULT_BUILD_LIMITS, log: Path | None = None,
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
    problem = _entry_check(recipe, Path(source) / manifest.entry, manifest)
    if problem:
        return _failed(log, problem, recipe)
    kit_cache = cache.of(manifest.kit)
    if recipe.warm and not warm_folder(kit_cache).is_dir():
        _log_line(log, "no warm build folder for this protocol in the kit cache (arena league prepare-kits makes "
                       "one): a cold build")  # slow, not wrong: the operator's hint, where the author reads the build
    job = _job(recipe, manifest, kit_cache)
    out = Path(work) / "bot"
    try:
        outcome = await run_build(job, Path(source), out, limits, log, protected)
    except (SandboxError, SandboxUnavailable) as error:
        return _failed(log, f"cannot contain the build: {error}", recipe)
    if not outcome.ok:
        return BuildResult(False, outcome.why, (), None, recipe.protocol, log, outcome.seconds)
    command = tuple(_fill(word, manifest, kit_cache, quote=False) for word in recipe.run)
    return BuildResult(True, outcome.why, command, out, recipe.protocol, log, outcome.seconds)


def _entry_check(recipe: Recipe, entry: Path, manifest: Manifest) -> str | None:
    """Why the entry cannot be built by ``recipe`` before anything runs (the binary kit's static ELF, the stdio kit's
    interpreter), or None."""
    if recipe.check == "interpreter":
        return interpreter_check(manifest.interpreter or DEFAULT_INTERPRETER, manifest.kit)
    if recipe.check != "static-elf":
        return None
    try:
        with open(entry, "rb") as stream:
            check_static_elf(stream, entry.stat().st_size)
    except ManifestError as error:
        return f"the entry {entry.name}: {error}"
    return None


def interpreter_check(interpreter: str, kit: str = STDIO) -> str | None:
    """Why a stdio version's interpreter cannot run it in its sandbox (it is not a program of the sandbox's read-only
    system view: :func:`arena.sandbox.contain.system_program_problem`), in one line, or None. Checked at the build
    and again before every start of the built bot (:func:`arena.league.intake.pipeline.runnable_spec`)."""
    problem = system_program_problem(interpreter)
    if problem is None:
        return None
    return f"the {kit} kit's interpreter cannot run in the bot's sandbox: {problem}"


def _job(recipe: Recipe, manifest: Manifest, kit_cache: Path, script: str | None = None) -> BuildJob:
    read_only = [Path(_fill(t, manifest, kit_cache)) for t in recipe.toolchains]
    read_only = [path for path in read_only if path.exists()]
    if kit_cache.exists():
        read_only.append(kit_cache)
    # The build's scripts name the .proto files at /proto, the same path from every checkout of the arena: a warm
    # folder prepared from one checkout (CMake's records the path) stays warm for another.
    return BuildJob(script=_fill(recipe.script if script is None else script, manifest, kit_cache, proto=PROTO_INSIDE),
                    env={k: _fill(v, manifest, kit_cache, proto=PROTO_INSIDE) for k, v in recipe.env.items()},
                    read_only=read_only)


def _fill(text: str, manifest: Manifest, kit_cache: Path, quote: bool = True, proto: str | None = None) -> str:
    """A recipe's placeholders. The entry is a checked relative path (no quote, no '..': see manifest.path_problem),
    quoted anyway in a script, since it is shell; not in the run command, whose words are the program's own.
    ``proto``: where the .proto files are for this text (default: the arena's own folder, as a running bot sees
    them)."""
    entry_dir = manifest.entry.rpartition("/")[0] or "."
    shell = shlex.quote if quote else str
    if "{rust}" in text:
        text = text.replace("{rust}", rust_toolchain())
    interpreter = manifest.interpreter or DEFAULT_INTERPRETER
    return (text.replace("{entry_dir}", shell(entry_dir)).replace("{entry}", shell(manifest.entry))
            .replace("{interpreter}", shell(interpreter))
            .replace("{warm}", str(warm_folder(kit_cache))).replace("{cache}", str(kit_cache)).replace("{proto}", proto or str(REPO / "proto"))
            .replace("{path}", inside_path()))


def warm_folder(kit_cache: Path) -> Path:
    """Where a kit's warm build folder for the arena's current .proto files is (see kits.WARM)."""
    return Path(kit_cache) / f"warm-{proto_digest()}"


def _log_line(log: Path, text: str) -> None:
    with open(log, "ab") as file:
        file.write(f"--- {text} ---\n".encode())


def _failed(log: Path, why: str, recipe: Recipe | None) -> BuildResult:
    _log_line(log, f"the build failed: {why}")
    return BuildResult(False, why, (), None, recipe.protocol if recipe else "grpc", log)


def prepare_kits(cache: Path, kits: Iterable[str] = tuple(RECIPES), env: dict[str, str] | None = None,
                 limits: BuildLimits | None = None) -> None:
    """Fill ``cache`` with each kit's dependencies, fetched for its example in bots/<kit>/ (with the network: the
    operator runs this once, outside any sandbox, before builds that have none), then, for the compiled kits, build
    the example once in the build sandbox, offline, as a version's build runs, keeping its warm build folder.
    ``env`` adds to the environment of the fetching steps (e.g. ``GOPROXY`` for a mirror); ``limits`` are the warm
    builds' (default: every CPU, 30 minutes). A KitCacheError names the kit and the step that failed.

    Each kit's cache is filled in a folder beside its own and renamed into place, marked complete, only when every
    step is done: a server started meanwhile sees the cache that was there (or none), never half of one, and an
    interrupted prepare leaves nothing that counts (its folder is removed by the next one)."""
    root = KitCache(Path(cache))
    for kit in kits:
        recipe = RECIPES.get(kit)
        if recipe is None:
            raise KitCacheError(f"unknown kit {kit!r}; this league builds {', '.join(RECIPES)}")
        if not recipe.needs_cache:
            continue
        folder = root.of(kit)
        folder.parent.mkdir(parents=True, exist_ok=True)
        with _kit_lock(folder):
            _forget_unfinished(folder)
            filling = _start_filling(folder)
            try:
                _fill_kit(recipe, filling, env or {}, limits or WARM_LIMITS)
                (filling / COMPLETE).write_text(f"prepared by arena league prepare-kits (format {PREPARE_FORMAT})\n")
                os.chmod(filling / COMPLETE, 0o644)
                _put_in_place(filling, folder)
            except BaseException:
                shutil.rmtree(filling, ignore_errors=True)
                raise


def _fill_kit(recipe: Recipe, kit_cache: Path, env: dict[str, str], limits: BuildLimits) -> None:
    """The recipe's prepare steps run on a copy of its example, then its warm build; the cache readable by all."""
    with tempfile.TemporaryDirectory(prefix=f"prepare-{recipe.kit}-") as scratch:
        # bots/<kit> and proto/ side by side, as in the project: the examples find the protocol at ../../proto.
        example = Path(scratch) / "bots" / recipe.kit
        shutil.copytree(REPO / "bots" / recipe.kit, example, ignore=shutil.ignore_patterns("bin", "gen", "node_modules",
                                                                                             "target", "dist"))
        (Path(scratch) / "proto").symlink_to(REPO / "proto")
        _prepare_in(recipe, example, kit_cache, env)
        _readable(kit_cache)
        if recipe.warm:
            _warm(recipe, example, Path(scratch), kit_cache, limits)
    _readable(kit_cache)


FILLING = ".{kit}.filling-"
"""How the folder a kit's cache is filled in is named, beside the kit's folder (a dot: no kit's name)."""
ASIDE = ".{kit}.old-"
"""How the replaced cache is named for the moment between the two renames, before it is removed."""


@contextlib.contextmanager
def _kit_lock(folder: Path) -> Iterator[None]:
    """One prepare of a kit at a time (a file lock beside its folder): what another left behind is then surely
    unfinished."""
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _forget_unfinished(folder: Path) -> None:
    """Remove what an interrupted prepare of the kit left beside its folder (a folder being filled, a replaced one)."""
    for pattern in (FILLING, ASIDE):
        for left in folder.parent.glob(pattern.format(kit=folder.name) + "*"):
            shutil.rmtree(left, ignore_errors=True)


def _start_filling(folder: Path) -> Path:
    """A new folder beside the kit's to fill, starting from what the kit's folder holds (what was fetched before
    is not fetched again): a complete cache is copied, and keeps serving until the new one replaces it; an
    incomplete one (seeded by hand, or left half-filled by an older arena) counts for nothing and is moved."""
    filling = Path(tempfile.mkdtemp(prefix=FILLING.format(kit=folder.name), dir=folder.parent))
    if (folder / COMPLETE).is_file():
        shutil.copytree(folder, filling, symlinks=True, dirs_exist_ok=True)
        (filling / COMPLETE).unlink()
    elif folder.is_dir():
        os.rename(folder, filling)  # over the empty folder mkdtemp made
    return filling


def _put_in_place(filled: Path, folder: Path) -> None:
    """The filled folder becomes the kit's: the old one is renamed aside, the new one into its place, the old one
    removed. Between the two renames the kit has no cache, never half of one."""
    aside = filled.with_name(filled.name.replace(FILLING.format(kit=folder.name), ASIDE.format(kit=folder.name)))
    if folder.exists():
        os.rename(folder, aside)
    os.rename(filled, folder)
    shutil.rmtree(aside, ignore_errors=True)


WARM_LIMITS = BuildLimits(cpus=float(os.cpu_count() or 1), timeout_s=1800.0, disk_mb=2048, memory_mb=3072)
"""A cold build of a kit's example (tonic and tokio, gRPC's generated C++) is the longest a kit's build takes."""


def _warm(recipe: Recipe, example: Path, scratch: Path, kit_cache: Path, limits: BuildLimits) -> None:
    """Build the example in the build sandbox with the recipe's warm script; its ``.warm`` folder becomes
    :func:`warm_folder` (older ones, made for other .proto files, are removed). A failure here is the operator's to see: the log's last lines are in the error."""
    manifest = parse_manifest((example / "bot.toml").read_bytes())
    warm = warm_folder(kit_cache)
    for old in [kit_cache / "warm", *kit_cache.glob("warm-*")]:
        shutil.rmtree(old, ignore_errors=True)
    out, log = scratch / "warm-out", scratch / "warm.log"
    outcome = trio.run(run_build, _job(recipe, manifest, kit_cache, recipe.warm), example, out, limits, log)
    if not outcome.ok:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        raise KitCacheError(f"kit {recipe.kit}: the warm build of its example failed ({outcome.why}): {tail}")
    if (out / ".warm").is_dir():
        shutil.move(out / ".warm", warm)


def _prepare_in(recipe: Recipe, example: Path, kit_cache: Path, extra: dict[str, str]) -> None:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")])
    env = {**os.environ, **{k: _fill_prepare(v, kit_cache).replace("{path}", path)
                            for k, v in recipe.prepare_env.items()}, **extra}
    for step in recipe.prepare:
        words = [_fill_prepare(w, kit_cache) for w in step]
        program = shutil.which(words[0], path=env.get("PATH"))
        result = subprocess.run([program or words[0], *words[1:]], cwd=example, env=env, capture_output=True,
                                text=True)
        if result.returncode != 0:
            why = (result.stderr.strip().splitlines() or ["no message"])[-1]
            raise KitCacheError(f"kit {recipe.kit}: {' '.join(step[:3])} failed (exit {result.returncode}): {why}")


def _fill_prepare(text: str, kit_cache: Path) -> str:
    text = text.replace("{rust_host}", rust_host()) if "{rust_host}" in text else text
    text = text.replace("{rust}", rust_toolchain()) if "{rust}" in text else text
    return text.replace("{cache}", str(kit_cache))


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
