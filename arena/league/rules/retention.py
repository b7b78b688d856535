"""Retention, pure: which of a bot's versions are deleted to keep it within the league's ``authors.versions_kept``.

A deleted version keeps its row (its games and ratings refer to it) and loses its files; the database marks it
(:meth:`arena.league.storage.db.Database.mark_deleted`), only in a state of :data:`DELETABLE`.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.league.rules.lifecycle import FAILED, READY, RETIRED, SUSPENDED, active_version
from arena.league.rules.model import Version

DELETABLE = (RETIRED, FAILED, SUSPENDED, READY)
"""States a version may be deleted in to make room (never one in the pipeline: uploaded, building, checking)."""


def versions_to_delete(versions: Sequence[Version], kept: int) -> list[Version] | None:
    """Which of a bot's versions to delete so that it keeps at most ``kept`` once one more is added: the oldest
    retired ones first, then the oldest others that are not its active version and not in the pipeline. None when
    not enough of them can go (the upload is then refused)."""
    alive = [v for v in versions if not v.deleted]
    excess = len(alive) + 1 - kept
    if excess <= 0:
        return []
    active = active_version(alive)
    candidates = sorted((v for v in alive if v.state in DELETABLE and v is not active),
                        key=lambda v: (v.state != RETIRED, v.number))
    return candidates[:excess] if len(candidates) >= excess else None
