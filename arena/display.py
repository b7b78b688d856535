"""Names from strangers, made safe to print: a bot's or a tournament's name may hold escape sequences that clear a
terminal, or rich markup that restyles a table. Everything the arena prints that came from a bot or a client goes
through :func:`safe_name` (plain output) or :func:`safe_markup` (rich output).

Also the labels people read (:func:`move_label`, :func:`count_text`, :func:`seconds_label`) and the one console
every command prints through (:func:`make_console`): helpers below both the command line and the server's client
commands (and a run's errors), so neither imports the other for them."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

MAX_SHOWN = 80


def safe_name(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` without control characters (escape sequences lose their ESC), cut to ``limit`` characters."""
    cleaned = "".join(c for c in text if c.isprintable())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def safe_text(text: str) -> str:
    """A stranger's many-line text (a bot's log) without its control characters but its line breaks and tabs:
    escape sequences lose their ESC, a carriage return cannot overwrite a line, nothing is cut."""
    return "".join(c for c in text if c.isprintable() or c in "\n\t")


def escaped(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` on one line with its control characters written as escapes (a newline as ``\\n``), cut to
    ``limit``: how an error line names a key of the user's file, so that even a key of control characters is seen."""
    shown = text if text.isprintable() else repr(text)[1:-1]
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def safe_markup(text: str, limit: int = MAX_SHOWN) -> str:
    """:func:`safe_name`, with rich markup escaped, for tables and console prints that interpret markup."""
    return escape(safe_name(text, limit))


def move_label(number: int) -> str:
    """``move N`` for the move whose number in a record, a fault or an ``ActRequest`` is ``number`` (from 0): moves
    are numbered per game from 1 everywhere people read them (see arena/records/replay.py, *Move numbers*)."""
    return f"move {number + 1}"


def count_text(count: int, noun: str) -> str:
    """``1 game``, ``2 games``: a count in a sentence, as a run's errors and summaries say how many games."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def seconds_label(seconds: float) -> str:
    """``15 s`` for a wait people read about: to a tenth of a second (what is left of a 15 s start-up budget when
    the handshake begins, 14.9993 s, is the budget, not a measurement worth four decimals)."""
    return f"{round(seconds, 1):g} s" if seconds >= 0.1 else f"{seconds:.2g} s"


def make_console() -> Console:
    """A console that keeps tables readable when output goes to a file or a pipe (no terminal width)."""
    console = Console()
    return console if console.is_terminal else Console(width=120)


TIED_NAMED = 5
"""How many names a list in a sentence names before it counts the rest ("a, b, c, d, e and 2 others"): a
leaderboard's "not yet told apart from" cell stays short in a dense field."""


def ordinal(number: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def names_text(names: Sequence[str], named: int = TIED_NAMED) -> str:
    """``foo``, ``foo and bar``, ``foo, bar and baz``; past ``named`` names, ``foo, bar and 4 others``."""
    shown = list(names[:named])
    rest = len(names) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest} {'other' if rest == 1 else 'others'}"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
