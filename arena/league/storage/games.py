"""The games' index and the ratings: where each played game's record is, who sat where and how it ended, and
each version's rating in each system.

The games and seats of a finished ladder table are written in the same transaction as its ratings
(:meth:`arena.league.storage.ladder.LadderGateway.finish_table`), through this module's :func:`insert_game`,
:func:`rating_in` and :func:`write_rating`, which take that transaction's connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.clock import utc_now
from arena.league.rules.errors import LeagueError
from arena.league.rules.model import ONLINE, Rating, Seat
from arena.league.storage.gateway import Gateway, first_line
from arena.league.storage.tables import bots, game_seats, games, ratings, versions


class GamesGateway(Gateway):
    """The calls on the ``games``, ``game_seats`` and ``ratings`` tables."""

    def record_game(self, league_id: int, record: str, game_key: str, seats: Sequence[Seat], *,
                    line: int | None = None, played_at: datetime | None = None) -> int:
        """Index one played game and its seats' results in one transaction; its id."""
        try:
            with self.engine.begin() as connection:
                return insert_game(connection, league_id, record, game_key, seats, line, played_at)
        except sa.exc.IntegrityError as error:
            raise LeagueError(f"cannot record game {game_key!r} of {record}: it is recorded already, or names an "
                              f"unknown league or version ({first_line(error)})") from None

    def record_games(self, league_id: int, entries: Iterable[tuple[str, str, Sequence[Seat]]]) -> int:
        """Several games (record, game key, seats) in one transaction, as a rebuild from record files does."""
        count = 0
        with self.engine.begin() as connection:
            for record, game_key, seats in entries:
                insert_game(connection, league_id, record, game_key, seats, None, None)
                count += 1
        return count

    def game_count(self, league_id: int) -> int:
        with self.engine.connect() as connection:
            return connection.execute(sa.select(sa.func.count()).select_from(games)
                                      .where(games.c.league_id == league_id)).scalar_one()

    def seats_of(self, game_id: int) -> list[Seat]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(game_seats).where(game_seats.c.game_id == game_id)
                                      .order_by(game_seats.c.seat)).all()
        return [Seat(row.version_id, row.score, row.points) for row in rows]

    def games_of_record(self, league_id: int, record: str) -> list[tuple[str, list[Seat]]]:
        """The games recorded from one record file (a table's), by game key, with their seats."""
        return self.games_by_record(league_id, record).get(record, [])

    def games_by_record(self, league_id: int, record: str | None = None) -> dict[str, list[tuple[str, list[Seat]]]]:
        """The league's recorded games (or one record file's) per record file, each by game key with its seats:
        one query, so the leaderboard is rebuilt from every done table at once."""
        where = [games.c.league_id == league_id] + ([games.c.record == record] if record is not None else [])
        with self.engine.connect() as connection:
            rows = connection.execute(
                sa.select(games.c.record, games.c.game_key, game_seats).select_from(games.join(game_seats))
                .where(*where).order_by(games.c.id, game_seats.c.seat)).all()
        found: dict[str, dict[str, list[Seat]]] = {}
        for row in rows:
            found.setdefault(row.record, {}).setdefault(row.game_key, []).append(
                Seat(row.version_id, row.score, row.points))
        return {name: list(keyed.items()) for name, keyed in found.items()}

    def games_per_version(self, league_id: int) -> dict[int, int]:
        """Games recorded per version in the league (a game counts once for a version holding several seats)."""
        query = (sa.select(game_seats.c.version_id, sa.func.count(sa.distinct(game_seats.c.game_id)))
                 .select_from(game_seats.join(games)).where(games.c.league_id == league_id)
                 .group_by(game_seats.c.version_id))
        with self.engine.connect() as connection:
            return {version_id: count for version_id, count in connection.execute(query)}

    def set_rating(self, rating: Rating) -> None:
        """Store a version's rating in a system, replacing the one before."""
        with self.engine.begin() as connection:
            write_rating(connection, rating)

    def ratings(self, league_id: int, system: str) -> list[Rating]:
        """The league's ratings in a system, best first."""
        query = (sa.select(ratings).select_from(ratings.join(versions).join(bots))
                 .where(bots.c.league_id == league_id, ratings.c.system == system)
                 .order_by(ratings.c.mu.desc(), ratings.c.version_id))
        with self.engine.connect() as connection:
            return [Rating(row.version_id, row.system, row.mu, row.sigma, row.games)
                    for row in connection.execute(query)]


def insert_game(connection: Connection, league_id: int, record: str, game_key: str, seats: Sequence[Seat],
                line: int | None, played_at: datetime | None) -> int:
    """One game and its seats, in the caller's transaction; its id."""
    game_id: int = connection.execute(sa.insert(games).values(
        league_id=league_id, record=record, game_key=game_key, line=line,
        played_at=played_at or utc_now()).returning(games.c.id)).scalar_one()
    connection.execute(sa.insert(game_seats), [
        {"game_id": game_id, "seat": number, "version_id": seat.version_id, "score": seat.score,
         "points": seat.points} for number, seat in enumerate(seats)])
    return game_id


def write_rating(connection: Connection, rating: Rating) -> None:
    """A version's rating in a system, replacing the one before, in the caller's transaction."""
    key = (ratings.c.version_id == rating.version_id, ratings.c.system == rating.system)
    values = {"mu": rating.mu, "sigma": rating.sigma, "games": rating.games, "updated_at": utc_now()}
    done = connection.execute(sa.update(ratings).where(*key).values(**values))
    if done.rowcount == 0:
        connection.execute(sa.insert(ratings).values(version_id=rating.version_id, system=rating.system,
                                                     **values))


def rating_in(connection: Connection, version_id: int, system: str = ONLINE) -> Rating | None:
    """A version's rating in a system as the caller's transaction sees it (None before its first)."""
    row = connection.execute(sa.select(ratings).where(ratings.c.version_id == version_id,
                                                      ratings.c.system == system)).one_or_none()
    return None if row is None else Rating(row.version_id, row.system, row.mu, row.sigma, row.games)
