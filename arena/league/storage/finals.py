"""A league's freeze and its finals: its field fixed once, and its finals' state as they go."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import StateError
from arena.league.rules.model import Freeze
from arena.league.rules.notices import ENDED_PHASE, FINALS_PHASE, FROZEN_PHASE, finals_notice
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.notices import league_name, record_notice, record_phase
from arena.league.storage.tables import freezes

PLAYING, DONE, FAILED = "playing", "done", "failed"
"""The finals' states (arena/league/play/finals.py writes them)."""


class FinalsGateway(Gateway):
    """The calls on the ``freezes`` table."""

    def freeze(self, league_id: int, field: Sequence[int]) -> Freeze:
        """Freeze the league with this field; a league frozen already is refused (its field does not change)."""
        with self.engine.begin() as connection:
            if connection.execute(sa.select(freezes.c.league_id).where(freezes.c.league_id == league_id)).first():
                raise StateError("the league is frozen already (its field cannot change)")
            now = utc_now()
            connection.execute(sa.insert(freezes).values(league_id=league_id, frozen_at=now, field=list(field)))
            record_phase(connection, league_id, FROZEN_PHASE, now)
        frozen = self.frozen(league_id)
        assert frozen is not None
        return frozen

    def frozen(self, league_id: int) -> Freeze | None:
        """The league's freeze, or None while it is not frozen."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(freezes).where(freezes.c.league_id == league_id)).one_or_none()
        return None if row is None else Freeze(row.league_id, aware_utc(row.frozen_at), tuple(row.field), row.finals)

    def set_finals(self, league_id: int, finals: Any, published_at: str | None = None) -> Freeze:
        """The frozen league's finals as they are now (their settings, state and, once done, ranking);
        ``published_at``: when their ranking is published, if later than their end (the notice then withholds it)."""
        with self.engine.begin() as connection:
            before = connection.execute(sa.select(freezes.c.finals).where(freezes.c.league_id == league_id)
                                        .with_for_update()).one_or_none()
            if before is None:
                raise StateError("the league is not frozen: freeze it first (arena league freeze)")
            connection.execute(sa.update(freezes).where(freezes.c.league_id == league_id).values(finals=finals))
            was, now = (before.finals or {}).get("state"), (finals or {}).get("state")
            if now != was:  # the finals' start and end told with them
                if now == PLAYING:
                    record_phase(connection, league_id, FINALS_PHASE)
                elif now in (DONE, FAILED):
                    record_notice(connection, league_id,
                                  finals_notice(league_name(connection, league_id), finals, published_at=published_at))
                    if now == DONE:
                        record_phase(connection, league_id, ENDED_PHASE)
        frozen = self.frozen(league_id)
        assert frozen is not None
        return frozen
