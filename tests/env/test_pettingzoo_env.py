"""Every variant as a PettingZoo AEC environment (arena/env/pettingzoo.py): PettingZoo's own api_test and seed test,
the rewards that add up to the match's scores, and an illegal action refused the way PettingZoo's classic games do."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from arena.env import pettingzoo as pz
from arena.rules import IllegalActionError, VARIANTS, new_game
from arena.simulate import play_local_match

pytestmark = [pytest.mark.fast,  # starts no process, no server, no browser
              pytest.mark.filterwarnings("ignore:Observation:UserWarning")]  # a dict observation, as classic games'

GAMES = [(variant, players) for variant in VARIANTS for players in VARIANTS[variant].player_counts[:3]] + [("mexican_train", 8)]
SHORT = {"mexican_train": {"rounds": 2}}
"""Mexican Train's 13 rounds cut to 2 to keep the tests fast (the rounds' machinery is the same)."""


@pytest.mark.parametrize("variant, players", GAMES, ids=[f"{v}-{p}" for v, p in GAMES])
def test_pettingzoos_api_test_passes(variant: str, players: int) -> None:
    api_test(pz.env(variant, players, SHORT.get(variant)), num_cycles=400)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_pettingzoos_seed_test_passes(variant: str) -> None:
    seed_test(lambda: pz.env(variant, None, SHORT.get(variant)), num_cycles=200)


def first_legal_to_the_end(env, seed: int) -> tuple[dict[str, float], dict]:
    """Every agent plays its lowest legal index to the end of the match: the rewards summed, and the last info."""
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    info: dict = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[0]))
    return totals, info


@pytest.mark.parametrize("variant, players", [("all_fives", 3), ("la_plaza_teams", 4), ("mexican_train", 2)])
def test_the_rewards_add_up_to_the_arenas_match(variant: str, players: int) -> None:
    """The lowest index is the first legal action in the encoding's order; the arena's own match with the same seed
    and the same choices ends with the scores the rewards add up to (negated in Mexican Train)."""
    env = pz.env(variant, players, SHORT.get(variant))
    totals, info = first_legal_to_the_end(env, seed=11)
    game = new_game(variant, players, SHORT.get(variant))
    encoding = env.unwrapped.encoding

    def lowest_index(observation):
        return min(observation.legal_actions, key=lambda a: encoding.index(a, observation))

    lowest_index.name = "lowest"
    result = play_local_match(game, [lowest_index] * players, 11).result()
    sign = -1 if variant == "mexican_train" else 1
    assert [totals[f"player_{s}"] for s in range(players)] == [sign * result.scores[game.side_of[s]]
                                                             for s in range(players)]
    assert info == {"scores": result.scores, "winner": result.winner}


def test_an_illegal_action_ends_the_match_with_minus_one_for_the_offender() -> None:
    env = pz.env("draw", 2)
    env.reset(seed=1)
    offender = env.agent_selection
    observation = env.observe(offender)
    env.step(int(np.flatnonzero(observation["action_mask"] == 0)[0]))
    assert all(env.terminations.values())
    assert env._cumulative_rewards[offender] == -1


def test_the_raw_environment_refuses_an_illegal_action_and_changes_nothing() -> None:
    env = pz.raw_env("draw", 2)
    env.reset(seed=1)
    agent = env.agent_selection
    before = env.observe(agent)
    illegal = int(np.flatnonzero(before["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"^illegal action for seat \d: expected one of lead"):
        env.step(illegal)
    after = env.observe(agent)
    assert env.agent_selection == agent
    assert np.array_equal(after["observation"], before["observation"])


def test_a_seeded_reset_plays_the_arenas_match_of_that_seed() -> None:
    env = pz.raw_env("block", 3)
    env.reset(seed=5)
    match = new_game("block", 3).new_match(5)
    for seat in range(3):
        assert env.observation_of(f"player_{seat}") == match.round.observation(seat)
    env.reset()
    other = env.observation_of("player_0")
    env.reset(seed=5)
    env.reset()
    assert env.observation_of("player_0") == other
