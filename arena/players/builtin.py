"""Built-in in-process players: a uniformly random one, a greedy one that plays its heaviest tile, a mix of the two,
the search player (:mod:`arena.players.search`) at fixed playout budgets, and OpenSpiel's information-set MCTS (the
``openspiel`` extra).

A player is any callable from a seat's :class:`~arena.rules.Observation` to one of its legal actions; it sees
exactly what a remote bot would see, nothing more.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from arena.players.budgets import ISMCTS_SIMULATIONS as ISMCTS_SIMULATIONS
from arena.players.budgets import SEARCH_PLAYOUTS as SEARCH_PLAYOUTS
from arena.players.search import SearchPlayer
from arena.rules import Action, Kind, Observation
from arena.rules.errors import OptionError
from arena.rules.tiles import PIPS


class Player(Protocol):
    """Chooses one of ``observation.legal_actions``."""

    name: str

    def __call__(self, observation: Observation) -> Action: ...


class RandomPlayer:
    """Uniformly random among the legal actions, from its own seeded generator."""

    def __init__(self, seed: int | str = 0, name: str = "random") -> None:
        self.name = name
        self._rng = random.Random(str(seed))

    def __call__(self, observation: Observation) -> Action:
        return self._rng.choice(observation.legal_actions)


class GreedyPlayer:
    """Places its heaviest playable tile (first such action on ties); draws or passes only when it must."""

    def __init__(self, seed: int | str = 0, name: str = "greedy") -> None:
        self.name = name

    def __call__(self, observation: Observation) -> Action:
        actions = observation.legal_actions
        placements = [a for a in actions if a.kind == Kind.PLACE]
        if not placements:
            return actions[0]
        return max(placements, key=lambda a: PIPS[a.tile])


def ismcts_player(seed: int | str = 0, name: str = "ismcts", simulations: int | None = None) -> Player:
    """OpenSpiel's information-set MCTS (arena/env/spiel_player.py), when the ``openspiel`` extra is installed;
    without it, a one-line :class:`~arena.env.extras.MissingExtra` that names the extra."""
    # the openspiel extra, loaded only when a seat asks for this player: the arena starts without it
    from arena.env.spiel_player import ismcts_player as make  # noqa: PLC0415
    return make(seed=seed, name=name) if simulations is None else make(seed=seed, name=name, simulations=simulations)


def ismcts_budget(simulations: int) -> Callable[..., Player]:
    """The factory of IS-MCTS at ``simulations`` a decision."""

    def make(seed: int | str = 0, name: str = f"ismcts{simulations}") -> Player:
        return ismcts_player(seed=seed, name=name, simulations=simulations)

    return make


class MixedPlayer:
    """Greedy's move or, half the time (its own seeded coin), a random one: a player between the two, so that a
    rating scale anchored at random reaches greedy through results of both kinds (in Draw random wins 1 game in
    100 against greedy, and 8 against this one)."""

    def __init__(self, seed: int | str = 0, name: str = "mixed") -> None:
        self.name = name
        self._random = RandomPlayer(seed)
        self._greedy = GreedyPlayer(seed)
        self._coin = random.Random(f"{seed}/coin")

    def __call__(self, observation: Observation) -> Action:
        return (self._random if self._coin.random() < 0.5 else self._greedy)(observation)


def search_player(playouts: int) -> Callable[..., Player]:
    """The factory of the search player capped at ``playouts`` a decision."""

    def make(seed: int | str = 0, name: str = f"search{playouts}") -> Player:
        return SearchPlayer(seed=seed, name=name, max_playouts=playouts)

    return make


BUILTIN_PLAYERS: dict[str, Callable[..., Player]] = {
    "random": RandomPlayer, "mixed": MixedPlayer, "greedy": GreedyPlayer,
    **{f"search{n}": search_player(n) for n in SEARCH_PLAYOUTS},
    "ismcts": ismcts_player, **{f"ismcts{n}": ismcts_budget(n) for n in ISMCTS_SIMULATIONS}}


def builtin_player(kind: str, seed: int | str = 0) -> Player:
    """A built-in player by name (:data:`BUILTIN_PLAYERS`)."""
    try:
        factory = BUILTIN_PLAYERS[kind]
    except KeyError:
        raise OptionError(f"unknown built-in player {kind!r}; valid players: {', '.join(BUILTIN_PLAYERS)}") from None
    return factory(seed=seed, name=kind)
