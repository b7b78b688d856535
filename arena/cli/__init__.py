"""The ``arena`` command: one entry point, one subcommand per job, one module per group of commands.

:mod:`.rules` (``variants``, ``simulate``), :mod:`.bots` (``play``, ``check-bot``), :mod:`.runs` (``run``,
``replay``, ``export``), :mod:`.bench` (``bench ...``), :mod:`.server` (``serve`` and its clients) and :mod:`.league` (``league ...``); the options
they share are in :mod:`.options`. Each command's arguments are in :mod:`.parsers` (``parsers/league.py`` beside
``league.py``): building the parser imports none of what the commands do, and :func:`main` imports the one
command's handler it runs (see :mod:`arena.cli.parsers`).

Errors a user can cause (an unknown variant, a bad option) print one line ``error: ...`` and exit with status 2;
nothing a user types produces a traceback. They are caught once, in :func:`main`.
"""

from __future__ import annotations

import os

# gRPC reads GRPC_VERBOSITY once, when it is first imported (the command modules import it): its own log lines
# (e.g. a failed bind beside `arena serve`'s one `error:` line) only with GRPC_VERBOSITY=ERROR/DEBUG.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import argparse  # noqa: E402
import importlib  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from typing import TextIO

from arena.cli.parsers.bench import add_bench_commands  # noqa: E402
from arena.cli.parsers.bots import add_bot_commands  # noqa: E402
from arena.cli.parsers.league import add_league_commands  # noqa: E402
from arena.cli.parsers.reference import add_reference_commands  # noqa: E402
from arena.cli.parsers.rules import add_rules_commands  # noqa: E402
from arena.cli.parsers.runs import add_run_commands  # noqa: E402
from arena.cli.parsers.server import add_server_commands  # noqa: E402
from arena.errors import ArenaError  # noqa: E402
from arena.players.wire_log import WIRE_ENV, WIRE_LOG, wire_wanted  # noqa: E402

EXIT_USAGE = 2
LOG_LEVELS = ("debug", "info", "warning", "error")


class StderrHandler(logging.StreamHandler[TextIO]):
    """Log lines to whatever ``sys.stderr`` is when each is written (a test that captures it swaps it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        """StreamHandler sets its stream once; this one has none of its own."""


LOG_HANDLER = StderrHandler()
LOG_HANDLER.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))


def configure_logging(level: str) -> None:
    """The arena's own log lines (the ``arena`` loggers) on stderr from ``level`` up; the wire log (every request to
    a bot and its reply, :mod:`arena.players.client`) at ``debug``, or at any level when ``ARENA_LOG_WIRE`` asks."""
    logger = logging.getLogger("arena")
    logger.setLevel(level.upper())
    if LOG_HANDLER not in logger.handlers:
        logger.addHandler(LOG_HANDLER)
    WIRE_LOG.setLevel(logging.DEBUG if wire_wanted() else logging.NOTSET)


def build_parser() -> argparse.ArgumentParser:
    """Every command, in the order ``arena --help`` lists them."""
    parser = argparse.ArgumentParser(prog="arena", description="A tournament arena for dominoes bots.")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                        help=f"the arena's log lines on stderr from this level up (default warning); debug also logs "
                             f"every request to a bot and its reply, shortened (as does {WIRE_ENV}=1)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_rules_commands(sub)
    add_bot_commands(sub)
    add_run_commands(sub)
    add_reference_commands(sub)
    add_bench_commands(sub)
    add_server_commands(sub)
    add_league_commands(sub)
    return parser


def handler(name: str) -> Callable[[argparse.Namespace], int | None]:
    """The function a command runs, named ``"arena.cli.league:cmd_status"`` by its parser: its module is imported
    now, once the command line is parsed, so that building the parser imports no command's dependencies."""
    module, function = name.split(":")
    found: Callable[[argparse.Namespace], int | None] = getattr(importlib.import_module(module), function)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--against" in argv:
        # argparse never gives `--` to an option that takes the rest of the line; `--against -- CMD` is documented.
        at = argv.index("--against")
        if argv[at + 1:at + 2] == ["--"]:
            del argv[at + 1]
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    try:
        return int(handler(args.handler)(args) or 0)
    except ArenaError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
