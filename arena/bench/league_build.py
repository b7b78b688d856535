"""How long a version takes from upload to ready, per kit, with a warm kit cache:
``arena bench league-build [--cache DIR] [--kits K1,K2]`` (or ``python -m arena.bench.league_build CACHE [KIT ...]``).

For each kit's example (bots/<kit>/, without what the project's own build made; for the binary kit, the go kit's
static bin/bot with a manifest), the server's own steps: the upload
is checked and stored (:meth:`Store.add`), becomes a version in a scratch SQLite database, and the real
:class:`~arena.league.intake.pipeline.Pipeline` takes it through its sandboxed offline build and its check (two matches of
Draw against the random player) to ready. A measurement, not a test; the cache must have been prepared
(``arena league prepare-kits``): a kit whose cache is missing is reported with that line instead of a time.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import trio

from arena.league.intake.build import KitCache
from arena.league.intake.kits import RECIPES, REPO
from arena.league.intake.pipeline import Pipeline, SandboxedBuilder, Served, kit_cache_problem
from arena.league.intake.store import Store
from arena.league.rules.config import league_from_dict
from arena.league.storage.db import AsyncDatabase, Database, sqlite_url

LEFT_OUT = shutil.ignore_patterns("bin", "gen", "node_modules", "target", "dist", "build")
BENCH_LEAGUE = {"name": "bench", "variant": "draw", "time": {"startup_ms": 60000}}


class _Quiet:
    """The pipeline's log, silent: the bench prints only its numbers (a failure's reason is in them)."""

    def info(self, event: str, **values: Any) -> None:
        pass

    warning = error = info


def build_times(cache: Path, kits: Iterable[str] = tuple(RECIPES)) -> dict[str, Any]:
    """Upload-to-ready seconds per kit (stored, built, checked), each build's own seconds, and the state reached."""
    return trio.run(_all, Path(cache), list(kits))


async def _all(cache: Path, kits: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {"cache": str(cache), "kits": {}}
    with tempfile.TemporaryDirectory(prefix="build-bench-") as scratch:
        data = Path(scratch) / "data"
        store = Store(data)
        database = await AsyncDatabase.open(sqlite_url(data))
        try:
            config = league_from_dict(BENCH_LEAGUE)
            league = await database.run(Database.ensure_league, config.name, config.title, config.variant)
            served = Served(config, league.id)
            pipeline = Pipeline(database, store, {config.name: served}, data / "versions",
                                SandboxedBuilder(KitCache(cache), (data,)), _Quiet())
            author = await database.run(Database.add_author, "bench", hashlib.sha256(b"bench").hexdigest())
            for kit in kits:
                if (problem := kit_cache_problem(KitCache(cache), kit)) is not None:
                    result["kits"][kit] = {"state": "not run", "why": problem}
                    continue
                result["kits"][kit] = await _one(kit, Path(scratch), store, database, pipeline, served, author.id)
        finally:
            await database.close()
    return result


async def _one(kit: str, scratch: Path, store: Store, database: AsyncDatabase, pipeline: Pipeline, served: Served,
               author_id: int) -> dict[str, Any]:
    upload = scratch / f"upload-{kit}"
    if kit == "binary":
        if not (REPO / "bots" / "go" / "bin" / "bot").is_file():
            return {"state": "failed", "why": "bots/go/bin/bot is missing: bash bots/build.sh go"}
        upload.mkdir()
        shutil.copy(REPO / "bots" / "go" / "bin" / "bot", upload / "bot")  # with its mode: the archive checks it
        (upload / "bot.toml").write_text('kit = "binary"\nentry = "bot"\nvariants = ["draw"]\n')
    else:
        shutil.copytree(REPO / "bots" / kit, upload, ignore=LEFT_OUT)
    started = time.perf_counter()
    stored = await trio.to_thread.run_sync(store.add, upload)
    bot = await database.run(Database.add_bot, served.league_id, author_id, f"bench-{kit}")
    version, _ = await database.run(Database.add_version, bot.id, stored.sha256)
    version = await pipeline.process(version, served, bot.name)
    total = time.perf_counter() - started
    return {"state": version.state, "why": version.reason or "", "upload_to_ready_s": round(total, 2),
            "build": _build_line(version.build_log or "")}


def _build_line(log: str) -> str:
    """The build log's closing line ("built in 6.1 s", or why it failed)."""
    for line in reversed(log.splitlines()):
        if line.startswith("--- the build "):
            return line.strip("- ").removeprefix("the build ")
    return ""


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m arena.bench.league_build CACHE [KIT ...]", file=sys.stderr)
        return 2
    print(json.dumps(build_times(Path(argv[0]), argv[1:] or tuple(RECIPES))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
