"""The ladder on the Ray backend (what ``arena serve --league ... --backend ray`` gives it): a table chosen by the
matchmaker is played by a local Ray cluster's actors (real sandboxed bots on its nodes), its records verify, and it
is rated once, as a table played here is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from arena.league.db import DONE, ONLINE, AsyncDatabase, sqlite_url
from arena.league.ladder import RECORD, Ladder
from arena.league.pipeline import BuiltBots
from arena.league.rating import recompute
from arena.records.replay import verify_run
from support.ladder import EXAMPLES, Log, done_tables, play_until, setup
from support.league import rated_with_seats

ray = pytest.importorskip("ray", reason="the Ray backend's tests need the ray extra (pip install -e '.[ray]'; "
                                        "scripts/test.sh installs it)")
from arena.cluster import ray_factory  # noqa: E402
from support.ray_cluster import local_cluster  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """A head and one more node on this machine, this test process their driver."""
    with local_cluster(1) as started:
        yield started


async def test_a_ladder_table_is_played_on_the_ray_cluster_and_rated_once(cluster: object, tmp_path: Path) -> None:
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py"}
    sync, served, work, ids = setup(sqlite_url(tmp_path / "data"), tmp_path, bots, concurrency=1,
                                    coverage=1, placement=1)
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log(),
                    backend=ray_factory(2))
    await play_until(ladder, database, lambda db: done_tables(1)(db, served.league_id))
    table = sync.tables_in(served.league_id, [DONE])[0]
    folder = ladder.table_folder(table)
    entrants = json.loads((folder / "bots.json").read_text())
    assert sorted(e["name"] for e in entrants) == ["greedy-v1", "rand-v1"]
    assert all(e["nodes"] and e["starts"] >= 1 for e in entrants)  # played by the cluster's actors, not here
    assert "node_ready" in (folder / "arena.log").read_text()
    report = verify_run(folder, jobs=1)
    assert (report.games, report.mismatches, report.seed_checked) == (2, [], True)
    assert [key for key, _ in sync.games_of_record(served.league_id, RECORD.format(id=table.id))] == ["0", "1"]
    done = sync.tables_in(served.league_id, [DONE])  # another table may have ended meanwhile: each rated once
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(served.league_id, ONLINE)}
    assert stored == recompute(rated_with_seats(sync, served.league_id))
    assert {v: games for v, (_, _, games) in stored.items()} == {v: len(done) for v in ids.values()}
    assert sync.game_count(served.league_id) == 2 * len(done)
    await database.close()

