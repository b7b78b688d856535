"""One seat of a variant as a single-agent Gymnasium environment, the other seats played by built-in players.

``gymnasium.make("arena/Dominoes-v0", variant="all_fives", players=3, opponents="greedy")`` once this module is
imported (or ``arena/Draw-v0``, ``arena/Block-v0``, ``arena/LaPlaza-v0``, ``arena/LaPlazaTeams-v0``,
``arena/AllFives-v0``, ``arena/MexicanTrain-v0``: the same with the variant fixed). An episode is one whole match;
the agent sits at ``seat`` (0 by default) and the other seats are ``opponents``: a built-in kind for all of them
(``random``, ``greedy``: :mod:`arena.players.builtin`), one per other seat, or any players (an
:class:`~arena.rules.Observation` to a legal action). In a partnership game the agent's partner is one of them.

Observation, action space and rewards are the PettingZoo environment's (:mod:`arena.env.pettingzoo`): the dict of
the encoding's vector and the action mask, the encoding's indices, and the change in the agent's side's match score
from one of its decisions to the next (negated in Mexican Train). ``info["action_mask"]`` repeats the mask for the
libraries that read it there. An illegal action ends the episode with ``illegal_reward`` (-1 by default) and
``info["illegal"]`` true, as PettingZoo's classic games do; nothing of it is played.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from arena.env.encoding import Encoding
from arena.env.episodes import SEED_BOUND, seat_rewards, standing
from arena.env.extras import missing
from arena.players.builtin import Player, builtin_player
from arena.rules import VARIANTS, Game, IllegalActionError, Match, new_game

try:
    import gymnasium
    from gymnasium import spaces
except ImportError:
    raise missing("gymnasium") from None

class DominoesEnv(gymnasium.Env[dict[str, Any], Any]):
    """One seat of a match against built-in players (see the module docstring)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, variant: str = "draw", players: int | None = None, options: Mapping[str, Any] | None = None,
                 opponents: str | Sequence[str | Player] = "random", seat: int = 0, illegal_reward: float = -1.0,
                 render_mode: str | None = None) -> None:
        self.game: Game = new_game(variant, players, options)
        self.encoding = Encoding(self.game)
        n = self.game.players
        if not 0 <= seat < n:
            raise ValueError(f"expected a seat between 0 and {n - 1}, got {seat}")
        self.seat = seat
        kinds = [opponents] * (n - 1) if isinstance(opponents, str) else list(opponents)
        if len(kinds) != n - 1:
            raise ValueError(f"expected {n - 1} opponents (one per other seat), got {len(kinds)}")
        for kind in kinds:
            if isinstance(kind, str):
                builtin_player(kind)  # an unknown kind is refused now, with the valid ones named
        self._opponents = kinds
        self.illegal_reward = illegal_reward
        self.render_mode = render_mode
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(low=0.0, high=self.encoding.high(), shape=(self.encoding.size,),
                                      dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(self.encoding.num_actions,), dtype=np.int8),
        })
        self.action_space = spaces.Discrete(self.encoding.num_actions)
        self.match: Match | None = None
        self._players: list[Player | None] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = int(seed) if seed is not None else int(self.np_random.integers(SEED_BOUND))
        self.match = self.game.new_match(match_seed)
        others = iter(self._opponents)
        self._players = []
        for s in range(self.game.players):
            if s == self.seat:
                self._players.append(None)
                continue
            kind = next(others)
            self._players.append(builtin_player(kind, seed=f"{match_seed}/{s}") if isinstance(kind, str) else kind)
        self._standing = standing(self.match)
        self._play_others()
        return self._observe()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        match = self._match()
        if match.is_over():
            raise RuntimeError("the match is over: call reset()")
        try:
            match.apply(self.encoding.action(int(action), match.round))
        except IllegalActionError as error:
            observation, info = self._observe()
            return observation, float(self.illegal_reward), True, False, {**info, "illegal": True, "error": str(error)}
        self._next_round_if_needed()
        self._play_others()
        now = standing(match)
        reward = seat_rewards(self.game, self._standing, now)[self.seat]
        self._standing = now
        observation, info = self._observe()
        if match.is_over():
            result = match.result()
            info.update(scores=result.scores, winner=result.winner)
        return observation, reward, match.is_over(), False, info

    def observation_of(self) -> Any:
        """The agent's structured view (:class:`~arena.rules.Observation`)."""
        return self._match().round.observation(self.seat)

    def render(self) -> str | None:
        if self.render_mode is None or self.match is None:
            return None
        state = self.match.round
        return f"round {state.round_index}, table {' '.join(map(str, state.layout.tiles))}; scores {list(self._standing)}"

    # --- helpers ---------------------------------------------------------------------------------------------------

    def _match(self) -> Match:
        if self.match is None:
            raise RuntimeError("call reset() before step()")
        return self.match

    def _next_round_if_needed(self) -> None:
        match = self._match()
        if match.round.is_over() and not match.is_over():
            match.next_round()

    def _play_others(self) -> None:
        """Let the other seats move until it is the agent's turn or the match is over."""
        match = self._match()
        while not match.is_over():
            state = match.round
            if state.turn == self.seat:
                return
            player = self._players[state.turn]
            assert player is not None
            match.apply(player(state.observation(state.turn)))
            self._next_round_if_needed()

    def _observe(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        observed = self.encoding.observe(self.observation_of())
        return observed, {"action_mask": observed["action_mask"]}


ENV_ID = "arena/Dominoes-v0"
ENTRY_POINT = "arena.env.gymnasium:DominoesEnv"


def variant_id(variant: str) -> str:
    """``arena/AllFives-v0`` for ``all_fives``."""
    return f"arena/{variant.title().replace('_', '')}-v0"


def register() -> None:
    """Register ``arena/Dominoes-v0`` and one id per variant with Gymnasium (done once, on import)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=ENTRY_POINT)
    for variant in VARIANTS:
        if variant_id(variant) not in gymnasium.registry:
            gymnasium.register(id=variant_id(variant), entry_point=ENTRY_POINT, kwargs={"variant": variant})


register()
