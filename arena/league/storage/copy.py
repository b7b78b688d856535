"""A league's database copied into another: from the SQLite file a league starts on to the PostgreSQL server it grows
into (``arena league copy-database``), or back.

The copy is all or nothing. The target is refused when it already holds a row of the league's tables (the copy keeps
every id, so rows of another league would collide or, worse, mix), then migrated to the newest schema; the source
must already be at that revision (its columns are the ones :data:`~arena.league.storage.tables.METADATA` declares).
Every table is copied in foreign-key order (``METADATA.sorted_tables``), in batches, inside one transaction of the
target, read inside one transaction of the source (a snapshot, should anything still write to it). Before the commit,
PostgreSQL's sequences are set past the copied ids (explicit ids do not move them: the next insert would otherwise
take id 1 and collide), and each table's rows are counted on both sides; any difference rolls everything back.

Values keep their meaning across the two databases: moments are written as aware UTC datetimes (SQLite hands them
back naive, and PostgreSQL would read a naive one in its session's time zone), and a JSON value is copied as its text,
so that SQL NULL stays NULL and the JSON ``null`` stays ``null`` (decoded, both would be ``None``, and written back,
both the one SQLAlchemy writes for ``None``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic.util import CommandError
from sqlalchemy.engine import Connection, Engine

from arena.league.rules.errors import DatabaseError
from arena.league.storage.db import create_engine, migrate, newest_revision, schema_revision, shown_url, sqlite_file
from arena.league.storage.gateway import first_line
from arena.league.storage.tables import METADATA

BATCH_ROWS = 1000
"""Rows read and inserted at a time: few round trips, and a bounded memory however big a table is."""
BIND_PREFIX = "copied_"
"""The insert's parameters are named apart from its columns (SQLAlchemy reserves the columns' own names)."""


@dataclass(frozen=True)
class CopiedTable:
    """One table of the copy: its rows, counted in the source and in the target before the commit."""

    name: str
    rows: int


def copy_database(source_url: str, target_url: str, batch_rows: int = BATCH_ROWS) -> list[CopiedTable]:
    """Copy the league database at ``source_url`` into the empty one at ``target_url``; each table's rows, in the
    order copied. A refusal or a failure is one :class:`DatabaseError` line, and leaves the target without a row."""
    source = source_engine(source_url)
    try:
        with speaking_of("the source database", source_url):
            check_source_revision(source, source_url)
        target = create_engine(target_url)
        try:
            with speaking_of("the target database", target_url):
                check_target_empty(target, target_url)
                migrate(target)
            with speaking_of("the copy", target_url), source.connect() as reading, target.begin() as writing:
                snapshot(reading)
                for table in METADATA.sorted_tables:
                    copy_table(reading, writing, table, batch_rows)
                advance_sequences(writing)
                return counted_alike(reading, writing)
        finally:
            target.dispose()
    finally:
        source.dispose()


@contextmanager
def speaking_of(what: str, url: str) -> Iterator[None]:
    """A database's or Alembic's error inside as one :class:`DatabaseError` line naming ``what`` and its URL
    (password hidden)."""
    try:
        yield
    except (sa.exc.SQLAlchemyError, CommandError) as error:
        raise DatabaseError(f"{what} {shown_url(url)}: {first_line(error)}") from None


def source_engine(url: str) -> Engine:
    """The source's engine; a SQLite source must be an existing file (opening a missing one would create it)."""
    try:
        path = sqlite_file(url)
    except sa.exc.ArgumentError:
        path = None  # create_engine says what is wrong with the URL
    if path is not None and not path.is_file():
        raise DatabaseError(f"no league database at {path}: give the server's --data folder, or its --database URL")
    return create_engine(url)


def check_source_revision(source: Engine, url: str) -> None:
    """Only a source at the newest schema has exactly the columns copied; an older one is brought there by this
    arena's server, which migrates its database when it opens it."""
    found, newest = schema_revision(source), newest_revision()
    if found is None:
        raise DatabaseError(f"{shown_url(url)} holds no league database (no schema revision): is it the league's "
                            f"--database?")
    if found != newest:
        raise DatabaseError(f"{shown_url(url)} is at schema revision {found}, not the newest ({newest}): start this "
                            f"arena's server on it once (arena serve ... --database URL migrates it), stop it, then "
                            f"copy")


def check_target_empty(target: Engine, url: str) -> None:
    """Refuse a target where any of the league's tables holds a row: before it is migrated, so that a refused target
    is left exactly as it was."""
    with target.connect() as connection:
        existing = set(sa.inspect(connection).get_table_names())
        held = {table.name: rows for table in METADATA.sorted_tables if table.name in existing
                if (rows := row_count(connection, table))}
    if held:
        shown = ", ".join(f"{name} {rows}" for name, rows in held.items())
        raise DatabaseError(f"{shown_url(url)} already holds league data (rows: {shown}): copy into a new, empty "
                            f"database")


def snapshot(reading: Connection) -> None:
    """Read the whole source as of one moment: PostgreSQL's repeatable read, or an explicit SQLite transaction (its
    driver begins none for reads, and WAL gives a transaction a snapshot)."""
    if reading.dialect.name == "postgresql":
        reading.execution_options(isolation_level="REPEATABLE READ")
    else:
        reading.exec_driver_sql("BEGIN")


def copy_table(reading: Connection, writing: Connection, table: sa.Table, batch_rows: int) -> None:
    """Every row of ``table``, in primary-key order, ``batch_rows`` at a time."""
    insert = table.insert().values({column.name: written(column, writing.dialect.name) for column in table.columns})
    rows = reading.execution_options(yield_per=batch_rows).execute(
        sa.select(*(read(column) for column in table.columns)).order_by(*table.primary_key.columns))
    for batch in rows.mappings().partitions():
        writing.execute(insert, [copied_row(row) for row in batch])


def read(column: sa.Column[Any]) -> sa.ColumnElement[Any]:
    """A column as read for the copy: a JSON one as its text, where SQL NULL and the JSON ``null`` differ (decoded,
    both are ``None``)."""
    return sa.cast(column, sa.Text).label(column.name) if isinstance(column.type, sa.JSON) else column


def written(column: sa.Column[Any], dialect: str) -> sa.ColumnElement[Any]:
    """A column's value in the insert: a JSON one's text as it was read, made JSON again by PostgreSQL (SQLite keeps
    JSON as text)."""
    value = sa.bindparam(BIND_PREFIX + column.name, type_=sa.Text if isinstance(column.type, sa.JSON) else column.type)
    return sa.cast(value, column.type) if isinstance(column.type, sa.JSON) and dialect == "postgresql" else value


def copied_row(row: sa.RowMapping) -> dict[str, Any]:
    return {BIND_PREFIX + name: in_utc(value) if isinstance(value, datetime) else value for name, value in row.items()}


def in_utc(moment: datetime) -> datetime:
    """An aware UTC datetime: the league writes UTC, and SQLite hands it back naive."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def advance_sequences(writing: Connection) -> None:
    """On PostgreSQL, each serial id's sequence set to the table's highest id (or unused, on an empty table), so the
    next insert takes the id after it. SQLite needs nothing: a new row's id follows the highest there is."""
    if writing.dialect.name != "postgresql":
        return
    for table in METADATA.sorted_tables:
        column = table.autoincrement_column
        if column is None:
            continue
        highest = sa.func.max(column)
        sequence = sa.func.pg_get_serial_sequence(writing.dialect.identifier_preparer.format_table(table), column.name)
        writing.execute(sa.select(sa.func.setval(sequence, sa.func.coalesce(highest, 1), highest.is_not(None)))
                        .select_from(table))


def counted_alike(reading: Connection, writing: Connection) -> list[CopiedTable]:
    """Each table's rows counted in the source's snapshot and in the target's transaction; a difference refuses the
    commit."""
    counts = [(table.name, row_count(reading, table), row_count(writing, table)) for table in METADATA.sorted_tables]
    differ = [f"{name} {read} read, {written} written" for name, read, written in counts if read != written]
    if differ:
        raise DatabaseError(f"the copy's row counts differ ({'; '.join(differ)}): nothing was committed")
    return [CopiedTable(name, rows) for name, rows, _ in counts]


def row_count(connection: Connection, table: sa.Table) -> int:
    return int(connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def total_rows(tables: Sequence[CopiedTable]) -> int:
    return sum(table.rows for table in tables)
