"""Any OpenSpiel bot (a ``pyspiel.Bot``) in an arena seat: an in-process player, ``builtin:ismcts``, or a kit bot.

At each decision the seat's :class:`~arena.rules.Observation` (what the referee sends any bot) becomes an OpenSpiel
state of the registered game (:mod:`arena.env.openspiel`) that the seat cannot tell from the real one: the round is
rebuilt from the seat's view (:class:`arena.rules.restore.PublicRound`) with one consistent guess of the hidden tiles,
and the match's scores and round count are carried over. The bot's ``step`` on that state gives an action index of
the shared encoding, which is the seat's answer. A bot that searches over information sets, as OpenSpiel's IS-MCTS,
never reads the guess: it resamples the hidden tiles itself (``resample_from_infostate``). A bot that keeps memory
across moves sees each decision from a fresh state (the observation carries the round's whole history).

``builtin:ismcts`` is OpenSpiel's ``ISMCTSBot`` with random-rollout evaluation, :data:`ISMCTS_SIMULATIONS`
simulations a decision and its resampling driven by the seat's seed (deterministic for a seed and a request).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from arena.env.extras import missing
from arena.env.openspiel import ArenaState, Play, load
from arena.players.search import Belief
from arena.rules import Action, Game, Match, Observation, RoundResult
from arena.rules.restore import PublicRound

try:
    from open_spiel.python.algorithms import ismcts, mcts
except ImportError:
    raise missing("open_spiel") from None

ISMCTS_SIMULATIONS = 64
"""Simulations per decision of ``builtin:ismcts``: each one rolls a random match out to its end, so this keeps a
decision of Draw under a second on one core (docs/explanation/performance-environments.md)."""
ISMCTS_UCT_C = 2.0
"""IS-MCTS's exploration constant, OpenSpiel's example value."""

BotFactory = Callable[[Any, int, np.random.RandomState], Any]
"""Makes the bot for a loaded pyspiel game, the seat it plays, and its random generator."""


def numeric_seed(seed: int | str) -> int:
    """A 32-bit seed for numpy from the arena's seeds (``"7/1"``: match 7, seat 1)."""
    return int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:4], "big")


def ismcts_bot(game: Any, seat: int, rng: np.random.RandomState, simulations: int = ISMCTS_SIMULATIONS) -> Any:
    """OpenSpiel's IS-MCTS bot with random rollouts, its resampling driven by ``rng``."""
    evaluator = mcts.RandomRolloutEvaluator(1, rng)
    bot = ismcts.ISMCTSBot(game, evaluator, ISMCTS_UCT_C, simulations, random_state=rng)
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
    consistent guess); the earlier rounds are counted and scored, not replayed."""
    arena_game: Game = game.arena_game
    public = PublicRound(arena_game, observation)
    hands, boneyard = Belief(public, forced_draws=False).sample(rng)
    drawn = None
    if public.pending_draw():
        drawn = rng.choice([t for t in range(arena_game.all_tiles.bit_length()) if hands[observation.turn] >> t & 1])
    world = public.determinize(hands, boneyard, drawn)
    match = object.__new__(Match)
    match.game = arena_game
    match.seed = 0
    match.scores = world.start_scores
    match.deals = [world.deal] * (observation.round_index + 1)
    # The earlier rounds' results are not in a seat's observation: only their number matters from here on (Mexican
    # Train's match ends after a number of rounds), so they are counted, not kept.
    match.results = cast(list[RoundResult], [None] * observation.round_index)
    match._result = None
    match.round = world
    state: ArenaState = game.new_initial_state()
    play = Play.__new__(Play)
    play.game = arena_game
    play.match = match
    play.dealt = []
    play.leader = None
    play.template = None
    play.past = ("",) * arena_game.players
    state.play = play
    return state


def ismcts_player(seed: int | str = 0, name: str = "ismcts", simulations: int = ISMCTS_SIMULATIONS) -> SpielPlayer:
    """``builtin:ismcts``: OpenSpiel's IS-MCTS bot in an arena seat."""
    return SpielPlayer(lambda game, seat, rng: ismcts_bot(game, seat, rng, simulations), seed=seed, name=name)

