"""The league's kit caches for the build tests, prepared once per machine from its own caches (no network), and
the rule that a kit's build test skips where its tools are missing, but fails in CI."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from support.paths import ROOT

REPO = ROOT
GO_MODULE_DOWNLOADS = Path.home() / ".cache" / "dominoes-arena" / "go" / "mod" / "cache" / "download"
"""The go modules bots/build.sh downloaded: a file:// GOPROXY for preparing the league's go cache offline."""


def prepared_once(kit: str, env: dict[str, str], seeds: dict[str, Path] | None = None) -> Path:
    """A kit cache prepared by prepare_kits, kept between test runs (as bots/build.sh keeps its caches) under a
    name that changes with the kit's example and its recipe: preparing go compiles gRPC, and rust, cpp and java
    build their example cold in the sandbox, minutes on a busy machine, while a build from the prepared cache takes
    seconds. ``seeds`` are copies of the machine's own caches put in first (``{"home": ~/.cache/...}`` becomes
    ``<cache>/<kit>/home``), so that preparing needs no network."""
    from arena.league.intake.build import PREPARE_FORMAT, prepare_kits
    from arena.league.intake.kits import RECIPES
    from arena.sandbox.build import proto_digest

    inputs = hashlib.sha256(repr(RECIPES[kit]).encode())  # the kit's recipe, its steps and scripts
    inputs.update(f"prepare format {PREPARE_FORMAT}".encode())  # how recipes are filled in and warm folders made
    if RECIPES[kit].warm:
        inputs.update(proto_digest().encode())  # the protocol its warm folder is built from
    for path in sorted((REPO / "bots" / kit).glob("*")):
        if path.is_file():
            inputs.update(path.name.encode() + path.read_bytes())
    cache = Path.home() / ".cache" / "dominoes-arena" / "league-test-kits" / f"{kit}-{inputs.hexdigest()[:16]}"
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{cache}.lock", "w") as lock:  # test runs of other checkouts share these caches
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cache / ".prepared").exists():
            shutil.rmtree(cache, ignore_errors=True)
            for name, seed in (seeds or {}).items():
                shutil.copytree(seed, cache / kit / name, symlinks=True)
            prepare_kits(cache, [kit], env=env)
        (cache / ".prepared").touch()  # its last use: what forget_unused reads
    forget_unused(cache.parent, kit)
    return cache


UNUSED_DAYS = 14
"""A kit's test cache unused for this long (its recipe or example changed since) is removed, as bots/build.sh
forgets its old build folders."""


def forget_unused(folder: Path, kit: str) -> None:
    """Remove the kit's caches whose last use is over :data:`UNUSED_DAYS` old, each under its own lock (taken
    without waiting: a cache in use by another run is left alone)."""
    for marker in folder.glob(f"{kit}-*/.prepared"):
        cache = marker.parent
        if time.time() - marker.stat().st_mtime < UNUSED_DAYS * 86400:
            continue
        with open(f"{cache}.lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(cache, ignore_errors=True)


def unavailable(reason: str) -> None:
    """Skip, or fail in CI (``CI=true``), where every kit's build must be tested."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"a league build test cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


MACHINE_CACHE = Path.home() / ".cache" / "dominoes-arena"


def need(tools: tuple[str, ...], folders: tuple[Path, ...] = ()) -> None:
    """The kit's tools on the PATH (or rustup's) and the machine's caches that bots/build.sh fills."""
    for tool in tools:
        if shutil.which(tool) is None and not (Path.home() / ".cargo" / "bin" / tool).exists():
            unavailable(f"{tool} is not installed")
    for folder in folders:
        if not folder.is_dir():
            unavailable(f"{folder} is missing: run bash bots/build.sh first")
