"""Every variant as an OpenSpiel game (arena/env/openspiel.py): OpenSpiel's own random-simulation consistency checks
through pyspiel.load_game, chance at the deal, returns as the match result, and resampled states that the player
cannot tell from the real one."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import arena.env.openspiel as arena_spiel
from arena.rules import VARIANTS, new_game

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

LOADS = [
    "arena_draw", "arena_draw(players=3)", "arena_draw(players=4,target=30)", "arena_block(players=3)",
    "arena_la_plaza", "arena_la_plaza_teams", "arena_all_fives(players=3)",
    "arena_mexican_train(players=2,rounds=1)", "arena_mexican_train(players=4,set=9,rounds=2)",
]


@pytest.mark.parametrize("name", LOADS)
def test_openspiels_random_simulation_checks_pass(name: str) -> None:
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=2, serialize=False, verbose=False)


def test_every_variant_is_registered_with_its_options() -> None:
    registered = {game.short_name for game in pyspiel.registered_games()}
    assert {f"arena_{v}" for v in VARIANTS} <= registered
    game = pyspiel.load_game("arena_draw(players=3,target=50,voluntary_draw=False)")
    assert game.num_players() == 3
    assert game.arena_game.options["target"] == 50 and game.arena_game.options["voluntary_draw"] is False
    assert game.arena_game.options["hand_size"] == 7  # 0, the default: the variant's own for 3 players
    assert game.num_distinct_actions() == 86


def test_a_bad_option_is_the_arenas_one_line_refusal() -> None:
    with pytest.raises(Exception, match="option 'target' of variant 'draw' must be an integer >= 1, got -5"):
        pyspiel.load_game("arena_draw(target=-5)")
    with pytest.raises(Exception, match="variant 'draw' is played by 2, 3, 4 players, got 5"):
        pyspiel.load_game("arena_draw(players=5)")


def play_randomly(state, rng: np.random.RandomState, until=lambda state: False):
    while not state.is_terminal() and not until(state):
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probabilities)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_the_deal_is_chance_tile_by_tile_after_the_lot() -> None:
    state = pyspiel.load_game("arena_draw").new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]  # the lot: who leads
    state.apply_action(1)
    for dealt in range(28):
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 28 - dealt and abs(sum(p for _, p in outcomes) - 1) < 1e-9
        state.apply_action(outcomes[0][0])
    assert state.current_player() == 1
    round_state = state.play.round()
    assert round_state.hand(0) == (0, 1, 2, 3, 4, 5, 6) and round_state.hand(1) == (7, 8, 9, 10, 11, 12, 13)
    assert len(round_state.boneyard) == 14


def test_returns_are_the_match_result() -> None:
    game = pyspiel.load_game("arena_all_fives(players=3,target=40)")
    state = play_randomly(game.new_initial_state(), np.random.RandomState(3))
    result = state.play.match.result()
    returns = state.returns()
    assert returns[result.winner] == 1.0 and sorted(returns) == [-0.5, -0.5, 1.0]
    teams = play_randomly(pyspiel.load_game("arena_la_plaza_teams(target=30)").new_initial_state(),
                          np.random.RandomState(4))
    winner = teams.play.match.result().winner
    assert teams.returns() == [1.0 if s % 2 == winner else -1.0 for s in range(4)]


@pytest.mark.parametrize("name", ["arena_draw", "arena_block(players=3)", "arena_mexican_train(players=3,rounds=1)",
                                  "arena_all_fives"])
def test_a_resampled_state_is_the_same_to_the_player_and_hides_the_rest(name: str) -> None:
    game = pyspiel.load_game(name)
    rng = np.random.RandomState(5)
    state = play_randomly(game.new_initial_state(), rng,
                          until=lambda s: not s.is_chance_node() and len(s.play.round().history) >= 9)
    player = state.current_player()
    differed = 0
    for _ in range(10):
        other = state.resample_from_infostate(player, pyspiel.UniformProbabilitySampler(0.0, 1.0))
        assert other.information_state_string(player) == state.information_state_string(player)
        assert other.information_state_tensor(player) == state.information_state_tensor(player)
        assert other.legal_actions() == state.legal_actions()
        assert other.history() == []
        differed += other.play.round().hands != state.play.round().hands
        play_randomly(other, rng)  # the guess plays on to the end of the match
    assert differed > 0


def test_the_observation_tensor_is_the_shared_encodings_vector() -> None:
    game = pyspiel.load_game("arena_draw(players=3)")
    state = play_randomly(game.new_initial_state(), np.random.RandomState(6),
                          until=lambda s: not s.is_chance_node() and len(s.play.round().history) >= 5)
    encoding = arena_spiel.GAMES["arena_draw"]({"players": 3}).encoding
    for player in range(3):
        expected = encoding.vector(state.play.round().observation(player))
        assert np.array_equal(np.array(state.observation_tensor(player), np.float32), expected)
    assert new_game("draw", 3).players == game.num_players()
