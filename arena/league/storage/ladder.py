"""The ladder's tables: the queue the matchmaker fills, each table's sides, and a played table's results
rated in one transaction with its place in the rating order.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.clock import utc_now
from arena.league.rules.errors import NotFound
from arena.league.rules.lifecycle import DONE, PLAYING, QUEUED, TABLE_FAILED, UNFINISHED
from arena.league.rules.model import ONLINE, LadderTable, RateSides, Rating, Seat
from arena.league.storage.games import insert_game, rating_in, write_rating
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.tables import freezes, ladder_tables, table_sides


class LadderGateway(Gateway):
    """The calls on the ``tables`` and ``table_sides`` tables."""

    def queue_tables(self, league_id: int, chosen: Sequence[tuple[Sequence[int], str]]) -> list[LadderTable]:
        """New queued tables, each (versions per side, reason), in one transaction; in the order given. None once
        the league is frozen: each insert holds its own check (the ladder looked at the phase before it chose, and
        a freeze may have come in between), so no table is chosen after the freeze."""
        ids = []
        not_frozen = ~sa.exists().where(freezes.c.league_id == league_id)
        with self.engine.begin() as connection:
            for versions_of_sides, reason in chosen:
                values = sa.select(sa.literal(league_id), sa.literal(reason), sa.literal(QUEUED),
                                   sa.literal(utc_now(), ladder_tables.c.created_at.type)).where(not_frozen)
                table_id = connection.execute(sa.insert(ladder_tables).from_select(
                    ["league_id", "reason", "state", "created_at"], values)
                    .returning(ladder_tables.c.id)).scalar_one_or_none()
                if table_id is None:
                    break  # frozen meanwhile (PostgreSQL reads each statement anew): the tables before it stand
                connection.execute(sa.insert(table_sides), [
                    {"table_id": table_id, "side": side, "version_id": version_id}
                    for side, version_id in enumerate(versions_of_sides)])
                ids.append(table_id)
        return [self.table(table_id) for table_id in ids]

    def start_table(self, table_id: int) -> LadderTable:
        """A queued table is being played (a playing one found at a restart stays playing, its start kept)."""
        with self.engine.begin() as connection:
            connection.execute(sa.update(ladder_tables).where(ladder_tables.c.id == table_id,
                                                              ladder_tables.c.state == QUEUED)
                               .values(state=PLAYING, started_at=utc_now()))
        return self.table(table_id)

    def fail_table(self, table_id: int, error: str) -> LadderTable:
        """An unfinished table that cannot be played (a bot that cannot start): failed with why; nothing rated."""
        with self.engine.begin() as connection:
            connection.execute(sa.update(ladder_tables).where(ladder_tables.c.id == table_id,
                                                              ladder_tables.c.state.in_(UNFINISHED))
                               .values(state=TABLE_FAILED, error=error, ended_at=utc_now()))
        return self.table(table_id)

    def finish_table(self, table_id: int, record: str, played: Sequence[tuple[str, Sequence[Seat]]],
                     *updates: RateSides, single_games: bool = False) -> bool:
        """A played table's results in ONE transaction: its games (``played``: game key and seats, from its record
        file ``record``), its versions' online ratings (``updates``, applied in turn, each to the ratings the one
        before left: one for a deal set, one per game for a table rated as ``single_games``, which is stored with
        it) and the table marked done with its place in the rating order. Whatever interrupts it, all of it or none
        is there; a table done already is left as it is (False), so a result is never applied twice."""
        with self.engine.begin() as connection:
            row = connection.execute(sa.select(ladder_tables).where(ladder_tables.c.id == table_id)
                                     .with_for_update()).one()
            if row.state not in UNFINISHED:
                return False
            league_id = row.league_id
            for game_key, seats in played:
                insert_game(connection, league_id, record, game_key, seats, None, None)
            sides = self._sides(connection, [table_id])[table_id]
            state = {version_id: rating_in(connection, version_id) for version_id in sides}
            for rate in updates:
                before = [state[version_id] for version_id in sides]
                for version_id, old, (mu, sigma) in zip(sides, before, rate(before), strict=True):
                    state[version_id] = Rating(version_id, ONLINE, mu, sigma, (old.games if old else 0) + 1)
            for rating in state.values():
                if rating is not None:
                    write_rating(connection, rating)
            sequence = connection.execute(sa.select(sa.func.coalesce(sa.func.max(ladder_tables.c.sequence), 0))
                                          .where(ladder_tables.c.league_id == league_id)).scalar_one() + 1
            connection.execute(sa.update(ladder_tables).where(ladder_tables.c.id == table_id)
                               .values(state=DONE, ended_at=utc_now(), sequence=sequence, error=None,
                                       single_games=single_games))
        return True

    def table(self, table_id: int) -> LadderTable:
        found = self._tables_where(ladder_tables.c.id == table_id)
        if not found:
            raise NotFound(f"no table number {table_id}")
        return found[0]

    def tables_in(self, league_id: int, states: Sequence[str], limit: int | None = None) -> list[LadderTable]:
        """The league's tables in these states, oldest first (or the newest ``limit`` of them, newest first)."""
        return self._tables_where(ladder_tables.c.league_id == league_id, ladder_tables.c.state.in_(states),
                                  limit=limit)

    def tables_of_versions(self, league_id: int, version_ids: Sequence[int], states: Sequence[str],
                           limit: int) -> list[LadderTable]:
        """The newest ``limit`` tables of the league in these states at which one of the versions sat, newest
        first (a bot's page: its versions' recent tables)."""
        sat = sa.select(table_sides.c.table_id).where(table_sides.c.version_id.in_(list(version_ids)))
        return self._tables_where(ladder_tables.c.league_id == league_id, ladder_tables.c.state.in_(states),
                                  ladder_tables.c.id.in_(sat), limit=limit)

    def recent_tables(self, league_id: int, since: datetime) -> list[LadderTable]:
        """The tables being played or queued, and those done since ``since``: what the matchmaker counts as a
        version's recent deal sets."""
        return self._tables_where(ladder_tables.c.league_id == league_id, sa.or_(
            ladder_tables.c.state.in_(UNFINISHED),
            sa.and_(ladder_tables.c.state == DONE, ladder_tables.c.ended_at >= since)))

    def rated_tables(self, league_id: int) -> list[LadderTable]:
        """Every done table of the league in the order its result was rated."""
        query = ladder_tables.c.league_id == league_id, ladder_tables.c.state == DONE
        return sorted(self._tables_where(*query), key=lambda t: t.sequence or 0)

    def _tables_where(self, *where: Any, limit: int | None = None) -> list[LadderTable]:
        query = sa.select(ladder_tables).where(*where)
        query = query.order_by(ladder_tables.c.id.desc()).limit(limit) if limit else query.order_by(ladder_tables.c.id)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
            sides = self._sides(connection, [row.id for row in rows])
        return [LadderTable(row.id, row.league_id, tuple(sides.get(row.id, ())), row.reason, row.state,
                            aware_utc(row.created_at), aware_utc(row.started_at), aware_utc(row.ended_at),
                            row.error, row.sequence, row.single_games)
                for row in rows]

    @staticmethod
    def _sides(connection: Connection, table_ids: Sequence[int]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {}
        for start in range(0, len(table_ids), 500):  # a bounded IN list, whatever the number of tables
            chunk = table_ids[start:start + 500]
            for row in connection.execute(sa.select(table_sides).where(table_sides.c.table_id.in_(chunk))
                                          .order_by(table_sides.c.table_id, table_sides.c.side)):
                found.setdefault(row.table_id, []).append(row.version_id)
        return found
