"""How long a version takes from upload to ready, per kit, with a warm kit cache:
``python -m arena.league.build_bench CACHE [KIT ...]``.

For each kit's example (bots/<kit>/, without what the project's own build made; for the binary kit, the go kit's
static bin/bot with a manifest): the upload is checked and stored (:meth:`Store.add`), extracted
(:meth:`Store.extract_to`) and built in the build sandbox (:func:`build_version`).
A measurement, not a test; it prints one JSON object (to be wired into ``arena bench``). The cache must have been
prepared (:func:`arena.league.build.prepare_kits`).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

import trio

from .build import BuildLimits, KitCache, build_version
from .kits import RECIPES, REPO
from .store import Store

LEFT_OUT = shutil.ignore_patterns("bin", "gen", "node_modules", "target", "dist", "build")


def build_times(cache: Path, kits: Iterable[str] = tuple(RECIPES)) -> dict[str, Any]:
    """Upload-to-ready seconds per kit (stored, extracted, built), and each build's own time; printed as JSON."""
    result: dict[str, Any] = {"kits": {}}
    with tempfile.TemporaryDirectory(prefix="build-bench-") as scratch:
        store = Store(Path(scratch) / "data")
        for kit in kits:
            result["kits"][kit] = trio.run(_one, kit, Path(scratch), store, KitCache(Path(cache)))
    print(json.dumps(result))
    return result


async def _one(kit: str, scratch: Path, store: Store, cache: KitCache) -> dict[str, Any]:
    upload = scratch / f"upload-{kit}"
    if kit == "binary":
        if not (REPO / "bots" / "go" / "bin" / "bot").is_file():
            return {"ok": False, "why": "bots/go/bin/bot is missing: bash bots/build.sh go"}
        upload.mkdir()
        shutil.copy(REPO / "bots" / "go" / "bin" / "bot", upload / "bot")  # with its mode: the archive checks it
        (upload / "bot.toml").write_text('kit = "binary"\nentry = "bot"\nvariants = ["draw"]\n')
    else:
        shutil.copytree(REPO / "bots" / kit, upload, ignore=LEFT_OUT)
    work = scratch / f"work-{kit}"
    work.mkdir()
    started = time.perf_counter()
    stored = store.add(upload)
    store.extract_to(stored.sha256, work / "source")
    built = await build_version(work / "source", stored.manifest, work, cache, BuildLimits(), work / "build.log")
    total = time.perf_counter() - started
    return {"ok": built.ok, "why": built.why, "upload_to_ready_s": round(total, 2), "build_s": round(built.seconds, 2)}


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m arena.league.build_bench CACHE [KIT ...]", file=sys.stderr)
        return 2
    build_times(Path(argv[0]), argv[1:] or tuple(RECIPES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
