"""The league's kit caches for the build tests, prepared once per machine from its own caches (no network), and
the rule that a kit's build test skips where its tools are missing, but fails in CI."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
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
    from arena.league.build import prepare_kits
    from arena.league.kits import RECIPES

    inputs = hashlib.sha256(repr(RECIPES[kit]).encode())  # the kit's recipe, its steps and scripts
    inputs.update((ROOT / "arena" / "league" / "build.py").read_bytes())  # how recipes are filled in and run
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
            (cache / ".prepared").touch()
    return cache


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
