"""What every part of the league's database gateway shares: its engine, and how a stored value reads back.

:class:`Gateway` is the base of each aggregate's calls (``leagues.py``, ``authors.py``, ``bots.py``, ``versions.py``,
``games.py``, ``ladder.py``, ``challenges.py``, ``finals.py``), which :class:`arena.league.storage.db.Database`
puts together: one engine, one object, each call its own transaction.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

from sqlalchemy.engine import Engine


class Gateway:
    """The league's database through sync calls on one engine. Not for the trio loop: see
    :class:`arena.league.storage.db.AsyncDatabase`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def close(self) -> None:
        self.engine.dispose()

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name


@overload
def aware_utc(moment: datetime) -> datetime: ...


@overload
def aware_utc(moment: None) -> None: ...


def aware_utc(moment: datetime | None) -> datetime | None:
    """A stored moment as an aware UTC datetime (SQLite hands back naive ones: they were written in UTC)."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def first_line(error: BaseException) -> str:
    """The first line of a database error, from the driver's own exception when there is one: what a message
    quotes."""
    original = getattr(error, "orig", None) or error
    return (str(original).strip().splitlines() or [type(original).__name__])[0]
