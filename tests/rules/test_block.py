"""Block (docs/reference/rules.md#block, examples in docs/reference/rules.md#block-examples): no drawing, pass when unable, Draw's
scoring, the winner leads next."""

from __future__ import annotations

import pytest

from arena.rules import PASS, Ending, Kind, new_game
from support.notation import deal, do, show

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("players, hand, rest", [(2, 7, 14), (3, 5, 13), (4, 5, 8)])
def test_hand_sizes_and_the_rest_out_of_play(players: int, hand: int, rest: int) -> None:
    d = new_game("block", players).deal(seed=4, round_index=0, leader=0)
    assert [len(h) for h in d.hands] == [hand] * players
    assert len(d.boneyard) == rest


def test_no_drawing_ever_pass_when_unable() -> None:
    state = new_game("block", 2).new_round(deal("[6|6] [0|1]", "[2|3] [3|6]", boneyard="[1|2] [5|6] [0|0] [1|1]"))
    do(state, "lead [6|6]")
    assert show(state.legal_actions()) == ["[3|6] on [6|6] line A", "[3|6] on [6|6] line B"]
    do(state, "[3|6] on [6|6] line B")
    # seat 0 holds [0|1], nothing fits 6 or 3; the boneyard is out of play: pass.
    assert state.legal_actions() == [PASS]
    assert all(a.kind != Kind.DRAW for a in state.legal_actions())


def test_must_place_if_able() -> None:
    state = new_game("block", 2).new_round(deal("[6|6] [0|1]", "[2|3] [3|6]"))
    do(state, "lead [6|6]")
    assert PASS not in state.legal_actions()


def test_block_scores_like_draw() -> None:
    state = new_game("block", 3).new_round(deal("[6|6] [0|3]", "[1|2] [0|5]", "[4|5] [0|1]"))
    do(state, "lead [6|6]", "pass", "pass")
    assert not state.is_over()
    do(state, "pass")
    result = state.result()
    assert result.ending is Ending.BLOCK
    assert result.points == (15, 0, 0)


def test_a_tied_block_scores_nothing_and_the_lead_rotates() -> None:
    game = new_game("block", 3)
    match = game.new_match(seed=9, first_deal=deal("[0|3]", "[6|6] [1|2]", "[4|5] [0|1]", leader=1))
    do(match, "lead [6|6]", "pass", "pass", "pass")
    assert match.round.result().winner is None
    assert match.scores == (0, 0, 0)
    assert match.next_round().deal.leader == 2


def test_the_winner_leads_the_next_round() -> None:
    game = new_game("block", 3)
    match = game.new_match(seed=9, first_deal=deal("[5|6]", "[6|6] [0|1]", "[2|3] [3|4]", leader=1))
    do(match, "lead [6|6]", "pass", "[5|6] on [6|6] line A")
    assert match.round.result().winner == 0
    assert match.scores == (1 + 5 + 7, 0, 0)
    assert match.next_round().deal.leader == 0


@pytest.mark.parametrize("players, target", [(2, 100), (3, 61), (4, 61)])
def test_targets(players: int, target: int) -> None:
    assert new_game("block", players).options["target"] == target
