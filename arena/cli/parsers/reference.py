"""The arguments of ``reference`` and ``gauntlet``; the handlers are in :mod:`arena.cli.reference`, imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cluster.options import add_backend_arguments
from arena.tournament.reference_players import ANCHOR, PLACEMENT_DEAL_SETS, REFERENCE_KINDS, SCALE_DEAL_SETS


def add_reference_commands(sub: Any) -> None:
    """``reference`` and ``gauntlet``."""
    p = sub.add_parser("reference", help="rate the reference players of a variant by a duplicate round robin: the "
                                         "scale `arena gauntlet --reference` places bots on")
    p.add_argument("variant", help="the variant (arena variants lists them)")
    p.add_argument("--players", type=int, help="players at a table (default: the variant's usual count)")
    p.add_argument("--deal-sets", type=int, default=SCALE_DEAL_SETS,
                   help=f"deal sets a pairing, each under every seat rotation (default {SCALE_DEAL_SETS})")
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a variant option the scale is made with (repeatable); a placement on the scale plays with "
                        "the same options")
    p.add_argument("--kinds", help=f"the reference players, built-in kinds with commas (default: "
                                   f"{','.join(REFERENCE_KINDS)}; must include {ANCHOR})")
    p.add_argument("--add", metavar="K,K", help="reference players to add to the round robin of --base: they play "
                                                "every player it rated and one another, and the scale is fitted "
                                                "from both runs")
    p.add_argument("--base", metavar="RUN", help="with --add: the run folder of the round robin to extend")
    p.add_argument("--seed", help="the master seed (default: random, revealed at the end)")
    p.add_argument("--write", metavar="FILE", help="where to write the scale (default: the run folder's name .json)")
    _run_arguments(p)
    p.set_defaults(handler="arena.cli.reference:cmd_reference")

    p = sub.add_parser("gauntlet", help="place a bot on a variant's reference scale: duplicate deal sets against "
                                        "every reference player, then its Elo above random with its interval")
    p.add_argument("--reference", required=True, metavar="VARIANT", help="the variant whose published scale to use")
    p.add_argument("--players", type=int, help="players at a table (default: the variant's usual count)")
    p.add_argument("--scale", metavar="FILE", help="a scale file of your own (from arena reference) instead")
    p.add_argument("--deal-sets", type=int, default=PLACEMENT_DEAL_SETS,
                   help=f"deal sets against each reference player (default {PLACEMENT_DEAL_SETS})")
    p.add_argument("--name", help="the bot's name (default: its program's)")
    p.add_argument("--seed", help="the master seed (default: random, revealed at the end)")
    _run_arguments(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the bot's command, after --")
    p.set_defaults(handler="arena.cli.reference:cmd_gauntlet")


def _run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", help="the run folder")
    p.add_argument("--concurrency", type=int, help="games at once (default 4)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in the same folder")
    p.add_argument("--workers", type=int, default=1, help="referee processes on this machine (default 1)")
    add_backend_arguments(p)
