"""The ``arena`` command: one entry point, one subcommand per job.

Errors a user can cause (an unknown variant, a bad option) print one line ``error: ...`` and exit with status 2;
nothing a user types produces a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

from rich.console import Console
from rich.table import Table

from .rules import VARIANTS, RulesError, new_game

EXIT_USAGE = 2


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as an integer, true/false, or else text."""
    if "=" not in text:
        raise RulesError(f"expected an option like target=50, got {text!r}")
    key, raw = (part.strip() for part in text.split("=", 1))
    value: Any = raw
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            pass
    return key, value


def options_from(args: argparse.Namespace) -> dict[str, Any]:
    return dict(parse_option(o) for o in args.option or [])


# --- arena variants ------------------------------------------------------------------------------------------


def cmd_variants(args: argparse.Namespace) -> int:
    facts = [cls.describe() for cls in VARIANTS.values()]
    if args.json:
        print(json.dumps(facts, indent=2))
        return 0
    table = Table(title="Variants", show_lines=True)
    table.add_column("variant")
    table.add_column("players")
    table.add_column("options (default; allowed)")
    for fact in facts:
        opts = "\n".join(f"{o['name']} = {o['default']}  ({o['allowed']}): {o['doc']}" for o in fact["options"])
        players = ", ".join(map(str, fact["players"])) + (" (teams)" if fact["teams"] else "")
        table.add_row(f"{fact['name']}\n{fact['title']}", players, opts or "-")
    Console(width=max(Console().width, 120)).print(table)
    return 0


# --- arena simulate ------------------------------------------------------------------------------------------


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate

    game = new_game(args.variant, args.players, options_from(args))
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    kinds = [kinds[i % len(kinds)] for i in range(game.players)]
    sim = simulate(game, kinds, args.games, args.seed)
    console = Console()
    console.print(f"[bold]{game.title}[/], {game.players} players, options {game.options}")
    for i, m in enumerate(sim.matches, 1):
        result = f"winner {m.winner}" if m.winner else "drawn match"
        console.print(f"match {i} (seed {m.seed}): seats {', '.join(m.seats)}; {m.rounds} rounds; "
                      f"scores {list(m.scores)}; {result}")
    table = Table(title=f"{args.games} matches of {game.name}")
    for column in ("entrant", "matches", "wins", "draws", "losses", "points"):
        table.add_column(column, justify="left" if column == "entrant" else "right")
    for t in sorted(sim.tallies, key=lambda t: (-t.wins, t.name)):
        table.add_row(t.name, str(t.matches), str(t.wins), str(t.draws), str(t.losses), str(t.points))
    console.print(table)
    return 0


# --- arena bench ---------------------------------------------------------------------------------------------


def cmd_bench_engine(args: argparse.Namespace) -> int:
    from .benchmarks import bench_engine

    print(json.dumps(bench_engine(args.variant, args.players, args.seconds, args.seed)))
    return 0


# --- the parser ----------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="A tournament arena for dominoes bots.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("variants", help="list every variant with its player counts and options")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_variants)

    p = sub.add_parser("simulate", help="play matches in-process between built-in players")
    add_game_arguments(p)
    p.add_argument("--games", type=int, default=10, help="matches to play (default 10)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first match; match g uses seed + g")
    p.add_argument("--bots", default="greedy,random",
                   help="built-in players, comma-separated, cycled over the seats (random, greedy)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("bench", help="benchmarks that print numbers")
    bench = p.add_subparsers(dest="bench", required=True, metavar="WHAT")
    b = bench.add_parser("engine", help="random-playout hands/s and moves/s of the rules engine (JSON)")
    add_game_arguments(b, options=False)
    b.add_argument("--seconds", type=float, default=5.0)
    b.add_argument("--seed", type=int, default=1)
    b.set_defaults(func=cmd_bench_engine)
    return parser


def add_game_arguments(p: argparse.ArgumentParser, options: bool = True) -> None:
    p.add_argument("--variant", default="draw", help=f"one of {', '.join(VARIANTS)} (default draw)")
    p.add_argument("--players", type=int, default=None, help="player count (default: the variant's usual)")
    if options:
        p.add_argument("--option", action="append", metavar="KEY=VALUE", help="a variant option; repeatable")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RulesError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
