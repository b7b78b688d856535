"""The one small error hierarchy of the rules engine.

Messages are lowercase, say what was expected and show the bad value, so a CLI can print them as they are.
"""

from arena.errors import ArenaError


class RulesError(ArenaError, ValueError):
    """Anything the rules engine refuses: a bad option, a bad deal, a bad tile."""


class OptionError(RulesError):
    """An unknown variant or option, or an option value out of range."""


class IllegalActionError(RulesError):
    """An action that is not among the legal actions of the state; the state is unchanged."""
