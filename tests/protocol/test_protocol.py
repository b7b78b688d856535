"""The protocol: generated code is fresh, conversions are exact both ways, and no message to a bot ever carries a
hidden tile."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from arena.players.base import Decision, DecisionRequest
from arena.protocol.convert import act_request_pb
from arena.protocol import types_pb2 as pb
from arena.protocol.convert import ProtocolError, action_from_pb, action_pb
from arena.referee import play_match
from arena.rules import DRAW, VARIANTS, Kind, new_game
from arena.rules.tiles import tile_id

from support.hidden import hidden_from, tiles_in


def test_generated_code_is_not_stale() -> None:
    out = subprocess.run([sys.executable, "-m", "arena.codegen", "--check"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.fast
def test_the_stale_check_can_fail(tmp_path, monkeypatch) -> None:
    from pathlib import Path

    from arena import codegen

    fresh = tmp_path / "gen"
    codegen.generate(fresh)
    target = next(fresh.rglob("bot_pb2.py"))
    target.write_text(target.read_text() + "\n# edited by hand\n")
    assert codegen.differences(fresh, Path(codegen.OUT_DIR)) == ["dominoes/v1/bot_pb2.py"]


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
def test_every_legal_action_round_trips(variant: str) -> None:
    game = new_game(variant)
    match = game.new_match(seed=4)
    rng = random.Random(4)
    seen = 0
    while not match.round.is_over() and seen < 400:
        for action in match.legal_actions():
            message = pb.Action.FromString(action_pb(action).SerializeToString())
            assert action_from_pb(message) == action
            seen += 1
        match.apply(rng.choice(match.legal_actions()))


@pytest.mark.parametrize(
    "message, error",
    [
        (pb.Action(kind=9), "expected an action kind among PLACE, DRAW, PASS, got 9"),
        (pb.Action(kind=pb.ACTION_KIND_PLACE), "a PLACE action must name its tile"),
        (pb.Action(kind=pb.ACTION_KIND_PLACE, tile=pb.Tile(low=5, high=2)), "expected a tile with low <= high"),
        (pb.Action(kind=pb.ACTION_KIND_PLACE, tile=pb.Tile(low=1, high=2), point=17), "expected a point"),
    ],
)
@pytest.mark.fast
def test_malformed_actions_are_protocol_errors(message: pb.Action, error: str) -> None:
    with pytest.raises(ProtocolError, match=error):
        action_from_pb(message)


class Spy:
    """A seat that records every request exactly as a bot would receive it, and plays randomly."""

    def __init__(self, seed: int) -> None:
        self.name = f"spy{seed}"
        self.rng = random.Random(seed)
        self.requests: list[tuple[int, bytes]] = []

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        self.requests.append((request.move_number, act_request_pb(request).SerializeToString()))
        return Decision(self.rng.choice(request.observation.legal_actions), 0.0)

    async def round_ended(self, *args) -> None:
        return None

    async def match_ended(self, *args) -> None:
        return None


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
async def test_no_message_to_a_bot_carries_a_hidden_tile(variant: str) -> None:
    from arena.protocol import bot_pb2

    game = new_game(variant)
    for seed in range(3):
        spies = [Spy(seed * 10 + s) for s in range(game.players)]
        record = await play_match(game, spies, seed=seed, match_id=f"spy-{seed}")
        requests = {n: (s, data) for s, spy in enumerate(spies) for n, data in spy.requests}
        # Replay the record; at each asked decision, every tile in the message must be the seat's or public.
        match = game.new_match(seed)
        number = 0
        for index, rnd in enumerate(record.rounds):
            state = match.round
            for move in rnd.moves:
                if number in requests:
                    seat, data = requests[number]
                    message = bot_pb2.ActRequest.FromString(data)
                    hidden = hidden_from(state, seat, game.players)
                    leaked = hidden & set(tiles_in(message))
                    assert not leaked, f"move {number}: hidden tiles {leaked} sent to seat {seat}"
                match.apply(DRAW if move.action.kind == Kind.DRAW else move.action)
                number += 1
            if index + 1 < len(record.rounds):
                match.next_round()
        assert sum(len(s.requests) for s in spies) > 0


@pytest.mark.fast
def test_tiles_in_finds_nested_tiles() -> None:
    from arena.protocol import bot_pb2

    message = bot_pb2.ActRequest(observation=pb.Observation(hand=[pb.Tile(low=1, high=2)],
                                                            history=[pb.Event(action=pb.Action(tile=pb.Tile(high=3)))]))
    assert sorted(tiles_in(message)) == sorted([tile_id(1, 2), tile_id(0, 3)])


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
def test_cached_bytes_equal_the_built_message(variant: str) -> None:
    from arena.protocol import bot_pb2
    from arena.protocol.wire import act_request_bytes

    game = new_game(variant)
    match = game.new_match(seed=5)
    rng = random.Random(2)
    number = 0
    while not match.is_over() and number < 1500:
        if match.round.is_over():
            match.next_round()
            continue
        seat = match.turn
        request = DecisionRequest("id", game, seat, match.observation(seat), number, 1000, 5, 1255)
        assert bot_pb2.ActRequest.FromString(act_request_bytes(request)) == act_request_pb(request)
        match.apply(rng.choice(match.legal_actions()))
        number += 1
    assert number > 50
