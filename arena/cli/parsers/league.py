"""The arguments of ``league ...``; the handlers are in :mod:`arena.cli.league` (the clients) and
:mod:`arena.cli.league_admin` (the commands on the server's machine), imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.parsers.notices import add_notice_commands, add_web_argument
from arena.cli.parsers.server import add_client_arguments
from arena.cli.parsers.teams import add_team_commands
from arena.server.defaults import DEFAULT_DATA, MAX_SHARE_HOURS


def add_league_commands(sub: Any) -> None:
    """Add ``arena league`` and its verbs to ``arena``'s subparsers."""
    league = sub.add_parser("league", help="a server's leagues: authors, uploads, versions (arena serve --league)")
    verbs = league.add_subparsers(dest="verb", required=True, metavar="VERB")

    p = verbs.add_parser("add-author", help="create an author, a team (the operator); prints its captain's token "
                                            "once")
    p.add_argument("name", help="the author's name")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_add_author")

    p = verbs.add_parser("revoke", help="revoke an author, a team: every member's token (the operator)")
    p.add_argument("name", help="the author's name")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_revoke")

    p = verbs.add_parser("upload", help="upload a version of a bot: its folder (with bot.toml) or an archive")
    p.add_argument("source", metavar="DIR_OR_ARCHIVE", help="the bot's folder, or a tar, tar.gz or zip of it")
    p.add_argument("--bot", required=True, help="the bot's name in the league (created by its first upload)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_upload")

    p = verbs.add_parser("dial-in", help="add a dial-in version of your bot: played from your machine while "
                                         "connected (arena connect); its bot token goes in a new private file")
    p.add_argument("--bot", required=True, help="the bot's name in the league (created by its first version)")
    p.add_argument("--bot-token-file", required=True, metavar="FILE",
                   help="where to write the version's bot token (mode 600; refused if it exists)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_dial_in")

    p = verbs.add_parser("bots", help="your bots in a league (every bot, for the operator)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_bots")

    p = verbs.add_parser("versions", help="the versions of your bots, or of one bot, and their states")
    p.add_argument("bot", nargs="?", help="one bot's name (default: every bot of yours)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_versions")

    p = verbs.add_parser("log", help="a version's build log and check report")
    p.add_argument("version", type=int, help="the version's id (see arena league versions)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_log")

    p = verbs.add_parser("table-log", help="what your version's bot wrote (stdout and stderr) at a ladder table "
                                           "that ended")
    p.add_argument("table", type=int, help="the table's id (see arena league queue)")
    p.add_argument("--version", type=int, required=True, help="the version's id (see arena league versions)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_table_log")

    p = verbs.add_parser("retire", help="retire a version: it plays no more, its games stay")
    p.add_argument("version", type=int, help="the version's id (see arena league versions)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_retire")

    p = verbs.add_parser("reinstate", help="the operator: a suspended version back to ready, its failed starts "
                                           "reset")
    p.add_argument("version", type=int, help="the version's id (see arena league versions)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_reinstate")

    p = verbs.add_parser("prepare-kits", help="fill the kits' caches that the offline builds read (the operator, "
                                              "once, on the server's machine, with the network)")
    p.add_argument("--cache", metavar="DIR", help="the cache folder (default: $ARENA_KIT_CACHE, else "
                                                  "~/.cache/dominoes-arena/league-kits; serve's --kit-cache)")
    p.add_argument("--kits", metavar="K1,K2", help="only these kits (default: every kit with a build recipe)")
    p.set_defaults(handler="arena.cli.league_admin:cmd_prepare_kits")

    p = verbs.add_parser("copy-database", help="copy the leagues' database into a new, empty one (SQLite to "
                                               "PostgreSQL, or back), the server stopped; the data folder stays")
    p.add_argument("--to", required=True, metavar="URL",
                   help="the empty target: postgresql+psycopg://USER:PASSWORD@HOST/DATABASE or sqlite:///PATH "
                        "(migrated to the newest schema first)")
    p.add_argument("--data", default=DEFAULT_DATA,
                   help=f"the server's data folder (arena serve --data; default {DEFAULT_DATA}): its league.db is "
                        f"the source unless --database")
    p.add_argument("--database", metavar="URL",
                   help="the source, as arena serve --database gives it (default: SQLite, league.db in the data "
                        "folder)")
    p.set_defaults(handler="arena.cli.league_admin:cmd_copy_database")
    p = verbs.add_parser("standings", help="the leaderboard, one row per bot (its active version): rank range, "
                                             "version, author (its team), rating and interval, games, online "
                                             "rating, the bots it cannot yet be told apart from")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_standings")

    p = verbs.add_parser("queue", help="the ladder's queue: the tables being played, the next ones, with why")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_queue")

    p = verbs.add_parser("watch", help="follow the ladder: a line per table that ends, with the rating changes")
    p.add_argument("--tables", type=int, default=0, help="stop after this many tables (default: follow until ^C)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_watch")

    p = verbs.add_parser("status", help="where the league is: its title, variant, phase (upcoming, open, frozen, "
                                        "finals, done) and the time to the next one")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_status")

    p = verbs.add_parser("share", help="a read-only link to the league's public pages, for spectators without a "
                                       "token (the operator; the server's dashboard opens it)")
    p.add_argument("league_name", nargs="?", default="", metavar="LEAGUE",
                   help="the league's name (default: the server's only league)")
    p.add_argument("--hours", type=int, default=0, metavar="N",
                   help=f"how long the link opens the league (default 24, at most {MAX_SHARE_HOURS})")
    add_web_argument(p, "the link")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_share")
    add_challenge_commands(verbs)
    add_team_commands(verbs)
    add_notice_commands(verbs)


def add_challenge_commands(verbs: Any) -> None:
    """``challenge``, ``challenges`` (an author's), ``freeze`` and ``finals`` (the operator's; ``finals`` without
    arguments is anyone's status call)."""
    p = verbs.add_parser("challenge", help="play one of your versions against another, unrated: the SPRT's verdict")
    p.add_argument("version", type=int, help="your version's id (see arena league versions)")
    p.add_argument("--against", type=int, required=True, metavar="VERSION",
                   help="the opponent's version id: any bot's active version, or one of your own")
    p.add_argument("--deal-sets", type=int, default=0, metavar="N",
                   help="deal sets at most; the SPRT stops earlier when it decides (default: the league's "
                        "challenges.max_deal_sets)")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_challenge")

    p = verbs.add_parser("challenges", help="your challenges (every one, for the operator), or one with its verdict")
    p.add_argument("id", type=int, nargs="?", help="one challenge's id")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_challenges")

    p = verbs.add_parser("freeze", help="freeze the league for its finals (the operator): the field is each bot's "
                                        "active version now; the ladder and the challenges stop")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_freeze")

    p = verbs.add_parser("finals", help="start the frozen league's finals (the operator, with --deal-sets or "
                                        "--tables), or show their progress and ranking")
    p.add_argument("--deal-sets", type=int, metavar="N", help="start them: deal sets per table (default 10)")
    p.add_argument("--tables", type=int, metavar="N", help="start them: a balanced schedule's tables, for k-player "
                                                           "tables (default: every pair meets about once)")
    p.add_argument("--start", action="store_true", help="start them with the defaults")
    _league_argument(p)
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.league:cmd_finals")


def _league_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--league", default="", help="the league's name (default: the server's only league)")
