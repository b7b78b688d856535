"""The leagues' rows: each league registered at its first start, found by name."""

from __future__ import annotations

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import LeagueError, NotFound
from arena.league.rules.model import League
from arena.league.storage.gateway import Gateway
from arena.league.storage.tables import leagues


class LeaguesGateway(Gateway):
    """The calls on the ``leagues`` table."""

    def ensure_league(self, name: str, title: str, variant: str) -> League:
        """The league of this name, created at its first start; its title follows the file, its variant may not
        change (its games and ratings are of that variant)."""
        with self.engine.begin() as connection:
            row = connection.execute(sa.select(leagues).where(leagues.c.name == name)).one_or_none()
            if row is None:
                connection.execute(sa.insert(leagues).values(name=name, title=title, variant=variant,
                                                             created_at=utc_now()))
            elif row.variant != variant:
                raise LeagueError(f"league {name!r} plays {row.variant!r} in its database, its file says "
                                  f"{variant!r}: a league's variant cannot change (start a new league)")
            elif row.title != title:
                connection.execute(sa.update(leagues).where(leagues.c.id == row.id).values(title=title))
        return self.league(name)

    def league(self, name: str) -> League:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(leagues).where(leagues.c.name == name)).one_or_none()
        if row is None:
            raise NotFound(f"no league {name!r}")
        return League(row.id, row.name, row.title, row.variant)
