"""The arguments of ``run``, ``replay`` and ``export``; the handlers are in :mod:`arena.cli.runs`, imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cluster.options import add_backend_arguments


def add_run_commands(sub: Any) -> None:
    """``run``, ``replay`` and ``export``."""
    p = sub.add_parser("run", help="run a tournament file (round robin, records, standings)")
    p.add_argument("file", help="a tournament file (TOML), e.g. tournaments/demo.toml")
    p.add_argument("--out", help="the run folder (default: the file's 'output')")
    p.add_argument("--concurrency", type=int, help="games at once (default: the file's 'concurrency')")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in the same folder")
    p.add_argument("--workers", type=int, default=1,
                   help="referee processes on this machine, each with its own bots (default 1: this process); with "
                        "--backend ray, Ray actors on every node (default 1 a node); the records are still written "
                        "by this process alone")
    add_backend_arguments(p)
    p.set_defaults(handler="arena.cli.runs:cmd_run")

    p = sub.add_parser("replay", help="verify records, or show a recorded game (terminal, HTML, against a bot)")
    p.add_argument("path", help="a run folder or a record file (games.jsonl)")
    p.add_argument("--verify", action="store_true", help="re-simulate every game and report every mismatch")
    p.add_argument("--jobs", type=int, default=None, help="processes for --verify (default: one per core)")
    p.add_argument("--repair", action="store_true",
                   help="move every unreadable line of the record file to games.rejected.jsonl beside it (appended, "
                        "with its line number) and keep the rest")
    p.add_argument("--game", type=int, help="the game's index in the schedule")
    p.add_argument("--seat", type=int, help="show only what this seat knew at each moment")
    p.add_argument("--step", action="store_true", help="wait for a key between moves (on a terminal)")
    layout = p.add_mutually_exclusive_group()
    layout.add_argument("--full", action="store_true",
                        help="the layout and every hand after each move (the default on a terminal)")
    layout.add_argument("--compact", action="store_true",
                        help="one line a move, the layout at round ends (the default when the output is not a "
                             "terminal)")
    p.add_argument("--html", help="write a self-contained HTML viewer of the game to this file")
    p.add_argument("--move-ms", type=int, default=2000, help="with --against: time per decision (default 2000)")
    p.add_argument("--startup-ms", type=int, default=15000, help="with --against: time to start the bot")
    p.add_argument("--no-sandbox", action="store_true", help="with --against: run the bot without a sandbox")
    p.add_argument("--against", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help="replay the game to a bot (its command after --, last on the line) and report where its "
                        "choices differ")
    p.set_defaults(handler="arena.cli.runs:cmd_replay")

    p = sub.add_parser("export", help="results for spreadsheets and scripts: one CSV row per game, the records as "
                                      "JSON lines, or the games and every decision as Parquet tables")
    p.add_argument("path", metavar="RUN", help="a run folder or a record file (games.jsonl.zst or games.jsonl); with "
                                               "--league, a server's data folder (arena serve --data)")
    form = p.add_mutually_exclusive_group(required=True)
    form.add_argument("--csv", action="store_true",
                      help="CSV with a header: index, deal_key, rotation, seats, seed, scores, winner, ranking, "
                           "faults, duration_s (a server's tournament: arena games ID --csv)")
    form.add_argument("--jsonl", action="store_true",
                      help="every record as one JSON line, in file order: the readable form of games.jsonl.zst (seeds "
                           "left out while the master seed is secret)")
    form.add_argument("--parquet", metavar="DIR",
                      help="write games.parquet, decisions.parquet, beliefs.parquet and tiles.parquet into this new or "
                           "empty folder (the columns: docs/reference/records.md)")
    p.add_argument("--out", metavar="FILE", help="with --csv or --jsonl: write to this file instead of stdout")
    p.add_argument("--league", metavar="NAME",
                   help="with --parquet: export every game of this league of the data folder RUN (its tables, "
                        "challenges and finals)")
    p.set_defaults(handler="arena.cli.runs:cmd_export")
