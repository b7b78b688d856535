"""The arguments of ``play``, ``check-bot`` and ``new-bot``; the handlers are in :mod:`arena.cli.bots`, imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.options import add_game_arguments, add_sandbox_arguments, add_time_arguments
from arena.league.intake.starter import kits


def add_bot_commands(sub: Any) -> None:
    """``play``, ``check-bot`` and ``new-bot``."""
    p = sub.add_parser("play", help="one match between bots (commands, addresses, or builtin:random)")
    add_game_arguments(p)
    p.add_argument("bots", nargs="+", metavar="BOT",
                   help="a command in quotes ('python bots/python/random_bot.py'), an address (127.0.0.1:50051, "
                        "unix:/path), or builtin:random / builtin:greedy; cycled over the seats")
    p.add_argument("--seed", default="1", help="the match seed (default 1)")
    add_time_arguments(p)
    add_sandbox_arguments(p)
    p.set_defaults(handler="arena.cli.bots:cmd_play")

    p = sub.add_parser("check-bot", help="compliance run of a bot: handshake, quick matches of every variant")
    p.add_argument("--address", help="check an already-running bot at this address instead of a command")
    p.add_argument("--matches", type=int, default=2, help="matches per variant (default 2)")
    p.add_argument("--variants", help="comma-separated variants to check (default: all the bot claims)")
    add_time_arguments(p)
    add_sandbox_arguments(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ... to start the bot")
    p.set_defaults(handler="arena.cli.bots:cmd_check_bot")

    p = sub.add_parser("new-bot", help="make a bot folder of your own from a kit's example, anywhere: its build "
                                       "script, its bot.toml for a league, README lines")
    p.add_argument("kit", help=f"the kit ({', '.join(kits())})")
    p.add_argument("dir", help="the new folder (its name is the bot's name)")
    p.set_defaults(handler="arena.cli.bots:cmd_new_bot")
