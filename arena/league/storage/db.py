"""The league's state in a real database: authors, bots, their versions and states, the games' index and results,
and ratings. Game records stay in record files (the source of truth for results; every rating can be rebuilt from
them); the database holds what changes and what must be found fast.

SQLAlchemy 2 Core (tables and statements, no ORM) over a **sync** engine. The schema is declared here
(:data:`METADATA`) and built by the Alembic migrations shipped in ``arena/league/storage/migrations/``, which
:func:`open_database` runs at every open (a database already at the newest revision is left as it is), so an
operator never runs Alembic and needs no ``alembic.ini``.

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
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Concatenate, Iterable, ParamSpec, Sequence, TypeVar

import sqlalchemy as sa
import trio
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from arena.league.clock import utc_now
from arena.league.rules.errors import DatabaseError, LeagueError, NotFound, StateError
from arena.league.rules.lifecycle import (DONE, INTERRUPTED, PLAYING, QUEUED, READY, RETIRED, START_FAILURES, STATES,
                                          SUSPENDED, TABLE_FAILED, TABLE_STATES, UNFINISHED, UPLOADED,
                                          active_version, check_target, check_transition, suspension)
from arena.league.rules.model import (ONLINE, Author, Bot, ChallengeRow, Freeze, LadderTable, League, RateSides, Rating,
                                      Runnable, Seat, Version)
from arena.league.rules.retention import DELETABLE

# --- the schema ---------------------------------------------------------------------------------------------------

METADATA = sa.MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})
"""Named constraints, so a later migration can name the one it alters on SQLite and PostgreSQL alike."""

SHA256 = re.compile(r"[0-9a-f]{64}")
NAME_LENGTH = 64

leagues = sa.Table(
    "leagues", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False, unique=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("variant", sa.String(NAME_LENGTH), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
authors = sa.Table(
    "authors", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
)
"""Only a token's SHA-256 is stored (see :mod:`.authors`): the database alone lets no one act as an author."""
bots = sa.Table(
    "bots", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=False, index=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("league_id", "name"),
)
"""A bot's name is unique in its league (standings show it), whoever its author."""
versions = sa.Table(
    "versions", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("build_log", sa.Text, nullable=True),
    sa.Column("check_report", sa.JSON, nullable=True),
    sa.Column("start_failures", sa.Integer, nullable=False, server_default="0"),
    sa.Column("run_command", sa.JSON, nullable=True),
    sa.Column("run_folder", sa.Text, nullable=True),
    sa.Column("run_protocol", sa.String(16), nullable=True),
    sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("dial_in_sha256", sa.String(64), nullable=True),
    sa.UniqueConstraint("bot_id", "sha256"),
    sa.UniqueConstraint("bot_id", "number"),
    sa.CheckConstraint(sa.column("state").in_(STATES), name="state"),
)
"""One row per distinct archive of a bot: the same archive uploaded twice is one version (unique bot and SHA-256).
``run_*`` say how its built bot runs (set when its build succeeded): the command, its folder (relative to the league's
versions folder, so a moved data folder keeps working) and its protocol. ``deleted_at`` marks a version deleted to
keep its bot within ``authors.versions_kept``: the row stays (games and ratings refer to it), its files are gone.
``dial_in_sha256`` marks a dial-in version (no archive, no build: its author's machine plays it over a dial-in stream):
the SHA-256 of its bot token, the token itself never stored."""
games = sa.Table(
    "games", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("game_key", sa.String(200), nullable=False),
    sa.Column("line", sa.Integer, nullable=True),
    sa.Column("played_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("league_id", "record", "game_key"),
    sa.Index(None, "league_id", "played_at"),
)
"""The index of played games: where each one's record is (its file, its id there, its line when known)."""
game_seats = sa.Table(
    "game_seats", METADATA,
    sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False, index=True),
    sa.Column("score", sa.Integer, nullable=False),
    sa.Column("points", sa.Float, nullable=False),
)
"""Who sat where in each game and how it ended for them: the game's score and its share of the result (1 a win,
0.5 a draw of two, 0 a loss), what the rating fits read."""
ratings = sa.Table(
    "ratings", METADATA,
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), primary_key=True),
    sa.Column("system", sa.String(32), primary_key=True),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)
"""Each version's rating in each system (``openskill`` for matchmaking, a maximum-likelihood fit for the board)."""

ladder_tables = sa.Table(
    "tables", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("sequence", sa.Integer, nullable=True),
    sa.Column("single_games", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("league_id", "sequence"),
    sa.CheckConstraint(sa.column("state").in_(TABLE_STATES), name="state"),
    sa.Index(None, "league_id", "state"),
)
"""The ladder's queue: each table the matchmaker chose, with its one-line reason, queued -> playing -> done (or
failed, with why). ``sequence`` numbers the done tables in the order their results were rated (1, 2, 3...): the
online rating is a function of that order, so a recompute follows it. ``single_games`` says how a done table was
rated: false, its games as one deal set (one result); true, each game a result of its own, in the order of the games'
keys (a run without duplicate deals, each game a fresh deal: a table with a dial-in version). It is read from the
run when the table is rated, so that a recompute and the leaderboard's rebuild after a restart rate it the same.
Tables rated before the column existed were all rated as one result, which its default says."""
table_sides = sa.Table(
    "table_sides", METADATA,
    sa.Column("table_id", sa.Integer, sa.ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("side", sa.Integer, primary_key=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False, index=True),
)
"""The version of each side of a table (a side is a seat, or a team whose seats the version all holds)."""
challenges = sa.Table(
    "challenges", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
    sa.Column("opponent_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
    sa.Column("deal_sets", sa.Integer, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("result", sa.JSON, nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint(sa.column("state").in_(TABLE_STATES), name="state"),
    sa.Index(None, "league_id", "state"),
    sa.Index(None, "author_id", "created_at"),
)
"""Challenges (arena/league/play/challenges.py): an author's version against a named one, unrated, queued -> playing ->
done (``result``: the SPRT's verdict) or failed with why. ``author_id`` is None for the operator's."""
freezes = sa.Table(
    "freezes", METADATA,
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), primary_key=True),
    sa.Column("frozen_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("field", sa.JSON, nullable=False),
    sa.Column("finals", sa.JSON, nullable=True),
)
"""A frozen league (no more ladder tables or challenges): when, its field (the version ids active then) and its
finals (their settings, state and ranking, once started)."""


# --- moments -----------------------------------------------------------------------------------------------------

def _utc(moment: datetime | None) -> datetime | None:
    """A stored moment as an aware UTC datetime (SQLite hands back naive ones: they were written in UTC)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=timezone.utc)


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
        raise DatabaseError(f"cannot open the database {_shown(url)}: {_first_line(error)}") from None
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
        raise DatabaseError(f"unsupported database {parsed.drivername!r} in {_shown(url)}: use sqlite:///PATH or "
                            f"postgresql+psycopg://...")
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise DatabaseError(f"the league's SQLite database must be a file, got {_shown(url)}")
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


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration, with an Alembic configuration built here (no ``alembic.ini``)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def schema_revision(engine: Engine) -> str | None:
    """The revision the database is at (None before any migration)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def _shown(url: str) -> str:
    """A URL fit for a message: its password hidden."""
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return repr(url)


def _first_line(error: BaseException) -> str:
    original = getattr(error, "orig", None) or error
    return (str(original).strip().splitlines() or [type(original).__name__])[0]


# --- the calls ----------------------------------------------------------------------------------------------------

class Database:
    """The league's database through sync calls, each its own transaction. Not for the trio loop: see
    :class:`AsyncDatabase`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def close(self) -> None:
        self.engine.dispose()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # leagues

    def ensure_league(self, name: str, title: str, variant: str) -> League:
        """The league of this name, created at its first start; its title follows the file, its variant may not
        change (its games and ratings are of that variant)."""
        with self.engine.begin() as connection:
            row = connection.execute(sa.select(leagues).where(leagues.c.name == name)).one_or_none()
            if row is None:
                connection.execute(sa.insert(leagues).values(name=name, title=title, variant=variant,
                                                             created_at=utc_now()))
            elif row.variant != variant:
                raise LeagueError(f"league {name!r} plays {row.variant!r} in its database, its file says "
                                  f"{variant!r}: a league's variant cannot change (start a new league)")
            elif row.title != title:
                connection.execute(sa.update(leagues).where(leagues.c.id == row.id).values(title=title))
        return self.league(name)

    def league(self, name: str) -> League:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(leagues).where(leagues.c.name == name)).one_or_none()
        if row is None:
            raise NotFound(f"no league {name!r}")
        return League(row.id, row.name, row.title, row.variant)

    # authors

    def add_author(self, name: str, token_hash: str) -> Author:
        with self.engine.begin() as connection:
            if connection.execute(sa.select(authors.c.id).where(authors.c.name == name)).first() is not None:
                raise LeagueError(f"author {name!r} exists already")
            connection.execute(sa.insert(authors).values(name=name, token_hash=token_hash, created_at=utc_now()))
        return self.author(name)

    def author(self, name: str) -> Author:
        return self._one_author(authors.c.name == name, f"no author {name!r}")

    def author_by_id(self, author_id: int) -> Author:
        return self._one_author(authors.c.id == author_id, f"no author number {author_id}")

    def authors(self) -> list[Author]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(authors).order_by(authors.c.name)).all()
        return [_author(row) for row in rows]

    def authors_by_id(self, author_ids: Iterable[int]) -> dict[int, Author]:
        """These authors by id, in one query (those that exist)."""
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(authors).where(authors.c.id.in_(sorted(set(author_ids))))).all()
        return {row.id: _author(row) for row in rows}

    def token_holder(self, token_hash: str) -> tuple[Author, str] | None:
        """The author whose stored hash is ``token_hash``, with that stored hash (for the constant-time compare of
        :mod:`.authors`); None when none is."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(authors).where(authors.c.token_hash == token_hash)).one_or_none()
        return None if row is None else (_author(row), row.token_hash)

    def author_with_hash(self, name: str) -> tuple[Author, str]:
        """The author named, with its stored token hash: what the web's session cookie of the author is checked
        against (a new token or a revoke ends the author's sessions)."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(authors).where(authors.c.name == name)).one_or_none()
        if row is None:
            raise NotFound(f"no author {name!r}")
        return _author(row), row.token_hash

    def replace_token_hash(self, author_id: int, token_hash: str) -> None:
        """A new token for the author (the old one stops working); a revoked author is reinstated by it."""
        self._update_author(author_id, token_hash=token_hash, revoked_at=None)

    def revoke_author(self, author_id: int) -> None:
        self._update_author(author_id, revoked_at=utc_now())

    def _update_author(self, author_id: int, **values: Any) -> None:
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(authors).where(authors.c.id == author_id).values(**values))
        if done.rowcount != 1:
            raise NotFound(f"no author number {author_id}")

    def _one_author(self, where: Any, missing: str) -> Author:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(authors).where(where)).one_or_none()
        if row is None:
            raise NotFound(missing)
        return _author(row)

    # bots

    def add_bot(self, league_id: int, author_id: int, name: str) -> Bot:
        with self.engine.begin() as connection:
            taken = connection.execute(sa.select(bots.c.id).where(bots.c.league_id == league_id,
                                                                  bots.c.name == name)).first()
            if taken is not None:
                raise LeagueError(f"bot {name!r} exists already in this league")
            connection.execute(sa.insert(bots).values(league_id=league_id, author_id=author_id, name=name,
                                                      created_at=utc_now()))
        return self.bot(league_id, name)

    def bot(self, league_id: int, name: str) -> Bot:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(bots).where(bots.c.league_id == league_id,
                                                           bots.c.name == name)).one_or_none()
        if row is None:
            raise NotFound(f"no bot {name!r} in this league")
        return Bot(row.id, row.league_id, row.author_id, row.name)

    def bots(self, league_id: int, author_id: int | None = None) -> list[Bot]:
        query = sa.select(bots).where(bots.c.league_id == league_id).order_by(bots.c.name)
        if author_id is not None:
            query = query.where(bots.c.author_id == author_id)
        with self.engine.connect() as connection:
            return [Bot(row.id, row.league_id, row.author_id, row.name) for row in connection.execute(query)]

    # versions

    def add_version(self, bot_id: int, sha256: str) -> tuple[Version, bool]:
        """The version of this archive (by its SHA-256), created ``uploaded`` unless the bot has it already; and
        whether it was created. The same archive twice is one version."""
        if not SHA256.fullmatch(sha256):
            raise LeagueError(f"a version's SHA-256 must be 64 lowercase hexadecimal digits, got {sha256!r}")
        existing = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == sha256)
        if existing is not None:
            return existing, False
        now = utc_now()
        try:
            with self.engine.begin() as connection:
                number = connection.execute(sa.select(sa.func.coalesce(sa.func.max(versions.c.number), 0))
                                            .where(versions.c.bot_id == bot_id)).scalar_one() + 1
                connection.execute(sa.insert(versions).values(bot_id=bot_id, number=number, sha256=sha256,
                                                              state=UPLOADED, created_at=now, updated_at=now))
        except sa.exc.IntegrityError as error:  # the same archive inserted meanwhile, or no such bot
            existing = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == sha256)
            if existing is None:
                raise LeagueError(f"cannot add a version to bot number {bot_id}: {_first_line(error)} (no such "
                                  f"bot, or a second writer: the league writes through one)") from None
            return existing, False
        created = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == sha256)
        assert created is not None
        return created, True

    def add_dial_in_version(self, bot_id: int, token_sha256: str) -> Version:
        """A new dial-in version of the bot, ``ready`` at once (there is nothing to build: its author's machine
        plays it); ``token_sha256`` is its bot token's SHA-256. Its ``sha256`` (what a version is) is the SHA-256 of
        ``dial-in/<token_sha256>``, unique per token and telling nothing of it."""
        if not SHA256.fullmatch(token_sha256):
            raise LeagueError(f"a token's SHA-256 must be 64 lowercase hexadecimal digits, got {token_sha256!r}")
        identity = hashlib.sha256(f"dial-in/{token_sha256}".encode()).hexdigest()
        now = utc_now()
        with self.engine.begin() as connection:
            number = connection.execute(sa.select(sa.func.coalesce(sa.func.max(versions.c.number), 0))
                                        .where(versions.c.bot_id == bot_id)).scalar_one() + 1
            connection.execute(sa.insert(versions).values(
                bot_id=bot_id, number=number, sha256=identity, state=READY, created_at=now, updated_at=now,
                reason="dial-in: plays while its author's machine is connected", dial_in_sha256=token_sha256))
        created = self._version_where(versions.c.bot_id == bot_id, versions.c.sha256 == identity)
        assert created is not None
        return created

    def version(self, version_id: int) -> Version:
        found = self._version_where(versions.c.id == version_id)
        if found is None:
            raise NotFound(f"no version number {version_id}")
        return found

    def versions_by_id(self, version_ids: Iterable[int]) -> dict[int, Version]:
        """These versions by id, in one query (those that exist)."""
        return {v.id: v for v in self._versions_where(versions.c.id.in_(sorted(set(version_ids))))}

    def versions(self, bot_id: int, include_deleted: bool = False) -> list[Version]:
        """A bot's versions, oldest first; those deleted to respect ``versions_kept`` only when asked for."""
        where = [versions.c.bot_id == bot_id]
        if not include_deleted:
            where.append(versions.c.deleted_at.is_(None))
        return self._versions_where(*where)

    def versions_of_bots(self, bot_ids: Sequence[int]) -> list[Version]:
        """Every version of these bots, deleted ones too (their games keep them), in one query: a page naming each
        version of a league."""
        return self._versions_where(versions.c.bot_id.in_(sorted(set(bot_ids))))

    def active_versions(self, league_id: int) -> list[tuple[Bot, Version]]:
        """Each bot of the league with its active version (its newest ready one), bots without one left out: who
        plays on the ladder."""
        found = []
        for bot in self.bots(league_id):
            active = active_version(self.versions(bot.id))
            if active is not None:
                found.append((bot, active))
        return found

    def dial_in_versions(self, league_id: int) -> list[tuple[str, Version]]:
        """The league's dial-in versions that may play (ready, not deleted), each with its bot's name: those whose
        streams the server accepts."""
        found = self._versions_where(bots.c.league_id == league_id, versions.c.dial_in_sha256.is_not(None),
                                     versions.c.state == READY, versions.c.deleted_at.is_(None))
        names = {bot.id: bot.name for bot in self.bots(league_id)} if found else {}
        return [(names[version.bot_id], version) for version in found]

    def versions_in(self, state: str) -> list[Version]:
        return self._versions_where(versions.c.state == state, versions.c.deleted_at.is_(None))

    def mark_deleted(self, version_ids: Sequence[int], reason: str) -> list[Version]:
        """Delete versions to make room (their files are the caller's to remove): each becomes retired with
        ``reason``, marked deleted, and forgets how it ran; the rows stay, so their games and ratings keep their
        version. Only versions in :data:`DELETABLE` states change (one transaction); the changed ones."""
        if not version_ids:
            return []
        now = utc_now()
        with self.engine.begin() as connection:
            ids = connection.execute(sa.select(versions.c.id).where(
                versions.c.id.in_(version_ids), versions.c.state.in_(DELETABLE),
                versions.c.deleted_at.is_(None))).scalars().all()
            if ids:
                connection.execute(sa.update(versions).where(versions.c.id.in_(ids)).values(
                    state=RETIRED, reason=reason, deleted_at=now, updated_at=now, run_command=None,
                    run_folder=None, run_protocol=None))
        return [self.version(version_id) for version_id in ids]

    def archive_in_use(self, sha256: str) -> bool:
        """Whether a version not deleted (of any bot) still has this archive: the store keeps it while one does."""
        query = sa.select(versions.c.id).where(versions.c.sha256 == sha256, versions.c.deleted_at.is_(None))
        with self.engine.connect() as connection:
            return connection.execute(query.limit(1)).first() is not None

    def uploads_since(self, author_id: int, league_id: int, since: datetime) -> int:
        """How many versions the author's bots in a league gained since ``since`` (what the league's uploads-per-day
        limit counts)."""
        query = (sa.select(sa.func.count()).select_from(versions.join(bots))
                 .where(bots.c.author_id == author_id, bots.c.league_id == league_id,
                        versions.c.created_at >= since))
        with self.engine.connect() as connection:
            return connection.execute(query).scalar_one()

    def transition(self, version_id: int, to: str, reason: str | None = None, *, build_log: str | None = None,
                   check_report: Any = None, runnable: Runnable | None = None) -> Version:
        """Move a version to state ``to``, if its lifecycle allows it from the state it is in
        (:data:`arena.league.rules.lifecycle.TRANSITIONS`);
        otherwise one :class:`StateError`. ``failed`` and ``suspended`` need a reason. The change is a
        compare-and-set on the state read, so two workers cannot both move one version."""
        check_target(to, reason)
        current = self.version(version_id)
        check_transition(current, to)
        values: dict[str, Any] = {"state": to, "reason": reason, "updated_at": utc_now()}
        if build_log is not None:
            values["build_log"] = build_log
        if check_report is not None:
            values["check_report"] = check_report
        if runnable is not None:
            values.update(run_command=list(runnable.command), run_folder=runnable.folder,
                          run_protocol=runnable.protocol)
        if to == READY:
            values["start_failures"] = 0
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(versions)
                                      .where(versions.c.id == version_id, versions.c.state == current.state)
                                      .values(**values))
        if done.rowcount != 1:
            raise StateError(f"version {current.number} of its bot changed state meanwhile (it was {current.state})")
        return self.version(version_id)

    def record_start(self, version_id: int, failure: str | None, limit: int = START_FAILURES) -> Version:
        """A ready version started (``failure`` None: its count of failures in a row is reset) or failed to start
        (counted); ``limit`` failures in a row suspend it with the last one as the reason, as a tournament gives up
        on an entrant."""
        if failure is None:
            with self.engine.begin() as connection:
                connection.execute(sa.update(versions).where(versions.c.id == version_id)
                                   .values(start_failures=0))
            return self.version(version_id)
        with self.engine.begin() as connection:
            connection.execute(sa.update(versions).where(versions.c.id == version_id, versions.c.state == READY)
                               .values(start_failures=versions.c.start_failures + 1))
        version = self.version(version_id)
        reason = suspension(version, failure, limit)
        return version if reason is None else self.transition(version_id, SUSPENDED, reason)

    def requeue_interrupted(self) -> list[Version]:
        """At a server's start: versions left building or checking by a server that died are uploaded again, to be
        rebuilt from their archive (never lost, never half-ready)."""
        with self.engine.begin() as connection:
            ids = connection.execute(sa.select(versions.c.id).where(versions.c.state.in_(INTERRUPTED))).scalars().all()
            if ids:
                connection.execute(sa.update(versions).where(versions.c.id.in_(ids))
                                   .values(state=UPLOADED, reason="interrupted by a restart", updated_at=utc_now()))
        return [self.version(version_id) for version_id in ids]

    def _version_where(self, *where: Any) -> Version | None:
        found = self._versions_where(*where)
        return found[0] if found else None

    def _versions_where(self, *where: Any) -> list[Version]:
        query = (sa.select(versions, bots.c.author_id).select_from(versions.join(bots)).where(*where)
                 .order_by(versions.c.bot_id, versions.c.number))
        with self.engine.connect() as connection:
            return [_version(row) for row in connection.execute(query)]

    # games and ratings

    def record_game(self, league_id: int, record: str, game_key: str, seats: Sequence[Seat], *,
                    line: int | None = None, played_at: datetime | None = None) -> int:
        """Index one played game and its seats' results in one transaction; its id."""
        try:
            with self.engine.begin() as connection:
                return self._insert_game(connection, league_id, record, game_key, seats, line, played_at)
        except sa.exc.IntegrityError as error:
            raise LeagueError(f"cannot record game {game_key!r} of {record}: it is recorded already, or names an "
                              f"unknown league or version ({_first_line(error)})") from None

    def record_games(self, league_id: int, entries: Iterable[tuple[str, str, Sequence[Seat]]]) -> int:
        """Several games (record, game key, seats) in one transaction, as a rebuild from record files does."""
        count = 0
        with self.engine.begin() as connection:
            for record, game_key, seats in entries:
                self._insert_game(connection, league_id, record, game_key, seats, None, None)
                count += 1
        return count

    @staticmethod
    def _insert_game(connection: Connection, league_id: int, record: str, game_key: str, seats: Sequence[Seat],
                     line: int | None, played_at: datetime | None) -> int:
        game_id = connection.execute(sa.insert(games).values(
            league_id=league_id, record=record, game_key=game_key, line=line,
            played_at=played_at or utc_now()).returning(games.c.id)).scalar_one()
        connection.execute(sa.insert(game_seats), [
            {"game_id": game_id, "seat": number, "version_id": seat.version_id, "score": seat.score,
             "points": seat.points} for number, seat in enumerate(seats)])
        return game_id

    def game_count(self, league_id: int) -> int:
        with self.engine.connect() as connection:
            return connection.execute(sa.select(sa.func.count()).select_from(games)
                                      .where(games.c.league_id == league_id)).scalar_one()

    def seats_of(self, game_id: int) -> list[Seat]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(game_seats).where(game_seats.c.game_id == game_id)
                                      .order_by(game_seats.c.seat)).all()
        return [Seat(row.version_id, row.score, row.points) for row in rows]

    def set_rating(self, rating: Rating) -> None:
        """Store a version's rating in a system, replacing the one before."""
        with self.engine.begin() as connection:
            self._write_rating(connection, rating)

    @staticmethod
    def _write_rating(connection: Connection, rating: Rating) -> None:
        key = (ratings.c.version_id == rating.version_id, ratings.c.system == rating.system)
        values = {"mu": rating.mu, "sigma": rating.sigma, "games": rating.games, "updated_at": utc_now()}
        done = connection.execute(sa.update(ratings).where(*key).values(**values))
        if done.rowcount == 0:
            connection.execute(sa.insert(ratings).values(version_id=rating.version_id, system=rating.system,
                                                         **values))

    def ratings(self, league_id: int, system: str) -> list[Rating]:
        """The league's ratings in a system, best first."""
        query = (sa.select(ratings).select_from(ratings.join(versions).join(bots))
                 .where(bots.c.league_id == league_id, ratings.c.system == system)
                 .order_by(ratings.c.mu.desc(), ratings.c.version_id))
        with self.engine.connect() as connection:
            return [Rating(row.version_id, row.system, row.mu, row.sigma, row.games)
                    for row in connection.execute(query)]


    # the ladder's tables

    def queue_tables(self, league_id: int, chosen: Sequence[tuple[Sequence[int], str]]) -> list[LadderTable]:
        """New queued tables, each (versions per side, reason), in one transaction; in the order given."""
        ids = []
        with self.engine.begin() as connection:
            for versions_of_sides, reason in chosen:
                table_id = connection.execute(sa.insert(ladder_tables).values(
                    league_id=league_id, reason=reason, state=QUEUED, created_at=utc_now())
                    .returning(ladder_tables.c.id)).scalar_one()
                connection.execute(sa.insert(table_sides), [
                    {"table_id": table_id, "side": side, "version_id": version_id}
                    for side, version_id in enumerate(versions_of_sides)])
                ids.append(table_id)
        return [self.table(table_id) for table_id in ids]

    def start_table(self, table_id: int) -> LadderTable:
        """A queued table is being played (a playing one found at a restart stays playing, its start kept)."""
        with self.engine.begin() as connection:
            connection.execute(sa.update(ladder_tables).where(ladder_tables.c.id == table_id,
                                                              ladder_tables.c.state == QUEUED)
                               .values(state=PLAYING, started_at=utc_now()))
        return self.table(table_id)

    def fail_table(self, table_id: int, error: str) -> LadderTable:
        """An unfinished table that cannot be played (a bot that cannot start): failed with why; nothing rated."""
        with self.engine.begin() as connection:
            connection.execute(sa.update(ladder_tables).where(ladder_tables.c.id == table_id,
                                                              ladder_tables.c.state.in_(UNFINISHED))
                               .values(state=TABLE_FAILED, error=error, ended_at=utc_now()))
        return self.table(table_id)

    def finish_table(self, table_id: int, record: str, played: Sequence[tuple[str, Sequence[Seat]]],
                     *updates: RateSides, single_games: bool = False) -> bool:
        """A played table's results in ONE transaction: its games (``played``: game key and seats, from its record
        file ``record``), its versions' online ratings (``updates``, applied in turn, each to the ratings the one
        before left: one for a deal set, one per game for a table rated as ``single_games``, which is stored with
        it) and the table marked done with its place in the rating order. Whatever interrupts it, all of it or none
        is there; a table done already is left as it is (False), so a result is never applied twice."""
        with self.engine.begin() as connection:
            row = connection.execute(sa.select(ladder_tables).where(ladder_tables.c.id == table_id)
                                     .with_for_update()).one()
            if row.state not in UNFINISHED:
                return False
            league_id = row.league_id
            for game_key, seats in played:
                self._insert_game(connection, league_id, record, game_key, seats, None, None)
            sides = self._sides(connection, [table_id])[table_id]
            state = {version_id: self._rating_in(connection, version_id) for version_id in sides}
            for rate in updates:
                before = [state[version_id] for version_id in sides]
                for version_id, old, (mu, sigma) in zip(sides, before, rate(before), strict=True):
                    state[version_id] = Rating(version_id, ONLINE, mu, sigma, (old.games if old else 0) + 1)
            for rating in state.values():
                if rating is not None:
                    self._write_rating(connection, rating)
            sequence = connection.execute(sa.select(sa.func.coalesce(sa.func.max(ladder_tables.c.sequence), 0))
                                          .where(ladder_tables.c.league_id == league_id)).scalar_one() + 1
            connection.execute(sa.update(ladder_tables).where(ladder_tables.c.id == table_id)
                               .values(state=DONE, ended_at=utc_now(), sequence=sequence, error=None,
                                       single_games=single_games))
        return True

    def table(self, table_id: int) -> LadderTable:
        found = self._tables_where(ladder_tables.c.id == table_id)
        if not found:
            raise NotFound(f"no table number {table_id}")
        return found[0]

    def tables_in(self, league_id: int, states: Sequence[str], limit: int | None = None) -> list[LadderTable]:
        """The league's tables in these states, oldest first (or the newest ``limit`` of them, newest first)."""
        return self._tables_where(ladder_tables.c.league_id == league_id, ladder_tables.c.state.in_(states),
                                  limit=limit)

    def tables_of_versions(self, league_id: int, version_ids: Sequence[int], states: Sequence[str],
                           limit: int) -> list[LadderTable]:
        """The newest ``limit`` tables of the league in these states at which one of the versions sat, newest
        first (a bot's page: its versions' recent tables)."""
        sat = sa.select(table_sides.c.table_id).where(table_sides.c.version_id.in_(list(version_ids)))
        return self._tables_where(ladder_tables.c.league_id == league_id, ladder_tables.c.state.in_(states),
                                  ladder_tables.c.id.in_(sat), limit=limit)

    def recent_tables(self, league_id: int, since: datetime) -> list[LadderTable]:
        """The tables being played or queued, and those done since ``since``: what the matchmaker counts as a
        version's recent deal sets."""
        return self._tables_where(ladder_tables.c.league_id == league_id, sa.or_(
            ladder_tables.c.state.in_(UNFINISHED),
            sa.and_(ladder_tables.c.state == DONE, ladder_tables.c.ended_at >= since)))

    def rated_tables(self, league_id: int) -> list[LadderTable]:
        """Every done table of the league in the order its result was rated."""
        query = ladder_tables.c.league_id == league_id, ladder_tables.c.state == DONE
        return sorted(self._tables_where(*query), key=lambda t: t.sequence or 0)

    def games_of_record(self, league_id: int, record: str) -> list[tuple[str, list[Seat]]]:
        """The games recorded from one record file (a table's), by game key, with their seats."""
        return self.games_by_record(league_id, record).get(record, [])

    def games_by_record(self, league_id: int, record: str | None = None) -> dict[str, list[tuple[str, list[Seat]]]]:
        """The league's recorded games (or one record file's) per record file, each by game key with its seats:
        one query, so the leaderboard is rebuilt from every done table at once."""
        where = [games.c.league_id == league_id] + ([games.c.record == record] if record is not None else [])
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(games.c.record, games.c.game_key, game_seats).select_from(games.join(game_seats))
                .where(*where).order_by(games.c.id, game_seats.c.seat)).all()
        found: dict[str, dict[str, list[Seat]]] = {}
        for row in rows:
            found.setdefault(row.record, {}).setdefault(row.game_key, []).append(
                Seat(row.version_id, row.score, row.points))
        return {name: list(keyed.items()) for name, keyed in found.items()}

    def games_per_version(self, league_id: int) -> dict[int, int]:
        """Games recorded per version in the league (a game counts once for a version holding several seats)."""
        query = (sa.select(game_seats.c.version_id, sa.func.count(sa.distinct(game_seats.c.game_id)))
                 .select_from(game_seats.join(games)).where(games.c.league_id == league_id)
                 .group_by(game_seats.c.version_id))
        with self.engine.connect() as connection:
            return {version_id: count for version_id, count in connection.execute(query)}

    def _tables_where(self, *where: Any, limit: int | None = None) -> list[LadderTable]:
        query = sa.select(ladder_tables).where(*where)
        query = query.order_by(ladder_tables.c.id.desc()).limit(limit) if limit else query.order_by(ladder_tables.c.id)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
            sides = self._sides(connection, [row.id for row in rows])
        return [LadderTable(row.id, row.league_id, tuple(sides.get(row.id, ())), row.reason, row.state,
                            _utc(row.created_at), _utc(row.started_at), _utc(row.ended_at), row.error, row.sequence,
                            row.single_games)
                for row in rows]

    @staticmethod
    def _sides(connection: Connection, table_ids: Sequence[int]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for start in range(0, len(table_ids), 500):  # a bounded IN list, whatever the number of tables
            chunk = table_ids[start:start + 500]
            for row in connection.execute(sa.select(table_sides).where(table_sides.c.table_id.in_(chunk))
                                          .order_by(table_sides.c.table_id, table_sides.c.side)):
                found.setdefault(row.table_id, []).append(row.version_id)
        return found

    @staticmethod
    def _rating_in(connection: Connection, version_id: int, system: str = ONLINE) -> Rating | None:
        row = connection.execute(sa.select(ratings).where(ratings.c.version_id == version_id,
                                                          ratings.c.system == system)).one_or_none()
        return None if row is None else Rating(row.version_id, row.system, row.mu, row.sigma, row.games)


    # challenges

    def add_challenge(self, league_id: int, author_id: int | None, version_id: int, opponent_id: int,
                      deal_sets: int) -> ChallengeRow:
        with self.engine.begin() as connection:
            challenge_id = connection.execute(sa.insert(challenges).values(
                league_id=league_id, author_id=author_id, version_id=version_id, opponent_id=opponent_id,
                deal_sets=deal_sets, state=QUEUED, created_at=utc_now()).returning(challenges.c.id)).scalar_one()
        return self.challenge(challenge_id)

    def challenge(self, challenge_id: int) -> ChallengeRow:
        found = self._challenges_where(challenges.c.id == challenge_id)
        if not found:
            raise NotFound(f"no challenge number {challenge_id}")
        return found[0]

    def challenges_of(self, league_id: int, author_id: int | None = None,
                      states: Sequence[str] = TABLE_STATES) -> list[ChallengeRow]:
        """The league's challenges in these states (an author's only, when given), oldest first."""
        where = [challenges.c.league_id == league_id, challenges.c.state.in_(states)]
        if author_id is not None:
            where.append(challenges.c.author_id == author_id)
        return self._challenges_where(*where)

    def challenges_since(self, author_id: int, league_id: int, since: datetime) -> int:
        """The challenges an author asked for in the league since ``since`` (its rate limit counts them)."""
        query = (sa.select(sa.func.count()).select_from(challenges)
                 .where(challenges.c.author_id == author_id, challenges.c.league_id == league_id,
                        challenges.c.created_at >= since))
        with self.engine.connect() as connection:
            return connection.execute(query).scalar_one()

    def start_challenge(self, challenge_id: int) -> ChallengeRow:
        """A queued challenge is being played (a playing one found at a restart keeps its start)."""
        return self._update_challenge(challenge_id, (QUEUED,), state=PLAYING, started_at=utc_now())

    def end_challenge(self, challenge_id: int, result: Any, error: str | None = None) -> ChallengeRow:
        """An unfinished challenge ends: done with its result, or failed with why (``error``); an ended one stays
        as it is (a result is written once)."""
        return self._update_challenge(challenge_id, UNFINISHED, state=DONE if error is None else TABLE_FAILED,
                                      result=result, error=error, ended_at=utc_now())

    def _update_challenge(self, challenge_id: int, states: Sequence[str], **values: Any) -> ChallengeRow:
        with self.engine.begin() as connection:
            connection.execute(sa.update(challenges).where(challenges.c.id == challenge_id,
                                                           challenges.c.state.in_(states)).values(**values))
        return self.challenge(challenge_id)

    def _challenges_where(self, *where: Any) -> list[ChallengeRow]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(challenges).where(*where).order_by(challenges.c.id)).all()
        return [ChallengeRow(row.id, row.league_id, row.author_id, row.version_id, row.opponent_id, row.deal_sets,
                             row.state, row.result, row.error, _utc(row.created_at), _utc(row.started_at),
                             _utc(row.ended_at)) for row in rows]

    # the freeze and the finals

    def freeze(self, league_id: int, field: Sequence[int]) -> Freeze:
        """Freeze the league with this field; a league frozen already is refused (its field does not change)."""
        with self.engine.begin() as connection:
            if connection.execute(sa.select(freezes.c.league_id).where(freezes.c.league_id == league_id)).first():
                raise StateError("the league is frozen already (its field cannot change)")
            connection.execute(sa.insert(freezes).values(league_id=league_id, frozen_at=utc_now(),
                                                         field=list(field)))
        frozen = self.frozen(league_id)
        assert frozen is not None
        return frozen

    def frozen(self, league_id: int) -> Freeze | None:
        """The league's freeze, or None while it is not frozen."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(freezes).where(freezes.c.league_id == league_id)).one_or_none()
        return None if row is None else Freeze(row.league_id, _utc(row.frozen_at), tuple(row.field), row.finals)

    def set_finals(self, league_id: int, finals: Any) -> Freeze:
        """The frozen league's finals as they are now (their settings, state and, once done, ranking)."""
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(freezes).where(freezes.c.league_id == league_id)
                                      .values(finals=finals)).rowcount
        if not done:
            raise StateError("the league is not frozen: freeze it first (arena league freeze)")
        frozen = self.frozen(league_id)
        assert frozen is not None
        return frozen


def _author(row: Any) -> Author:
    return Author(row.id, row.name, _utc(row.created_at), _utc(row.revoked_at))


def _version(row: Any) -> Version:
    return Version(id=row.id, bot_id=row.bot_id, author_id=row.author_id, number=row.number, sha256=row.sha256,
                   state=row.state, reason=row.reason, created_at=_utc(row.created_at),
                   updated_at=_utc(row.updated_at), build_log=row.build_log, check_report=row.check_report,
                   start_failures=row.start_failures, deleted_at=_utc(row.deleted_at),
                   dial_in_sha256=row.dial_in_sha256,
                   runnable=None if row.run_folder is None else Runnable(tuple(row.run_command), row.run_folder,
                                                                         row.run_protocol))


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
