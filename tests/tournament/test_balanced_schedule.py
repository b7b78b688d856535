"""Balanced schedules: a number of tables drawn from the master seed so that every entrant plays
as often as every other, every pair meets about as often and every entrant holds every seat about as often; the
tournament file's keys; and real runs through ``arena run`` whose records verify, one of them killed and resumed.

The bounds asserted are the spreads measured over a dozen seeds (``arena bench schedule`` prints them beside
uniformly random tables, whose spreads are five to ten times wider)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.rules import new_game
from arena.server.submission import message_from_dict, dict_from_message
from arena.tournament.balanced import draw_tables
from arena.tournament.schedule import BALANCED, Schedule
from arena.tournament.spec import MAX_TABLES, SpecError, load_spec, spec_from_dict
from support.paths import ROOT
from support.processes import bot_processes
from support.tournaments import kill_run_after

RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")
GREEDY_BOT = str(ROOT / "bots" / "python" / "greedy_bot.py")
SEEDS = [f"seed-{i}" for i in range(6)]


def balanced(entrants: int, variant: str, seats: int, tables: int, duplicate: bool = False, games: int = 1,
             seed: str = "m") -> Schedule:
    return Schedule(entrants, new_game(variant, seats), games=games, duplicate=duplicate, master_seed=seed,
                    tables=tables)


def spreads(schedule: Schedule) -> tuple[int, int, int]:
    balance = schedule.balance()
    return (balance["tables_per_entrant"]["spread"], balance["meetings_per_pair"]["spread"],
            balance["games_per_entrant_and_seat"]["spread"])


# --- the balance -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.fast
def test_twenty_entrants_at_six_seats_on_200_tables(seed: str) -> None:
    """Instead of the round robin's 38,760 tables: 200, every entrant at exactly 60 (200 x 6 / 20), every pair
    meeting 14 to 18 times (15.8 on average), every entrant 8 to 12 times in each seat (10 on average)."""
    schedule = balanced(20, "mexican_train", 6, 200, seed=seed)
    assert schedule.table_count() == 200 and schedule.total() == 200 and schedule.format == BALANCED
    balance = schedule.balance()
    assert balance["tables_per_entrant"] == {"min": 60, "max": 60, "spread": 0}
    assert balance["meetings_per_pair"]["spread"] <= 4 and balance["meetings_per_pair"]["min"] >= 13
    assert balance["games_per_entrant_and_seat"]["spread"] <= 3
    assert all(len(set(table)) == 6 for table in schedule.tables())


@pytest.mark.fast
def test_fifty_entrants_at_eight_seats_on_1000_tables() -> None:
    schedule = balanced(50, "mexican_train", 8, 1000)
    table_spread, pair_spread, seat_spread = spreads(schedule)
    assert (table_spread, pair_spread <= 4, seat_spread <= 3) == (0, True, True)
    assert schedule.balance()["tables_per_entrant"]["min"] == 160


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("entrants", "variant", "seats", "tables", "games", "bounds"), [
    (12, "mexican_train", 12, 100, 1, (0, 0, 2)),    # every entrant at every table: only the seats can differ
    (10, "mexican_train", 4, 60, 3, (0, 3, 2)),      # three deal sets a table without duplicate: rotations 0, 1, 2
    (20, "draw", 2, 400, 1, (0, 3, 2)),              # two players: pairs of entrants
    (9, "la_plaza_teams", 4, 100, 1, (1, 2, 2)),     # teams: pairs of entrants, each holding both seats of its side
    (7, "all_fives", 3, 10, 1, (1, 3, 2)),           # 30 seats for 7 entrants: four or five tables each
])
@pytest.mark.fast
def test_spreads_stay_within_the_measured_bounds(entrants: int, variant: str, seats: int, tables: int, games: int,
                                                 bounds: tuple[int, int, int], seed: str) -> None:
    schedule = balanced(entrants, variant, seats, tables, games=games, seed=seed)
    measured = spreads(schedule)
    assert all(m <= b for m, b in zip(measured, bounds)), measured
    assert schedule.total() == tables * games


@pytest.mark.fast
def test_every_prefix_keeps_table_counts_within_one() -> None:
    """A run cut short is as fair as a whole one: after every table, no entrant has two tables more than another."""
    counts = [0] * 13
    for layout in draw_tables(13, 5, 300, "prefix", extra_seats=1):
        assert len(set(layout)) == 5
        for entrant in layout:
            counts[entrant] += 1
        assert max(counts) - min(counts) <= 1


@pytest.mark.fast
def test_duplicates_seat_every_entrant_evenly() -> None:
    """Every deal set is played under every rotation: 60 tables x 1 deal set x 6 rotations, 60 games in each seat."""
    schedule = balanced(20, "mexican_train", 6, 200, duplicate=True)
    assert schedule.total() == 200 * 6
    assert schedule.balance()["games_per_entrant_and_seat"] == {"min": 60, "max": 60, "spread": 0}
    assert schedule.processes_per_entrant() == 2  # one seat a table, in each of two lanes


@pytest.mark.fast
def test_far_better_balanced_than_random_tables() -> None:
    """The bench's baseline, asserted: uniformly random tables of the same size spread five times wider."""
    from arena.bench.referee import bench_schedule

    [result] = bench_schedule(cases=(("mexican_train", 6, 20, 200, False, 1),), seed="bench")
    assert result["round_robin_tables"] == 38_760 and result["tables"] == 200
    for measure in ("tables_per_entrant", "meetings_per_pair", "games_per_entrant_and_seat"):
        assert result["uniform_random"][measure]["spread"] >= 5 * max(1, result["balanced"][measure]["spread"])


# --- determinism -------------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_same_seed_same_tables_another_seed_others() -> None:
    one = list(balanced(20, "mexican_train", 6, 200, seed="a").tables())
    assert one == list(balanced(20, "mexican_train", 6, 200, seed="a").tables())
    assert one != list(balanced(20, "mexican_train", 6, 200, seed="b").tables())


@pytest.mark.fast
def test_the_drawing_is_pinned() -> None:
    """The tables of a seed, fixed: a run is resumed by drawing its tables again, so a change to the drawing must
    change ``balanced.VERSION`` (and this test)."""
    assert draw_tables(6, 3, 4, "pinned") == [(5, 2, 0), (1, 3, 4), (0, 1, 5), (2, 3, 4)]
    assert list(balanced(4, "draw", 2, 3, seed="pinned").tables()) == [(0, 2), (3, 1), (2, 1)]


@pytest.mark.fast
def test_each_index_holds_the_game_played_there() -> None:
    """What resume checks a recorded game against is, index by index, what the run plays."""
    for duplicate in (True, False):
        schedule = balanced(9, "mexican_train", 4, 7, duplicate=duplicate, games=3)
        assert [schedule.game_at(i) for i in range(schedule.total())] == list(schedule)
        assert [g.seed for g in schedule][:2] == (["m/0/0", "m/0/0"] if duplicate else ["m/0/0", "m/1/0"])


@pytest.mark.fast
def test_a_schedule_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="at least 6 entrants, got 3 tables, candidates \\(\\) and 5 entrants"):
        balanced(5, "mexican_train", 6, 3)
    with pytest.raises(ValueError, match="without candidates"):
        Schedule(5, new_game("draw", 2), 1, True, "m", candidates=(0,), tables=3)
    with pytest.raises(ValueError, match="a table of 2 to 4 entrants, got 5"):
        draw_tables(4, 5, 1, "m")


# --- the tournament file -----------------------------------------------------------------------------------------


def file_data(**changes: object) -> dict:
    data: dict = {"variant": "mexican_train", "players": 4, "format": "balanced", "tables": 12, "games": 1,
                  "bots": [{"name": f"b{i}", "command": ["python", "bot.py"]} for i in range(6)]}
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.fast
def test_a_balanced_file_is_read_with_its_tables() -> None:
    spec = spec_from_dict(file_data())
    assert (spec.format, spec.tables) == ("balanced", 12)
    schedule = spec.schedule("s")
    assert schedule.format == BALANCED and schedule.total() == 12 * 4  # duplicate by default: 4 rotations a table
    assert spec_from_dict(file_data(tables=MAX_TABLES)).tables == MAX_TABLES


@pytest.mark.parametrize(("changes", "message"), [
    ({"tables": None}, "key 'tables' is missing: format = \"balanced\" plays the number of tables it names"),
    ({"tables": 0}, f"key 'tables' must be an integer >= 1 and <= {MAX_TABLES}, got 0"),
    ({"tables": MAX_TABLES + 1}, f"key 'tables' must be an integer >= 1 and <= {MAX_TABLES}, got {MAX_TABLES + 1}"),
    ({"tables": "many"}, f"key 'tables' must be an integer >= 1 and <= {MAX_TABLES}, got 'many'"),
    ({"format": "round_robin"}, "key 'tables' is for format = \"balanced\", got it with 'round_robin' (which plays "
                                "every table it has)"),
    ({"format": None}, "key 'tables' is for format = \"balanced\", got it with 'round_robin' (which plays every "
                       "table it has)"),
    ({"candidates": ["b0"]}, "key 'candidates' is for format = \"gauntlet\", got it with 'balanced'"),
    ({"players": 8}, "format = \"balanced\" seats distinct bots at every table: 8 seats need at least 8 bots, got 6 "
                     "(a round robin fills the seats in turn)"),
    ({"format": "ladder"},
     "key 'format' must be one of round_robin, gauntlet, balanced, swiss, knockout, got 'ladder'"),
])
@pytest.mark.fast
def test_a_bad_balanced_file_gets_one_clear_line(changes: dict, message: str) -> None:
    with pytest.raises(SpecError) as error:
        spec_from_dict(file_data(**changes))
    assert str(error.value) == message


def test_a_team_file_needs_two_bots(tmp_path: Path) -> None:
    teams = spec_from_dict(file_data(variant="la_plaza_teams", players=None, bots=file_data()["bots"][:2]))
    assert teams.schedule("s").table_count() == 12 and teams.schedule("s").processes_per_entrant() == 2 * 2
    path = tmp_path / "t.toml"
    path.write_text('variant = "draw"\nformat = "balanced"\n[[bots]]\nname = "a"\ncommand = "x"\n'
                    '[[bots]]\nname = "b"\ncommand = "x"\n')
    out = subprocess.run([sys.executable, "-m", "arena", "run", str(path)], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr == (f"error: {path}: key 'tables' is missing: format = \"balanced\" plays the number of "
                          f"tables it names\n")


@pytest.mark.fast
def test_the_control_apis_message_carries_the_tables() -> None:
    data = file_data(tables=33)
    message = message_from_dict(data)
    assert message.format == "balanced" and message.tables == 33
    assert dict_from_message(message)["tables"] == 33
    assert "tables" not in dict_from_message(message_from_dict(file_data(format=None, tables=None)))


@pytest.mark.fast
def test_the_ready_balanced_file_is_valid() -> None:
    spec = load_spec(ROOT / "tournaments" / "balanced.toml")
    assert spec.format == BALANCED and spec.tables >= 1 and len(spec.bots) >= spec.players


# --- real runs ---------------------------------------------------------------------------------------------------


def run_text(tag: str, *, variant: str, players: int, entrants: int, tables: int, games: int, duplicate: bool,
             concurrency: int, target: int = 1) -> str:
    bots = "".join(f'''
[[bots]]
name = "{"greedy" if i % 2 else "random"}-{i}"
command = ["{sys.executable}", "{GREEDY_BOT if i % 2 else RANDOM_BOT}", "--tag", "{tag}"]
''' for i in range(entrants))
    return f'''
name = "balanced"
variant = "{variant}"
players = {players}
format = "balanced"
tables = {tables}
games = {games}
duplicate = {"true" if duplicate else "false"}
seed = "balanced-run"
concurrency = {concurrency}

[options]
target = {target}
{bots}'''


def write_run(tmp_path: Path, **settings: object) -> tuple[Path, str]:
    """A balanced tournament file in ``tmp_path`` (its bots marked with a fresh tag) and the tag."""
    tag = uuid.uuid4().hex
    path = tmp_path / "balanced.toml"
    path.write_text(run_text(tag, **settings))  # type: ignore[arg-type]
    return path, tag


def arena(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def test_a_balanced_runs_records_verify(tmp_path: Path) -> None:
    """Five bots at three-player Block tables, six tables of two deal sets without duplicate: 12 games, every bot at
    three or four tables (18 seats for 5), and the records verify against the revealed seed."""
    path, tag = write_run(tmp_path, variant="block", players=3, entrants=5, tables=6, games=2, duplicate=False,
                          concurrency=2)
    out = tmp_path / "run"
    result = arena("run", str(path), "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    games = records(out)
    assert sorted(int(g.get("index", 0)) for g in games) == list(range(12))
    schedule = load_spec(path).schedule("balanced-run")
    names = [f"{'greedy' if i % 2 else 'random'}-{i}" for i in range(5)]
    by_index = {int(g.get("index", 0)): g for g in games}
    assert [by_index[s.index]["seats"] for s in schedule] == [[names[e] for e in s.seats] for s in schedule]
    tables = {name: len({g["dealKey"].split("/")[0] for g in games if name in g["seats"]}) for name in names}
    assert sorted(tables.values()) == [3, 3, 4, 4, 4]
    assert json.loads((out / "entrants.json").read_text())["balanced"] == 1
    verified = arena("replay", str(out), "--verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert not bot_processes(tag)


def test_a_killed_run_resumes_the_same_tables(tmp_path: Path) -> None:
    path, tag = write_run(tmp_path, variant="block", players=2, entrants=6, tables=20, games=3, duplicate=True,
                          concurrency=3)
    out = tmp_path / "run"
    left = kill_run_after(path, out, tag, 5, ROOT)
    before = [json.loads(line) for line in left[:left.rfind(b"\n") + 1].decode().splitlines()]  # a torn tail is dropped
    assert 5 <= len(before) < 120, "the run must be interrupted in the middle"

    resumed = arena("run", str(path), "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{len(before)} games were already recorded" in resumed.stdout
    games = records(out)
    assert sorted(int(g.get("index", 0)) for g in games) == list(range(120)), "every game exactly once"
    assert games[:len(before)] == before
    schedule = load_spec(path).schedule("balanced-run")
    names = [f"{'greedy' if i % 2 else 'random'}-{i}" for i in range(6)]
    for game in games:
        scheduled = schedule.game_at(int(game.get("index", 0)))
        assert (game["seats"], game["seed"]) == ([names[e] for e in scheduled.seats], scheduled.seed)
    assert arena("replay", str(out), "--verify").returncode == 0


def test_a_run_drawn_differently_is_not_resumed(tmp_path: Path) -> None:
    path, _ = write_run(tmp_path, variant="block", players=2, entrants=3, tables=2, games=1, duplicate=False,
                          concurrency=1)
    out = tmp_path / "run"
    from arena.tournament.runner import prepare_run

    prepare_run(load_spec(path), path.read_text(), out, resume=False)
    started = json.loads((out / "entrants.json").read_text())
    assert started == {"entrants": ["random-0", "greedy-1", "random-2"], "schedule": "interleaved", "balanced": 1}
    (out / "entrants.json").write_text(json.dumps({**started, "balanced": 0}))
    resumed = arena("run", str(path), "--out", str(out), "--resume")
    assert resumed.returncode == 2
    assert resumed.stderr == (f"error: {out}: this run's balanced tables were drawn by version 0 of the drawing, this "
                              f"arena draws version 1: resume it with the arena that started it\n")
