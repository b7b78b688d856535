"""Mexican Train: the hub-and-trains layout, every double rule from explicit deals, options, and property tests.

Scenario tests write tiles and actions as docs/reference/rules.md#mexican-train-notation and ``str(action)`` do:
``"[5|12] on [12|12] on train 0"`` (a train's first tile joins the engine), ``"[3|5] on [5|5] line B on the Mexican
train"``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.notation import show, t, tiles

from arena.rules import (
    DRAW, MEXICAN_TRAIN, PASS, Deal, Ending, IllegalActionError, Kind, OptionError, RulesError, new_game, placement,
    tile_name,
)
from arena.rules.actions import Point
from arena.rules.mexican_train import HAND_SIZES, MEXICAN_PIPS, SET_PLAYERS
from arena.rules.tiles import DOUBLE_OF, IS_DOUBLE, LOW, VALUE_MASK, full_set, set_size, tiles_of
from arena.rules.trains import Trains

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

# --- helpers ------------------------------------------------------------------------------------------------------


def mt_deal(*hands: str, boneyard: str = "", leader: int = 0, engine: str = "[12|12]") -> Deal:
    """An explicit deal: one string per hand, boneyard top first. Tiles left out are out of play."""
    return Deal(tuple(tiles(h) for h in hands), tiles(boneyard) if boneyard else (), leader, None, t(engine))


def new_round(*hands: str, boneyard: str = "", leader: int = 0, engine: str = "[12|12]", **options):
    game = new_game("mexican_train", len(hands), options)
    return game.new_round(mt_deal(*hands, boneyard=boneyard, leader=leader, engine=engine))


def play(state, *moves: str) -> None:
    """Apply actions written as strings; each must be legal at that moment (``"draw"`` matches any draw)."""
    for move in moves:
        legal = state.legal_actions()
        wanted = [a for a in legal if str(a) == move or (move == "draw" and a.kind == Kind.DRAW)]
        assert wanted, f"{move!r} is not legal for seat {state.turn}; legal: {show(legal)}"
        state.apply(wanted[0])


def sorted_tiles(text: str) -> tuple[int, ...]:
    return tuple(sorted(tiles(text)))


def legal(state) -> set[str]:
    return set(show(state.legal_actions()))


def open_doubles(state) -> list[tuple[int, str]]:
    return [(train, tile_name(tile)) for train, tile in state.layout.view().open_doubles]


def marker(state, seat: int) -> bool:
    return state.layout.view().trains[seat].marker


# --- the layout ------------------------------------------------------------------------------------------------------


def test_attachment_points_name_the_train_and_the_end_tile() -> None:
    trains = Trains(3, t("[12|12]"))
    assert trains.end(0) == (t("[12|12]"), Point.NONE, 12)
    assert trains.end(MEXICAN_TRAIN) == (t("[12|12]"), Point.NONE, 12)
    trains.place(t("[5|12]"), 1, t("[12|12]"), Point.NONE)
    assert trains.end(1) == (t("[5|12]"), Point.LOW_END, 5)
    connection = trains.place(t("[5|5]"), 1, t("[5|12]"), Point.LOW_END)
    assert (connection.target_point, connection.tile_point) == (Point.LOW_END, Point.LINE_A)
    assert trains.end(1) == (t("[5|5]"), Point.LINE_B, 5)
    trains.place(t("[5|9]"), 1, t("[5|5]"), Point.LINE_B)
    assert trains.end(1) == (t("[5|9]"), Point.HIGH_END, 9)
    view = trains.view()
    assert [tv.train for tv in view.trains] == [0, 1, 2, MEXICAN_TRAIN]
    assert view.trains[1].tiles == tiles("[5|12] [5|5] [5|9]")
    assert [(c.target_point, c.tile_point) for c in view.trains[1].connections] == [
        (Point.NONE, Point.HIGH_END), (Point.LOW_END, Point.LINE_A), (Point.LINE_B, Point.LOW_END),
    ]
    assert view.open_doubles == ()
    assert view.played == tiles("[5|12] [5|5] [5|9]")


def test_the_layout_refuses_a_wrong_end_or_unmatched_tile() -> None:
    trains = Trains(2, t("[12|12]"))
    with pytest.raises(RulesError, match="expected the end of train 0"):
        trains.place(t("[5|12]"), 0, t("[5|5]"), Point.LINE_B)
    with pytest.raises(RulesError, match="does not match 12"):
        trains.place(t("[3|5]"), 0, t("[12|12]"), Point.NONE)
    with pytest.raises(RulesError, match="expected a train between 0 and 1"):
        trains.place(t("[5|12]"), 4, t("[12|12]"), Point.NONE)
    with pytest.raises(RulesError, match="expected an engine double"):
        Trains(2, t("[3|5]"))


def test_copy_is_independent() -> None:
    trains = Trains(2, t("[9|9]"))
    other = trains.copy()
    other.place(t("[8|9]"), 0, t("[9|9]"), Point.NONE)
    other.set_marker(1, True)
    assert trains.is_empty() and trains.marks == 0
    assert not other.is_empty() and other.has_marker(1)


# --- turns, draws and markers ------------------------------------------------------------------------------------


def test_first_tiles_start_own_or_the_mexican_train_only() -> None:
    state = new_round("[5|12] [1|2]", "[7|12] [3|4]", boneyard="[0|1]")
    assert legal(state) == {"[5|12] on [12|12] on train 0", "[5|12] on [12|12] on the Mexican train"}
    play(state, "[5|12] on [12|12] on train 0")
    assert state.turn == 1
    assert legal(state) == {"[7|12] on [12|12] on train 1", "[7|12] on [12|12] on the Mexican train"}


def test_draw_then_play_the_drawn_tile_only() -> None:
    state = new_round("[1|2] [3|4]", "[7|12] [8|9]", boneyard="[6|12] [0|1]")
    assert state.legal_actions() == [DRAW]
    play(state, "draw")
    assert state.turn == 0 and state.hand(0) == sorted_tiles("[1|2] [3|4] [6|12]")
    assert legal(state) == {"[6|12] on [12|12] on train 0", "[6|12] on [12|12] on the Mexican train"}
    play(state, "[6|12] on [12|12] on the Mexican train")
    assert state.turn == 1 and not marker(state, 0)


def test_draw_then_marker_when_the_drawn_tile_misfits() -> None:
    state = new_round("[1|2] [3|4]", "[7|12] [8|9]", boneyard="[0|1] [6|12]")
    play(state, "draw")
    assert state.legal_actions() == [PASS]
    play(state, "pass")
    assert marker(state, 0) and state.turn == 1
    assert state.passes == 0, "a pass with tiles left in the boneyard does not count toward a block"


def test_nothing_to_place_or_draw_passes_with_the_marker() -> None:
    state = new_round("[1|2] [3|4]", "[7|12] [8|9]")
    assert state.legal_actions() == [PASS]
    play(state, "pass")
    assert marker(state, 0) and state.passes == 1


def test_a_marker_opens_a_train_till_its_owner_plays() -> None:
    state = new_round("[5|12] [2|4] [9|10] [6|8]", "[7|12] [9|12] [5|6] [7|8] [0|0]", boneyard="[1|1] [3|3]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "draw", "pass")  # seat 0 has no 5 and no 12, draws [1|1]: marker on train 0
    assert marker(state, 0) and not marker(state, 1)
    assert legal(state) == {
        "[9|12] on [12|12] on the Mexican train", "[5|6] on [5|12] low end on train 0",
        "[7|8] on [7|12] low end on train 1",
    }, "the marked train is open to seat 1"
    play(state, "[9|12] on [12|12] on the Mexican train")
    play(state, "[9|10] on [9|12] low end on the Mexican train")
    assert marker(state, 0), "placing on the Mexican train does not remove the marker"
    play(state, "[5|6] on [5|12] low end on train 0")
    assert marker(state, 0), "another seat placing on the train does not remove the marker"
    assert legal(state) == {"[6|8] on [5|6] high end on train 0"}
    play(state, "[6|8] on [5|6] high end on train 0")
    assert not marker(state, 0)
    # Seat 1's train has no marker: seat 0 may not play there.
    assert "[7|8] on [7|12] low end on train 1" in legal(state)
    play(state, "[7|8] on [7|12] low end on train 1")
    assert state.legal_actions() == [DRAW], "seat 0's [2|4] [1|1] fit neither its own 8 nor the Mexican 10"


# --- doubles ----------------------------------------------------------------------------------------------------------


def test_a_double_obliges_a_next_tile_on_it_or_any_train() -> None:
    state = new_round("[5|12] [5|5] [3|5] [9|12] [1|2]", "[7|12] [7|8] [8|10] [0|1]", boneyard="[2|11]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[5|5] on [5|12] low end on train 0")
    assert state.turn == 0, "the turn goes on after a double"
    assert legal(state) == {"[3|5] on [5|5] line B on train 0", "[9|12] on [12|12] on the Mexican train"}
    play(state, "[9|12] on [12|12] on the Mexican train")
    assert state.turn == 1
    assert open_doubles(state) == [(0, "[5|5]")]
    # Now it is an open double: seat 1 may only try to satisfy it (its own train is closed to it).
    assert state.legal_actions() == [DRAW]


def test_unable_to_follow_a_double_draws_then_plays_or_marks() -> None:
    state = new_round("[5|12] [5|5] [1|2]", "[7|12] [7|8] [0|1]", boneyard="[5|6] [2|3]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[5|5] on [5|12] low end on train 0")
    assert state.legal_actions() == [DRAW]
    play(state, "draw")
    assert legal(state) == {"[5|6] on [5|5] line B on train 0"}
    play(state, "[5|6] on [5|5] line B on train 0")
    assert state.turn == 1 and open_doubles(state) == []
    state = new_round("[5|12] [5|5] [1|2]", "[7|12] [7|8] [0|1]", boneyard="[2|3] [5|6]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[5|5] on [5|12] low end on train 0", "draw")
    assert state.legal_actions() == [PASS]
    play(state, "pass")
    assert marker(state, 0) and open_doubles(state) == [(0, "[5|5]")]


def test_a_placed_drawn_double_allows_another_draw() -> None:
    hands = ("[5|12] [9|12] [5|5] [1|2]", "[7|12] [7|8] [0|1] [8|10]")
    state = new_round(*hands, boneyard="[9|9] [2|3] [4|6]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[9|12] on [12|12] on the Mexican train", "[7|8] on [7|12] low end on train 1")
    play(state, "[5|5] on [5|12] low end on train 0", "draw")
    assert legal(state) == {"[9|9] on [9|12] low end on the Mexican train"}
    play(state, "[9|9] on [9|12] low end on the Mexican train")
    assert state.turn == 0 and state.legal_actions() == [DRAW], "a placed double obliges again: draw again"
    play(state, "draw")  # [2|3]
    assert state.legal_actions() == [PASS]
    play(state, "pass")
    assert marker(state, 0) and open_doubles(state) == [(0, "[5|5]"), (MEXICAN_TRAIN, "[9|9]")]


def test_chained_doubles_are_satisfied_in_the_order_placed() -> None:
    """docs/reference/rules.md#mexican-train-doubles-example."""
    hands = ("[5|12] [9|12] [5|5] [9|9] [3|5] [4|9] [1|1]", "[7|12] [7|8] [6|9] [5|6] [8|10] [0|2]")
    state = new_round(*hands, boneyard="[0|0] [1|3]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[9|12] on [12|12] on the Mexican train", "[7|8] on [7|12] low end on train 1")
    play(state, "[5|5] on [5|12] low end on train 0")
    play(state, "[9|9] on [9|12] low end on the Mexican train")
    assert state.turn == 0
    assert legal(state) == {"[3|5] on [5|5] line B on train 0"}, "after several doubles: only on the first"
    play(state, "[3|5] on [5|5] line B on train 0")
    assert state.turn == 1 and open_doubles(state) == [(MEXICAN_TRAIN, "[9|9]")]
    # Open double on the Mexican train: seat 1 must satisfy it, not play [8|10] on its own train.
    assert legal(state) == {"[6|9] on [9|9] line B on the Mexican train"}


def test_chained_doubles_in_reverse_with_the_option() -> None:
    """docs/reference/rules.md#mexican-train-doubles-example, with ``satisfy_order = "reverse"``."""
    hands = ("[5|12] [9|12] [5|5] [9|9] [3|5] [4|9] [1|1]", "[7|12] [7|8] [6|9] [5|6] [8|10] [0|2]")
    state = new_round(*hands, boneyard="[0|0] [1|3]", satisfy_order="reverse")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[9|12] on [12|12] on the Mexican train", "[7|8] on [7|12] low end on train 1")
    play(state, "[5|5] on [5|12] low end on train 0", "[9|9] on [9|12] low end on the Mexican train")
    assert legal(state) == {"[4|9] on [9|9] line B on the Mexican train"}
    play(state, "[4|9] on [9|9] line B on the Mexican train")
    assert open_doubles(state) == [(0, "[5|5]")]
    assert legal(state) == {"[5|6] on [5|5] line B on train 0"}


def test_open_doubles_across_turns_in_order_placed_and_reverse() -> None:
    for order, expected in (("placed", "[5|6] on [5|5] line B on train 0"),
                            ("reverse", "[6|9] on [9|9] line B on the Mexican train")):
        hands = ("[5|12] [9|12] [5|5] [9|9] [1|1] [0|2]", "[7|12] [7|8] [6|9] [5|6] [8|10] [0|3]")
        state = new_round(*hands, boneyard="[2|4] [1|3]", satisfy_order=order)
        play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
        play(state, "[9|12] on [12|12] on the Mexican train", "[7|8] on [7|12] low end on train 1")
        play(state, "[5|5] on [5|12] low end on train 0", "[9|9] on [9|12] low end on the Mexican train")
        play(state, "draw", "pass")  # [2|4] fits neither double: marker, both doubles stay open
        assert open_doubles(state) == [(0, "[5|5]"), (MEXICAN_TRAIN, "[9|9]")]
        assert legal(state) == {expected}, order


def test_an_open_double_blocks_all_other_trains_owners_too() -> None:
    state = new_round(
        "[5|12] [5|5] [9|12] [9|10] [1|2]", "[7|12] [7|8] [0|1] [2|4]", boneyard="[3|11] [0|10] [4|6] [3|5]"
    )
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[5|5] on [5|12] low end on train 0", "[9|12] on [12|12] on the Mexican train")
    assert state.turn == 1 and open_doubles(state) == [(0, "[5|5]")]
    # Seat 1 holds [7|8] for its own train, but the open double closes every other train.
    assert state.legal_actions() == [DRAW]
    play(state, "draw", "pass")  # [3|11]: no 5; marker on train 1
    # Its own player too: [9|10] would fit the Mexican train, but only the double may be played.
    assert state.turn == 0 and state.legal_actions() == [DRAW]
    play(state, "draw", "pass")  # [0|10]
    play(state, "draw", "pass")  # seat 1: [4|6]
    play(state, "draw")  # seat 0 draws [3|5]
    assert legal(state) == {"[3|5] on [5|5] line B on train 0"}
    play(state, "[3|5] on [5|5] line B on train 0")
    assert open_doubles(state) == [] and not marker(state, 0)
    assert legal(state) == {"[7|8] on [7|12] low end on train 1"}


def test_an_unsatisfiable_double_stops_restricting_play() -> None:
    # Every tile showing a 5 in this deal: [5|12], [3|5], [5|5] (tiles left out of a deal are out of play).
    hands = ("[5|12] [5|5] [9|12] [1|2]", "[3|12] [3|5] [9|11] [0|1]")
    state = new_round(*hands, boneyard="[2|4]")
    play(state, "[5|12] on [12|12] on train 0", "[3|12] on [12|12] on train 1")
    play(state, "[5|5] on [5|12] low end on train 0", "[9|12] on [12|12] on the Mexican train")
    assert open_doubles(state) == [(0, "[5|5]")]
    assert legal(state) == {"[3|5] on [5|5] line B on train 0"}, "seat 1 holds [3|5]: it must satisfy the double"
    state = new_round(*hands, boneyard="[2|4]")
    play(state, "[5|12] on [12|12] on train 0", "[3|12] on [12|12] on train 1")
    play(state, "[9|12] on [12|12] on the Mexican train", "[3|5] on [3|12] low end on train 1")
    play(state, "[5|5] on [5|12] low end on train 0", "draw", "pass")
    assert open_doubles(state) == [(0, "[5|5]")]
    # No 5 is left in a hand or the boneyard: the double cannot be satisfied and play goes on elsewhere.
    assert legal(state) == {"[9|11] on [9|12] low end on the Mexican train"}


def test_last_tile_a_double_ends_the_round_at_once() -> None:
    state = new_round("[5|12] [5|5]", "[7|12] [7|8] [0|0] [9|9]", boneyard="[1|2]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1")
    play(state, "[5|5] on [5|12] low end on train 0")
    assert state.is_over()
    result = state.result()
    assert result.ending is Ending.DOMINO and result.winner == 0 and result.out_seat == 0
    assert result.points == (0, 15 + 50 + 18)
    assert state.legal_actions() == []


def test_double_blank_counts_fifty() -> None:
    assert MEXICAN_PIPS[t("[0|0]")] == 50 and MEXICAN_PIPS[t("[0|1]")] == 1 and MEXICAN_PIPS[t("[6|6]")] == 12
    state = new_round("[5|12]", "[0|0] [3|4]", "[1|1]")
    play(state, "[5|12] on [12|12] on train 0")
    assert state.result().points == (0, 57, 2)


# --- round end by block --------------------------------------------------------------------------------------------


def test_block_waits_till_all_are_marked_and_none_can_place() -> None:
    state = new_round("[8|12] [9|12] [4|5] [10|11]", "[3|12] [3|5] [1|2]")
    play(state, "[8|12] on [12|12] on train 0", "[3|12] on [12|12] on train 1")
    play(state, "[9|12] on [12|12] on the Mexican train", "[3|5] on [3|12] low end on train 1")
    play(state, "pass")  # seat 0: nothing fits 8, 9, or seat 1's unmarked train
    assert state.passes == 1
    play(state, "pass")  # seat 1: nothing fits; its marker opens train 1 to seat 0
    assert not state.is_over(), "seat 0 can now place on train 1"
    assert legal(state) == {"[4|5] on [3|5] high end on train 1"}
    play(state, "[4|5] on [3|5] high end on train 1", "pass", "pass")
    assert state.is_over()
    result = state.result()
    assert result.ending is Ending.BLOCK and result.winner is None
    assert result.points == (21, 3)


def test_a_pass_after_the_last_draw_counts_toward_the_block() -> None:
    state = new_round("[1|2]", "[3|4]", boneyard="[5|6]")
    play(state, "draw", "pass")
    assert state.passes == 1
    play(state, "pass")
    assert state.is_over() and state.result().ending is Ending.BLOCK
    assert state.result().points == (14, 7)


# --- first-turn train ----------------------------------------------------------------------------------------------


def test_first_turn_train_lays_several_tiles() -> None:
    hands = ("[5|12] [5|7] [7|7] [7|9] [9|12] [0|1]", "[6|12] [6|6] [2|3] [1|4]")
    state = new_round(*hands, boneyard="[3|3] [4|4] [6|10]", first_turn_train=True)
    assert legal(state) == {"[5|12] on [12|12] on train 0", "[9|12] on [12|12] on train 0"}, "own train only"
    play(state, "[5|12] on [12|12] on train 0")
    assert state.turn == 0
    assert legal(state) == {"[5|7] on [5|12] low end on train 0", "pass"}
    play(state, "[5|7] on [5|12] low end on train 0", "[7|7] on [5|7] high end on train 0")
    assert legal(state) == {"[7|9] on [7|7] line B on train 0"}, "no stop while the double awaits its tile"
    play(state, "[7|9] on [7|7] line B on train 0")
    assert legal(state) == {"[9|12] on [7|9] high end on train 0", "pass"}
    play(state, "pass")
    assert state.turn == 1 and not marker(state, 0) and state.passes == 0
    assert len(state.layout.view().trains[0].tiles) == 4
    play(state, "[6|12] on [12|12] on train 1", "[6|6] on [6|12] low end on train 1")
    # [6|6] awaits a 6 and seat 1 has none: it draws, and [3|3] does not fit its own train.
    assert state.legal_actions() == [DRAW]
    play(state, "draw", "pass")
    assert marker(state, 1) and open_doubles(state) == [(1, "[6|6]")]
    # Second turns are normal ones; the open double restricts seat 0 too.
    assert state.turn == 0 and state.legal_actions() == [DRAW]
    play(state, "draw")  # [4|4]
    assert state.legal_actions() == [PASS]


def test_first_turn_train_off_allows_one_tile_per_turn() -> None:
    state = new_round("[5|12] [5|7] [0|1]", "[6|12] [2|3]", boneyard="[4|4]")
    play(state, "[5|12] on [12|12] on train 0")
    assert state.turn == 1


# --- options and matches ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "players, options, message",
    [
        (1, {}, "variant 'mexican_train' is played by 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 players, got 1"),
        (13, {}, "got 13"),
        (4, {"set": 6}, "option 'set' of variant 'mexican_train' must be one of 9, 12, 15, 18, got 6"),
        (5, {"set": 9}, "option 'set' of variant 'mexican_train' must be one of 12 with 5 players, got 9"),
        (9, {"set": 12}, "option 'set' of variant 'mexican_train' must be one of 15, 18 with 9 players, got 12"),
        (2, {"set": 15}, "must be one of 9, 12 with 2 players, got 15"),
        (8, {"hand_size": 12}, "option 'hand_size' of variant 'mexican_train' must be between 1 and 11 with 8 "
                               "players and the double-12 set (91 tiles) and 1 tile kept out of the deal, got 12"),
        (4, {"hand_size": 0}, "option 'hand_size' of variant 'mexican_train' must be an integer >= 1, got 0"),
        (4, {"satisfy_order": "random"}, "option 'satisfy_order' of variant 'mexican_train' must be one of "
                                         "placed, reverse, got 'random'"),
        (4, {"first_turn_train": "yes"}, "option 'first_turn_train' of variant 'mexican_train' must be true or "
                                         "false, got 'yes'"),
        (4, {"rounds": 0}, "option 'rounds' of variant 'mexican_train' must be an integer >= 1, got 0"),
        (4, {"rounds": 14}, "option 'rounds' of variant 'mexican_train' must be between 1 and 13 with the "
                            "double-12 set, got 14"),
        (3, {"set": 9, "rounds": 11}, "must be between 1 and 10 with the double-9 set, got 11"),
        (4, {"engine": 5}, "unknown option 'engine' for variant 'mexican_train'; valid options: first_turn_train, "
                           "hand_size, rounds, satisfy_order, set"),
    ],
)
def test_bad_options_give_one_clear_message(players: int, options: dict, message: str) -> None:
    with pytest.raises(OptionError) as error:
        new_game("mexican_train", players, options)
    assert message in str(error.value)


@pytest.mark.parametrize("double, players", [(d, p) for d, r in SET_PLAYERS.items() for p in r])
def test_default_hand_sizes_leave_a_boneyard(double: int, players: int) -> None:
    game = new_game("mexican_train", players, {"set": double})
    assert game.hand_size == game.options["hand_size"] == HAND_SIZES[double][players]
    deal = game.deal(1, 0, 0)
    assert [len(h) for h in deal.hands] == [game.hand_size] * players
    assert len(deal.boneyard) == set_size(double) - 1 - players * game.hand_size > 0
    assert deal.engine == DOUBLE_OF[double]


def test_default_sets_and_hand_sizes() -> None:
    assert new_game("mexican_train").players == 4
    assert new_game("mexican_train", 4).options == {
        "set": 12, "hand_size": 15, "first_turn_train": False, "satisfy_order": "placed", "rounds": 13,
    }
    assert new_game("mexican_train", 10).options["set"] == 15
    assert new_game("mexican_train", 3, {"set": 9}).hand_size == 13
    assert len(new_game("mexican_train", 3, {"hand_size": 5}).deal(0, 0, 0).hands[0]) == 5


def test_the_engine_is_not_dealt_and_descends_by_round() -> None:
    game = new_game("mexican_train", 3)
    match = game.new_match(11)
    engines, leaders = [], []
    while True:
        state = match.round
        engines.append(state.deal.engine)
        leaders.append(state.deal.leader)
        dealt = [x for h in state.deal.hands for x in h] + list(state.deal.boneyard)
        assert state.deal.engine not in dealt and sorted(dealt + [state.deal.engine]) == full_set(12)
        while not state.is_over():
            match.apply(state.legal_actions()[0])
        if match.is_over():
            break
        match.next_round()
    assert engines == [DOUBLE_OF[v] for v in range(12, -1, -1)]
    assert all(b == (a + 1) % 3 for a, b in zip(leaders, leaders[1:])), "the leader moves one seat clockwise"
    result = match.result()
    assert result.rounds == 13
    assert result.scores == tuple(sum(r.points[s] for r in match.results) for s in range(3))
    assert [result.scores[s] for s in result.ranking] == sorted(result.scores), "lowest total first"
    lowest = min(result.scores)
    assert result.winner == (result.ranking[0] if result.scores.count(lowest) == 1 else None)


def test_rounds_option_plays_only_the_first_engines() -> None:
    game = new_game("mexican_train", 2, {"rounds": 3})
    match = game.new_match(4)
    engines = []
    while True:
        engines.append(match.round.deal.engine)
        while not match.round.is_over():
            match.apply(match.legal_actions()[-1])
        if match.is_over():
            break
        match.next_round()
    assert engines == [DOUBLE_OF[12], DOUBLE_OF[11], DOUBLE_OF[10]]
    assert match.result().rounds == 3
    with pytest.raises(RulesError, match="the match is over"):
        match.next_round()
    assert game.deal(4, 3, 0).engine == DOUBLE_OF[12], "deal accepts any round index (modulo the rounds)"


def test_first_leader_by_lot_and_deals_replay_from_the_seed() -> None:
    game = new_game("mexican_train", 5)
    leaders = {game.first_deal(seed).leader for seed in range(40)}
    assert leaders == set(range(5))
    assert game.first_deal(9) == game.first_deal(9)


def test_drawn_match_on_a_tie_for_lowest() -> None:
    game = new_game("mexican_train", 3, {"rounds": 1})
    result = game.match_result((10, 10, 30), 1)
    assert result is not None and result.winner is None and result.ranking == (0, 1, 2)
    result = game.match_result((40, 10, 30), 1)
    assert result.winner == 1 and result.ranking == (1, 2, 0)
    assert new_game("mexican_train", 3).match_result((0, 0, 0), 12) is None


def test_explicit_deals_are_checked() -> None:
    game = new_game("mexican_train", 2)
    with pytest.raises(RulesError, match="with an engine double, got none"):
        game.new_round(Deal((tiles("[1|2]"), tiles("[3|4]")), (), 0))
    with pytest.raises(RulesError, match="expected an engine double of the double-12 set"):
        game.new_round(Deal((tiles("[1|2]"), tiles("[3|4]")), (), 0, None, t("[2|5]")))
    with pytest.raises(RulesError, match="dealt twice"):
        game.new_round(mt_deal("[1|2] [12|12]", "[3|4]"))


# --- observations ---------------------------------------------------------------------------------------------------


def test_observations_show_the_layout_but_no_hidden_tile() -> None:
    state = new_round("[5|12] [5|5] [1|2]", "[7|12] [7|8] [0|1]", "[9|12] [3|3]", boneyard="[2|3] [4|6]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1", "[9|12] on [12|12] on the "
         "Mexican train", "[5|5] on [5|12] low end on train 0", "draw", "pass")
    obs = state.observation(2)
    assert obs.hand == tiles("[3|3]")
    assert obs.hand_counts == (2, 2, 1) and obs.boneyard_count == 1
    layout = obs.layout
    assert layout.engine == t("[12|12]")
    assert [(tv.train, tv.tiles, tv.marker) for tv in layout.trains] == [
        (0, tiles("[5|12] [5|5]"), True), (1, tiles("[7|12]"), False), (2, (), False),
        (MEXICAN_TRAIN, tiles("[9|12]"), False),
    ]
    assert layout.open_doubles == ((0, t("[5|5]")),)
    assert [a for s, a in obs.history if a.kind == Kind.DRAW] == [DRAW], "another seat's draw hides the tile"
    assert t("[2|3]") in state.observation(0).hand
    assert [a.tile for s, a in state.observation(0).history if a.kind == Kind.DRAW] == [t("[2|3]")]
    assert obs.legal_actions == () and state.observation(1).legal_actions == tuple(state.legal_actions())


def test_clone_is_independent() -> None:
    state = new_round("[5|12] [5|5] [1|2]", "[7|12] [7|8] [0|1]", boneyard="[2|3] [4|6]")
    play(state, "[5|12] on [12|12] on train 0", "[7|12] on [12|12] on train 1", "[5|5] on [5|12] low end on train 0")
    copy = state.clone()
    play(copy, "draw", "pass")
    assert state.turn == 0 and state.legal_actions() == [DRAW] and not marker(state, 0)
    assert copy.turn == 1 and marker(copy, 0) and len(state.boneyard) == 2


# --- properties ---------------------------------------------------------------------------------------------------


CONFIGS = [(double, players) for double, counts in SET_PLAYERS.items() for players in counts]


def reference_legal(game, state) -> set:
    """The legal actions worked out from the rules (docs/reference/rules.md#mexican-train), the public view and the current
    turn's history alone."""
    seat, n = state.turn, game.players
    view = state.layout.view()
    trains = {tv.train: tv for tv in view.trains}
    history = state.history
    turn = []
    for s, a in reversed(history):
        if s != seat:
            break
        turn.append(a)
    turn.reverse()
    earlier = history[: len(history) - len(turn)]
    first_turn = game.options["first_turn_train"] and all(s != seat for s, _ in earlier)
    drawn = turn[-1].tile if turn and turn[-1].kind == Kind.DRAW else None
    placed = [a for a in turn if a.kind == Kind.PLACE]
    open_list = list(view.open_doubles)
    k = sum(1 for a in placed if IS_DOUBLE[a.tile] and (a.train, a.tile) in open_list)
    run = first_turn and any(a.train == seat for a in placed)
    table = set(view.played) | {view.engine}
    live = set(full_set(game.double)) - table
    hand = {drawn} if drawn is not None else set(state.hand(seat))

    def on(tile_set, name):
        tile, point, value = trains[name].end
        return {placement(x, tile, point, name) for x in tile_set if VALUE_MASK[value] >> x & 1}

    available = [seat, MEXICAN_TRAIN] + [s for s in range(n) if s != seat and trains[s].marker]
    if run:
        actions = on(hand, seat)
        if k == 0:
            return actions | {PASS}
    else:
        target = None
        if k != 1:
            order = reversed(open_list) if game.options["satisfy_order"] == "reverse" else open_list
            for name, double in order:
                if any(VALUE_MASK[LOW[double]] >> x & 1 for x in live):
                    target = name
                    break
        if target is not None:
            actions = on({x for x in hand if not IS_DOUBLE[x]}, target)
            if k >= 2:
                for name in available:
                    actions |= on({x for x in hand if IS_DOUBLE[x]}, name)
        elif first_turn:
            actions = on(hand, seat)
        else:
            actions = set()
            for name in available:
                actions |= on(hand, name)
    if actions:
        return actions
    return {DRAW} if drawn is None and state.boneyard else {PASS}


def snapshot(state) -> tuple:
    view = state.layout.view()
    return (state.turn, tuple(state.hands), tuple(state.boneyard), len(state.history), view.trains,
            view.open_doubles, state.passes)


def check_step(game, state, rng: random.Random) -> None:
    legal_now = state.legal_actions()
    assert legal_now and len(set(legal_now)) == len(legal_now)
    assert set(legal_now) == reference_legal(game, state)
    # Tiles: hands + trains + boneyard + engine are exactly the set.
    view = state.layout.view()
    on_trains = [x for tv in view.trains for x in tv.tiles]
    assert sorted(on_trains) == sorted(view.played)
    everything = [x for h in state.hands for x in tiles_of(h)] + on_trains + list(state.boneyard) + [view.engine]
    assert sorted(everything) == full_set(game.double)
    assert [len(tiles_of(h)) for h in state.hands] == state.counts
    for action in rng.sample(legal_now, min(3, len(legal_now))):
        probe = state.clone()
        probe.apply(action)
    seat = state.turn
    pool = {DRAW, PASS}
    ends = state.layout.open_ends()
    for x in list(state.hand(seat)) + [rng.randrange(set_size(game.double)) for _ in range(3)]:
        for tile, point, _, name in rng.sample(ends, min(3, len(ends))):
            pool.add(placement(x, tile, point, name))
    before = snapshot(state)
    illegal = [a for a in pool if a not in legal_now]
    for action in rng.sample(illegal, min(8, len(illegal))):
        with pytest.raises(IllegalActionError):
            state.apply(action)
        assert snapshot(state) == before


def play_round(game, state, rng: random.Random) -> None:
    size = set_size(game.double)
    limit = 3 * size + 2 * game.players * (size + 1)  # placements, draws and passes can never exceed this
    for _ in range(limit):
        if state.is_over():
            return
        check_step(game, state, rng)
        if rng.random() < 0.1:
            seat = rng.randrange(game.players)
            obs = state.observation(seat)
            assert obs.hand == state.hand(seat)
            assert all(a.tile == -1 for s, a in obs.history if a.kind == Kind.DRAW and s != seat)
        previous = state.scores()
        state.apply(rng.choice(state.legal_actions()))
        assert all(a >= b for a, b in zip(state.scores(), previous))
    pytest.fail("a round did not terminate")


@pytest.mark.parametrize("double, players", CONFIGS)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), choice=st.integers(0, 2**32), first_turn_train=st.booleans(),
       reverse=st.booleans(), round_index=st.integers(0, 18))
def test_random_rounds_keep_every_invariant(double: int, players: int, seed: int, choice: int,
                                            first_turn_train: bool, reverse: bool, round_index: int) -> None:
    options = {"set": double, "first_turn_train": first_turn_train,
               "satisfy_order": "reverse" if reverse else "placed"}
    game = new_game("mexican_train", players, options)
    rng = random.Random(choice)
    deal = game.deal(seed, round_index, rng.randrange(players))
    assert deal.engine == DOUBLE_OF[double - round_index % (double + 1)]
    state = game.new_round(deal)
    play_round(game, state, rng)
    result = state.result()
    assert result.points == tuple(sum(MEXICAN_PIPS[x] for x in hand) for hand in result.hands)
    if result.ending is Ending.DOMINO:
        assert result.points[result.winner] == 0
    else:
        assert not state.boneyard and all(not state.can_place(s) for s in range(players))


@pytest.mark.parametrize("double, players", [(9, 2), (12, 8), (18, 12)])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), choice=st.integers(0, 2**32))
def test_random_matches_end_with_scores_never_falling(double: int, players: int, seed: int, choice: int) -> None:
    game = new_game("mexican_train", players, {"set": double, "rounds": 3})
    rng = random.Random(choice)
    match = game.new_match(seed)
    scores = match.scores
    for _ in range(3):
        while not match.round.is_over():
            match.apply(rng.choice(match.legal_actions()))
        assert all(a >= b for a, b in zip(match.scores, scores))
        scores = match.scores
        if match.is_over():
            break
        match.next_round()
    assert match.is_over() and match.result().rounds == 3
