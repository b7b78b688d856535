"""What the ``arena`` command imports: building its parser (``arena --help``, every command's ``--help``, a mistyped
line) loads none of what the commands do, and a command loads what it uses: a client of a server or a league its
gRPC client, not the league's database nor the web dashboard; ``arena run`` no league, no web, no database.

Each case runs in a fresh interpreter (what is imported is per process), which prints the modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SERVER_SIDE = ("sqlalchemy", "alembic", "starlette", "httpx", "hypercorn", "pyarrow", "ray", "pettingzoo", "pyspiel",
               "arena.league.storage", "arena.league.core", "arena.web", "arena.serve", "arena.server.core",
               "arena.bench.referee", "arena.bench.env")
"""What no client command and no ``arena run`` loads: the league's database, the web dashboard, the server itself,
the benchmarks, and the optional libraries of other commands."""
PARSER_FREE = (*SERVER_SIDE, "numpy", "openskill", "arena.bench.", "arena.tournament.standings", "arena.referee",
               "arena.players.builtin", "arena.cli.league", "arena.cli.server", "arena.cli.runs", "arena.cli.bench")
"""What building the parser loads on top of none of that: no numpy, no rating, no benchmark (but the list of its
frameworks), no referee, no command's handler."""

PARSER = """
import argparse, json, sys
from arena.cli import build_parser

def helps(parser):
    yield parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from helps(child)

parser = build_parser()
texts = list(helps(parser))
try:
    parser.parse_args(["league", "sign-up"])  # a missing argument: a usage error, exit status 2
except SystemExit as exit:
    assert exit.code == 2
print(json.dumps({"helps": len(texts), "modules": sorted(sys.modules)}))
"""

COMMAND = """
import json, sys
from arena.cli import build_parser, handler
args = build_parser().parse_args(sys.argv[1:])
handler(args.handler)
print(json.dumps({"helps": 0, "modules": sorted(sys.modules)}))
"""


def loaded(code: str, *argv: str) -> tuple[int, list[str]]:
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.splitlines()[-1])
    return found["helps"], found["modules"]


def heavy(modules: list[str], banned: tuple[str, ...]) -> list[str]:
    """The modules of ``banned`` (packages, with their submodules; a name ending in a dot: the submodules alone)."""
    return [m for m in modules if any(m == b or m.startswith(b if b.endswith(".") else b + ".") for b in banned)]


def test_building_the_parser_and_every_help_imports_no_command() -> None:
    helps, modules = loaded(PARSER)
    assert helps > 60  # every command and every verb of league, bench and webhook (72 today)
    assert heavy([m for m in modules if m != "arena.bench.frameworks"], PARSER_FREE) == []  # its names, no code
    assert "arena.cli.parsers.league" in modules  # the check sees what was loaded


@pytest.mark.parametrize("argv", [
    ["league", "sign-up", "team"],
    ["league", "status"],
    ["league", "standings"],
    ["league", "upload", "bot-folder", "--bot", "b"],
    ["league", "feed-url"],
    ["league", "add-member", "ann"],
    ["status"],
    ["watch", "t1"],
    ["submit", "tournament.toml"],
    ["connect", "--bot", "b", "--", "bot"],
    ["run", "tournaments/demo.toml"],
    ["export", "runs/demo", "--csv"],
    ["simulate"],
], ids=lambda argv: " ".join(argv[:2]))
def test_a_command_imports_what_it_uses(argv: list[str]) -> None:
    _, modules = loaded(COMMAND, *argv)
    assert heavy(modules, SERVER_SIDE) == []
    assert "grpc" in modules or argv[0] in ("run", "export", "simulate")


def test_the_server_and_the_database_commands_do_load_them() -> None:
    """The check can fail: the commands that need the server or the database import them on dispatch."""
    _, modules = loaded(COMMAND, "serve")
    assert {"arena.serve", "arena.web.app", "sqlalchemy"} <= set(modules)
    _, modules = loaded(COMMAND, "league", "copy-database", "--to", "sqlite:///x.db")
    assert "arena.league.storage.copy" in modules
