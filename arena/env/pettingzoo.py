"""Every variant as a PettingZoo AEC environment: ``arena.env.pettingzoo.env(variant="draw", players=3)``.

One episode is one whole match as the arena plays it (:mod:`arena.rules.match`): rounds follow each other, dealt from
the match seed, until the variant's end. Agents are ``player_0`` .. ``player_{n-1}``, one per seat; the agent to act
is the seat to move (a seat that draws keeps the turn).

* **Observation**: a dict, PettingZoo's convention for games with legal moves (as its classic environments):
  ``"observation"``, the shared encoding's vector of the seat's view (:class:`arena.env.encoding.Encoding`), and
  ``"action_mask"``, 1 at every legal index for the agent to act, all zero for the others. The structured
  :class:`~arena.rules.Observation` is :meth:`RawEnv.observation_of`.
* **Actions**: ``Discrete(encoding.num_actions)``, the shared encoding's indices.
* **Rewards**: after every step, each agent's change in its side's match score (All Fives' points in play at once,
  a round's points when it ends; a team's points go to both partners); in Mexican Train, where fewer is better, the
  negated change (the pips it was charged). The sum over a match is the final score (negated in Mexican Train).
* **Illegal actions**: the raw environment refuses them with an :class:`~arena.rules.IllegalActionError` and
  changes nothing; :func:`env` wraps it as PettingZoo's classic games do (``TerminateIllegalWrapper``: the match
  ends, the offender gets ``illegal_reward``, -1 by default), with the out-of-bounds and order checks.
* **Seeds**: ``reset(seed=S)`` plays the arena's match of seed ``S`` (the deals of ``arena simulate --seed S``); a
  reset without a seed draws the next match seed from the last seeded generator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from arena.env.encoding import Encoding
from arena.env.episodes import SEED_BOUND, seat_rewards, standing
from arena.env.extras import missing
from arena.rules import Game, Match, Observation, new_game

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError:
    raise missing("pettingzoo") from None

def agent_name(seat: int) -> str:
    return f"player_{seat}"


class RawEnv(AECEnv):  # type: ignore[misc]  # pettingzoo's classes are untyped for mypy here
    """A match of one configured variant as an AEC environment (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "name": "arena_dominoes_v0", "is_parallelizable": False}

    def __init__(self, variant: str = "draw", players: int | None = None, options: Mapping[str, Any] | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.game: Game = new_game(variant, players, options)
        self.encoding = Encoding(self.game)
        self.render_mode = render_mode
        n = self.game.players
        self.possible_agents = [agent_name(s) for s in range(n)]
        self.agents = self.possible_agents[:]
        self._seat = {agent: s for s, agent in enumerate(self.possible_agents)}
        high = self.encoding.high()
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(low=0.0, high=high, shape=(self.encoding.size,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(self.encoding.num_actions,), dtype=np.int8),
            })
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(self.encoding.num_actions) for agent in self.possible_agents}
        self._seeds = np.random.default_rng()
        self.match: Match | None = None

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    # --- the AEC contract -------------------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = np.random.default_rng(seed)
            match_seed = int(seed)
        else:
            match_seed = int(self._seeds.integers(SEED_BOUND))
        self.match = self.game.new_match(match_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._standing = standing(self.match)
        self.agent_selection = self.possible_agents[self.match.round.turn]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.encoding.observe(self.observation_of(agent))

    def observation_of(self, agent: str) -> Observation:
        """The structured view of ``agent``'s seat: what the arena's referee would send that seat's bot."""
        return self._match().round.observation(self._seat[agent])

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        match = self._match()
        if action is None:
            raise ValueError(f"expected an action index for {agent}, the agent to act, got None")
        match.apply(self.encoding.action(int(action), match.round))
        if match.round.is_over() and not match.is_over():
            match.next_round()
        self._cumulative_rewards[agent] = 0.0
        now = standing(match)
        self.rewards = dict(zip(self.possible_agents, seat_rewards(self.game, self._standing, now), strict=True))
        self._standing = now
        if match.is_over():
            result = match.result()
            self.terminations = dict.fromkeys(self.agents, True)
            self.infos = {a: {"scores": result.scores, "winner": result.winner} for a in self.agents}
            self.agent_selection = self.possible_agents[(self._seat[agent] + 1) % self.game.players]
        else:
            self.agent_selection = self.possible_agents[match.round.turn]
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None or self.match is None:
            return None
        state = self.match.round
        turn = "over" if state.turn < 0 else f"seat {state.turn} to move"
        return (f"round {state.round_index}, {turn}; table {' '.join(map(str, state.layout.tiles))}; "
                f"scores {list(standing(self.match))}")

    def close(self) -> None:
        pass

    def _match(self) -> Match:
        if self.match is None:
            raise RuntimeError("call reset() before using the environment")
        return self.match


def raw_env(variant: str = "draw", players: int | None = None, options: Mapping[str, Any] | None = None,
            render_mode: str | None = None) -> RawEnv:
    """The environment without PettingZoo's wrappers: an illegal action raises IllegalActionError."""
    return RawEnv(variant, players, options, render_mode)


def env(variant: str = "draw", players: int | None = None, options: Mapping[str, Any] | None = None,
        render_mode: str | None = None, illegal_reward: float = -1.0) -> Any:
    """The environment wrapped as PettingZoo's classic games are: an illegal action ends the match with
    ``illegal_reward`` for the offender; actions outside the space and calls out of order are refused."""
    wrapped: Any = raw_env(variant, players, options, render_mode)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=illegal_reward)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
