"""The ladder in-process, as its tests drive it: versions made ready without the pipeline (their source folder where
the pipeline puts it), a league file's game and ladder, the ladder run until a fact holds (no sleeps), the log's
events in a list. Used by tests/league/play/test_ladder.py and tests/cluster/test_ray.py (the ladder on Ray)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import trio

from arena.league.authors import create_author
from arena.league.rules.config import league_from_dict
from arena.league.rules.lifecycle import BUILDING, CHECKING, DONE, READY
from arena.league.rules.model import Runnable
from arena.league.storage.db import AsyncDatabase, Database, open_database
from arena.league.play.ladder import Ladder
from arena.league.intake.pipeline import Served, open_to_the_bot
from support.league import MANIFEST, bot_folder
from support.paths import ROOT

EXAMPLES = ROOT / "bots" / "python"
QUICK_SEARCH = ROOT / "tests" / "bots" / "quick_search_bot.py"
"""The search example's player held to 100 playouts a decision: a search bot whose games take seconds."""


class Log:
    """The server log's interface, kept in a list (the ladder's events are what these tests read)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **values: Any) -> None:
        self.events.append((event, values))

    warning = error = info


BLOCK = {"variant": "block", "options": {"target": 1}}
"""The ladder's usual game: Block to one point, two players."""


def league_config(game: dict[str, Any] = BLOCK, **ladder: Any):
    return league_from_dict({"name": "test", "time": {"move_ms": 2000, "startup_ms": 30000}, **game,
                             "ladder": ladder})


def ready_version(database: Database, league_id: int, work: Path, name: str, source: Path | str,
                  author_name: str = "") -> int:
    """A bot with one ready version whose source folder is where the pipeline puts it; its author is
    ``author_name`` (created when new), or one of its own."""
    author_name = author_name or f"author-{name}"
    known = {a.name: a for a in database.authors()}
    author = known[author_name] if author_name in known else create_author(database, author_name)[0]
    bot = database.add_bot(league_id, author.id, name)
    return newer_version(database, bot.id, work, (name.encode().hex() * 64)[:64], source)


def newer_version(database: Database, bot_id: int, work: Path, sha: str, source: Path | str) -> int:
    """A new ready version of bot ``bot_id`` (its archive's SHA-256 ``sha``), which becomes the bot's active one;
    its source folder where the pipeline puts it."""
    version, _ = database.add_version(bot_id, sha)
    # As the pipeline leaves a python version: built into a folder of its own, with the command that runs it.
    runnable = Runnable((sys.executable, "bot.py"), f"{version.id}/src", "grpc")
    for state in (BUILDING, CHECKING, READY):
        database.transition(version.id, state, runnable=runnable if state == CHECKING else None)
    src = bot_folder(work / str(version.id) / "src", source, MANIFEST)
    (work / str(version.id)).chmod(0o711)
    open_to_the_bot(src)
    return version.id


async def play_until(ladder: Ladder, database: AsyncDatabase, done: Any) -> None:
    """Run the ladder until ``done(database)`` holds, looking after every table's end (no sleeps)."""
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        while True:
            ended = ladder.ended  # taken before looking: a table ending meanwhile sets this very event
            if await database.run(done):
                break
            await ended.wait()
        nursery.cancel_scope.cancel()


async def until_table_done(ladder: Ladder, database: Any, table_id: int, seconds: float = 300) -> None:
    """Wait, with a generous bound, for table ``table_id`` to be done, looking after every table's end (the ladder
    runs in the caller's nursery; ``database`` is the synchronous one)."""
    with trio.fail_after(seconds):
        while True:
            ended = ladder.ended  # taken before looking: a table ending meanwhile sets this very event
            if database.table(table_id).state == DONE:
                return
            await ended.wait()


def done_tables(count: int) -> Any:
    return lambda database, league_id: len(database.tables_in(league_id, [DONE])) >= count


def setup(database_url: str, tmp_path: Path, bots: dict[str, Path | str], game: dict[str, Any] = BLOCK,
          authors: dict[str, str] | None = None, **ladder: Any):
    """A league of ``game`` with ``bots`` (name to source) ready, each of the author ``authors`` names for it, or
    of one of its own."""
    database = open_database(database_url)
    config = league_config(game, **ladder)
    league_id = database.ensure_league(config.name, config.title, config.variant).id
    work = tmp_path / "league" / "versions"
    ids = {name: ready_version(database, league_id, work, name, source, (authors or {}).get(name, ""))
           for name, source in bots.items()}
    return database, Served(config, league_id), work, ids


STUCK = """import sys
import threading

from arena.botkit import serve


def choose(request):
    print("ASKED", file=sys.stderr, flush=True)  # to its log: what the test waits for
    threading.Event().wait()  # and it never answers


if __name__ == "__main__":
    serve(choose, name="stuck")
"""
"""A bot that never answers its first decision (within a move time of ten minutes: only its leaving ends it)."""
PATIENT = {"variant": "draw", "options": {"target": 1}, "time": {"move_ms": 600_000, "startup_ms": 30000}}
"""A game that waits ten minutes a move, for a stuck bot: Draw, whose every hand asks each seat for a decision
early (one that cannot play draws until it can), where a hand of Block can end blocked before one seat is asked."""
STOPPED_BY_THE_ARENA = ("crashed", "the bot is unreachable or crashed: the connection to the bot was closed (the arena "
                                   "stopped it)")
"""The fault (kind, message) of a stuck bot's game in flight when its entrant is withdrawn: its bot was stopped, so
the game ends at once with this fault (docs/explanation/league-ladder.md#leaving-mid-table), not by its clock."""


def asked(folder: Path, count: int) -> Any:
    """Whether ``count`` of the stuck bot's processes at the table in ``folder`` were asked for a decision."""
    return lambda: sum("ASKED" in log.read_text(errors="replace")
                       for log in (folder / "logs").rglob("stuck-v1*.log")) >= count
