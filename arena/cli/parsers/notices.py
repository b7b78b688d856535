"""The arguments of the notices' verbs of ``league``; the handlers are in :mod:`arena.cli.notices`, imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.parsers.server import add_client_arguments
from arena.cli.parsers.teams import _league_argument


def add_notice_commands(verbs: Any) -> None:
    """The notices' verbs of ``arena league``."""
    p = verbs.add_parser("feed-url", help="your team's private Atom feed of the league: its address (secret: it "
                                          "reads your team's notices)")
    p.add_argument("--regenerate", action="store_true", help="replace it: the old address stops working")
    add_web_argument(p, "the feed's URL")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.notices:cmd_feed_url")

    p = verbs.add_parser("webhook", help="your team's webhook: the server posts its notices there, signed")
    hooks = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = hooks.add_parser("set", help="post your team's notices (and the league's public ones) to URL; prints its "
                                     "signing secret once")
    q.add_argument("url", help="an https:// URL whose host resolves to public addresses")
    _league_argument(q)
    add_client_arguments(q)
    q.set_defaults(handler="arena.cli.notices:cmd_webhook")
    q = hooks.add_parser("clear", help="stop posting (the deliveries waiting are dropped)")
    _league_argument(q)
    add_client_arguments(q)
    q.set_defaults(handler="arena.cli.notices:cmd_webhook", url="")


def add_web_argument(p: argparse.ArgumentParser, what: str) -> None:
    """``--web URL``: the dashboard's address, which the server does not know as its visitors reach it."""
    p.add_argument("--web", default="", metavar="URL", help=f"the dashboard's address (e.g. https://arena.example.org)"
                                                            f", to print {what} whole rather than its path")
