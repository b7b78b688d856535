"""Versions kept per bot (``authors.versions_kept``), on SQLite and PostgreSQL: which versions go to make room (the
oldest retired first, then the oldest others, never the active one nor one in the pipeline), that a deleted
version's row stays (its games and ratings keep their version) while it forgets how it ran, and that an archive
another version shares is kept. Also the start failures the ladder records, through the pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from arena.league.rules.lifecycle import BUILDING, CHECKING, FAILED, READY, RETIRED, SUSPENDED, UPLOADED
from arena.league.rules.model import Rating, Runnable, Seat
from arena.league.rules.retention import versions_to_delete
from arena.league.storage.db import AsyncDatabase, Database
from arena.league.rules.errors import LeagueError, StateError
from arena.league.intake.pipeline import Pipeline, runnable_spec
from arena.league.core import room_for_one_more
from arena.league.intake.store import Store
from arena.sandbox import Limits
from support.league import a_bot, database, database_url, league  # noqa: F401 - the fixtures, on both databases

SHAS = [f"{n:x}" * 64 for n in range(1, 8)]


def made(database: Database, bot_id: int, states: list[str]) -> list:
    """Versions of a bot in these states, oldest first."""
    versions = []
    for sha, state in zip(SHAS, states):
        version, _ = database.add_version(bot_id, sha)
        path = {UPLOADED: [], BUILDING: [BUILDING], CHECKING: [BUILDING, CHECKING], READY: [BUILDING, CHECKING, READY],
                FAILED: [BUILDING, FAILED], RETIRED: [RETIRED], SUSPENDED: [BUILDING, CHECKING, READY, SUSPENDED]}
        for step in path[state]:
            version = database.transition(version.id, step, "why" if step in (FAILED, SUSPENDED) else None)
        versions.append(version)
    return versions


@pytest.mark.parametrize("states, kept, doomed", [
    ([READY, READY], 3, []),                                     # room left: nothing goes
    ([READY, READY, READY], 3, [0]),                             # the oldest not active
    ([READY, RETIRED, READY], 3, [1]),                           # a retired one before an older ready one
    ([FAILED, RETIRED, RETIRED, READY], 2, [1, 2, 0]),           # retired ones first, then the oldest other
    ([SUSPENDED, READY], 2, [0]),
    ([READY, UPLOADED, BUILDING, CHECKING], 4, None),            # the active one and the pipeline's stay: refused
    ([READY], 1, None),                                          # one kept: the active one cannot make room
])
def test_which_versions_go_to_make_room(database: Database, league, states, kept, doomed) -> None:
    versions = made(database, a_bot(database, league.id, "alice", "alpha").id, states)
    chosen = versions_to_delete(database.versions(versions[0].bot_id), kept)
    assert chosen == (None if doomed is None else [versions[i] for i in doomed])


def test_deleted_versions_do_not_count_toward_versions_kept(database: Database, league) -> None:
    """alpha has three versions, the oldest deleted to make room: it keeps two. With ``versions_kept = 3`` one more
    fits and nothing goes; with 2 only the older of the two left goes (the deleted one is not counted, nor chosen
    again, and there is room without a refusal). The versions are read as an upload reads them, deleted ones too."""
    bot = a_bot(database, league.id, "alice", "alpha")
    old, mid, active = made(database, bot.id, [READY, READY, READY])
    database.mark_deleted([old.id], "deleted to keep bot 'alpha' within authors.versions_kept = 2")
    versions = database.versions(bot.id, include_deleted=True)
    assert [(v.id, v.deleted) for v in versions] == [(old.id, True), (mid.id, False), (active.id, False)]
    assert room_for_one_more(bot, versions, 3) == []
    assert [v.id for v in room_for_one_more(bot, versions, 2)] == [mid.id]


def test_a_bot_with_no_room_is_refused_in_one_line(database: Database, league) -> None:
    bot = a_bot(database, league.id, "alice", "alpha")
    made(database, bot.id, [READY, BUILDING])
    with pytest.raises(StateError) as refused:
        room_for_one_more(bot, database.versions(bot.id), 2)
    assert str(refused.value) == (
        "bot 'alpha' has 2 versions, the league's limit (authors.versions_kept = 2), and none can be deleted to make "
        "room (its active version and those being built or checked stay): retire one (arena league retire VERSION) "
        "and upload again; nothing was stored")


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, dict]] = []

    def info(self, event: str, **values) -> None:
        self.lines.append((event, values))

    warning = error = info


def pipeline_of(database: Database, tmp_path: Path) -> Pipeline:
    return Pipeline(AsyncDatabase(database), Store(tmp_path / "data"), {}, tmp_path / "versions", None, Log())


def test_a_deleted_version_loses_only_its_files(database: Database, league, tmp_path: Path) -> None:
    pipeline = pipeline_of(database, tmp_path)
    alpha, beta = a_bot(database, league.id, "alice", "alpha"), a_bot(database, league.id, "bob", "beta")
    old, active = made(database, alpha.id, [READY, READY])
    twin = made(database, beta.id, [READY])[0]  # beta's version is the same archive as alpha's old one
    for version in (old, active, twin):
        (tmp_path / "versions" / str(version.id) / "bot").mkdir(parents=True)
        archive = pipeline.store.path_of(version.sha256)
        archive.parent.mkdir(exist_ok=True)
        archive.write_bytes(b"archive")
    game = database.record_game(league.id, "runs/x.jsonl", "g1", [Seat(old.id, 10, 1.0), Seat(twin.id, 0, 0.0)])
    database.set_rating(Rating(old.id, "openskill", 25.0, 8.0, 1))

    deleted = trio.run(pipeline.delete_versions, [old, active][:1], "deleted to keep bot 'alpha' within 1")
    assert [(v.id, v.state, v.reason, v.runnable) for v in deleted] == [
        (old.id, RETIRED, "deleted to keep bot 'alpha' within 1", None)]
    assert deleted[0].deleted and database.version(old.id).deleted
    assert [v.id for v in database.versions(alpha.id)] == [active.id]
    assert [v.id for v in database.versions(alpha.id, include_deleted=True)] == [old.id, active.id]
    assert database.seats_of(game)[0].version_id == old.id
    assert [r.version_id for r in database.ratings(league.id, "openskill")] == [old.id]
    assert not (tmp_path / "versions" / str(old.id)).exists()
    assert (tmp_path / "versions" / str(active.id) / "bot").is_dir()
    assert pipeline.store.has(old.sha256), "beta's version has the same archive: it stays"
    assert ("league_version_deleted", {"version": old.id, "reason": "deleted to keep bot 'alpha' within 1"}) in \
        pipeline.log.lines

    trio.run(pipeline.delete_versions, [twin], "gone")
    assert not pipeline.store.has(twin.sha256), "no version has that archive any more"
    assert trio.run(pipeline.delete_versions, [twin], "again") == []  # deleted once


def test_a_built_version_runs_from_its_row_or_says_why_not(database: Database, league, tmp_path: Path) -> None:
    version = made(database, a_bot(database, league.id, "alice", "alpha").id, [CHECKING])[0]
    with pytest.raises(LeagueError, match=rf"^version {version.id} has no built bot \(it is checking\)$"):
        runnable_spec(tmp_path, version, "alpha", Limits())
    version = database.transition(version.id, READY, runnable=Runnable(("bin/bot",), f"{version.id}/bot", "grpc"))
    with pytest.raises(LeagueError, match=r"^the built folder of version \d+ is missing"):
        runnable_spec(tmp_path, version, "alpha", Limits())
    (tmp_path / str(version.id) / "bot").mkdir(parents=True)
    spec = runnable_spec(tmp_path, database.version(version.id), "alpha", Limits(memory_mb=256))
    folder = str(tmp_path / str(version.id) / "bot")
    assert (spec.command, spec.cwd, spec.folder, spec.sandbox, spec.protocol, spec.limits.memory_mb) == (
        ("bin/bot",), folder, folder, True, "grpc", 256)


def test_three_failed_starts_suspend_with_the_reason(database: Database, league, tmp_path: Path) -> None:
    pipeline = pipeline_of(database, tmp_path)
    version = made(database, a_bot(database, league.id, "alice", "alpha").id, [READY])[0]

    async def starts(*failures: str | None) -> list:
        return [await pipeline.record_start(version.id, failure) for failure in failures]

    seen = trio.run(starts, "exit status 1", "exit status 1", None, "no port", "timed out")
    assert [(v.state, v.start_failures) for v in seen] == [(READY, 1), (READY, 2), (READY, 0), (READY, 1),
                                                          (READY, 2)]
    suspended = trio.run(starts, "the built folder is missing")[0]
    assert (suspended.state, suspended.reason) == (
        SUSPENDED, "failed to start 3 times in a row; last: the built folder is missing")
    assert ("league_version_suspended", {"version": version.id, "reason": suspended.reason}) in pipeline.log.lines
