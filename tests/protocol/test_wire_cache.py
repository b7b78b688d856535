"""The incremental joins of arena/protocol/wire.py are never stale: requests of different matches under one match
id, interleaved seat by seat, and a round that starts again, still parse to exactly the built message."""

from __future__ import annotations

import random

import pytest

from arena.players.base import DecisionRequest
from arena.protocol import bot_pb2
from arena.protocol.convert import act_request_pb
from arena.protocol.wire import act_request_bytes
from arena.rules import VARIANTS, new_game

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def _requests(variant: str, seed: int, limit: int) -> list[DecisionRequest]:
    """Every decision of one match (or its first ``limit``), all under the match id ``same``."""
    game = new_game(variant)
    match = game.new_match(seed=seed)
    rng = random.Random(seed)
    requests = []
    while not match.is_over() and len(requests) < limit:
        if match.round.is_over():
            match.next_round()
            continue
        seat = match.turn
        requests.append(DecisionRequest("same", game, seat, match.observation(seat), len(requests), 1000, 0, 1250))
        match.apply(rng.choice(match.legal_actions()))
    return requests


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_interleaved_matches_encode_right(variant: str) -> None:
    first, second = _requests(variant, 1, 300), _requests(variant, 2, 300)
    interleaved = [r for pair in zip(first, second) for r in pair]
    for request in interleaved + first[:20]:  # and the first match again from its start
        assert bot_pb2.ActRequest.FromString(act_request_bytes(request)) == act_request_pb(request)
    assert len(interleaved) > 50


def test_a_repeated_position_gets_the_same_bytes() -> None:
    request = _requests("draw", 3, 30)[-1]
    assert act_request_bytes(request) == act_request_bytes(request)
    assert bot_pb2.ActRequest.FromString(act_request_bytes(request)) == act_request_pb(request)
