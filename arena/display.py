"""Names from strangers, made safe to print: a bot's or a tournament's name may hold escape sequences that clear a
terminal, or rich markup that restyles a table. Everything the arena prints that came from a bot or a client goes
through :func:`safe_name` (plain output) or :func:`safe_markup` (rich output)."""

from __future__ import annotations

from rich.markup import escape

MAX_SHOWN = 80


def safe_name(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` without control characters (escape sequences lose their ESC), cut to ``limit`` characters."""
    cleaned = "".join(c for c in text if c.isprintable())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def safe_markup(text: str, limit: int = MAX_SHOWN) -> str:
    """:func:`safe_name`, with rich markup escaped, for tables and console prints that interpret markup."""
    return escape(safe_name(text, limit))


def move_label(number: int) -> str:
    """``move N`` for the move whose number in a record, a fault or an ``ActRequest`` is ``number`` (from 0): moves
    are numbered per game from 1 everywhere people read them (see arena/records/replay.py, *Move numbers*)."""
    return f"move {number + 1}"
