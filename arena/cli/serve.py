"""``arena serve``: the server itself, apart from its clients (:mod:`arena.cli.server`), which never load it."""

from __future__ import annotations

import argparse

from arena.serve import config_from_args, run


def cmd_serve(args: argparse.Namespace) -> int:
    """The server, until it is stopped (gRPC's own log lines stay quiet: GRPC_VERBOSITY, arena/cli/__init__.py)."""
    return run(config_from_args(args))
