"""La Plaza 1 v 1 and partnership (docs/reference/rules.md#la-plaza, examples in docs/reference/rules.md#la-plaza-examples)."""

from __future__ import annotations

import pytest

from arena.rules import DRAW, PASS, Ending, new_game, tile_id
from arena.rules.tiles import PIPS
from support.notation import deal, do, show, t

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def singles():
    return new_game("la_plaza", 2)


def teams(**options):
    return new_game("la_plaza_teams", 4, options)


def test_singles_deal_seven_each_fourteen_in_the_boneyard() -> None:
    d = singles().deal(seed=5, round_index=0, leader=0)
    assert [len(h) for h in d.hands] == [7, 7] and len(d.boneyard) == 14


def test_teams_deal_seven_each_and_no_boneyard() -> None:
    d = teams().first_deal(seed=5)
    assert [len(h) for h in d.hands] == [7, 7, 7, 7] and d.boneyard == ()


def test_singles_draws_until_a_tile_fits_then_must_play() -> None:
    state = singles().new_round(deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|2] [1|1] [5|6] [0|0]"))
    do(state, "lead [6|6]")
    assert state.legal_actions() == [DRAW]
    do(state, "draw")
    assert state.legal_actions() == [DRAW]
    do(state, "draw", "draw")
    # [5|6] fits: placing is now the only choice, no voluntary draw.
    assert show(state.legal_actions()) == ["[5|6] on [6|6] line A", "[5|6] on [6|6] line B"]


def test_singles_never_draws_by_choice() -> None:
    state = singles().new_round(deal("[6|6] [0|1]", "[3|6] [4|5]", boneyard="[1|2] [1|1]"))
    do(state, "lead [6|6]")
    assert DRAW not in state.legal_actions()


def test_singles_passes_only_with_an_empty_boneyard() -> None:
    state = singles().new_round(deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|2]"))
    do(state, "lead [6|6]")
    assert state.legal_actions() == [DRAW]
    do(state, "draw")
    assert state.legal_actions() == [PASS]


def test_singles_first_lead_by_revealed_tiles() -> None:
    game = singles()
    for seed in range(200):
        d = game.first_deal(seed)
        last_two = d.lot[-2:]
        assert [seat for seat, _ in last_two] == [0, 1]
        pips = [PIPS[tile] for _, tile in last_two]
        assert pips[0] != pips[1]
        assert d.leader == pips.index(max(pips))
        # Earlier reveals (if any) were ties, redrawn.
        for i in range(0, len(d.lot) - 2, 2):
            assert PIPS[d.lot[i][1]] == PIPS[d.lot[i + 1][1]]
    assert any(len(game.first_deal(seed).lot) > 2 for seed in range(200)), "some lot must redraw a tie"


def test_singles_reshuffles_revealed_tiles_before_the_deal() -> None:
    game = singles()
    d = game.first_deal(seed=1)
    assert d.hands == game.deal(seed=1, round_index=0, leader=d.leader).hands


def test_teams_holder_of_double_six_leads_it() -> None:
    game = teams()
    for seed in range(30):
        d = game.first_deal(seed)
        assert t("[6|6]") in d.hands[d.leader]
        state = game.new_round(d)
        assert show(state.legal_actions()) == ["lead [6|6]"]


def test_teams_pass_when_unable() -> None:
    state = teams().new_round(deal("[6|6] [0|0]", "[1|1]", "[2|2]", "[3|3]"))
    do(state, "lead [6|6]")
    assert state.legal_actions() == [PASS]


def test_domino_scores_every_pip_left_the_partners_too() -> None:
    state = teams().new_round(deal("[6|6]", "[1|1]", "[2|3]", "[0|4]"))
    do(state, "lead [6|6]")
    result = state.result()
    assert result.ending is Ending.DOMINO
    assert result.winner == 0
    assert result.points == (2 + 5 + 4, 0)  # partner seat 2's [2|3] counts too


def test_block_lower_team_takes_all_pips_blocker_leads() -> None:
    game = teams()
    first = deal("[5|6] [0|0]", "[6|6] [3|4]", "[1|1]", "[2|2]", leader=1, lead_tile="[6|6]")
    match = game.new_match(seed=2, first_deal=first)
    do(match, "lead [6|6]", "pass", "pass", "[5|6] on [6|6] line A", "pass", "pass", "pass")
    assert not match.round.is_over()
    do(match, "pass")
    result = match.round.result()
    assert result.ending is Ending.BLOCK
    # team 0+2: [0|0] + [1|1] = 2; team 1+3: [3|4] + [2|2] = 11.
    assert result.winner == 0
    assert result.points == (13, 0)
    assert result.last_placer == 0
    assert match.next_round().deal.leader == 0


def test_blocker_leads_next_even_if_the_other_side_wins() -> None:
    game = teams()
    first = deal("[5|6] [4|4]", "[6|6] [0|1]", "[2|3]", "[2|2]", leader=1, lead_tile="[6|6]")
    match = game.new_match(seed=2, first_deal=first)
    do(match, "lead [6|6]", "pass", "pass", "[5|6] on [6|6] line A", "pass", "pass", "pass", "pass")
    result = match.round.result()
    assert result.winner == 1  # team 1+3 holds 1 + 4 = 5 against 8 + 5 = 13
    assert result.points == (0, 18)
    assert match.next_round().deal.leader == 0


def test_block_with_equal_totals_scores_nothing() -> None:
    state = teams().new_round(deal("[6|6] [0|4]", "[1|2]", "[0|0]", "[0|1]"))
    do(state, "lead [6|6]", "pass", "pass", "pass")
    assert not state.is_over()
    do(state, "pass")
    result = state.result()
    # team 0+2: 4 + 0 = 4; team 1+3: 3 + 1 = 4
    assert (result.pips, result.winner, result.points) == ((4, 3, 0, 1), None, (0, 0))


def test_singles_block_at_an_empty_boneyard_lower_takes_all() -> None:
    state = singles().new_round(deal("[6|6] [0|1]", "[2|3] [4|5]", boneyard="[1|2]"))
    do(state, "lead [6|6]", "draw", "pass")
    assert not state.is_over()
    do(state, "pass")
    result = state.result()
    assert result.ending is Ending.BLOCK
    assert result.pips == (1, 17)
    assert (result.winner, result.points) == (0, (18, 0))


def test_going_out_with_a_double_is_no_capicu() -> None:
    state = teams().new_round(deal("[3|6] [0|0]", "[6|6]", "[1|1]", "[3|5] [5|5]"))
    do(state, "lead [3|6]", "[6|6] on [3|6] high end")
    assert state.result().out_seat == 1
    assert state.result().capicu is False


def test_capicu_is_a_last_tile_fitting_both_different_ends() -> None:
    state = singles().new_round(deal("[3|4] [4|5]", "[5|6] [3|5]"))
    do(state, "lead [3|4]", "[3|5] on [3|4] low end")
    # ends now 5 (the [3|5] high end) and 4; seat 0 goes out with [4|5], which fits both.
    assert show(state.legal_actions()) == ["[4|5] on [3|5] high end", "[4|5] on [3|4] high end"]
    do(state, "[4|5] on [3|4] high end")
    result = state.result()
    assert result.capicu is True
    assert result.points == (11, 0)  # [5|6] only: no bonus for the capicu


def test_no_capicu_when_the_ends_are_equal() -> None:
    state = singles().new_round(deal("[4|4] [3|4]", "[5|6] [0|1]"))
    do(state, "lead [4|4]", "pass", "[3|4] on [4|4] line A")
    assert state.result().out_seat == 0
    assert state.result().capicu is False


@pytest.mark.parametrize("target", [50, 150, 200, 500, 7])
def test_target_option(target: int) -> None:
    assert new_game("la_plaza", 2, {"target": target}).options["target"] == target
    assert new_game("la_plaza_teams", 4, {"target": target}).options["target"] == target


def test_the_first_side_to_100_wins_by_default() -> None:
    game = singles()
    assert game.options["target"] == 100
    assert game.match_result((99, 40), 3) is None
    assert game.match_result((104, 40), 3).winner == 0


def test_domino_winner_leads_the_next_round() -> None:
    game = singles()
    match = game.new_match(seed=3, first_deal=deal("[0|1] [0|0]", "[1|6] [2|2]", boneyard="[3|3]"))
    do(match, "lead [0|1]", "[1|6] on [0|1] high end", "[0|0] on [0|1] low end")
    assert match.round.result().out_seat == 0
    assert match.next_round().deal.leader == 0
    assert tile_id(6, 6) == t("[6|6]")
