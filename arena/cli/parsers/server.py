"""The arguments of ``serve`` and its clients (``submit``, ``status``, ...), ``connect``, ``new-token``; the handlers are in
:mod:`arena.cli.server` (the clients) and :mod:`arena.cli.serve` (the server), imported when one runs."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cluster.options import add_backend_arguments
from arena.players.backoff import Backoff

DEFAULT_SERVER = "127.0.0.1:50500"


def add_server_commands(sub: Any) -> None:
    """Add the server's subcommands to ``arena``'s subparsers."""
    p = sub.add_parser("serve", help="run the arena as a long-lived gRPC server (the control API)")
    p.add_argument("--listen", default=DEFAULT_SERVER,
                   help=f"address to listen on (default {DEFAULT_SERVER}; unix:/path for a Unix socket; beyond "
                        f"loopback a token is required)")
    p.add_argument("--data", default="runs/server",
                   help="the data folder: one run folder per tournament (default runs/server)")
    p.add_argument("--token-file", help="a file holding the token every call must carry")
    p.add_argument("--tls-cert", help="TLS certificate chain (PEM); with --tls-key")
    p.add_argument("--tls-key", help="TLS private key (PEM; refused when other users can read it); with --tls-cert")
    p.add_argument("--concurrency", type=int, default=4,
                   help="games in flight at once, over all tournaments (default 4)")
    p.add_argument("--max-tournaments", type=int, default=4,
                   help="tournaments running at once; the others wait QUEUED (default 4)")
    p.add_argument("--watch-buffer", type=int, default=1024,
                   help="events a watcher may have waiting before the server sheds (default 1024; see "
                        "proto/dominoes/v1/arena.proto, WatchReply)")
    p.add_argument("--max-streams", type=int, default=200,  # arena/server/streams.py MAX_STREAMS
                   help="streams open at once over all clients: watches, health watches, reflection (default 200); "
                        "one more gets RESOURCE_EXHAUSTED, and quick calls always have threads of their own")
    p.add_argument("--max-streams-per-client", type=int, default=100,  # streams.py MAX_STREAMS_PER_CLIENT
                   help="streams open at once from one client address (default 100)")
    p.add_argument("--bots", metavar="FILE",
                   help="the registry of bots this server runs: [[bots]] tables as in a tournament file, and an "
                        "optional [limits] (their defaults, and the most a submission may ask); submissions name "
                        "these bots")
    p.add_argument("--allow-commands", action="store_true",
                   help="also run the bots a submission gives by command or address (each in its sandbox, within "
                        "the registry's [limits]): anyone who may submit can then run programs on this machine")
    p.add_argument("--max-entrants", type=int, default=64, help="entrants per tournament (default 64)")
    p.add_argument("--max-bot-processes", type=int, default=64,
                   help="bot processes alive at once over the queued and running tournaments (default 64)")
    add_backend_arguments(p)
    p.add_argument("--http", nargs="?", const="127.0.0.1:8080", metavar="ADDR",
                   help="also serve the web dashboard at HOST:PORT (127.0.0.1:8080 when no address is given); beyond "
                        "loopback it asks for the token of --token-file, unless --http-public")
    p.add_argument("--http-public", action="store_true",
                   help="make the web dashboard a read-only spectators' site: without the token, finished games and "
                        "public facts only")
    p.add_argument("--http-host", action="append", metavar="NAME",
                   help="a name the web dashboard answers for in a request's Host header, on any port (repeatable; "
                        "default: only the host of --http, and localhost, 127.0.0.1 and [::1] when it listens on "
                        "loopback or every interface; any other Host gets 421, against DNS rebinding)")
    p.add_argument("--league", action="append", metavar="FILE",
                   help="also run the league of this file (repeatable: one server runs several leagues): authors "
                        "upload their bots (arena league ...), each version is built and checked; needs --token-file "
                        "(the operator's token)")
    p.add_argument("--database", metavar="URL",
                   help="the leagues' database: sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/DATABASE "
                        "(default: SQLite, league.db in the data folder)")
    p.add_argument("--kit-cache", metavar="DIR",
                   help="the kits' prepared caches that the leagues' offline builds read (filled by arena league "
                        "prepare-kits; default: $ARENA_KIT_CACHE, else ~/.cache/dominoes-arena/league-kits)")
    p.set_defaults(handler="arena.cli.serve:cmd_serve")

    p = sub.add_parser("submit", help="submit a tournament file to an arena server")
    p.add_argument("file", help="a tournament file (TOML) naming bots registered on the server")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.server:cmd_submit")

    p = sub.add_parser("status", help="the server's tournaments, or one tournament with its standings")
    p.add_argument("id", nargs="?", help="a tournament id (default: list every tournament)")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.server:cmd_status")

    p = sub.add_parser("watch", help="follow a tournament live: games, results, standings")
    p.add_argument("id", help="a tournament id")
    p.add_argument("--moves", action="store_true", help="also every move and every round's result")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.server:cmd_watch")

    p = sub.add_parser("games", help="the recorded games of a tournament (a table, or CSV with --csv)")
    p.add_argument("id", help="a tournament id")
    p.add_argument("--csv", action="store_true",
                   help="one CSV row per game, as `arena export RUN --csv` writes them (seeds empty until the "
                        "tournament's master seed is revealed)")
    p.add_argument("--out", metavar="FILE", help="with --csv: write to this file instead of stdout")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.server:cmd_games")

    p = sub.add_parser("fetch", help="print one game's record (protobuf JSON of GameRecord, one line)")
    p.add_argument("id", help="a tournament id")
    p.add_argument("game", type=int, help="the game's index in the schedule")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.server:cmd_fetch")

    p = sub.add_parser("cancel", help="cancel a queued or running tournament")
    p.add_argument("id", help="a tournament id")
    add_client_arguments(p)
    p.set_defaults(handler="arena.cli.server:cmd_cancel")


    p = sub.add_parser("connect", help="dial a bot on this machine in to an arena server, for a tournament that "
                                       "names it with dial_in = true")
    p.add_argument("--bot", required=True, help="the entrant's name in the tournament file ([[bots]] name)")
    add_client_arguments(p, token_help="a file holding the bot's token (its SHA-256 is the entry's token_sha256)")
    p.add_argument("--transport", choices=("unix", "tcp"), default="unix",
                   help="where the local gRPC bot listens: a Unix socket (default) or a loopback port")
    p.add_argument("--protocol", choices=("grpc", "stdio"), default="grpc",
                   help="how the local bot talks: gRPC (default) or JSON lines on stdin/stdout")
    p.add_argument("--startup-ms", type=int, default=15000, help="time for the local bot to start (default 15000)")
    p.add_argument("--reconnect", type=int, default=Backoff.attempts, metavar="N",
                   help=f"when the connection drops, dial again, at most N times in a row without being welcomed "
                        f"(default {Backoff.attempts}; 0: never), after {Backoff.first_s:g} s, doubling up to "
                        f"{Backoff.most_s:g} s; a refused token or a clean end from the server stops at once")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ... to start the bot (not sandboxed: "
                                                            "it is your own program, on your own machine)")
    p.set_defaults(handler="arena.cli.server:cmd_connect")

    p = sub.add_parser("new-token", help="write a new random token for a dial-in bot and print its SHA-256")
    p.add_argument("file", help="where to write the token (mode 600; refused if it exists)")
    p.set_defaults(handler="arena.cli.server:cmd_new_token")


def add_client_arguments(p: argparse.ArgumentParser, token_help: str = "a file holding the server's token") -> None:
    p.add_argument("--server", default=DEFAULT_SERVER, help=f"the arena server (default {DEFAULT_SERVER})")
    p.add_argument("--token-file", help=token_help)
    p.add_argument("--tls-ca", help="connect with TLS, trusting this PEM certificate")
    p.add_argument("--tls", action="store_true", help="connect with TLS, trusting the system's roots")
    p.add_argument("--tls-server-name", help="the name the server's certificate must carry (default: the host)")
