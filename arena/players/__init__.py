"""The arena's side of a seat: in-process players (this package) and, later, remote bots over gRPC.

The in-process players below are loaded when first used (as :mod:`arena.cluster` loads Ray): a module of this
package (:mod:`.process`, :mod:`.budgets`) imports without the search player and the rest of :mod:`.builtin`, so the
command line's parser and its client commands start without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.players.builtin import BUILTIN_PLAYERS as BUILTIN_PLAYERS
    from arena.players.builtin import GreedyPlayer as GreedyPlayer
    from arena.players.builtin import Player as Player
    from arena.players.builtin import RandomPlayer as RandomPlayer
    from arena.players.builtin import builtin_player as builtin_player

_LAZY = ("BUILTIN_PLAYERS", "GreedyPlayer", "Player", "RandomPlayer", "builtin_player")

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("arena.players.builtin"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
