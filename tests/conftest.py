import fcntl
import hashlib
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

REPO = Path(__file__).resolve().parents[1]
GO_MODULE_DOWNLOADS = Path.home() / ".cache" / "dominoes-arena" / "go" / "mod" / "cache" / "download"


@pytest.fixture(scope="session")
def go_cache():
    """The go kit's cache, prepared from the kit's example; the module downloads come from the machine's own module
    cache (a file:// GOPROXY), so the test needs no network. (Shared by the build tests and the league's end-to-end
    tests.)"""
    from arena.league.build import KitCache

    if shutil.which("go") is None and not Path("/usr/local/go/bin/go").exists():
        pytest.skip("go is not installed")
    if not GO_MODULE_DOWNLOADS.is_dir():
        pytest.skip("bash bots/build.sh go has not filled ~/.cache/dominoes-arena/go yet")
    return KitCache(prepared_once("go", {"GOPROXY": f"file://{GO_MODULE_DOWNLOADS}", "GOSUMDB": "off"}))


def prepared_once(kit: str, env: dict[str, str]) -> Path:
    """A kit cache prepared by prepare_kits, kept between test runs (as bots/build.sh keeps its caches) under a
    name that changes with the kit's example and the recipes: preparing go compiles gRPC, minutes on a busy
    machine, while a build from the prepared cache takes seconds."""
    from arena.league.build import prepare_kits

    inputs = hashlib.sha256()
    for path in sorted((REPO / "bots" / kit).glob("*")) + [REPO / "arena" / "league" / "kits.py"]:
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
