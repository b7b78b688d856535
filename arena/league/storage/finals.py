"""A league's freeze and its finals: its field fixed once, and its finals' state as they go."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import StateError
from arena.league.rules.model import Freeze
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.tables import freezes


class FinalsGateway(Gateway):
    """The calls on the ``freezes`` table."""

    def freeze(self, league_id: int, field: Sequence[int]) -> Freeze:
        """Freeze the league with this field; a league frozen already is refused (its field does not change)."""
        with self.engine.begin() as connection:
            if connection.execute(sa.select(freezes.c.league_id).where(freezes.c.league_id == league_id)).first():
                raise StateError("the league is frozen already (its field cannot change)")
            connection.execute(sa.insert(freezes).values(league_id=league_id, frozen_at=utc_now(),
                                                         field=list(field)))
        frozen = self.frozen(league_id)
        assert frozen is not None
        return frozen

    def frozen(self, league_id: int) -> Freeze | None:
        """The league's freeze, or None while it is not frozen."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(freezes).where(freezes.c.league_id == league_id)).one_or_none()
        return None if row is None else Freeze(row.league_id, aware_utc(row.frozen_at), tuple(row.field), row.finals)

    def set_finals(self, league_id: int, finals: Any) -> Freeze:
        """The frozen league's finals as they are now (their settings, state and, once done, ranking)."""
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(freezes).where(freezes.c.league_id == league_id)
                                      .values(finals=finals)).rowcount
        if not done:
            raise StateError("the league is not frozen: freeze it first (arena league freeze)")
        frozen = self.frozen(league_id)
        assert frozen is not None
        return frozen
