"""``arena league copy-database``: a league with something in every table (support.filled_league) copied from SQLite
to a real PostgreSQL, row for row; the next insert on the copy takes the id after the copied ones; the copy served by
a real ``arena serve --league`` shows the same standings; and back to SQLite. The refusals are one line, status 2,
and leave the target as it was: a target holding league data, a bad URL, an unreachable server, a missing source, a
source that is no league database or not at the newest schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from support.cli import arena
from support.filled_league import fill_league, rows_of
from support.league import GAME, league_in, restarted

from arena.cli import main
from arena.league.authors import create_author
from arena.league.rules.model import Seat
from arena.league.storage.copy import copy_database
from arena.league.storage.db import (
    alembic_config,
    create_engine,
    newest_revision,
    open_database,
    schema_revision,
    shown_url,
    sqlite_url,
)

UNREACHABLE = "postgresql+psycopg://arena:secret@127.0.0.1:1/league"
"""A PostgreSQL URL nothing listens at (port 1), with a password that no message may show."""

FAR_ZONE = "Pacific/Chatham"
"""A time zone 12:45 or 13:45 ahead of UTC."""


@pytest.fixture
def filled(tmp_path: Path) -> str:
    """The URL of a SQLite league database in ``tmp_path/data`` (the server's default place) with every table
    filled."""
    database = open_database(sqlite_url(tmp_path / "data"))
    try:
        fill_league(database)
    finally:
        database.close()
    return sqlite_url(tmp_path / "data")


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """``arena ARGV`` in this process: exit status 2, nothing on stdout, one ``error:`` line (no traceback)."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("error: "), out + err
    return err.strip()


def test_every_row_is_copied_to_postgresql(filled: str, postgres_database: str) -> None:
    """Into a session whose time zone is not UTC: a moment written without its zone would read back shifted."""
    target = f"{postgres_database}&options=-c%20timezone%3D{FAR_ZONE}"
    copied = copy_database(filled, target, batch_rows=5)  # several batches of the bigger tables
    source = rows_of(filled)
    assert rows_of(target) == rows_of(postgres_database) == source
    assert {table.name: table.rows for table in copied} == {name: len(rows) for name, rows in source.items()}
    assert all(source.values())  # every table had rows to copy
    engine = create_engine(postgres_database)
    assert schema_revision(engine) == newest_revision()
    engine.dispose()


def test_the_next_insert_follows_the_copied_ids(filled: str, postgres_database: str) -> None:
    copy_database(filled, postgres_database)
    before = rows_of(postgres_database)
    database = open_database(postgres_database)
    try:
        league = database.ensure_league("third", "A third league", "draw")
        author, _ = create_author(database, "carol")
        bot = database.add_bot(league.id, author.id, "newcomer")
        version, _ = database.add_version(bot.id, "f" * 64)
        table = database.queue_tables(league.id, [([version.id, version.id - 1], "after the copy")])[0]
        challenge = database.add_challenge(league.id, author.id, version.id, version.id - 1, 4)
        game = database.record_game(league.id, "after-the-copy.jsonl", "g1", [Seat(version.id, 1, 1.0)])
    finally:
        database.close()
    highest = {name: max(row[0] for row in rows) for name, rows in before.items()
               if name in ("leagues", "authors", "bots", "versions", "tables", "challenges", "games")}
    assert (league.id, author.id, bot.id, version.id, table.id, challenge.id, game) == (
        highest["leagues"] + 1, highest["authors"] + 1, highest["bots"] + 1, highest["versions"] + 1,
        highest["tables"] + 1, highest["challenges"] + 1, highest["games"] + 1)


def test_a_copy_goes_back_to_sqlite(filled: str, postgres_database: str, tmp_path: Path) -> None:
    copy_database(filled, postgres_database)
    back = sqlite_url(tmp_path / "back")
    copy_database(postgres_database, back)
    assert rows_of(back) == rows_of(filled)
    database = open_database(back)
    try:
        assert create_author(database, "carol")[0].id == 5
    finally:
        database.close()


def test_the_copy_serves_the_same_standings(filled: str, postgres_database: str, tmp_path: Path) -> None:
    """The same data folder served on SQLite, then copied by the command line and served on PostgreSQL: the
    operator's standings, finals and versions read the same (the league is frozen: its server plays nothing)."""
    shown = ("standings", "finals", "versions")
    league = league_in(tmp_path, GAME)
    try:
        on_sqlite = {verb: league.league(verb, token=league.operator) for verb in shown}
    finally:
        league.server.stop()
    assert all(done.returncode == 0 for done in on_sqlite.values()), on_sqlite
    assert "rand-v1" in on_sqlite["standings"].stdout and "failed" in on_sqlite["finals"].stdout

    done = arena("league", "copy-database", "--data", str(tmp_path / "data"), "--to", postgres_database)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"copied {filled}"
    assert lines[1:4] == [f"  into {shown_url(postgres_database)}:", "  table            rows",
                          "  leagues             2"]
    assert "  versions            7" in lines and "  game_seats         24" in lines
    assert lines[-2] == "97 rows in 18 tables, each table's rows counted alike in both databases before the commit"
    assert lines[-1].startswith(f"the data folder {tmp_path / 'data'} (uploads, builds, records, logs) stays where")

    league = restarted(league, postgres_database)
    try:
        on_postgresql = {verb: league.league(verb, token=league.operator) for verb in shown}
    finally:
        league.server.stop()
    assert {verb: done.stdout for verb, done in on_postgresql.items()} == {
        verb: done.stdout for verb, done in on_sqlite.items()}


def test_a_target_holding_league_data_is_refused_as_it_is(filled: str, postgres_database: str,
                                                           tmp_path: Path) -> None:
    copy_database(filled, postgres_database)
    held = rows_of(postgres_database)
    done = arena("league", "copy-database", "--data", str(tmp_path / "data"), "--to", postgres_database)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"error: {shown_url(postgres_database)} already holds league data (rows: leagues 2, authors 4, freezes 1, games 12, "
        f"invites 1, tables 4, audit 2, bots 4, feed_tokens 1, members 5, notices 9, webhooks 1, deliveries 6, "
        f"versions 7, challenges 2, game_seats 24, ratings 4, table_sides 8): copy into a new, empty database"]
    assert rows_of(postgres_database) == held


@pytest.mark.fast
@pytest.mark.parametrize("target, message", [
    ("nonsense", "error: cannot read the database URL 'nonsense': expected sqlite:///PATH or "
                 "postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"),
    ("mysql://arena@localhost/league", "error: unsupported database 'mysql' in mysql://arena@localhost/league: use "
                                       "sqlite:///PATH or postgresql+psycopg://..."),
    (UNREACHABLE, "error: the target database postgresql+psycopg://arena:***@127.0.0.1:1/league: connection failed: "
                  "connection to server at \"127.0.0.1\", port 1 failed: Connection refused"),
])
def test_a_target_that_cannot_be_used_is_one_line(filled: str, tmp_path: Path, target: str, message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(["league", "copy-database", "--data", str(tmp_path / "data"), "--to", target], capsys) == message


@pytest.mark.fast
def test_a_missing_source_is_one_line_and_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "no-data"
    assert refused(["league", "copy-database", "--data", str(data), "--to", sqlite_url(tmp_path / "target")],
                   capsys) == (f"error: no league database at {data / 'league.db'}: give the server's --data folder, "
                               f"or its --database URL")
    assert not data.exists() and not (tmp_path / "target").exists()


@pytest.mark.fast
def test_a_source_that_is_no_league_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.db").touch()
    source = f"sqlite:///{tmp_path / 'empty.db'}"
    assert refused(["league", "copy-database", "--database", source, "--to", sqlite_url(tmp_path / "target")],
                   capsys) == (f"error: {source} holds no league database (no schema revision): is it the league's "
                               f"--database?")
    assert not (tmp_path / "target").exists()


@pytest.mark.fast
def test_a_source_behind_the_newest_schema_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = sqlite_url(tmp_path / "data")
    engine = create_engine(source)
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0005")
    engine.dispose()
    assert refused(["league", "copy-database", "--data", str(tmp_path / "data"), "--to",
                    sqlite_url(tmp_path / "target")], capsys) == (
        f"error: {source} is at schema revision 0005, not the newest ({newest_revision()}): start this arena's "
        f"server on it once (arena serve ... --database URL migrates it), stop it, then copy")
    assert not (tmp_path / "target").exists()
