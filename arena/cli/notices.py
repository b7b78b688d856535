"""``arena league ...`` for a team's notices: ``feed-url`` (its private Atom feed's address, ``--regenerate`` for a
new one) and ``webhook set URL`` / ``webhook clear``, a member's own team's (the operator has no team). A secret the
server gives (the feed's address, a webhook's signing secret) is printed alone on stdout, what it is on stderr, so
that ``> FILE`` keeps it alone.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from arena.cli.client import shown_once
from arena.cli.teams import _run
from arena.display import safe_name
from arena.errors import UsageError
from arena.protocol import league_pb2 as lpb


def web_prefix(given: str) -> str:
    """``--web`` checked (http or https) without its trailing slash: what a path on the dashboard follows; a
    UsageError, one line, for anything else."""
    web = given.rstrip("/")
    if web and not web.startswith(("https://", "http://")):
        raise UsageError(f"--web must be the dashboard's address, https://HOST[:PORT], got {given!r}")
    return web


def cmd_feed_url(args: argparse.Namespace) -> int:
    web = web_prefix(args.web)

    def body(client: Any) -> int:
        reply = client.call("GetFeedUrl", lpb.GetFeedUrlRequest(league=args.league, regenerate=args.regenerate))
        where = "" if web else " (its path on the server's web dashboard)"
        print(f"the private feed of team {safe_name(reply.team)!r} in league {safe_name(reply.league)!r}{where}; "
              f"keep it secret, it reads your team's notices"
              + ("; the old address no longer works" if args.regenerate else "") + ":", file=sys.stderr)
        print(web + reply.path)
        return 0

    return _run(args, body)


def cmd_webhook(args: argparse.Namespace) -> int:
    def body(client: Any) -> int:
        reply = client.call("SetWebhook", lpb.SetWebhookRequest(league=args.league, url=args.url))
        if not reply.url:
            print(f"team {safe_name(reply.team)!r} has no webhook in league {safe_name(reply.league)!r}")
            return 0
        return shown_once(f"team {safe_name(reply.team)!r}'s notices in league {safe_name(reply.league)!r} go to "
                          f"{safe_name(reply.url, 300)}; their signing secret (shown this once: check each delivery's "
                          f"X-Arena-Signature with it):", reply.secret)

    return _run(args, body)
