"""The registry of variants: name -> Game subclass, filled by each variant module's ``@register``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.rules.errors import OptionError
from arena.rules.game import Game

VARIANTS: dict[str, type[Game]] = {}


def register(cls: type[Game]) -> type[Game]:
    """Class decorator: make a variant available by its name."""
    VARIANTS[cls.name] = cls
    return cls


def variant(name: str) -> type[Game]:
    """The variant class by name; an unknown name lists the valid ones."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise OptionError(f"unknown variant {name!r}; valid variants: {', '.join(VARIANTS)}") from None


def new_game(name: str, players: int | None = None, options: Mapping[str, Any] | None = None) -> Game:
    """A configured variant: ``new_game("draw", players=3, options={"target": 50})``."""
    return variant(name)(players, options)
