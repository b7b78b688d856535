"""``arena variants`` and ``arena simulate``: the rules engine alone, no bot processes."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from arena.cli.options import add_game_arguments, options_from
from arena.display import make_console
from arena.rules import VARIANTS, new_game
from arena.simulate import simulate


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
    make_console().print(table)
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    game = new_game(args.variant, args.players, options_from(args))
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    kinds = [kinds[i % len(kinds)] for i in range(game.players)]
    sim = simulate(game, kinds, args.games, args.seed)
    console = make_console()
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


def add_rules_commands(sub: Any) -> None:
    """``variants`` and ``simulate``."""
    p = sub.add_parser("variants", help="list every variant with its player counts and options")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_variants)

    p = sub.add_parser("simulate", help="play matches in-process between built-in players")
    add_game_arguments(p)
    p.add_argument("--games", type=int, default=10, help="matches to play (default 10)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first match; match g uses seed + g")
    p.add_argument("--bots", default="greedy,random",
                   help="built-in players, comma-separated, cycled over the seats (random, greedy; ismcts with the "
                        "openspiel extra)")
    p.set_defaults(func=cmd_simulate)
