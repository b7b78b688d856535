"""The arguments of ``bench ...``; the handlers are in :mod:`arena.cli.bench`, imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.bench.frameworks import FRAMEWORKS
from arena.cli.options import add_game_arguments
from arena.rules import VARIANTS

GO_RANDOM_BOT = "bots/go/bin/bot --policy random"
"""The Go kit's random bot (built by set-up): fast, so the referee's work dominates a game."""


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (argparse turns the error into a usage line, exit status 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def add_bench_sandbox_argument(p: argparse.ArgumentParser, both: bool = True) -> None:
    if not both:
        p.add_argument("--sandbox", choices=("on", "off"), default="on", help="bots sandboxed (default on) or not")
        return
    p.add_argument("--sandbox", choices=("both", "on", "off"), default="both",
                   help="measure bots without and with the sandbox in one run (default both), or one of them")


def add_bench_commands(sub: Any) -> None:
    """``bench`` and its benchmarks."""
    p = sub.add_parser("bench", help="benchmarks that print numbers")
    bench = p.add_subparsers(dest="bench", required=True, metavar="WHAT")
    b = bench.add_parser("engine", help="random-playout hands/s and moves/s of the rules engine (JSON)")
    add_game_arguments(b)
    b.add_argument("--seconds", type=float, default=5.0)
    b.add_argument("--seed", type=int, default=1)
    b.set_defaults(handler="arena.cli.bench:cmd_bench_engine")
    b = bench.add_parser("env", help="environment steps/s of PettingZoo and OpenSpiel against the bare engine, random "
                                     "play of the same matches (JSON; the pettingzoo and openspiel extras)")
    add_game_arguments(b)
    b.add_argument("--seconds", type=float, default=3.0, help="seconds of play per framework (default 3)")
    b.add_argument("--frameworks", default=",".join(FRAMEWORKS),
                   help=f"comma-separated, among {', '.join(FRAMEWORKS)} (default all; the engine always runs)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_env")
    b = bench.add_parser("protocol", help="referee decisions/s against a bot next to synchronous and grpc.aio "
                                          "ping-pong, with the arena's CPU a call and a decision (JSON)")
    b.add_argument("--bot", help="the bot command (default: the random Python bot)")
    b.add_argument("--seconds", type=float, default=5.0, help="seconds per measurement")
    b.add_argument("--concurrency", default="1,16", help="comma-separated concurrent matches (default 1,16)")
    b.add_argument("--repeats", type=positive_int, default=1,
                   help="measure the three windows this many times, alternating, and rate them over all of them "
                        "(a machine shared with other jobs drifts; default 1)")
    add_bench_sandbox_argument(b)
    b.add_argument("--dial-in", nargs="?", const="relay", choices=("relay", "itself"),
                   help="instead: the bot dialed in over one stream, behind arena connect (relay, the default) or by "
                        "itself (itself: a Python botkit bot's --connect), against the same bot called directly (not "
                        "sandboxed): round trip and referee decisions/s, and what dialing in adds")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_protocol")
    b = bench.add_parser("referee-parts", help="the referee's own work per decision, part by part (legal moves, "
                                               "observation, encoding, the reply's check, the record), in-process "
                                               "with an instant responder: no transport, no bot process")
    b.add_argument("--matches", type=positive_int, default=400, help="matches played (default 400)")
    b.add_argument("--variant", choices=list(VARIANTS), default="draw", help="the variant (default draw)")
    b.add_argument("--players", type=int, default=None, help="players (default: the variant's)")
    b.add_argument("--json", action="store_true", help="print JSON instead of a table")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_referee_parts")
    b = bench.add_parser("workers", help="games/s of a fast-bot tournament on 1, 2, ... referee processes (arena run "
                                         "--workers), and the single writer's cost per game that bounds them (JSON)")
    b.add_argument("--bot", default=GO_RANDOM_BOT, help=f"the bot command (default: {GO_RANDOM_BOT})")
    b.add_argument("--games", type=positive_int, default=400, help="games per run (default 400)")
    b.add_argument("--concurrency", type=positive_int, default=16, help="games in flight (default 16)")
    b.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    b.add_argument("--repeats", type=positive_int, default=2, help="runs per count, interleaved, best kept (default 2)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_workers")

    b = bench.add_parser("tournament", help="games/s and peak memory of quick tournaments (JSON)")
    b.add_argument("--games", default="1000,10000", help="tournament sizes (default 1000,10000)")
    b.add_argument("--concurrency", default="1,4,16", help="concurrent games (default 1,4,16)")
    b.add_argument("--bot", help="the bot command (default: the random Python bot)")
    add_bench_sandbox_argument(b)
    b.set_defaults(handler="arena.cli.bench:cmd_bench_tournament")
    b = bench.add_parser("records", help="record bytes per game in both formats for every variant, write and read "
                                         "costs, and --verify games/s (JSON)")
    b.add_argument("--run", metavar="RUN", help="measure the sizes and costs on this run folder's records (e.g. the "
                                                "demo's) instead of random players' games")
    b.add_argument("--games", type=int, default=50, help="games per variant for the sizes (default 50)")
    b.add_argument("--verify-games", type=int, default=3000, help="Draw games to verify (default 3000)")
    b.add_argument("--jobs", type=int, default=None, help="processes for verification (default: one per core)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_records")
    b = bench.add_parser("export", help="arena export --parquet: decision rows/s and games/s of random games (JSON)")
    b.add_argument("--games", type=int, default=500, help="games to export (default 500)")
    b.add_argument("--variant", choices=list(VARIANTS), default="draw", help="the variant (default draw)")
    b.add_argument("--players", type=int, default=None, help="players (default: the variant's)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_export")
    b = bench.add_parser("cluster", help="games/s in-process and through Ray, and games/s against the nodes of a "
                                         "local Ray cluster (JSON; the ray extra)")
    b.add_argument("--games", type=int, default=48, help="games per cluster size (default 48)")
    b.add_argument("--quick-games", type=int, default=200,
                   help="games of the in-process and Ray comparison, between random bots (default 200)")
    b.add_argument("--nodes", default="1,2,4", help="comma-separated cluster sizes (default 1,2,4)")
    b.add_argument("--sleep-ms", type=int, default=50, help="the sleepy bots' time per decision (default 50)")
    b.add_argument("--slots", type=int, default=4, help="games at once per node (default 4)")
    b.add_argument("--workers", metavar="COUNTS",
                   help="also games/s on one node with each of these actor counts (arena run --backend ray --workers "
                        "N), comma-separated, e.g. 1,2: --quick-games Draw games between the Go kit's random bot, "
                        "--slots times the most actors at once")
    add_bench_sandbox_argument(b, both=False)
    b.set_defaults(handler="arena.cli.bench:cmd_bench_cluster")
    b = bench.add_parser("search", help="the search bot's decisions/s and playouts per decision at a move time (JSON)")
    b.add_argument("--move-ms", type=positive_int, default=100, help="the move time (default 100; it thinks half)")
    b.add_argument("--decisions", type=positive_int, default=200, help="decisions per variant (default 200)")
    b.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="only this variant (repeatable)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_search")
    b = bench.add_parser("schedule", help="the balance of balanced schedules against uniformly random tables (JSON)")
    b.add_argument("--seed", default="bench", help="the master seed the tables are drawn from (default bench)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_schedule")
    b = bench.add_parser("matchmaking", help="the league matchmaker's decisions/s on a simulated ladder (JSON)")
    b.add_argument("--versions", type=positive_int, default=1000, help="active versions (default 1000)")
    b.add_argument("--concurrency", type=positive_int, default=16, help="tables played at once (default 16)")
    b.add_argument("--deal-set-seconds", type=float, default=60.0,
                   help="simulated seconds a table takes, times 0.5 to 1.5 (default 60)")
    b.add_argument("--hours", type=float, default=1.0, help="simulated hours (default 1)")
    b.add_argument("--sides", default="2,8", help="comma-separated versions per table (default 2,8)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_matchmaking")
    b = bench.add_parser("ratings", help="the leaderboard's maximum-likelihood fit on a simulated league: refit times "
                                         "and rank correlations against OpenSkill (JSON)")
    b.add_argument("--versions", type=positive_int, default=1000, help="simulated versions (default 1000)")
    b.add_argument("--games", default="10000,100000,1000000",
                   help="checkpoints in deal sets played, comma-separated (default 10000,100000,1000000)")
    b.add_argument("--sides", type=positive_int, default=2, help="sides per table, 2 to 12 (default 2)")
    b.add_argument("--warm-games", type=positive_int, default=1000,
                   help="deal sets added after each checkpoint before the warm refit (default 1000)")
    b.add_argument("--seed", type=int, default=1)
    b.set_defaults(handler="arena.cli.bench:cmd_bench_ratings")
    b = bench.add_parser("ladder", help="a ladder of simulated versions: matchmaking decisions/s, the leaderboard's "
                                        "refit time, games recorded/s, rank correlation against the online rating "
                                        "(JSON)")
    b.add_argument("--versions", type=positive_int, default=1000, help="simulated versions (default 1000)")
    b.add_argument("--deal-sets", default="10000,100000,1000000",
                   help="checkpoints in deal sets played, comma-separated (default 10000,100000,1000000)")
    b.add_argument("--concurrency", type=positive_int, default=16, help="tables played at once (default 16)")
    b.add_argument("--deal-set-seconds", type=float, default=60.0,
                   help="simulated seconds a table takes, times 0.5 to 1.5 (default 60)")
    b.add_argument("--hours", type=float, default=1.0, help="simulated hours of matchmaking (default 1)")
    b.add_argument("--database", metavar="URL", help="where games are recorded (default: a new SQLite file in a "
                                                     "temporary folder)")
    b.add_argument("--games", type=positive_int, default=1000, help="games to record (default 1000)")
    b.add_argument("--seed", type=int, default=1)
    b.set_defaults(handler="arena.cli.bench:cmd_bench_ladder")
    b = bench.add_parser("league-build", help="upload-to-ready seconds per kit: each kit's example stored, built in "
                                              "the sandbox offline from the prepared cache, checked (JSON)")
    b.add_argument("--cache", metavar="DIR", help="the kits' prepared cache (default: as arena league prepare-kits)")
    b.add_argument("--kits", metavar="K1,K2", help="only these kits (default: every kit with a build recipe)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_league_build")
    b = bench.add_parser("league-db", help="game results recorded per second by the league's database, one "
                                           "transaction each (JSON)")
    b.add_argument("--database", metavar="URL", help="sqlite:///PATH or postgresql+psycopg://... (default: a new "
                                                     "SQLite file in a temporary folder)")
    b.add_argument("--games", type=positive_int, default=1000, help="games to record (default 1000)")
    b.set_defaults(handler="arena.cli.bench:cmd_bench_league_db")
