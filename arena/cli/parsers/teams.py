"""The arguments of the teams' verbs of ``league``; the handlers are in :mod:`arena.cli.teams`, imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.parsers.server import add_client_arguments


def add_team_commands(verbs: Any) -> None:
    """The teams' verbs of ``arena league``."""
    p = verbs.add_parser("sign-up", help="sign a team up to a league by itself (no token needed; the league's "
                                         "[signup] mode says whether and how); prints its captain's token once")
    p.add_argument("team", help="the team's name (unique regardless of case)")
    p.add_argument("--invite", default="", metavar="CODE", help="the operator's invite code (a league in invite "
                                                                "mode)")
    p.add_argument("--captain", default="", metavar="NAME", help="the first member's name (default: captain)")
    _league_argument(p)
    add_client_arguments(p, token_help="not needed: a sign-up carries no token")
    p.set_defaults(handler="arena.cli.teams:cmd_sign_up")

    p = verbs.add_parser("invite", help="make an invite code to sign up to a league (the operator); prints it once")
    p.add_argument("--uses", type=int, default=1, metavar="N", help="sign-ups it allows (default 1)")
    p.add_argument("--hours", type=int, default=72, metavar="H", help="hours until it expires (default 72)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.teams:cmd_invite")

    for verb, approve in (("approve", True), ("reject", False)):
        p = verbs.add_parser(verb, help=f"{verb} a team awaiting approval (the operator)"
                                        + (": it may act from now on" if approve else ": it never may, its name "
                                                                                      "stays taken"))
        p.add_argument("team", help="the team's name")
        add_client_arguments(p)
        p.set_defaults(handler="arena.cli.teams:cmd_decide", approve=approve)

    p = verbs.add_parser("teams", help="your team and its members (every team, for the operator)")
    _league_argument(p, "only the teams signed up through this league (the operator; default: every team)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.teams:cmd_teams")

    p = verbs.add_parser("add-member", help="add a member to your team (its captain, or the operator with --team); "
                                            "prints the member's token once")
    p.add_argument("name", help="the member's name in the team")
    _team_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.teams:cmd_add_member")

    for verb, remove in (("revoke-member", False), ("remove-member", True)):
        p = verbs.add_parser(verb, help=("revoke a member's token (its team's captain, or the operator with "
                                         "--team); the team's other members go on" if not remove else
                                         "remove a member of your team (its captain, or the operator with --team): "
                                         "its token stops working, its name is free again"))
        p.add_argument("name", help="the member's name in the team")
        _team_argument(p)
        add_client_arguments(p)
        p.set_defaults(handler="arena.cli.teams:cmd_revoke_member", remove=remove)

    p = verbs.add_parser("audit", help="who did what: your team's entries (every entry, or --team's, for the "
                                       "operator)")
    p.add_argument("--team", default="", help="one team's entries (the operator)")
    p.add_argument("--limit", type=int, default=0, metavar="N", help="the newest N entries (default and most: 200)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.teams:cmd_audit")


def _league_argument(p: argparse.ArgumentParser,
                     text: str = "the league's name (default: the server's only league)") -> None:
    p.add_argument("--league", default="", help=text)


def _team_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--team", default="", help="the team's name (default: your own; the operator names one)")
