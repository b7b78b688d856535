"""``arena play`` and ``arena check-bot``: bot processes (or addresses) in one match, or a compliance run; and
``arena new-bot KIT DIR``, a bot folder of one's own made from a kit."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from arena import guest
from arena.check_bot import check_bot
from arena.cli.options import (
    log_dir_from,
    options_from,
    sandbox_from,
    time_control_from,
)
from arena.display import make_console, safe_name
from arena.errors import UsageError
from arena.league.intake.starter import new_bot, readme_lines
from arena.play import play_once, print_record
from arena.players.process import BotSpec
from arena.rules import VARIANTS, new_game


def cmd_play(args: argparse.Namespace) -> int:
    game = new_game(args.variant, args.players, options_from(args))
    sandbox, limits = sandbox_from(args)
    log_dir = log_dir_from(args)
    record = guest.run(play_once, game, args.bots, args.seed, time_control_from(args), log_dir,
                      args.startup_ms / 1000, sandbox, limits, args.transport, args.protocol)
    print_record(record, game)
    print(f"bot logs: {log_dir}")
    return 1 if record.faults else 0


def cmd_check_bot(args: argparse.Namespace) -> int:
    command = [c for c in args.command if c != "--"]
    if bool(command) == bool(args.address):
        raise UsageError("expected a bot command after -- or --address ADDR (exactly one)")
    sandbox, limits = sandbox_from(args)
    spec = BotSpec(name="bot", command=tuple(command), address=args.address, sandbox=sandbox, limits=limits,
                   transport=args.transport, protocol=args.protocol)
    log_dir = log_dir_from(args)
    variants = [v.strip() for v in args.variants.split(",")] if args.variants else None
    for v in variants or []:
        if v not in VARIANTS:
            raise UsageError(f"unknown variant {v!r}; valid variants: {', '.join(VARIANTS)}")
    report = guest.run(check_bot, spec, args.matches, time_control_from(args), args.startup_ms / 1000, log_dir,
                      variants)
    console = make_console()
    console.print(f"bot: {report.bot}")
    if report.start_fault:
        console.print(f"[bold red]FAIL[/] {escape(safe_name(report.start_fault, 2000))}")
        console.print(f"bot log: {log_dir}")
        return 1
    console.print(f"handshake: {escape(report.hello)}; started in {report.startup_ms:.0f} ms", highlight=False)
    if report.containment:
        console.print(f"containment: {report.containment}", highlight=False)
    table = Table(title="compliance")
    for column in ("variant", "players", "result", "matches", "decisions", "median ms", "worst ms", "faults"):
        table.add_column(column)
    for v in report.variants:
        table.add_row(v.variant, str(v.players), "[green]PASS[/]" if v.passed else "[red]FAIL[/]", str(v.matches),
                      str(v.decisions), f"{v.median_ms:.2f}" if v.median_ms is not None else "-",
                      f"{v.worst_ms:.2f}" if v.worst_ms is not None else "-",
                      "\n".join(escape(safe_name(f, 400)) for f in v.faults) or "-")
    console.print(table)
    console.print("[bold green]PASS[/]" if report.passed else "[bold red]FAIL[/]")
    console.print(f"bot log: {log_dir}")
    return 0 if report.passed else 1


def cmd_new_bot(args: argparse.Namespace) -> int:
    """``arena new-bot KIT DIR``: the folder made, then the README's lines (build, check, upload)."""
    made = new_bot(args.kit, Path(args.dir))
    print(f"made {made.folder}: a {made.kit} bot named {made.name!r} (bot.toml, README.md"
          + (", build.sh" if made.build else "") + ")")
    print(readme_lines(made).split("```sh\n", 1)[1].rstrip("`\n"))
    return 0


