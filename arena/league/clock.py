"""The league's clock: the moment now, in UTC, as every row of the league stores it.

One function, so every module reads the same clock and a stored moment compares with a fresh one (both aware, both
UTC). The rules read no clock (:mod:`arena.league.rules`): they are handed the moments they compare.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """Now, as an aware UTC datetime."""
    return datetime.now(UTC)
