"""Property tests over random games of every registered variant and player count (OpenSpiel's random_sim_test).

For every step of whole random matches: tiles are conserved; every legal action applies and every other candidate
is refused without changing the state; protected tiles are never drawn; a pass happens only when nothing else is
legal; every round and match terminates; scores never decrease; observations hold no hidden tile.

``HYPOTHESIS_PROFILE=soak`` runs many more matches than CI's default.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.rules import DRAW, NO_TILE, PASS, VARIANTS, Action, IllegalActionError, Kind, new_game, placement
from arena.rules.tiles import set_size, tiles_of

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("soak", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MAX_MOVES_PER_ROUND = 5000
MAX_ROUNDS = 400

CONFIGS = [(name, players) for name, cls in VARIANTS.items() for players in cls.player_counts]
SHORT_MATCHES = {"mexican_train": {"rounds": 2}}
"""Options that keep a match short enough for many examples (Mexican Train plays 13 rounds by default)."""
CANDIDATES_PER_STEP = 24


def snapshot(state) -> tuple:
    return (state.turn, tuple(state.hands), tuple(state.boneyard), len(state.history), state.scores())


def check_conservation(game, state) -> None:
    placed = list(state.layout.tiles)
    held = [t for hand in state.hands for t in tiles_of(hand)]
    engine = [state.deal.engine] if state.deal.engine is not None else []
    everything = held + placed + list(state.boneyard) + [t for t in engine if t not in placed]
    assert sorted(everything) == sorted(set(everything)), "a tile is in two places"
    dealt = [t for h in state.deal.hands for t in h] + list(state.deal.boneyard) + engine
    assert sorted(everything) == sorted(dealt), "tiles appeared or vanished"
    assert len(dealt) <= set_size(game.double)
    assert [len(tiles_of(h)) for h in state.hands] == state.counts


def check_observations(game, state) -> None:
    for seat in range(game.players):
        obs = state.observation(seat)
        own = set(state.hand(seat))
        hidden = {t for s in range(game.players) if s != seat for t in state.hand(s)} | set(state.boneyard)
        assert set(obs.hand) == own
        for s, action in obs.history:
            if action.kind == Kind.DRAW and s != seat:
                assert action.tile == NO_TILE
            assert action.tile not in hidden or action.tile in state.layout.tiles
        for action in obs.legal_actions:
            assert action.tile == NO_TILE or action.tile in own
        assert obs.hand_counts == tuple(state.counts)
        assert obs.boneyard_count == len(state.boneyard)


def candidates(state, pool: set[Action], rng: random.Random) -> set[Action]:
    """Actions to try: a sample of the actions seen legal so far, mutations of the current legal ones, draw, pass."""
    seen = sorted(pool)
    out = set(rng.sample(seen, min(len(seen), CANDIDATES_PER_STEP))) | {DRAW, PASS}
    size = set_size(state.game.double)
    for action in state.legal_actions():
        if action.kind == Kind.PLACE:
            out.add(placement(rng.randrange(size), action.target, action.point, action.train))
    return out


def check_step(game, state, pool: set[Action], rng: random.Random) -> None:
    legal = state.legal_actions()
    assert legal, "a round that is not over must offer an action"
    assert len(set(legal)) == len(legal), "an action is listed twice"
    if PASS in legal:
        assert legal == [PASS], "pass is legal only when nothing else is"
    for action in legal:
        probe = state.clone()
        probe.apply(action)
    before = snapshot(state)
    for action in candidates(state, pool, rng):
        if action in legal:
            continue
        with pytest.raises(IllegalActionError):
            state.apply(action)
        assert snapshot(state) == before, f"refused {action} changed the state"
    pool.update(legal)


@pytest.mark.parametrize("variant, players", CONFIGS)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32), choice_seed=st.integers(min_value=0, max_value=2**32))
def test_random_matches_keep_every_invariant(variant: str, players: int, seed: int, choice_seed: int) -> None:
    game = new_game(variant, players, SHORT_MATCHES.get(variant))
    rng = random.Random(choice_seed)
    match = game.new_match(seed)
    pool: set[Action] = set()
    scores = match.scores
    for _ in range(MAX_ROUNDS):
        state = match.round
        for _ in range(MAX_MOVES_PER_ROUND):
            if state.is_over():
                break
            check_conservation(game, state)
            if rng.random() < 0.3:
                check_observations(game, state)
            check_step(game, state, pool, rng)
            previous = state.scores()
            match.apply(rng.choice(state.legal_actions()))
            assert all(a >= b for a, b in zip(state.scores(), previous)), "scores decreased during play"
            assert len(state.boneyard) >= game.protected_tiles, "a protected tile was drawn"
        else:
            pytest.fail("a round did not terminate")
        check_conservation(game, state)
        assert all(a >= b for a, b in zip(match.scores, scores)), "match scores decreased"
        scores = match.scores
        if match.is_over():
            result = match.result()
            assert result.scores == match.scores
            return
        match.next_round()
    pytest.fail("the match did not terminate")


@pytest.mark.parametrize("variant, players", CONFIGS)
def test_same_seed_same_match(variant: str, players: int) -> None:
    def play(seed: int) -> list:
        game = new_game(variant, players, SHORT_MATCHES.get(variant))
        rng = random.Random(5)
        match = game.new_match(seed)
        trace = []
        while True:
            while not match.round.is_over():
                actions = match.legal_actions()
                action = actions[rng.randrange(len(actions))]
                trace.append(action)
                match.apply(action)
            if match.is_over():
                return [match.deals, trace, match.result()]
            match.next_round()

    assert play(42) == play(42)
    assert play(42)[0][0] != play(43)[0][0]
