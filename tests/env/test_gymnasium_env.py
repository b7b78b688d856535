"""One seat against built-in players as a Gymnasium environment (arena/env/gymnasium.py): Gymnasium's check_env for
every variant, the registered ids, rewards that add up to the match's score, and an illegal action's penalty."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from arena.env.gymnasium import ENV_ID, DominoesEnv, variant_id
from arena.rules import VARIANTS, OptionError

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

SHORT = {"mexican_train": {"rounds": 1}}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_gymnasiums_check_env_passes(variant: str) -> None:
    check_env(DominoesEnv(variant, options=SHORT.get(variant), opponents="greedy"), skip_render_check=True)


def test_the_ids_are_registered() -> None:
    env = gymnasium.make(variant_id("all_fives"), players=3, opponents=["greedy", "random"])
    assert env.unwrapped.game.name == "all_fives" and env.unwrapped.game.players == 3
    assert gymnasium.make(ENV_ID, variant="block").unwrapped.game.name == "block"
    assert variant_id("la_plaza_teams") == "arena/LaPlazaTeams-v0"


def test_the_rewards_add_up_to_the_agents_final_score() -> None:
    env = DominoesEnv("draw", 3, opponents="greedy", seat=1)
    observation, info = env.reset(seed=8)
    total = 0.0
    terminated = False
    while not terminated:
        observation, reward, terminated, truncated, info = env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        total += reward
    assert total == info["scores"][1]
    assert info["winner"] in (0, 1, 2)


def test_an_illegal_action_ends_the_episode_with_the_penalty() -> None:
    env = DominoesEnv("draw", 2)
    observation, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal"]) == (-1.0, True, False, True)
    assert info["error"].startswith("illegal action for seat 0: expected one of")


def test_bad_opponents_are_refused_in_one_line() -> None:
    with pytest.raises(OptionError, match="unknown built-in player 'strong'; valid players: random, mixed, greedy, search10"):
        DominoesEnv("draw", 2, opponents="strong")
    with pytest.raises(ValueError, match="expected 2 opponents .one per other seat., got 1"):
        DominoesEnv("draw", 3, opponents=["random"])
