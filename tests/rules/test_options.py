"""Variant options: real settings, validated with one clear message naming the valid values."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arena.rules import VARIANTS, OptionError, new_game


@pytest.mark.parametrize(
    "name, players, options, message",
    [
        ("checkers", 2, {}, "unknown variant 'checkers'; valid variants: draw, block, la_plaza, la_plaza_teams"),
        ("draw", 2, {"colour": 1}, "unknown option 'colour' for variant 'draw'; valid options: hand_size, "
                                   "next_leader, protected_tiles, target, voluntary_draw"),
        ("draw", 5, {}, "variant 'draw' is played by 2, 3, 4 players, got 5"),
        ("la_plaza_teams", 2, {}, "variant 'la_plaza_teams' is played by 4 players, got 2"),
        ("draw", 2, {"target": -10}, "option 'target' of variant 'draw' must be an integer >= 1, got -10"),
        ("draw", 4, {"hand_size": 7}, "option 'hand_size' of variant 'draw' must be between 1 and 6 with 4 players"),
        ("block", 4, {"hand_size": 8}, "must be between 1 and 7 with 4 players"),
        ("draw", 2, {"next_leader": "loser"}, "option 'next_leader' of variant 'draw' must be one of rotate, winner"),
        ("draw", 2, {"target": "100"}, "must be an integer >= 1, got '100'"),
        ("draw", 2, {"voluntary_draw": 1}, "must be true or false, got 1"),
        ("draw", 2, {"protected_tiles": 30}, "option 'protected_tiles' of variant 'draw' must be between 0 and 26 "
                                             "with 2 players (each needs a tile), got 30"),
        ("draw", 4, {"protected_tiles": 5}, "option 'hand_size' of variant 'draw' must be between 1 and 5 with 4 "
                                            "players and the double-6 set (28 tiles) and 5 tiles kept out of the deal"),
    ],
)
@pytest.mark.fast
def test_bad_settings_give_one_clear_message(name: str, players: int, options: dict, message: str) -> None:
    with pytest.raises(OptionError) as error:
        new_game(name, players, options)
    assert message in str(error.value)


@pytest.mark.fast
def test_options_are_real_settings() -> None:
    game = new_game("draw", 3, {"target": 40, "hand_size": 5, "protected_tiles": 0})
    assert game.options["target"] == 40
    d = game.first_deal(seed=3)
    assert [len(h) for h in d.hands] == [5, 5, 5]
    assert len(d.boneyard) == 13


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=120)


def test_variants_json_lists_every_option_and_default() -> None:
    out = run_cli("variants", "--json")
    assert out.returncode == 0, out.stderr
    facts = {v["name"]: v for v in json.loads(out.stdout)}
    assert set(facts) == set(VARIANTS)
    draw = facts["draw"]
    assert draw["players"] == [2, 3, 4]
    options = {o["name"]: o for o in draw["options"]}
    assert options["protected_tiles"]["default"] == "2"
    assert options["target"]["default"] == "100 with 2 players, 61 with 3 or 4"
    assert options["next_leader"]["allowed"] == "one of rotate, winner"
    assert facts["la_plaza_teams"]["teams"] is True


def test_arena_variants_table_names_every_variant() -> None:
    out = run_cli("variants")
    assert out.returncode == 0
    for name in VARIANTS:
        assert name in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["simulate", "--variant", "chess"], "error: unknown variant 'chess'"),
        (["simulate", "--option", "target=-1"], "error: option 'target' of variant 'draw' must be an integer >= 1"),
        (["simulate", "--option", "target"], "error: expected an option like target=50, got 'target'"),
        (["simulate", "--players", "9"], "error: variant 'draw' is played by 2, 3, 4 players, got 9"),
        (["simulate", "--bots", "smart"], "error: unknown built-in player 'smart'; valid players: random, mixed, "
                                          "greedy, search10, search50, search250, ismcts, ismcts16, ismcts64"),
    ],
)
def test_cli_bad_input_is_one_line_and_status_2(args: list[str], message: str) -> None:
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stderr.strip() == message or out.stderr.strip().startswith(message)
    assert "Traceback" not in out.stderr
