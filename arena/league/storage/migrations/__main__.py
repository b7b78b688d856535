"""Write a new, empty migration: ``python -m arena.league.storage.migrations "what changes"`` (for developers)."""

from __future__ import annotations

import sys

from alembic import command
from alembic.script import ScriptDirectory

from arena.league.storage.db import alembic_config


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].strip():
        print('usage: python -m arena.league.storage.migrations "what the migration changes"', file=sys.stderr)
        return 2
    config = alembic_config()
    number = len(list(ScriptDirectory.from_config(config).walk_revisions())) + 1
    command.revision(config, message=argv[0], rev_id=f"{number:04d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
