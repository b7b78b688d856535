"""The order a run plays its games in: deal sets interleaved across tables for new runs (seeds do not move), recorded
in the run, and an old run that resumes in its own order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.rules import new_game
from arena.tournament.errors import RecordsNotWritten
from arena.tournament.runner import prepare_run, run_tournament
from arena.tournament.schedule import BY_TABLE, INTERLEAVED, Schedule
from arena.tournament.spec import spec_from_dict

from support.tournaments import PYTHON, RANDOM_BOT, fail_on_write


@pytest.mark.fast
def test_deal_sets_interleave_across_tables_and_seeds_stay() -> None:
    game = new_game("draw", 2)
    new = list(Schedule(4, game, games=3, duplicate=True, master_seed="m"))
    old = list(Schedule(4, game, games=3, duplicate=True, master_seed="m", order=BY_TABLE))
    tables = 6
    # After one deal set per table, every pairing has played the same number of games.
    first_round = new[:tables * 2]
    assert sorted({g.deal_key for g in first_round}) == [f"{t}/0" for t in range(tables)]
    assert [g.index for g in new] == list(range(len(new)))
    # The same games with the same seeds: only the indices differ.
    strip = lambda g: (g.seats, g.seed, g.deal_key, g.rotation)  # noqa: E731
    assert sorted(map(strip, new)) == sorted(map(strip, old))
    assert [strip(g) for g in old[:4]] == [((0, 1), "m/0/0", "0/0", 0), ((1, 0), "m/0/0", "0/0", 1),
                                          ((0, 1), "m/0/1", "0/1", 0), ((1, 0), "m/0/1", "0/1", 1)]
    assert Schedule(4, game, 3, True, "m").order == INTERLEAVED


async def test_an_older_run_resumes_in_its_own_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """entrants.json was a bare list of names: such a run keeps the table-by-table order, so its recorded indices
    still mean the games they meant. Stopped by a failed write after 4 games, then resumed."""
    table = {"name": "old", "variant": "block", "games": 2, "seed": "old-run", "concurrency": 1,
             "options": {"target": 1},
             "bots": [{"name": n, "command": [PYTHON, str(RANDOM_BOT)]} for n in ("a", "b", "c")]}
    spec = spec_from_dict(table)
    run = tmp_path / "run"
    prepare_run(spec, "# t\n", run, resume=False)
    (run / "entrants.json").write_text('["a", "b", "c"]\n')  # as older versions of the arena wrote it (no schedule order)
    fail_on_write(monkeypatch, after=4)
    with pytest.raises(RecordsNotWritten):
        await run_tournament(spec, "# t\n", run, resume=True)
    monkeypatch.undo()
    await run_tournament(spec, "# t\n", run, resume=True)
    by_table = {g.index: g for g in Schedule(3, spec.game(), 2, True, "old-run", order=BY_TABLE)}
    interleaved = {g.index: g for g in Schedule(3, spec.game(), 2, True, "old-run")}
    records = [json.loads(line) for line in (run / "games.jsonl").read_text().splitlines()]
    assert sorted(int(r.get("index", 0)) for r in records) == list(range(12))
    names = ("a", "b", "c")
    for record in records:
        expected = by_table[int(record.get("index", 0))]
        assert (record["seed"], record["seats"]) == (expected.seed, [names[e] for e in expected.seats])
    assert any(by_table[i].seed != interleaved[i].seed for i in by_table), "the two orders differ on this run"


@pytest.mark.fast
async def test_a_new_run_records_its_order(tmp_path: Path) -> None:
    spec = spec_from_dict({"variant": "block", "bots": [{"name": n, "command": [PYTHON, str(RANDOM_BOT)]}
                                                       for n in ("a", "b")]})
    prepare_run(spec, "# t\n", tmp_path / "run", resume=False)
    assert json.loads((tmp_path / "run" / "entrants.json").read_text()) == {"entrants": ["a", "b"],
                                                                            "schedule": "interleaved"}
