"""The referee's requests encoded straight from the round (``DecisionRequest.of_round``, arena/protocol/wire.py's
``round_observation_bytes``) are byte for byte the requests encoded from the seat's built observation, in every
variant and at every decision of random matches; and the bytes the referee sends are the ones it sent before it
encoded from the round (digests of whole matches, recorded with the observation-built encoder)."""

from __future__ import annotations

import hashlib
import random

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.players.base import Decision, DecisionRequest
from arena.protocol import bot_pb2, wire
from arena.protocol.convert import act_request_pb
from arena.protocol.wire import act_request_bytes
from arena.referee import play_match
from arena.rules import VARIANTS, new_game
from arena.rules.errors import OptionError
from arena.rules.restore import PublicRound
from arena.rules.results import MatchResult, RoundResult

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def _seatings() -> list[tuple[str, int]]:
    """Every variant at two, three and four players, where it allows them."""
    found = []
    for variant in VARIANTS:
        for players in (2, 3, 4):
            try:
                new_game(variant, players)
            except OptionError:
                continue
            found.append((variant, players))
    return found


SEATINGS = _seatings()


def _both_ways(request: DecisionRequest) -> tuple[bytes, bytes]:
    """The request's bytes from the round, then from the seat's observation built for it."""
    from_round = act_request_bytes(request)
    built = DecisionRequest(request.match_id, request.game, request.seat, request.observation, request.move_number,
                            request.move_ms, request.bank_ms, request.deadline_ms)
    return from_round, act_request_bytes(built)


@settings(max_examples=60, deadline=None)
@given(seating=st.sampled_from(SEATINGS), seed=st.integers(0, 2**32), decisions=st.integers(1, 400),
       match_id=st.sampled_from(["m", "n"]))
def test_the_rounds_bytes_are_the_observations_bytes(seating: tuple[str, int], seed: int, decisions: int,
                                                     match_id: str) -> None:
    """At every decision of a random match (rounds one after another, the same match ids reused by other
    examples, the clock's bank varied), the bytes from the round equal the bytes from the observation."""
    variant, players = seating
    game = new_game(variant, players)
    match = game.new_match(seed=seed)
    rng = random.Random(seed)
    asked = 0
    while not match.is_over() and asked < decisions:
        state = match.round
        if state.is_over():
            match.next_round()
            continue
        request = DecisionRequest.of_round(match_id, game, state, asked, 1000, rng.randrange(3) * 500, 1250)
        from_round, from_observation = _both_ways(request)
        assert from_round == from_observation, (variant, players, seed, asked)
        match.apply(rng.choice(match.legal_actions()))
        asked += 1


@pytest.mark.parametrize(("variant", "players"), SEATINGS)
def test_every_decision_parses_to_the_built_message(variant: str, players: int) -> None:
    """The reference message of arena/protocol/convert.py, built from the observation, is what the bytes parse to."""
    game = new_game(variant, players)
    match = game.new_match(seed=11)
    rng = random.Random(11)
    asked = 0
    while not match.is_over() and asked < 600:
        if match.round.is_over():
            match.next_round()
            continue
        request = DecisionRequest.of_round("parse", game, match.round, asked, 1000, 0, 1250)
        data = act_request_bytes(request)
        assert bot_pb2.ActRequest.FromString(data) == act_request_pb(request)
        match.apply(rng.choice(match.legal_actions()))
        asked += 1
    assert asked > 50


def test_a_round_rebuilt_from_outside_and_a_clone_encode_right() -> None:
    """A round rebuilt from an observation (:mod:`arena.rules.restore` gives it a history of its own) and a clone
    played on apart from its original each encode as their own observation says."""
    game = new_game("draw", 2)
    match = game.new_match(seed=4)
    rng = random.Random(4)
    for _ in range(9):
        match.apply(rng.choice(match.legal_actions()))
    state = match.round
    act_request_bytes(DecisionRequest.of_round("c", game, state, 9, 1000, 0, 1250))
    clone = state.clone()
    clone.apply(clone.legal_actions()[-1])
    state.apply(state.legal_actions()[0])
    rebuilt = PublicRound(game, state.observation(state.turn)).state
    for position in (state, clone, rebuilt):
        from_round, from_observation = _both_ways(DecisionRequest.of_round("c", game, position, 10, 1000, 0, 1250))
        assert from_round == from_observation
    state.history = list(state.history)  # the same round, its history replaced: what was sent is not trusted
    state.apply(state.legal_actions()[0])
    from_round, from_observation = _both_ways(DecisionRequest.of_round("c", game, state, 11, 1000, 0, 1250))
    assert from_round == from_observation


def test_the_observation_is_built_only_when_read_and_before_the_round_moves_on() -> None:
    game = new_game("draw", 2)
    match = game.new_match(seed=6)
    request = DecisionRequest.of_round("late", game, match.round, 0, 1000, 0, 1250)
    assert request.legal_actions == match.legal_actions()
    assert request.round is match.round, "reading the legal actions builds no observation"
    read = DecisionRequest.of_round("late", game, match.round, 0, 1000, 0, 1250)
    assert read.observation == match.observation(match.turn) and read.round is None
    match.apply(match.legal_actions()[0])
    assert read.observation.history == (), "once built, the observation stays the one asked"
    assert request.round is None
    with pytest.raises(RuntimeError, match="first asked for after the round moved on"):
        request.observation  # noqa: B018


class _Hashing:
    """A seat that hashes the bytes of every request it is asked with, then plays a random legal action."""

    def __init__(self, digest: hashlib._Hash, rng: random.Random) -> None:
        self.name = "hashing"
        self.digest = digest
        self.rng = rng

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        data = act_request_bytes(request)
        # The options are a protobuf map, whose entries upb writes in an order that varies from process to process
        # (within one, the arena encodes them once per game): the digest leaves them out.
        self.digest.update(data.replace(wire._options(request.game), b"", 1))
        return Decision(self.rng.choice(list(request.legal_actions)), 0.0)

    async def round_ended(self, match_id: str, seat: int, index: int, result: RoundResult,
                          scores: tuple[int, ...]) -> None:
        pass

    async def match_ended(self, match_id: str, seat: int, result: MatchResult, by_fault: bool) -> None:
        pass


def wire_digest(variant: str, players: int) -> str:
    """The SHA-256 of every request the referee sends in two seeded matches (one match id each), in order."""
    digest = hashlib.sha256()
    game = new_game(variant, players)
    for seed in (1, 2):
        rng = random.Random(seed)
        seats = [_Hashing(digest, rng) for _ in range(players)]
        trio.run(lambda: play_match(game, seats, seed=seed, match_id=f"digest-{seed}"))  # noqa: B023
    return digest.hexdigest()[:16]


SENT_BEFORE = {
    "draw/2": "d5f8c8ff2b179f0f",
    "draw/3": "14c22f001309e943",
    "draw/4": "40a96dce3f4459e6",
    "block/2": "bf698f4de02fa229",
    "block/3": "e6a7b32bd8e27b2f",
    "block/4": "218bb5272a96c395",
    "la_plaza/2": "99eb40c777b77681",
    "la_plaza_teams/4": "215bcb43a5e4eeec",
    "all_fives/2": "99be5ff58533b34c",
    "all_fives/3": "e3221792055efaf3",
    "all_fives/4": "0ed07cb568b492b2",
    "mexican_train/2": "d3093dcd31fc8a8d",
    "mexican_train/3": "f3aaadf838922a36",
    "mexican_train/4": "8b3a802937c8fc81",
}
"""``wire_digest`` of each seating, recorded with the encoder that built every observation before encoding it."""


@pytest.mark.parametrize(("variant", "players"), SEATINGS)
def test_the_bytes_on_the_wire_are_the_ones_sent_before(variant: str, players: int) -> None:
    assert wire_digest(variant, players) == SENT_BEFORE[f"{variant}/{players}"]
