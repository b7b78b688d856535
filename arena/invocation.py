"""How to call this arena again (:func:`arena_command`), for the commands it prints for people to type: replay a
game, call the server again, check and upload a new bot (a bot's README). Below the command line and the league,
which both print such commands, so that the league need not import the command line for it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def arena_command(argv0: str | None = None) -> str:
    """How to call this arena again, as the user can type it in the same folder: ``arena`` when that name on the
    PATH is this very program, else the path it was started by (``.venv/bin/arena``: set-up puts nothing on the
    PATH), or ``python -m arena`` when it was started that way."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if Path(argv0).name == "__main__.py":
        return f"{shlex.quote(sys.executable)} -m arena"
    if os.sep not in argv0:
        return shlex.quote(argv0)  # found on the PATH by that name
    on_path = shutil.which("arena")
    if on_path is not None and Path(on_path).resolve() == Path(argv0).resolve():
        return "arena"
    return shlex.quote(argv0)


__all__ = ["arena_command"]
