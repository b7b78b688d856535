"""``arena bench ...``: benchmarks that print their numbers as JSON."""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from arena import guest
from arena.bench.cluster import bench_cluster
from arena.bench.dial_in import bench_dial_in
from arena.bench.env import bench_env
from arena.bench.frameworks import FRAMEWORKS
from arena.bench.ladder import bench_ladder
from arena.bench.league_build import build_times
from arena.bench.league_db import results_write_rate
from arena.bench.matchmaking import bench_matchmaking
from arena.bench.ratings import bench_ratings
from arena.bench.referee import (
    bench_engine,
    bench_export,
    bench_protocol,
    bench_records,
    bench_schedule,
    bench_tournament,
    bench_workers,
)
from arena.bench.referee_parts import bench_referee_parts, parts_table
from arena.bench.search import DEFAULT_CASES, bench_search
from arena.cli.options import options_from, require_sandbox
from arena.cli.parsers.bench import GO_RANDOM_BOT
from arena.cluster import require_ray
from arena.errors import UsageError
from arena.league.intake.kits import RECIPES
from arena.league.intake.pipeline import default_kit_cache
from arena.league.storage.db import sqlite_url
from arena.tournament.workers import MAX_WORKERS


def cmd_bench_engine(args: argparse.Namespace) -> int:
    print(json.dumps(bench_engine(args.variant, args.players, args.seconds, args.seed, options_from(args))))
    return 0


def cmd_bench_env(args: argparse.Namespace) -> int:
    frameworks = tuple(f.strip() for f in args.frameworks.split(",") if f.strip())
    unknown = [f for f in frameworks if f not in FRAMEWORKS]
    if unknown:
        raise UsageError(f"--frameworks: expected some of {', '.join(FRAMEWORKS)}, got {', '.join(unknown)}")
    print(json.dumps(bench_env(args.variant, args.players, args.seconds, options_from(args), frameworks), indent=2))
    return 0


def cmd_bench_referee_parts(args: argparse.Namespace) -> int:
    result = bench_referee_parts(args.matches, args.variant, args.players)
    print(json.dumps(result, indent=2) if args.json else parts_table(result))
    return 0


def bench_sandboxes(choice: str) -> tuple[bool, ...]:
    """``both`` (the default: without, then with, in one run), ``on`` or ``off``."""
    sandboxes = {"both": (False, True), "on": (True,), "off": (False,)}[choice]
    if True in sandboxes:
        require_sandbox(True)
    return sandboxes


def cmd_bench_protocol(args: argparse.Namespace) -> int:
    command = shlex.split(args.bot) if args.bot else [sys.executable, "bots/python/random_bot.py"]
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    if args.dial_in:
        print(json.dumps(guest.run(bench_dial_in, command, args.seconds, concurrencies, args.dial_in == "itself"),
                         indent=2))
        return 0
    sandboxes = bench_sandboxes(args.sandbox)
    print(json.dumps(guest.run(functools.partial(bench_protocol, command, args.seconds, concurrencies, sandboxes,
                                                 repeats=args.repeats)), indent=2))
    return 0


def cmd_bench_tournament(args: argparse.Namespace) -> int:
    bot = shlex.split(args.bot) if args.bot else [sys.executable, str(Path("bots/python/random_bot.py").resolve())]
    sizes = [int(g) for g in args.games.split(",")]
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    print(json.dumps(bench_tournament(sizes, concurrencies, bot, bench_sandboxes(args.sandbox)), indent=2))
    return 0


def worker_counts(text: str) -> list[int]:
    """``--workers 1,2``: worker (or actor) counts from 1 to :data:`MAX_WORKERS`, or one usage line."""
    counts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() and 1 <= int(part) <= MAX_WORKERS for part in counts):
        raise UsageError(f"--workers must be worker counts from 1 to {MAX_WORKERS}, comma-separated, got {text!r}")
    return [int(part) for part in counts]


def fast_bot(command: str) -> list[str]:
    """The benchmarks' fast bot as a command whose program exists (its path made absolute: a Ray actor runs it from
    a folder of Ray's), or one usage line."""
    bot = shlex.split(command)
    if not bot:
        return bot
    found = shutil.which(bot[0])
    if not found:
        raise UsageError(f"the bot's program {bot[0]!r} is not found (the Go kit's is built by scripts/setup.sh)")
    return [str(Path(found).resolve()) if "/" in bot[0] else bot[0], *bot[1:]]


def cmd_bench_workers(args: argparse.Namespace) -> int:
    workers = worker_counts(args.workers)
    if max(workers) > args.concurrency:
        raise UsageError(f"--workers {max(workers)} is more than --concurrency {args.concurrency}: each worker needs a "
                         f"game at a time")
    bot = fast_bot(args.bot)
    require_sandbox(True)
    print(json.dumps(bench_workers(args.games, args.concurrency, workers, bot, args.repeats), indent=2))
    return 0


def cmd_bench_search(args: argparse.Namespace) -> int:
    cases = tuple(case for case in DEFAULT_CASES if not args.variant or case[0] in args.variant)
    print(json.dumps(bench_search(cases, move_ms=args.move_ms, decisions=args.decisions), indent=2))
    return 0


def cmd_bench_records(args: argparse.Namespace) -> int:
    print(json.dumps(bench_records(args.games, args.verify_games, args.jobs, args.run), indent=2))
    return 0


def cmd_bench_export(args: argparse.Namespace) -> int:
    print(json.dumps(bench_export(args.games, args.variant, args.players), indent=2))
    return 0


def cmd_bench_schedule(args: argparse.Namespace) -> int:
    print(json.dumps(bench_schedule(seed=args.seed), indent=2))
    return 0


def cmd_bench_matchmaking(args: argparse.Namespace) -> int:
    sides = tuple(int(s) for s in args.sides.split(",") if s.strip().isdigit())
    if len(sides) != len(args.sides.split(",")) or min(sides) < 2:
        raise UsageError(f"--sides must be table sizes of at least 2, comma-separated, got {args.sides!r}")
    print(json.dumps(bench_matchmaking(args.versions, args.concurrency, args.deal_set_seconds, args.hours * 3600,
                                       sides), indent=2))
    return 0


def cmd_bench_cluster(args: argparse.Namespace) -> int:
    require_ray()
    nodes = [int(n) for n in args.nodes.split(",") if n.strip().isdigit()]
    if len(nodes) != len(args.nodes.split(",")) or min(nodes) < 1:
        raise UsageError(f"--nodes must be cluster sizes of at least 1, comma-separated, got {args.nodes!r}")
    if min(args.games, args.quick_games) < 2 or args.slots < 1 or args.sleep_ms < 0:
        raise UsageError(f"expected --games and --quick-games of at least 2, --slots of at least 1 and --sleep-ms of "
                         f"at least 0, got {args.games}, {args.quick_games}, {args.slots} and {args.sleep_ms}")
    sandbox = bench_sandboxes(args.sandbox)[0]
    actors = worker_counts(args.workers) if args.workers else []
    bot = fast_bot(GO_RANDOM_BOT) if actors else None
    if actors:
        require_sandbox(True)  # the fast-bot tournament of arena bench workers is sandboxed
    print(json.dumps(bench_cluster(args.games, args.quick_games, nodes, args.sleep_ms, args.slots, sandbox, actors,
                                   bot), indent=2))
    return 0


def cmd_bench_ratings(args: argparse.Namespace) -> int:
    checkpoints = [part.strip() for part in args.games.split(",")]
    if not all(part.isdigit() and int(part) >= 1 for part in checkpoints):
        raise UsageError(f"--games must be deal-set counts of at least 1, comma-separated, got {args.games!r}")
    if args.versions < args.sides or not 2 <= args.sides <= 12:
        raise UsageError(f"expected --sides from 2 to 12 and at least that many --versions, got {args.sides} sides "
                         f"and {args.versions} versions")
    print(json.dumps(bench_ratings(versions=args.versions, checkpoints=[int(part) for part in checkpoints],
                                   sides=args.sides, seed=args.seed, warm_games=args.warm_games), indent=2))
    return 0


def cmd_bench_ladder(args: argparse.Namespace) -> int:
    checkpoints = [part.strip() for part in args.deal_sets.split(",")]
    if not all(part.isdigit() and int(part) >= 1 for part in checkpoints):
        raise UsageError(f"--deal-sets must be deal-set counts of at least 1, comma-separated, got {args.deal_sets!r}")
    if args.versions < 2:
        raise UsageError(f"expected at least 2 --versions, got {args.versions}")
    print(json.dumps(bench_ladder(args.versions, [int(part) for part in checkpoints], args.concurrency,
                                  args.deal_set_seconds, args.hours, args.database, args.games, args.seed), indent=2))
    return 0


def cmd_bench_league_build(args: argparse.Namespace) -> int:
    require_sandbox(True)
    kits = [k.strip() for k in args.kits.split(",")] if args.kits else list(RECIPES)
    unknown = [k for k in kits if k not in RECIPES]
    if unknown:
        raise UsageError(f"--kits names unknown kit {unknown[0]!r}; the league builds {', '.join(RECIPES)}")
    cache = Path(args.cache).expanduser() if args.cache else default_kit_cache()
    print(json.dumps(build_times(cache, kits), indent=2))
    return 0


def cmd_bench_league_db(args: argparse.Namespace) -> int:
    if args.database:
        print(json.dumps(results_write_rate(args.database, args.games), indent=2))
        return 0
    with tempfile.TemporaryDirectory(prefix="league-db-bench-") as scratch:  # a fresh SQLite file, as a new league's
        print(json.dumps(results_write_rate(sqlite_url(scratch), args.games), indent=2))
    return 0


