"""``arena league prepare-kits`` and ``arena league copy-database``: no clients, the operator's commands on the
server's machine, the first filling the kits' caches that the offline builds read, the second on the leagues'
database itself (:mod:`arena.league.storage.copy`), with the server stopped. Apart from the clients of
:mod:`arena.cli.league`, which load neither the builds nor the database.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from arena.cli.client import _refused
from arena.league.intake.build import KitCache, KitCacheError, prepare_kits
from arena.league.intake.kits import RECIPES
from arena.league.intake.pipeline import default_kit_cache
from arena.league.storage.copy import copy_database, total_rows
from arena.league.storage.db import shown_url, sqlite_url


def cmd_prepare_kits(args: argparse.Namespace) -> int:
    """One line per kit as its cache is filled; a kit that cannot be prepared is one error line, exit status 1."""
    cache = Path(args.cache).expanduser() if args.cache else default_kit_cache()
    kits = [k.strip() for k in args.kits.split(",")] if args.kits else list(RECIPES)
    for kit in kits:
        if kit not in RECIPES:
            return _refused(f"unknown kit {kit!r}; the league builds {', '.join(RECIPES)}")
    for kit in kits:
        if not RECIPES[kit].needs_cache:
            print(f"{kit}: nothing to prepare (its builds need no cache)")
            continue
        started = time.perf_counter()
        try:
            prepare_kits(cache, [kit])
        except (KitCacheError, OSError) as error:
            return _refused(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)
        print(f"{kit}: prepared in {KitCache(cache).of(kit)} ({time.perf_counter() - started:.1f} s)")
    return 0

def cmd_copy_database(args: argparse.Namespace) -> int:
    """The copy (:func:`arena.league.storage.copy.copy_database`), then each table's rows and what stays where it
    is; a refusal is its ``DatabaseError`` line, exit status 2."""
    data = Path(args.data).absolute()
    source = args.database or sqlite_url(data)
    copied = copy_database(source, args.to)
    print(f"copied {shown_url(source)}\n  into {shown_url(args.to)}:")
    width = max(len(table.name) for table in copied)
    print(f"  {'table':<{width}} {'rows':>9}")
    for table in copied:
        print(f"  {table.name:<{width}} {table.rows:>9,}")
    print(f"{total_rows(copied):,} rows in {len(copied)} tables, each table's rows counted alike in both databases "
          f"before the commit")
    print(f"the data folder {data} (uploads, builds, records, logs) stays where it is: start the server with the "
          f"same --data, and --database set to the URL given to --to")
    return 0
