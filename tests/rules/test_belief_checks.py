"""A belief about the hidden tiles checked against a round from an explicit deal (every refusal's exact line), its
places, the truth, and the quantisation records keep; the protocol's form read at the edge and made by the kit."""

from __future__ import annotations

import math

import pytest
from support.notation import deal, do

from arena.botkit import belief_places, reply
from arena.protocol import bot_pb2
from arena.protocol.convert import ProtocolError, belief_from_pb, belief_pb
from arena.rules import new_game
from arena.rules.beliefs import (
    BONEYARD,
    Belief,
    belief_problem,
    from_recorded,
    places,
    places_text,
    quantised,
    recorded,
    thousandths,
    truth,
)
from arena.rules.tiles import parse_tile

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

HANDS = ("[0|0] [0|1] [1|1]", "[2|2] [2|3] [3|3]", "[4|4] [4|5] [5|5]")


def three_player_round():
    """Draw with three players and three tiles each; seat 0 leads [0|0], then seat 1 is to move."""
    game = new_game("draw", 3, {"hand_size": 3})
    state = game.new_round(deal(*HANDS, boneyard="[6|6] [5|6] [0|6]", leader=0))
    do(state, "lead [0|0]")
    return state


def t(text: str) -> int:
    return parse_tile(text)


def test_the_places_of_a_seat() -> None:
    assert places(3, 1) == (0, 2, BONEYARD)
    assert places_text(3, 1) == "seats 0, 2 and the boneyard"
    assert places_text(2, 0) == "seat 1 and the boneyard"


def test_an_acceptable_belief_and_the_truth() -> None:
    state = three_player_round()  # seat 1 sees its hand and [0|0] on the table
    belief = Belief((t("[0|1]"), t("[6|6]"), t("[5|5]")), ((1.0, 0.0, 0.0), (0.2, 0.3, 0.5), (0.0, 0.5, 0.5)))
    assert belief_problem(belief, state, 1) is None
    assert truth(state, 1, belief.tiles) == (0, 2, 1)      # seat 0's hand, the boneyard, seat 2's hand
    assert truth(state, 1, (t("[0|0]"), t("[2|2]"))) == (-1, -1)   # on the table, its own: not hidden


@pytest.mark.parametrize("tiles, rows, problem", [
    (("[0|0]",), ((1.0, 0.0, 0.0),), "[0|0] is not hidden from seat 1: it is on the table"),
    (("[2|3]",), ((1.0, 0.0, 0.0),), "[2|3] is not hidden from seat 1: it is in its own hand"),
    (("[7|7]",), ((1.0, 0.0, 0.0),), "[7|7] is not a tile of the double-6 set"),
    (("[0|1]", "[0|1]"), ((1.0, 0.0, 0.0),) * 2, "[0|1] is named twice"),
    (("[0|1]",), ((0.5, 0.5),), "[0|1] has 2 probabilities; seat 1 of 3 has 3 places (seats 0, 2 and the boneyard)"),
    (("[0|1]",), ((1.2, -0.2, 0.0),), "[0|1]: probability 1.2 is not from 0 to 1"),
    (("[0|1]",), ((0.5, math.nan, 0.5),), "[0|1]: probability nan is not from 0 to 1"),
    (("[0|1]",), ((0.5, 0.2, 0.2),), "[0|1]: the probabilities sum to 0.9, not 1 (within 0.01)"),
    (("[0|1]", "[6|6]"), ((1.0, 0.0, 0.0),), "it names 2 tiles with 1 rows of probabilities"),  # an in-process one
])
def test_each_refusal_is_one_line_naming_the_tile(tiles, rows, problem: str) -> None:
    belief = Belief(tuple(t(x) for x in tiles), rows)
    assert belief_problem(belief, three_player_round(), 1) == problem


def test_more_entries_than_hidden_tiles_is_refused_first() -> None:
    state = three_player_round()
    every = new_game("draw", 3).all_tiles.bit_count()
    belief = Belief(tuple(range(every)), ((1.0, 0.0, 0.0),) * every)
    assert belief_problem(belief, state, 1) == "it has 28 entries; at most 8 (one per hidden tile)"


def test_rounding_within_the_tolerance_is_accepted_and_recorded_exactly() -> None:
    assert belief_problem(Belief((t("[0|1]"),), ((0.33, 0.33, 0.33),)), three_player_round(), 1) is None
    assert thousandths((0.33, 0.33, 0.33)) == (334, 333, 333)       # largest remainders, ties to the earlier place
    assert thousandths((0.1234, 0.8766)) == (123, 877)
    assert thousandths((2.0, 6.0)) == (250, 750)                    # scaled to sum to 1 first
    belief = quantised(Belief((t("[0|1]"), t("[6|6]")), ((0.33, 0.33, 0.33), (0.0, 0.0005, 0.9995))))
    assert recorded(belief) == [334, 333, 333, 0, 1, 999]
    assert from_recorded(belief.tiles, recorded(belief), 3) == belief
    with pytest.raises(ValueError, match=r"the values of \[0\|1\] sum to 1001, not 1000"):
        from_recorded(belief.tiles, [335, 333, 333, 0, 1, 999], 3)


def test_the_protocol_form_is_read_at_the_edge() -> None:
    belief = Belief((t("[0|1]"), t("[6|6]")), ((0.25, 0.75, 0.0), (0.5, 0.0, 0.5)))
    assert belief_from_pb(belief_pb(belief)) == belief
    garbled = bot_pb2.Belief()
    garbled.tiles.add(probabilities=[1.0])
    with pytest.raises(ProtocolError, match="entry 0 names no tile"):
        belief_from_pb(garbled)
    huge = bot_pb2.Belief()
    for _ in range(191):
        huge.tiles.add(tile={"low": 0, "high": 0}, probabilities=[1.0])
    with pytest.raises(ProtocolError, match="it has 191 entries; no set has more than 190 tiles"):
        belief_from_pb(huge)


def test_the_kit_makes_a_reply_with_a_belief() -> None:
    request = bot_pb2.ActRequest(seat=1)
    request.observation.players = 3
    assert belief_places(request) == ["seat 0", "seat 2", "boneyard"]
    message = reply(2, belief={(1, 0): [0.5, 0.5, 0.0], "[6|6]": [0.0, 0.0, 1.0]}, comment="hm")
    assert message.index == 2 and message.comment == "hm"
    assert [(e.tile.low, e.tile.high, list(e.probabilities)) for e in message.belief.tiles] == [
        (0, 1, [0.5, 0.5, 0.0]), (6, 6, [0.0, 0.0, 1.0])]
