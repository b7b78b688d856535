"""Bots kept apart (a tournament file's ``apart``): groups of bots of which no table seats two, in a round robin of
k-combinations, in a two-sided round robin and in a balanced schedule; the file's key and its one-line refusals;
and a real run whose records seat no two bots of one group. What a league keeps one author's versions apart with,
the tournament layer knowing no authors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.rules import new_game
from arena.tournament.balanced import draw_tables
from arena.tournament.schedule import Schedule
from arena.tournament.spec import SpecError, spec_from_dict
from support.tournaments import arena_run, write

SEEDS = [f"seed-{i}" for i in range(8)]


def shared(tables: list[tuple[int, ...]], groups: tuple[tuple[int, ...], ...]) -> int:
    """How many tables seat two entrants of one group."""
    return sum(1 for table in tables if any(len(set(table) & set(group)) > 1 for group in groups))


@pytest.mark.fast
def test_a_round_robin_seats_no_two_of_one_group() -> None:
    """Six entrants at three seats, {0, 1} and {2, 3} apart: of the 20 combinations, the 12 with at most one of
    each group (houses of sizes 2, 2, 1, 1: 2x2x1 + 2x2x1 + 2x1x1 + 2x1x1)."""
    schedule = Schedule(6, new_game("all_fives", 3), 1, True, "m", apart=((0, 1), (2, 3)))
    tables = list(schedule.tables())
    assert tables == [(0, 2, 4), (0, 2, 5), (0, 3, 4), (0, 3, 5), (0, 4, 5), (1, 2, 4), (1, 2, 5), (1, 3, 4),
                      (1, 3, 5), (1, 4, 5), (2, 4, 5), (3, 4, 5)]
    assert schedule.table_count() == 12 and schedule.total() == 12 * 3
    assert [schedule.game_at(i) for i in range(schedule.total())] == list(schedule)
    without = Schedule(6, new_game("all_fives", 3), 1, True, "m")
    assert without.table_count() == 20 and shared(list(without.tables()), ((0, 1), (2, 3))) == 8


@pytest.mark.fast
def test_two_sided_round_robins_skip_same_group_pairs() -> None:
    pairs = Schedule(4, new_game("draw", 2), 1, True, "m", apart=((0, 1),))
    assert list(pairs.tables()) == [(0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] and pairs.table_count() == 5
    teams = Schedule(3, new_game("la_plaza_teams", 4), 1, True, "m", apart=((0, 2),))
    assert list(teams.tables()) == [(0, 1, 0, 1), (1, 2, 1, 2)] and teams.table_count() == 2


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.fast
def test_a_balanced_schedule_seats_no_two_of_one_group(seed: str) -> None:
    """Ten entrants at four seats, a group of three and a group of two: 40 tables, none with two of a group. The
    group of three shares its one seat a table (at most 40 seats: 13 or 14 each, where 16 would be an even share); the
    others play 16 to 18 tables each (measured over the seeds)."""
    groups = ((0, 1, 2), (3, 4))
    schedule = Schedule(10, new_game("mexican_train", 4), 1, True, seed, tables=40, apart=groups)
    tables = list(schedule.tables())
    assert len(tables) == 40 and shared(tables, groups) == 0
    counts = [sum(e in table for table in tables) for e in range(10)]
    assert set(counts[:3]) <= {13, 14} and sum(counts) == 160
    assert 16 <= min(counts[3:]) and max(counts[3:]) <= 18
    unkept = draw_tables(10, 4, 40, seed)
    assert shared(unkept, groups) > 0  # the same draw without the groups seats them together


@pytest.mark.fast
def test_without_groups_the_drawing_is_unchanged() -> None:
    """Every entrant a house of its own draws the pinned tables (runs started before resume with their own)."""
    assert draw_tables(6, 3, 4, "pinned", houses=range(6)) == [(5, 2, 0), (1, 3, 4), (0, 1, 5), (2, 3, 4)]
    assert draw_tables(6, 3, 4, "pinned", houses=[0, 0, 1, 2, 3, 4]) != [(5, 2, 0), (1, 3, 4), (0, 1, 5), (2, 3, 4)]


@pytest.mark.fast
def test_a_schedule_refuses_groups_it_cannot_seat() -> None:
    game = new_game("mexican_train", 4)
    with pytest.raises(ValueError, match="at least 4 houses .* and 3 houses"):
        Schedule(5, game, 1, True, "m", tables=3, apart=((0, 1, 2),))
    with pytest.raises(ValueError, match="each entrant in one group at most"):
        Schedule(6, game, 1, True, "m", apart=((0, 1), (1, 2)))
    with pytest.raises(ValueError, match="without candidates"):
        Schedule(6, game, 1, True, "m", candidates=(0,), apart=((1, 2),))
    with pytest.raises(ValueError, match=r"a table of 2 to 3 entrants, got 4 \(5 entrants in 3 houses"):
        draw_tables(5, 4, 1, "m", houses=[0, 0, 0, 1, 2])


# --- the tournament file -----------------------------------------------------------------------------------------


def file_data(**changes: object) -> dict:
    data: dict = {"variant": "mexican_train", "players": 4, "format": "balanced", "tables": 12, "games": 1,
                  "apart": [["b0", "b1"], ["b2", "b3"]],
                  "bots": [{"name": f"b{i}", "command": "builtin:random"} for i in range(6)]}
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.fast
def test_the_groups_a_file_names_are_kept_apart() -> None:
    spec = spec_from_dict(file_data())
    assert spec.apart == (("b0", "b1"), ("b2", "b3"))
    schedule = spec.schedule("s")
    assert schedule.apart == ((0, 1), (2, 3)) and shared(list(schedule.tables()), schedule.apart) == 0
    assert spec_from_dict(file_data(apart=None)).apart == ()
    robin = spec_from_dict(file_data(format=None, tables=None, apart=[["b0", "b1", "b2"]]))
    assert list(robin.schedule("s").tables()) == [(0, 3, 4, 5), (1, 3, 4, 5), (2, 3, 4, 5)]  # one of the group each


@pytest.mark.parametrize(("changes", "message"), [
    ({"apart": ["b0", "b1"]}, "key 'apart' must list groups of two or more bot names (no table seats two bots of "
                              "one group), got ['b0', 'b1']"),
    ({"apart": [["b0"]]}, "key 'apart' must list groups of two or more bot names (no table seats two bots of one "
                          "group), got [['b0']]"),
    ({"apart": [["b0", "zed"]]}, "key 'apart' names 'zed', which is not a bot that plays (bots: b0, b1, b2, b3, b4, "
                                 "b5)"),
    ({"apart": [["b0", "b1"], ["b1", "b2"]]}, "key 'apart' names 'b1' twice: a bot is in one group at most"),
    ({"apart": [["b0", "b1", "b2", "b3"]]}, "key 'apart' leaves 3 houses (its groups, and the bots in none) and a "
                                            "table seats 4 sides of distinct houses: no table can be played"),
    ({"format": "gauntlet", "tables": None, "candidates": ["b5"]}, "key 'apart' is for format = \"round_robin\" or "
                                                                   "\"balanced\", got it with 'gauntlet'"),
])
@pytest.mark.fast
def test_a_bad_apart_key_gets_one_clear_line(changes: dict, message: str) -> None:
    with pytest.raises(SpecError) as error:
        spec_from_dict(file_data(**changes))
    assert str(error.value) == message


def test_a_run_seats_no_two_bots_of_one_group(tmp_path: Path) -> None:
    """Built-in players (no processes) at three-player Block tables, {a1, a2, a3} apart: six balanced tables of one
    duplicate deal set, 18 games, and no recorded game seats two of the group."""
    bots = "".join(f'\n[[bots]]\nname = "{name}"\ncommand = "builtin:random"\n'
                   for name in ("a1", "a2", "a3", "b", "c", "d"))
    path = write(tmp_path, f'name = "t"\nvariant = "block"\nplayers = 3\ngames = 1\nseed = "apart"\n'
                           f'format = "balanced"\ntables = 6\napart = [["a1", "a2", "a3"]]\n'
                           f'output = "{tmp_path / "run"}"\n\n[options]\ntarget = 1\n{bots}')
    result = arena_run(path)
    assert result.returncode == 0, result.stdout + result.stderr
    games = [json.loads(line) for line in (tmp_path / "run" / "games.jsonl").read_text().splitlines()]
    assert len(games) == 18
    assert [g for g in games if len({"a1", "a2", "a3"} & set(g["seats"])) > 1] == []
    assert {name for g in games for name in g["seats"]} == {"a1", "a2", "a3", "b", "c", "d"}
