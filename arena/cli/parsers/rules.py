"""The arguments of ``variants`` and ``simulate``; the handlers are in :mod:`arena.cli.rules`, imported when one runs."""

from __future__ import annotations

from typing import Any

from arena.cli.options import add_game_arguments


def add_rules_commands(sub: Any) -> None:
    """``variants`` and ``simulate``."""
    p = sub.add_parser("variants", help="list every variant with its player counts and options")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler="arena.cli.rules:cmd_variants")

    p = sub.add_parser("simulate", help="play matches in-process between built-in players")
    add_game_arguments(p)
    p.add_argument("--games", type=int, default=10, help="matches to play (default 10)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first match; match g uses seed + g")
    p.add_argument("--bots", default="greedy,random",
                   help="built-in players, comma-separated, cycled over the seats (random, greedy; ismcts with the "
                        "openspiel extra)")
    p.set_defaults(handler="arena.cli.rules:cmd_simulate")
