"""The public API of the rules engine: what docs/reference/engine.md promises, explicitly exported, and the state contract."""

from __future__ import annotations

import pytest

import arena.rules as rules
from arena.rules import Deal, IllegalActionError, RulesError, new_game, parse_tile
from support.notation import deal, do, show

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

PUBLIC = {
    "Action", "Deal", "DRAW", "Ending", "Game", "IllegalActionError", "Kind", "MEXICAN_TRAIN", "Match",
    "MatchResult", "NO_TILE", "NO_TRAIN", "Observation", "OptionError", "PASS", "Point", "RoundResult",
    "RoundState", "RulesError", "VARIANTS", "lead", "new_game", "parse_tile", "placement", "tile_id", "tile_name",
    "variant",
}


def test_public_names_are_exported() -> None:
    exported = {name for name in dir(rules) if not name.startswith("_")}
    assert PUBLIC <= exported
    for name in PUBLIC:
        assert getattr(rules, name) is not None


def test_readme_example_runs() -> None:
    game = new_game("draw", players=2, options={"target": 50})
    state = game.new_round(Deal(hands=((parse_tile("[6|6]"), parse_tile("[1|2]")), (parse_tile("[3|6]"),)),
                                boneyard=(), leader=0))
    assert state.turn == 0
    assert show(state.legal_actions()) == ["lead [1|2]", "lead [6|6]"]
    state.apply(state.legal_actions()[1])
    assert show(state.legal_actions()) == ["[3|6] on [6|6] line A", "[3|6] on [6|6] line B"]


def test_an_illegal_action_errs_and_changes_nothing() -> None:
    state = new_game("block", 2).new_round(deal("[6|6] [1|2]", "[3|6] [0|0]"))
    do(state, "lead [6|6]")
    history = list(state.history)
    with pytest.raises(IllegalActionError, match=r"expected one of \[3\|6\] on \[6\|6\] line A"):
        state.apply(rules.placement(parse_tile("[0|0]"), parse_tile("[6|6]"), rules.Point.LINE_A))
    with pytest.raises(IllegalActionError):
        state.apply(rules.DRAW)
    assert state.history == history and state.turn == 1
    assert state.hand(1) == (parse_tile("[0|0]"), parse_tile("[3|6]"))


def test_clone_is_independent() -> None:
    state = new_game("draw", 2).new_round(deal("[6|6] [1|2]", "[3|6] [0|0]", boneyard="[1|1] [2|2] [4|4]"))
    do(state, "lead [6|6]")
    copy = state.clone()
    do(copy, "draw", "[3|6] on [6|6] line B")
    assert state.turn == 1 and len(state.boneyard) == 3 and len(state.layout.tiles) == 1
    assert copy.turn == 0 and len(copy.boneyard) == 2 and len(copy.layout.tiles) == 2


def test_round_result_and_match_result_are_guarded() -> None:
    game = new_game("draw", 2)
    match = game.new_match(seed=1)
    with pytest.raises(RulesError, match="not over"):
        match.round.result()
    with pytest.raises(RulesError, match="not over"):
        match.result()
    with pytest.raises(RulesError, match="not over"):
        match.next_round()


@pytest.mark.parametrize(
    "bad_deal, message",
    [
        (Deal(((0, 1), (1, 2)), (), 0), "dealt twice"),
        (Deal(((0, 1),), (), 0), "expected 2 hands"),
        (Deal(((0, 1), (2, 3)), (), 5), "leader between 0 and 1"),
        (Deal(((0, 1), (2, 99)), (), 0), "double-6 set"),
    ],
)
def test_bad_explicit_deals_are_refused(bad_deal: Deal, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        new_game("draw", 2).new_round(bad_deal)
