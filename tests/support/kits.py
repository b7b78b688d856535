"""The league's kit caches for the build tests, prepared once per machine from its own caches (no network)."""

from __future__ import annotations

import fcntl
import hashlib
import shutil
from pathlib import Path

from support.paths import ROOT

GO_MODULE_DOWNLOADS = Path.home() / ".cache" / "dominoes-arena" / "go" / "mod" / "cache" / "download"
"""The go modules bots/build.sh downloaded: a file:// GOPROXY for preparing the league's go cache offline."""


def prepared_once(kit: str, env: dict[str, str]) -> Path:
    """A kit cache prepared by prepare_kits, kept between test runs (as bots/build.sh keeps its caches) under a
    name that changes with the kit's example and the recipes: preparing go compiles gRPC, minutes on a busy
    machine, while a build from the prepared cache takes seconds."""
    from arena.league.build import prepare_kits

    inputs = hashlib.sha256()
    for path in sorted((ROOT / "bots" / kit).glob("*")) + [ROOT / "arena" / "league" / "kits.py"]:
        if path.is_file():
            inputs.update(path.name.encode() + path.read_bytes())
    cache = Path.home() / ".cache" / "dominoes-arena" / "league-test-kits" / f"{kit}-{inputs.hexdigest()[:16]}"
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / f"{cache.name}.lock", "w") as lock:  # test runs side by side prepare it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cache / ".prepared").exists():
            shutil.rmtree(cache, ignore_errors=True)
            prepare_kits(cache, [kit], env=env)
            (cache / ".prepared").touch()
    return cache
