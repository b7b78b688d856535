"""A version's bot logs at one ladder table: what its processes wrote there, for its author (or the operator) to read.

A table's run folder (:mod:`.table_run`, laid out by :class:`~arena.records.run_folder.RunFolder`) keeps one log
per bot process in its ``logs/``, named by the process (:func:`~arena.tournament.pools.entrant_logs` finds an
entrant's). :func:`table_log` is the one way any client (the gRPC call, the web's page of an author's own) reads
them, and it refuses, each with one line: another author's version (never another author's data), an unknown
table or version, a version that did not sit at the table, and a table not ended yet: a deal set's rotations play
the same deals from other seats, so a live log of one rotation's process (what the bot saw of its hand) would tell
its author the deal that another rotation is still playing.

The text is the bot's own, hostile output: it is given as bytes, exactly as written, and each client shows it
without its control characters. A log is capped at the bot's ``log_mb`` per start, and a process may start more
than once, so a reply gives each log's tail, the reply's budget (:data:`REPLY_BYTES`) shared by the version's logs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.league.authors import owned_version
from arena.league.play.table_run import entrant_name
from arena.league.rules.errors import NotFound, StateError
from arena.league.rules.lifecycle import DONE, TABLE_FAILED
from arena.league.rules.model import LadderTable
from arena.league.rules.permissions import Caller
from arena.league.storage.db import Database
from arena.protocol import MAX_MESSAGE_BYTES
from arena.records.run_folder import RunFolder
from arena.tournament.pools import entrant_logs

REPLY_BYTES = MAX_MESSAGE_BYTES // 2
"""The bytes of log one reply holds at most, all its logs together: half the message limit, so the rest of the
reply (the table, the names) always fits."""
ENDED = (DONE, TABLE_FAILED)


@dataclass(frozen=True)
class BotLog:
    """One process's log: its path relative to the table's logs folder, its tail, its whole size."""

    name: str
    tail: bytes
    size: int

    @property
    def truncated(self) -> bool:
        return len(self.tail) < self.size


@dataclass(frozen=True)
class TableLog:
    """A version's logs at a table that ended."""

    table: LadderTable
    version: str
    """The version's name at the table (``bot-vN``)."""
    logs: list[BotLog]


def table_log(database: Database, caller: Caller, table_id: int, version_id: int,
              folder_of: Callable[[LadderTable], Path], budget: int = REPLY_BYTES) -> TableLog:
    """The logs of version ``version_id``'s processes at table ``table_id`` (on the database's thread: it reads the
    files too), checked in this order: the version is the caller's (PermissionDenied first, so another author's
    version tells nothing of its tables), the table exists and the version sat at it (NotFound), the table ended
    (StateError). ``folder_of``: the table's run folder (the ladder's; NotFound for a league without one)."""
    version = owned_version(database, caller, version_id, "read the table logs of")
    table = database.table(table_id)
    if version_id not in table.versions:
        raise NotFound(f"version {version_id} did not sit at table {table_id}")
    if table.state not in ENDED:
        raise StateError(f"table {table_id} is {table.state}: its logs are given once it has ended (a live log would "
                         f"show a deal its other rotations still play)")
    bot = next(bot for bot in database.bots(table.league_id) if bot.id == version.bot_id)
    entrant = entrant_name(bot.name, version)
    logs_folder = RunFolder(folder_of(table)).bot_logs
    files = entrant_logs(logs_folder, entrant)
    share = budget // max(1, len(files))
    return TableLog(table, entrant, [read_tail(path, logs_folder, share) for path in files])


def read_tail(path: Path, folder: Path, limit: int) -> BotLog:
    """The last ``limit`` bytes of a log file (all of it when it is smaller), named relative to ``folder``."""
    with open(path, "rb") as log:
        size = log.seek(0, 2)
        log.seek(max(0, size - limit))
        return BotLog(path.relative_to(folder).as_posix(), log.read(limit), size)
