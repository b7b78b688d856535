"""Draw (docs/reference/rules.md#draw, examples in docs/reference/rules.md#draw-examples): one test per rule sentence, each failing if
the rule were dropped."""

from __future__ import annotations

from collections import Counter

import pytest

from arena.rules import DRAW, PASS, Ending, Kind, new_game
from support.notation import deal, do, show, t, tiles

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def draw_game(players: int = 3, **options):
    return new_game("draw", players, options)


@pytest.mark.parametrize("players, hand, boneyard", [(2, 7, 14), (3, 7, 7), (4, 6, 4)])
def test_deal_sizes_follow_the_player_count(players: int, hand: int, boneyard: int) -> None:
    game = draw_game(players)
    d = game.deal(seed=11, round_index=0, leader=0)
    assert [len(h) for h in d.hands] == [hand] * players
    assert len(d.boneyard) == boneyard
    assert sorted([x for h in d.hands for x in h] + list(d.boneyard)) == list(range(28))


def test_first_leader_is_a_fair_lot_over_seats() -> None:
    game = draw_game(4)
    leaders = Counter(game.first_deal(seed).leader for seed in range(2000))
    assert set(leaders) == {0, 1, 2, 3}
    assert all(430 <= n <= 570 for n in leaders.values()), leaders


def test_the_leader_may_lead_any_tile_and_not_draw() -> None:
    state = draw_game(2).new_round(deal("[0|1] [2|3] [5|6]", "[4|4]", boneyard="[1|1] [2|2] [3|3] [4|5]", leader=0))
    assert show(state.legal_actions()) == ["lead [0|1]", "lead [2|3]", "lead [5|6]"]


def test_a_placement_ends_the_turn_a_draw_does_not() -> None:
    state = draw_game(2).new_round(
        deal("[3|3] [0|6]", "[3|4] [1|2]", boneyard="[5|5] [4|6] [2|2] [1|1] [0|0]", leader=0)
    )
    do(state, "lead [3|3]")
    assert state.turn == 1
    # Seat 1 holds a playable [3|4] and may still draw; the turn continues after the draw.
    assert show(state.legal_actions()) == ["[3|4] on [3|3] line A", "[3|4] on [3|3] line B", "draw"]
    do(state, "draw")
    assert state.turn == 1
    assert state.hand(1) == tiles("[1|2] [3|4] [5|5]")
    # After drawing, any playable tile may be played, not only the new one; or draw again.
    assert show(state.legal_actions()) == ["[3|4] on [3|3] line A", "[3|4] on [3|3] line B", "draw"]
    do(state, "draw", "[3|4] on [3|3] line B")
    assert state.turn == 0


def test_a_player_without_a_playable_tile_must_draw() -> None:
    state = draw_game(2).new_round(deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|2] [5|6] [0|0] [1|1]"))
    do(state, "lead [6|6]")
    assert state.legal_actions() == [DRAW]
    do(state, "draw")  # draws [1|2]: still nothing for a 6
    assert state.legal_actions() == [DRAW]
    do(state, "draw")  # draws [5|6]
    assert show(state.legal_actions()) == ["[5|6] on [6|6] line A", "[5|6] on [6|6] line B"]


def test_the_last_two_tiles_are_never_drawn() -> None:
    state = draw_game(2).new_round(deal("[6|6] [0|1]", "[2|3] [3|6]", boneyard="[1|2] [0|0] [1|1]"))
    do(state, "lead [6|6]", "draw")
    assert len(state.boneyard) == 2
    # Holding a playable tile with two tiles left: place, no draw.
    assert show(state.legal_actions()) == ["[3|6] on [6|6] line A", "[3|6] on [6|6] line B"]
    do(state, "[3|6] on [6|6] line A")
    # Nothing playable and two tiles left: pass.
    assert state.legal_actions() == [PASS]


def test_protected_tiles_is_an_option() -> None:
    state = draw_game(2, protected_tiles=0).new_round(deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|2]"))
    do(state, "lead [6|6]")
    assert state.legal_actions() == [DRAW]
    do(state, "draw")
    assert state.legal_actions() == [PASS]


def test_no_points_for_placing() -> None:
    state = draw_game(2).new_round(deal("[5|5] [0|1]", "[0|5] [2|2]", boneyard="[1|1] [3|3] [4|4]"))
    do(state, "lead [5|5]", "[0|5] on [5|5] line A")
    assert state.scores() == (0, 0)


def block_deal(seat0: str, seat1: str, seat2: str):
    """Seat 0 leads [6|6]; nobody holds another 6; the boneyard is the two protected tiles."""
    return deal(seat0, seat1, seat2, boneyard="[5|6] [4|6]")


def test_block_needs_every_player_to_pass_in_turn() -> None:
    state = draw_game(3).new_round(block_deal("[6|6] [0|3]", "[1|2] [0|5]", "[4|5] [0|1]"))
    do(state, "lead [6|6]", "pass", "pass")
    assert not state.is_over()
    do(state, "pass")
    assert state.is_over()
    assert state.result().ending is Ending.BLOCK


def test_block_sole_lowest_scores_opponents_minus_own() -> None:
    """docs/reference/rules.md#draw-examples: 3, 8, 10 -> 8 + 10 - 3 = 15; the protected boneyard tiles count for nobody."""
    state = draw_game(3).new_round(block_deal("[6|6] [0|3]", "[1|2] [0|5]", "[4|5] [0|1]"))
    do(state, "lead [6|6]", "pass", "pass", "pass")
    result = state.result()
    assert result.pips == (3, 8, 10)
    assert result.winner == 0
    assert result.points == (15, 0, 0)


def test_block_with_a_tie_for_lowest_scores_nothing() -> None:
    state = draw_game(3).new_round(block_deal("[6|6] [0|3]", "[1|2]", "[4|5] [0|1]"))
    do(state, "lead [6|6]", "pass", "pass", "pass")
    result = state.result()
    assert result.pips == (3, 3, 10)
    assert result.winner is None
    assert result.points == (0, 0, 0)


def test_domino_scores_opponents_pips_double_blank_worth_zero() -> None:
    state = draw_game(3).new_round(deal("[6|6]", "[0|0]", "[3|5]", boneyard="[1|1] [2|2]"))
    do(state, "lead [6|6]")
    result = state.result()
    assert result.ending is Ending.DOMINO and result.out_seat == 0
    assert result.pips == (0, 0, 8)
    assert result.points == (8, 0, 0)


def rotation_match(**options):
    """Seat 1 leads [6|6], seat 2 passes (boneyard at the protected two), seat 0 goes out with [5|6]."""
    game = draw_game(3, **options)
    first = deal("[5|6]", "[6|6] [0|1]", "[2|3] [3|4]", boneyard="[1|1] [2|2]", leader=1)
    match = game.new_match(seed=3, first_deal=first)
    do(match, "lead [6|6]", "pass", "[5|6] on [6|6] line A")
    assert match.round.result().out_seat == 0
    return match


def test_the_lead_rotates_from_the_last_leader_not_the_winner() -> None:
    match = rotation_match()
    assert match.next_round().deal.leader == 2


def test_next_leader_option_winner() -> None:
    match = rotation_match(next_leader="winner")
    assert match.next_round().deal.leader == 0


@pytest.mark.parametrize("players, target", [(2, 100), (3, 61), (4, 61)])
def test_target_depends_on_player_count(players: int, target: int) -> None:
    game = draw_game(players)
    assert game.options["target"] == target
    below = [0] * players
    below[0] = target - 1
    assert game.match_result(tuple(below), 3) is None
    reached = list(below)
    reached[1] = target
    result = game.match_result(tuple(reached), 3)
    assert result is not None and result.winner == 1


def test_overshoot_is_kept_and_the_highest_wins() -> None:
    result = draw_game(3).match_result((70, 64, 12), 5)
    assert result.scores == (70, 64, 12)
    assert result.winner == 0
    assert result.ranking == (0, 1, 2)


def test_a_tie_for_highest_is_a_drawn_match() -> None:
    result = draw_game(3).match_result((70, 70, 12), 5)
    assert result.drawn and result.winner is None


def test_the_round_reaching_the_target_ends_the_match() -> None:
    game = draw_game(3, target=8)
    match = game.new_match(seed=1, first_deal=deal("[6|6]", "[0|0]", "[3|5]", boneyard="[1|1] [2|2]"))
    do(match, "lead [6|6]")
    assert match.is_over()
    assert match.result().scores == (8, 0, 0)
    assert match.result().winner == 0
    with pytest.raises(Exception, match="the match is over"):
        match.next_round()


def test_a_draw_carries_the_drawn_tile_in_history_only() -> None:
    state = draw_game(2).new_round(deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|2] [5|6] [0|0] [1|1]"))
    do(state, "lead [6|6]", "draw")
    seat, action = state.history[-1]
    assert seat == 1 and action.kind == Kind.DRAW and action.tile == t("[1|2]")
    assert state.observation(0).history[-1] == (1, DRAW)
    assert state.observation(1).history[-1] == (1, action)
