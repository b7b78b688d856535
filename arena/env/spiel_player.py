"""Any OpenSpiel bot (a ``pyspiel.Bot``) in an arena seat: an in-process player, ``builtin:ismcts``, or a kit bot.

At each decision the seat's :class:`~arena.rules.Observation` (what the referee sends any bot) becomes an OpenSpiel
state of the registered game (:mod:`arena.env.openspiel`) that the seat cannot tell from the real one: the round is
rebuilt from the seat's view (:class:`arena.rules.restore.PublicRound`) with one consistent guess of the hidden tiles,
and the match's scores and round count are carried over. The bot's ``step`` on that state gives an action index of
the shared encoding, which is the seat's answer. A bot that searches over information sets, as OpenSpiel's IS-MCTS,
never reads the guess: it resamples the hidden tiles itself (``resample_from_infostate``). A bot that keeps memory
across moves sees each decision from a fresh state (the observation carries the round's whole history).

``builtin:ismcts`` is OpenSpiel's ``ISMCTSBot``, :data:`ISMCTS_SIMULATIONS` simulations a decision, each leaf valued
by a random playout of the round (:class:`RoundRollouts`), its resampling driven by the seat's seed (deterministic
for a seed and a request).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from arena.env.extras import missing
from arena.env.openspiel import ArenaState, Play, guess_round, load, match_returns
from arena.rules import Action, Game, Observation

try:
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError:
    raise missing("open_spiel") from None

ISMCTS_SIMULATIONS = 64
"""Simulations per decision of ``builtin:ismcts``: about 50 ms a decision in Draw, 150 ms in four-player Mexican Train
(docs/explanation/performance-environments.md), well inside the referee's default second."""
ISMCTS_UCT_C = 2.0
"""IS-MCTS's exploration constant, OpenSpiel's example value."""

BotFactory = Callable[[Any, int, np.random.RandomState], Any]
"""Makes the bot for a loaded pyspiel game, the seat it plays, and its random generator."""


def numeric_seed(seed: int | str) -> int:
    """A 32-bit seed for numpy from the arena's seeds (``"7/1"``: match 7, seat 1)."""
    return int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:4], "big")


class RoundRollouts(mcts.Evaluator):  # type: ignore[misc]  # open_spiel has no type information
    """IS-MCTS's leaf values from one random playout to the end of the current round, with the rules engine itself
    (no OpenSpiel state on the way): the match result if the round ends the match, else each side's margin over the
    others' mean (negated in Mexican Train), over the variant's scale, clipped to [-1, 1]. A playout to the end of
    the match, OpenSpiel's ``RandomRolloutEvaluator``, costs a whole match of Python steps per simulation (seconds a
    decision in Draw, most of a minute in Mexican Train) for a noisier value."""

    def __init__(self, rng: np.random.RandomState) -> None:
        self._rng = random.Random(int(rng.randint(2**31)))

    def evaluate(self, state: ArenaState) -> np.ndarray:
        play = state.play
        if play.is_over():
            return np.array(state.returns())
        game = play.game
        if play.dealing():
            return margin_values(game, play.current_match().scores)
        match = play.current_match().clone()
        current = match.round
        choice = self._rng.choice
        while not current.is_over():
            match.apply(choice(current.legal_actions()))
        if match.is_over():
            return np.array(match_returns(game, match))
        return margin_values(game, match.scores)

    def prior(self, state: ArenaState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return list(state.chance_outcomes())
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


MARGIN_SCALE = 100
"""Points that make a margin worth a whole match where the variant has no target (Mexican Train)."""


def margin_values(game: Game, scores: tuple[int, ...]) -> np.ndarray:
    """Each seat's value of a match standing: its side's margin over the other sides' mean, over the target."""
    sides = game.num_sides
    scale = float(game.options.get("target", MARGIN_SCALE))
    sign = 1.0 if game.higher_scores_win else -1.0
    total = sum(scores)
    side_value = [sign * (s - (total - s) / (sides - 1)) / scale for s in scores]
    values: np.ndarray = np.clip(np.array([side_value[game.side_of[seat]] for seat in range(game.players)]), -1, 1)
    return values


def ismcts_bot(game: Any, seat: int, rng: np.random.RandomState, simulations: int = ISMCTS_SIMULATIONS) -> Any:
    """OpenSpiel's IS-MCTS bot valuing its leaves by a random playout of the round (:class:`RoundRollouts`), its
    resampling driven by ``rng``."""
    bot = ismcts.ISMCTSBot(game, RoundRollouts(rng), ISMCTS_UCT_C, simulations, random_state=rng)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rng.uniform))
    return bot


class SpielPlayer:
    """An arena player (Observation -> Action) that asks a pyspiel bot (see the module docstring)."""

    def __init__(self, make_bot: BotFactory, seed: int | str = 0, name: str = "openspiel") -> None:
        self.name = name
        self._make_bot = make_bot
        self._rng = np.random.RandomState(numeric_seed(seed))
        self._guesses = random.Random(str(seed))
        self._games: dict[Any, Any] = {}
        self._bots: dict[Any, Any] = {}

    def __call__(self, observation: Observation) -> Action:
        return observation.legal_actions[self.choose(observation)]

    def choose(self, observation: Observation) -> int:
        """The index, in ``observation.legal_actions``, of the bot's choice."""
        legal = observation.legal_actions
        if len(legal) == 1:
            return 0
        key = (observation.variant, observation.players, tuple(sorted(observation.options.items())))
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = load(observation.variant, observation.players, observation.options)
        bot = self._bots.get((key, observation.seat))
        if bot is None:
            bot = self._bots[(key, observation.seat)] = self._make_bot(game, observation.seat, self._rng)
        state = state_from_observation(game, observation, self._guesses)
        index = int(bot.step(state))
        action = game.encoding.action(index, observation)
        return legal.index(action)


def state_from_observation(game: Any, observation: Observation, rng: random.Random) -> ArenaState:
    """An OpenSpiel state of ``game`` that ``observation``'s seat cannot tell from the real one (its hidden tiles one
    consistent guess); the earlier rounds are counted and scored, not replayed (:meth:`Play.resumed`)."""
    arena_game: Game = game.arena_game
    world = guess_round(arena_game, observation, rng)
    state: ArenaState = game.new_initial_state()
    state.play = Play.resumed(arena_game, world)
    return state


def ismcts_player(seed: int | str = 0, name: str = "ismcts", simulations: int = ISMCTS_SIMULATIONS) -> SpielPlayer:
    """``builtin:ismcts``: OpenSpiel's IS-MCTS bot in an arena seat."""
    return SpielPlayer(lambda game, seat, rng: ismcts_bot(game, seat, rng, simulations), seed=seed, name=name)

