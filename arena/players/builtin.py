"""Built-in in-process players: a uniformly random one, a greedy one that plays its heaviest tile, and OpenSpiel's
information-set MCTS (the ``openspiel`` extra).

A player is any callable from a seat's :class:`~arena.rules.Observation` to one of its legal actions; it sees
exactly what a remote bot would see, nothing more.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

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


def ismcts_player(seed: int | str = 0, name: str = "ismcts") -> Player:
    """OpenSpiel's information-set MCTS (arena/env/spiel_player.py), when the ``openspiel`` extra is installed;
    without it, a one-line :class:`~arena.env.extras.MissingExtra` that names the extra."""
    # the openspiel extra, loaded only when a seat asks for this player: the arena starts without it
    from arena.env.spiel_player import ismcts_player as make  # noqa: PLC0415
    return make(seed=seed, name=name)


BUILTIN_PLAYERS: dict[str, Callable[..., Player]] = {"random": RandomPlayer, "greedy": GreedyPlayer,
                                                     "ismcts": ismcts_player}


def builtin_player(kind: str, seed: int | str = 0) -> Player:
    """A built-in player by name (``random``, ``greedy`` or ``ismcts``)."""
    try:
        factory = BUILTIN_PLAYERS[kind]
    except KeyError:
        raise OptionError(f"unknown built-in player {kind!r}; valid players: {', '.join(BUILTIN_PLAYERS)}") from None
    return factory(seed=seed, name=kind)
