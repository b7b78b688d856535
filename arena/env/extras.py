"""The optional libraries of the environments, and the one line that says how to get them.

PettingZoo and Gymnasium are the ``pettingzoo`` extra, OpenSpiel the ``openspiel`` extra (pyproject.toml); the core
of the arena imports neither. A module of :mod:`arena.env` that needs one imports it through :func:`require`, so a
missing library is a :class:`MissingExtra` naming the extra to install, never a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from arena.errors import ArenaError

EXTRA_OF = {"pettingzoo": "pettingzoo", "gymnasium": "pettingzoo", "pyspiel": "openspiel", "open_spiel": "openspiel"}
"""The extra that brings each library (its top-level module name)."""


class MissingExtra(ArenaError, ImportError):
    """An environment's library is not installed; the message names the extra that brings it."""


def missing(module: str) -> MissingExtra:
    """The refusal for a library that is not installed: ``pyspiel is not installed: pip install
    'dominoes-arena[openspiel]' (or ARENA_WITH_RESEARCH=1 bash scripts/setup.sh)``."""
    top = module.split(".")[0]
    extra = EXTRA_OF.get(top, top)
    return MissingExtra(f"{top} is not installed: pip install 'dominoes-arena[{extra}]' "
                        "(or ARENA_WITH_RESEARCH=1 bash scripts/setup.sh)")


def require(module: str) -> ModuleType:
    """``module`` imported, or :func:`missing`'s refusal."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing(module) from None
