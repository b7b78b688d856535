"""The league's database, authors and tokens: every test runs on SQLite and on a real PostgreSQL server.

The PostgreSQL server is private to the test session (tests/support/pg.py); each test gets an empty database of its
own on it, as it gets a fresh SQLite file, so every test also applies the migrations to an empty database.
"""

from __future__ import annotations

import itertools
import json
import threading
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
import trio
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from arena.league.authors import (Authenticator, create_author, hash_token, issue_token, owned_version,
                                  require_upload_quota, retire_version, revoke)
from arena.league.rules.permissions import OPERATOR, Caller, require_bot_owner, require_operator
from arena.bench.league_db import main as bench_main, results_write_rate
from arena.league.rules.config import AuthorLimits
from arena.league.clock import utc_now
from arena.league.rules.lifecycle import (BUILDING, CHECKING, FAILED, READY, RETIRED, STATES, SUSPENDED, TRANSITIONS,
                                          UPLOADED, active_version)
from arena.league.rules.model import Rating, Seat
from arena.league.storage.db import (AsyncDatabase, Database, create_engine, migrate, open_database, schema_revision,
                                     sqlite_url)
from arena.league.storage.tables import METADATA, versions as versions_table
from arena.league.rules.errors import DatabaseError, LeagueError, NotFound, PermissionDenied, StateError, Unauthenticated

from support.league import a_bot, database, database_url, league  # noqa: F401 - the fixtures, on both databases

HEAD = "0010"
OPERATOR_TOKEN = "operator-token-0123456789abcdef"
SHA_A = "a" * 64
SHA_B = "b" * 64


# --- migrations ---------------------------------------------------------------------------------------------------

def test_migrations_build_the_declared_schema(database_url: str) -> None:
    engine = create_engine(database_url)
    assert schema_revision(engine) is None  # empty: nothing migrated yet
    database = open_database(database_url)
    try:
        assert schema_revision(database.engine) == HEAD
        tables = set(sa.inspect(database.engine).get_table_names())
        assert tables == {"alembic_version", "leagues", "authors", "bots", "versions", "games", "game_seats",
                          "ratings", "tables", "table_sides", "challenges", "freezes", "members", "invites", "audit",
                          "notices", "feed_tokens", "webhooks", "deliveries"}
        with database.engine.connect() as connection:  # the migrations and db.py's tables say the same
            assert compare_metadata(MigrationContext.configure(connection), METADATA) == []
    finally:
        database.close()
        engine.dispose()


def test_migrations_are_idempotent_and_keep_the_data(database_url: str) -> None:
    first = open_database(database_url)
    league_id = first.ensure_league("ladder", "Ladder", "draw").id
    migrate(first.engine)  # again, directly: nothing to do
    first.close()
    again = open_database(database_url)
    try:
        assert schema_revision(again.engine) == HEAD
        assert again.league("ladder").id == league_id
        with again.engine.connect() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
    finally:
        again.close()


@pytest.mark.fast
def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path: Path) -> None:
    database = open_database(sqlite_url(tmp_path))
    try:
        with database.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1
        assert (tmp_path / "league.db").is_file()
    finally:
        database.close()


def test_foreign_keys_are_enforced(database: Database, league) -> None:
    with pytest.raises(sa.exc.IntegrityError):
        database.add_bot(league.id, 999, "orphan")  # no author 999
    with pytest.raises(LeagueError, match=r"cannot record game 'g1' of runs/x.jsonl: .*unknown league or version"):
        database.record_game(league.id, "runs/x.jsonl", "g1", [Seat(12345, 1, 1.0)])
    assert database.game_count(league.id) == 0  # the game's row went with its refused seat


@pytest.mark.parametrize("url, message", [
    ("nonsense", r"cannot read the database URL 'nonsense'"),
    ("mysql://u:p@localhost/x", r"unsupported database 'mysql'"),
    ("sqlite://", r"the league's SQLite database must be a file"),
    ("postgresql+psycopg://arena:secret@/x?host=/nonexistent-arena-socket",
     r"cannot open the database postgresql\+psycopg://arena:\*\*\*@/x\?host=%2Fnonexistent-arena-socket: .*"
     r"connection to server on socket \"/nonexistent-arena-socket/.s.PGSQL.5432\" failed"),
])
@pytest.mark.fast
def test_an_unopenable_database_is_one_line_without_password(url: str, message: str) -> None:
    with pytest.raises(DatabaseError, match=message) as caught:
        open_database(url)
    assert "\n" not in str(caught.value) and "secret" not in str(caught.value)


def test_a_league_keeps_its_variant(database: Database, league) -> None:
    assert database.ensure_league("ladder", "The Ladder", "draw").title == "The Ladder"
    with pytest.raises(LeagueError, match=r"league 'ladder' plays 'draw' in its database, its file says 'block'"):
        database.ensure_league("ladder", "Ladder", "block")
    with pytest.raises(NotFound, match="no league 'other'"):
        database.league("other")


# --- authors and tokens -------------------------------------------------------------------------------------------

def test_an_authors_token_resolves_to_that_author_only(database: Database) -> None:
    alice, alice_token = create_author(database, "alice")
    bob, bob_token = create_author(database, "bob")
    gate = Authenticator(database, OPERATOR_TOKEN)
    assert gate.caller(alice_token) == Caller(alice)
    assert gate.caller(bob_token) == Caller(bob)
    assert gate.caller(OPERATOR_TOKEN) is OPERATOR
    assert len(alice_token) >= 43 and alice_token != bob_token


def test_only_the_tokens_hash_is_stored(database_url: str, database: Database) -> None:
    _, token = create_author(database, "alice")
    with database.engine.connect() as connection:
        stored = [tuple(row) for row in connection.execute(sa.select(sa.text("*")).select_from(sa.table("members")))]
    assert hash_token(token) in stored[0]
    assert not any(token in str(value) for value in stored[0])
    if database_url.startswith("sqlite"):
        database.close()
        files = Path(sa.make_url(database_url).database).parent.glob("league.db*")
        assert not any(token.encode() in path.read_bytes() for path in files)


@pytest.mark.parametrize("token, message", [
    ("", r"missing token"),
    (None, r"missing token"),
    ("x" * 43, r"wrong token: it is no author's"),
])
def test_a_wrong_or_missing_token_is_refused(database: Database, token: str | None, message: str) -> None:
    create_author(database, "alice")
    with pytest.raises(Unauthenticated, match=message):
        Authenticator(database, OPERATOR_TOKEN).caller(token)


def test_without_an_operator_token_no_token_is_the_operators(database: Database) -> None:
    gate = Authenticator(database, None)
    with pytest.raises(Unauthenticated, match="wrong token"):
        gate.caller(OPERATOR_TOKEN)


def test_a_revoked_token_stays_refused_until_reissued(database: Database) -> None:
    _, old = create_author(database, "alice")
    gate = Authenticator(database, OPERATOR_TOKEN)
    assert revoke(database, "alice").revoked
    with pytest.raises(Unauthenticated, match=r"the token of author 'alice' was revoked"):
        gate.caller(old)
    new = issue_token(database, "alice")
    assert gate.caller(new).author is not None and gate.caller(new).author.name == "alice"
    with pytest.raises(Unauthenticated, match="wrong token"):
        gate.caller(old)  # the old token stays refused


def test_author_names_are_checked_and_unique(database: Database) -> None:
    create_author(database, "alice")
    with pytest.raises(LeagueError, match="author 'alice' exists already"):
        create_author(database, "alice")
    with pytest.raises(LeagueError, match="an author's name must be 1 to 64 letters"):
        create_author(database, "../root")
    with pytest.raises(NotFound, match="no author 'carol'"):
        revoke(database, "carol")


# --- who may do what ----------------------------------------------------------------------------------------------

def test_one_author_cannot_read_or_retire_anothers_version(database: Database, league) -> None:
    alice_bot = a_bot(database, league.id, "alice", "alpha")
    a_bot(database, league.id, "bob", "beta")
    bob_caller = Caller(database.author("bob"))
    version, _ = database.add_version(alice_bot.id, SHA_A)
    with pytest.raises(PermissionDenied, match=rf"author 'bob' may not read the build log of version "
                                               rf"{version.id}: it is another author's"):
        owned_version(database, bob_caller, version.id, "read the build log of")
    with pytest.raises(PermissionDenied, match=rf"author 'bob' may not retire version {version.id}"):
        retire_version(database, bob_caller, version.id)
    assert database.version(version.id).state == UPLOADED  # nothing changed
    with pytest.raises(PermissionDenied, match=r"author 'bob' may not upload to bot 'alpha'"):
        require_bot_owner(bob_caller, alice_bot, "upload to")


def test_the_owner_and_the_operator_may(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    alice = Caller(database.author("alice"))
    first, _ = database.add_version(bot.id, SHA_A)
    second, _ = database.add_version(bot.id, SHA_B)
    assert owned_version(database, alice, first.id, "read") == first
    require_bot_owner(alice, bot, "upload to")
    assert retire_version(database, alice, first.id).reason == "retired by its author"
    assert retire_version(database, OPERATOR, second.id).reason == "retired by the operator"
    assert [v.state for v in database.versions(bot.id)] == [RETIRED, RETIRED]


def test_operator_calls_are_the_operators(database: Database) -> None:
    alice = Caller(create_author(database, "alice")[0])
    require_operator(OPERATOR, "create an author")
    with pytest.raises(PermissionDenied, match=r"author 'alice' may not create an author: only the operator may"):
        require_operator(alice, "create an author")


# --- versions -----------------------------------------------------------------------------------------------------

def test_the_same_archive_twice_is_one_version(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    first, created = database.add_version(bot.id, SHA_A)
    again, created_again = database.add_version(bot.id, SHA_A)
    other, _ = database.add_version(bot.id, SHA_B)
    assert (created, created_again) == (True, False)
    assert again == first and first.number == 1 and other.number == 2
    assert first.author_id == database.author("alice").id and first.state == UPLOADED
    assert [v.sha256 for v in database.versions(bot.id)] == [SHA_A, SHA_B]
    assert database.uploads_since(first.author_id, league.id, first.created_at) == 2


def test_the_database_refuses_a_second_row_for_an_archive(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    version, _ = database.add_version(bot.id, SHA_A)
    from arena.league.storage.tables import versions as table
    row = {"bot_id": bot.id, "sha256": SHA_A, "state": UPLOADED, "number": 2, "created_at": version.created_at,
           "updated_at": version.created_at}
    with pytest.raises(sa.exc.IntegrityError):
        with database.engine.begin() as connection:
            connection.execute(sa.insert(table).values(**row))
    with pytest.raises(sa.exc.IntegrityError):  # nor a state outside the lifecycle
        with database.engine.begin() as connection:
            connection.execute(sa.insert(table).values(**{**row, "sha256": SHA_B, "state": "hacked"}))
    assert len(database.versions(bot.id)) == 1


def test_another_bot_may_have_the_same_archive(database: Database, league) -> None:
    first = database.add_version(a_bot(database, league.id, "alice", "alpha").id, SHA_A)[0]
    second = database.add_version(a_bot(database, league.id, "bob", "beta").id, SHA_A)[0]
    assert first.id != second.id


@pytest.mark.parametrize("sha", ["A" * 64, "a" * 63, "g" * 64, ""])
def test_a_version_is_named_by_a_sha256(database: Database, league, sha: str) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    with pytest.raises(LeagueError, match="64 lowercase hexadecimal digits"):
        database.add_version(bot.id, sha)


PATHS = {UPLOADED: [], BUILDING: [BUILDING], CHECKING: [BUILDING, CHECKING], READY: [BUILDING, CHECKING, READY],
         FAILED: [FAILED], SUSPENDED: [BUILDING, CHECKING, READY, SUSPENDED], RETIRED: [RETIRED]}
"""How a new version reaches each state."""


def test_every_state_change_follows_the_lifecycle(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    shas = (f"{n:064x}" for n in itertools.count(1))
    seen = {}
    for start, to in itertools.product(STATES, STATES):
        version, _ = database.add_version(bot.id, next(shas))
        for step in PATHS[start]:
            database.transition(version.id, step, "why")
        try:
            database.transition(version.id, to, "why")
            seen[start, to] = True
        except StateError as error:
            assert f"is {start}: it cannot become {to}" in str(error)
            assert database.version(version.id).state == start  # refused: unchanged
            seen[start, to] = False
    assert seen == {(start, to): to in TRANSITIONS[start] for start, to in itertools.product(STATES, STATES)}
    assert not seen[READY, BUILDING] and not seen[RETIRED, READY] and seen[CHECKING, READY]


def test_a_raced_state_change_is_refused(database: Database, league, monkeypatch: pytest.MonkeyPatch) -> None:
    version, _ = database.add_version(a_bot(database, league.id, "alice", "alpha").id, SHA_A)
    read = database.version

    def read_then_another_worker_fails_it(version_id: int):
        seen = read(version_id)
        monkeypatch.setattr(database, "version", read)
        database.transition(version_id, FAILED, "another worker")
        return seen

    monkeypatch.setattr(database, "version", read_then_another_worker_fails_it)
    with pytest.raises(StateError, match=r"version 1 of its bot changed state meanwhile \(it was uploaded\)"):
        database.transition(version.id, BUILDING)
    assert (database.version(version.id).state, database.version(version.id).reason) == (FAILED, "another worker")


def test_an_author_uploads_at_most_the_leagues_daily_quota(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    other_league = database.ensure_league("other", "Other", "draw")
    database.add_version(database.add_bot(other_league.id, bot.author_id, "alpha-elsewhere").id, "c" * 64)
    alice = Caller(database.author("alice"))
    limits = AuthorLimits(uploads_per_day=2)
    for sha in (SHA_A, SHA_B):
        require_upload_quota(database, alice, league.id, limits)  # the other league's upload does not count
        database.add_version(bot.id, sha)
    with pytest.raises(PermissionDenied, match=r"author 'alice' has uploaded 2 versions in the last 24 hours, the "
                                               r"league's limit \(authors.uploads_per_day = 2\)"):
        require_upload_quota(database, alice, league.id, limits)
    require_upload_quota(database, OPERATOR, league.id, limits)  # the operator has no quota
    tomorrow = database.versions(bot.id)[-1].created_at + timedelta(days=1, seconds=1)
    require_upload_quota(database, alice, league.id, limits, now=tomorrow)


def test_a_version_fails_or_is_suspended_only_with_a_reason(database: Database, league) -> None:
    version, _ = database.add_version(a_bot(database, league.id, "alice", "alpha").id, SHA_A)
    with pytest.raises(StateError, match="becomes failed only with a reason"):
        database.transition(version.id, FAILED)
    with pytest.raises(StateError, match="unknown version state 'done'"):
        database.transition(version.id, "done")
    database.transition(version.id, BUILDING)
    failed = database.transition(version.id, FAILED, "the build ran out of time",
                                 build_log="logs/1.log", check_report={"passed": False})
    assert (failed.state, failed.reason, failed.build_log, failed.check_report) == (
        FAILED, "the build ran out of time", "logs/1.log", {"passed": False})


def test_a_restart_requeues_interrupted_work(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    building, checking, ready = (database.add_version(bot.id, sha)[0] for sha in (SHA_A, SHA_B, "c" * 64))
    database.transition(building.id, BUILDING)
    for step in (BUILDING, CHECKING):
        database.transition(checking.id, step)
    for step in (BUILDING, CHECKING, READY):
        database.transition(ready.id, step)
    assert {v.id for v in database.requeue_interrupted()} == {building.id, checking.id}
    assert [(v.state, v.reason) for v in database.versions(bot.id)] == [
        (UPLOADED, "interrupted by a restart"), (UPLOADED, "interrupted by a restart"), (READY, None)]
    assert database.requeue_interrupted() == []


def test_three_failed_starts_in_a_row_suspend_a_ready_version(database: Database, league) -> None:
    version, _ = database.add_version(a_bot(database, league.id, "alice", "alpha").id, SHA_A)
    for step in (BUILDING, CHECKING, READY):
        database.transition(version.id, step)
    assert database.record_start(version.id, "exit status 1").start_failures == 1
    assert database.record_start(version.id, None).start_failures == 0  # a start in between: not in a row
    database.record_start(version.id, "exit status 1")
    assert database.record_start(version.id, "timed out").state == READY
    suspended = database.record_start(version.id, "no port")
    assert (suspended.state, suspended.reason) == (SUSPENDED, "failed to start 3 times in a row; last: no port")
    assert database.record_start(version.id, "again").start_failures == 3  # suspended: no longer counted
    assert database.transition(version.id, READY).start_failures == 0  # reinstated with a clean count


def test_a_deleted_version_is_never_its_bots_active_version(database: Database, league) -> None:
    """Deletion retires a version in the same update, but a row marked deleted whatever its state (a deletion
    racing a state change, a row edited by hand) must still not be played: its built files are gone. The newest
    ready version that is not deleted is the active one, whether the versions looked at include the deleted ones
    (a page listing every version) or not (the ladder's ``active_versions``)."""
    bot = a_bot(database, league.id, "alice", "alpha")
    older, newer = (database.add_version(bot.id, sha)[0] for sha in (SHA_A, SHA_B))
    for version in (older, newer):
        for step in (BUILDING, CHECKING, READY):
            database.transition(version.id, step)
    assert active_version(database.versions(bot.id, include_deleted=True)).id == newer.id
    with database.engine.begin() as connection:
        connection.execute(sa.update(versions_table).where(versions_table.c.id == newer.id)
                           .values(deleted_at=utc_now()))
    every = database.versions(bot.id, include_deleted=True)
    assert [(v.id, v.state, v.deleted) for v in every] == [(older.id, READY, False), (newer.id, READY, True)]
    assert active_version(every).id == older.id
    assert [v.id for _, v in database.active_versions(league.id)] == [older.id]


# --- games and ratings --------------------------------------------------------------------------------------------

def test_games_are_indexed_with_their_seats(database: Database, league) -> None:
    bot_a, bot_b = a_bot(database, league.id, "alice", "alpha"), a_bot(database, league.id, "bob", "beta")
    a, b = database.add_version(bot_a.id, SHA_A)[0], database.add_version(bot_b.id, SHA_B)[0]
    game = database.record_game(league.id, "runs/ladder/1.jsonl", "g1", [Seat(a.id, 100, 1.0), Seat(b.id, 40, 0.0)],
                                line=7)
    assert database.seats_of(game) == [Seat(a.id, 100, 1.0), Seat(b.id, 40, 0.0)]
    with pytest.raises(LeagueError, match="it is recorded already"):
        database.record_game(league.id, "runs/ladder/1.jsonl", "g1", [Seat(a.id, 1, 0.5), Seat(b.id, 1, 0.5)])
    assert database.record_games(league.id, [("runs/ladder/1.jsonl", f"g{n}", [Seat(a.id, 1, 0.5)])
                                             for n in range(2, 5)]) == 3
    assert database.game_count(league.id) == 4


def test_ratings_are_replaced_and_listed_best_first(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    a, b = database.add_version(bot.id, SHA_A)[0], database.add_version(bot.id, SHA_B)[0]
    database.set_rating(Rating(a.id, "openskill", 25.0, 8.3, 0))
    database.set_rating(Rating(b.id, "openskill", 27.0, 6.0, 10))
    database.set_rating(Rating(a.id, "openskill", 30.0, 5.0, 12))
    database.set_rating(Rating(a.id, "bt", 1.5, 0.2, 12))
    assert database.ratings(league.id, "openskill") == [Rating(a.id, "openskill", 30.0, 5.0, 12),
                                                        Rating(b.id, "openskill", 27.0, 6.0, 10)]


def test_the_write_rate_benchmark_records_what_it_says(database_url: str, capsys: pytest.CaptureFixture) -> None:
    result = results_write_rate(database_url, 20)
    assert result["games"] == 20 and result["games_per_second"] > 0
    assert bench_main([database_url, "20"]) == 0  # what python -m arena.bench.league_db prints: one JSON object
    assert json.loads(capsys.readouterr().out)["games"] == 20
    database = open_database(database_url)
    try:
        assert database.game_count(database.league("bench-results").id) == 40
    finally:
        database.close()


# --- from trio ----------------------------------------------------------------------------------------------------

async def test_calls_from_trio_run_off_the_loop(database_url: str) -> None:
    """A call that waits for the loop to do something finishes only if it is not on the loop."""
    database = await AsyncDatabase.open(database_url)
    loop_ran = threading.Event()

    def wait_for_the_loop(_: Database) -> bool:
        return loop_ran.wait(timeout=30)

    async def let_it_finish() -> None:  # runs only while the loop is free
        loop_ran.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(let_it_finish)
        assert await database.run(wait_for_the_loop) is True
    await database.close()


async def test_concurrent_trio_uploads_are_written_one_at_a_time(database_url: str) -> None:
    """Twenty uploads at once to one bot: one writer numbers them 1..20 (racing writers would collide)."""
    database = await AsyncDatabase.open(database_url)
    league = await database.run(Database.ensure_league, "ladder", "Ladder", "draw")
    author, _ = await database.run(create_author, "alice")
    bot = await database.run(Database.add_bot, league.id, author.id, "alpha")
    created = []

    async def upload(number: int) -> None:
        version, _ = await database.run(Database.add_version, bot.id, f"{number:064x}")
        created.append(version.number)

    async with trio.open_nursery() as nursery:
        for number in range(20):
            nursery.start_soon(upload, number)
    assert sorted(created) == list(range(1, 21))
    await database.close()



async def test_a_cancelled_call_finishes_before_its_caller_moves_on(database_url: str) -> None:
    """A cancelled caller does not leave a write running behind its back: the call completes, then the
    cancellation arrives."""
    database = await AsyncDatabase.open(database_url)
    started, release, finished = threading.Event(), threading.Event(), []

    def slow_write(db: Database) -> None:
        started.set()
        release.wait(timeout=30)
        db.ensure_league("ladder", "Ladder", "draw")
        finished.append(True)

    with trio.CancelScope() as scope:
        async def cancel_once_started() -> None:
            await trio.to_thread.run_sync(started.wait, 30)
            scope.cancel()
            release.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cancel_once_started)
            await database.run(slow_write)
            assert finished == [True]  # returned only once the write was done
            await trio.sleep(0)  # the cancellation arrives at the next checkpoint
    assert scope.cancelled_caught and finished == [True]
    assert (await database.run(Database.league, "ladder")).title == "Ladder"
    await database.close()
