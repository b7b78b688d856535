"""Variant options: declared once per variant, validated with one clear message each.

An option's default may depend on the player count (Draw's target is 100 with 2 players, 61 with 3 or 4), so a
default is either a value or a function of the player count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from arena.rules.errors import OptionError

Default = Any | Callable[[int], Any]


@dataclass(frozen=True)
class Option:
    """One setting of a variant: its type, default, and the values it accepts."""

    name: str
    doc: str
    default: Default
    type: type = int
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    default_doc: str | None = None
    """How to show a default that depends on the player count (e.g. ``100 with 2 players, 61 with 3-4``)."""

    def default_for(self, players: int) -> Any:
        """The default value with this many players."""
        return self.default(players) if callable(self.default) else self.default

    def describe_default(self) -> str:
        """The default as a person reads it."""
        if self.default_doc is not None:
            return self.default_doc
        return _show(self.default)

    def allowed(self) -> str:
        """The values this option accepts, as a person reads them."""
        if self.choices is not None:
            return "one of " + ", ".join(_show(c) for c in self.choices)
        if self.type is bool:
            return "true or false"
        low = "" if self.minimum is None else f">= {self.minimum}"
        high = "" if self.maximum is None else f"<= {self.maximum}"
        bounds = " and ".join(b for b in (low, high) if b)
        return f"an integer {bounds}".strip() if self.type is int else f"a {self.type.__name__}"

    def validate(self, value: Any, variant: str) -> Any:
        """The value, checked; raise :class:`OptionError` naming the option and the allowed values."""
        where = f"option {self.name!r} of variant {variant!r}"
        if self.type is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise OptionError(f"{where} must be {self.allowed()}, got {value!r}")
        if self.type is bool and not isinstance(value, bool):
            raise OptionError(f"{where} must be true or false, got {value!r}")
        if self.type is str and not isinstance(value, str):
            raise OptionError(f"{where} must be {self.allowed()}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise OptionError(f"{where} must be {self.allowed()}, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise OptionError(f"{where} must be {self.allowed()}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise OptionError(f"{where} must be {self.allowed()}, got {value!r}")
        return value


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if callable(value):
        return "depends on players"
    return str(value)


def resolve_options(
    declared: tuple[Option, ...], given: Mapping[str, Any] | None, players: int, variant: str
) -> dict[str, Any]:
    """Every declared option with its value: the given one (validated) or the default for this player count."""
    given = dict(given or {})
    by_name = {o.name: o for o in declared}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        valid = ", ".join(sorted(by_name)) or "none"
        raise OptionError(f"unknown option {unknown[0]!r} for variant {variant!r}; valid options: {valid}")
    resolved: dict[str, Any] = {}
    for option in declared:
        if option.name in given and given[option.name] is not None:
            resolved[option.name] = option.validate(given[option.name], variant)
        else:
            resolved[option.name] = option.default_for(players)
    return resolved
