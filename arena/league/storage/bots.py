"""The bots' rows: each bot of a league, with its author; a bot's name is unique in its league."""

from __future__ import annotations

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import LeagueError, NotFound
from arena.league.rules.model import Bot
from arena.league.storage.gateway import Gateway
from arena.league.storage.tables import bots


class BotsGateway(Gateway):
    """The calls on the ``bots`` table."""

    def add_bot(self, league_id: int, author_id: int, name: str) -> Bot:
        with self.engine.begin() as connection:
            taken = connection.execute(sa.select(bots.c.id).where(bots.c.league_id == league_id,
                                                                  bots.c.name == name)).first()
            if taken is not None:
                raise LeagueError(f"bot {name!r} exists already in this league")
            connection.execute(sa.insert(bots).values(league_id=league_id, author_id=author_id, name=name,
                                                      created_at=utc_now()))
        return self.bot(league_id, name)

    def bot(self, league_id: int, name: str) -> Bot:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(bots).where(bots.c.league_id == league_id,
                                                           bots.c.name == name)).one_or_none()
        if row is None:
            raise NotFound(f"no bot {name!r} in this league")
        return Bot(row.id, row.league_id, row.author_id, row.name)

    def bots(self, league_id: int, author_id: int | None = None) -> list[Bot]:
        query = sa.select(bots).where(bots.c.league_id == league_id).order_by(bots.c.name)
        if author_id is not None:
            query = query.where(bots.c.author_id == author_id)
        with self.engine.connect() as connection:
            return [Bot(row.id, row.league_id, row.author_id, row.name) for row in connection.execute(query)]
