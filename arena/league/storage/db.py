"""The league's state in a real database: authors, bots, their versions and states, the games' index and results,
and ratings. Game records stay in record files (the source of truth for results; every rating can be rebuilt from
them); the database holds what changes and what must be found fast.

SQLAlchemy 2 Core (tables and statements, no ORM) over a **sync** engine. The schema is declared in
:mod:`arena.league.storage.tables` (its ``METADATA``) and built by the Alembic migrations shipped in
``arena/league/storage/migrations/``, which :func:`open_database` runs at every open (a database already at the
newest revision is left as it is), so an operator never runs Alembic and needs no ``alembic.ini``.

- **SQLite** is the default: a file in the data folder (:func:`sqlite_url`), in WAL mode (readers do not block the
  writer, and a killed server loses no committed transaction) with foreign keys enforced, both set on every new
  connection by an engine ``connect`` event.
- **PostgreSQL** by URL: ``postgresql+psycopg://user:password@host/database`` (psycopg 3; a bare
  ``postgresql://`` means the same driver).

**Never from the trio loop.** Every call here blocks on disk or network. Trio code goes through
:class:`AsyncDatabase`, which runs each call in a worker thread with ``trio.to_thread.run_sync`` under a capacity
limiter of one: one writer at a time (SQLite allows no more, and it keeps the league's writes in a simple order on
PostgreSQL too), and the loop keeps serving games meanwhile. A call that has started is not abandoned when its
caller is cancelled: a write either commits or rolls back, never half-way.

This module opens the database and puts the gateway together: :class:`Database` is every aggregate's calls on one
engine, each aggregate's statements in a module of its own name in this package (``leagues.py``, ``authors.py``,
``bots.py``, ``versions.py``, ``games.py`` with the ratings, ``ladder.py``, ``challenges.py``, ``finals.py`` with the
freeze, ``teams.py`` with sign-ups, invites and the audit log, ``notices.py`` with the teams' feeds and webhooks), over the
schema of ``tables.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import sqlalchemy as sa
import trio
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event
from sqlalchemy.engine import Engine

from arena.league.rules.errors import DatabaseError
from arena.league.storage.authors import AuthorsGateway
from arena.league.storage.challenges import ChallengesGateway
from arena.league.storage.finals import FinalsGateway
from arena.league.storage.games import GamesGateway
from arena.league.storage.gateway import first_line
from arena.league.storage.ladder import LadderGateway
from arena.league.storage.leagues import LeaguesGateway
from arena.league.storage.notices import NoticesGateway
from arena.league.storage.teams import TeamsGateway
from arena.league.storage.versions import VersionsGateway

# --- opening ------------------------------------------------------------------------------------------------------

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
DATABASE_FILE = "league.db"


def sqlite_url(data_folder: str | Path) -> str:
    """The default database: a SQLite file in the data folder."""
    return f"sqlite:///{Path(data_folder).resolve() / DATABASE_FILE}"


def open_database(url: str) -> Database:
    """An engine for ``url``, its schema migrated to the newest revision; or one :class:`DatabaseError` line."""
    engine = create_engine(url)
    try:
        migrate(engine)
    except sa.exc.SQLAlchemyError as error:
        engine.dispose()
        raise DatabaseError(f"cannot open the database {shown_url(url)}: {first_line(error)}") from None
    return Database(engine)


def create_engine(url: str) -> Engine:
    """A sync engine for a SQLite or PostgreSQL URL, with the league's connection settings."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise DatabaseError(f"cannot read the database URL {url!r}: expected sqlite:///PATH or "
                            f"postgresql+psycopg://USER:PASSWORD@HOST/DATABASE") from None
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername not in ("sqlite", "sqlite+pysqlite", "postgresql+psycopg"):
        raise DatabaseError(f"unsupported database {parsed.drivername!r} in {shown_url(url)}: use sqlite:///PATH or "
                            f"postgresql+psycopg://...")
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise DatabaseError(f"the league's SQLite database must be a file, got {shown_url(url)}")
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(parsed, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_settings)
        return engine
    return sa.create_engine(parsed, pool_pre_ping=True)


def _sqlite_settings(dbapi_connection: Any, _record: Any) -> None:
    """On every new SQLite connection: WAL (readers beside the writer; committed data survives a kill), foreign keys
    enforced (SQLite's default is off), and a writer that waits for a lock rather than failing at once."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")  # in WAL: durable across a crash of the process, fast
        cursor.execute("PRAGMA busy_timeout=30000")
    finally:
        cursor.close()


def alembic_config() -> Config:
    """The migrations' Alembic configuration, built here: an operator needs no ``alembic.ini``."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration. On SQLite, with foreign keys off while the migrations run (as
    SQLite asks of a schema change: a migration that alters a table copies it, and dropping the old copy would
    otherwise break the rows of other tables that refer to it), then every reference checked before the commit."""
    config = alembic_config()
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:  # a no-op inside a transaction: set before it begins
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
        try:
            with connection.begin():
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").first() if sqlite else None
                if broken is not None:
                    raise DatabaseError(f"the migration left a row of table {broken[0]!r} (rowid {broken[1]}) "
                                        f"referring to no row of {broken[2]!r}; nothing was changed")
        finally:
            if sqlite:
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                connection.commit()


def newest_revision() -> str | None:
    """The newest migration's revision: where :func:`migrate` brings a database."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def schema_revision(engine: Engine) -> str | None:
    """The revision the database is at (None before any migration)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def shown_url(url: str) -> str:
    """A URL fit for a message or the log: its password hidden."""
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return repr(url)


def sqlite_file(url: str) -> Path | None:
    """The SQLite file of a database URL (what no build may see when it lies outside the data folder); None for
    PostgreSQL."""
    parsed = sa.make_url(url)
    return Path(parsed.database).resolve() if parsed.get_backend_name() == "sqlite" and parsed.database else None


# --- the calls ----------------------------------------------------------------------------------------------------

class Database(LeaguesGateway, AuthorsGateway, TeamsGateway, VersionsGateway, GamesGateway, LadderGateway,
               ChallengesGateway, FinalsGateway, NoticesGateway):
    """The league's database through sync calls, each its own transaction: every aggregate's calls (one module of
    this package each) on one engine. Not for the trio loop: see :class:`AsyncDatabase`."""


# --- from trio ----------------------------------------------------------------------------------------------------

P = ParamSpec("P")
T = TypeVar("T")


class AsyncDatabase:
    """The database for trio code: each call runs in a worker thread, one at a time (a single writer), so the loop
    never blocks on the database. Use ``await db.run(Database.add_version, bot_id, sha)``."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._one_writer = trio.CapacityLimiter(1)

    @classmethod
    async def open(cls, url: str) -> AsyncDatabase:
        """Open (and migrate) in a worker thread too: a migration or a far server takes its time."""
        return cls(await trio.to_thread.run_sync(open_database, url))

    async def run(self, call: Callable[Concatenate[Database, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``call(database, *args, **kwargs)`` in a worker thread. Not abandoned when the caller is cancelled:
        the call finishes (its transaction commits or rolls back) before the cancellation is delivered."""
        return await trio.to_thread.run_sync(functools.partial(call, self.database, *args, **kwargs),
                                             limiter=self._one_writer)

    async def close(self) -> None:
        await trio.to_thread.run_sync(self.database.close, limiter=self._one_writer)
