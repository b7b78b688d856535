"""``arena variants`` and ``arena simulate``: the rules engine alone, no bot processes."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from arena.cli.options import options_from
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


