"""The authors' rows: each author (a team) with its members, each member's name and token hash (never a token),
their revocations, and a team's state (awaiting the operator's approval, active, rejected)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.clock import utc_now
from arena.league.rules.errors import LeagueError, NotFound, StateError
from arena.league.rules.model import ACTIVE, CAPTAIN, Author, Member
from arena.league.rules.teams import name_key, require_free
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.tables import authors, members


class AuthorsGateway(Gateway):
    """The calls on the ``authors`` and ``members`` tables."""

    def add_author(self, name: str, token_hash: str) -> Author:
        """A team the operator adds, with its captain (whose token's hash is ``token_hash``)."""
        with self.engine.begin() as connection:
            taken = taken_name(connection, name)
            if taken == name:
                raise LeagueError(f"author {name!r} exists already")
            require_free(name, taken, "author")
            insert_team(connection, name, token_hash, CAPTAIN, utc_now())
        return self.author(name)

    def author(self, name: str) -> Author:
        return self._one_author(authors.c.name == name, f"no author {name!r}")

    def author_by_id(self, author_id: int) -> Author:
        return self._one_author(authors.c.id == author_id, f"no author number {author_id}")

    def authors(self) -> list[Author]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(authors).order_by(authors.c.name)).all()
        return [author_of(row) for row in rows]

    def authors_by_id(self, author_ids: Iterable[int]) -> dict[int, Author]:
        """These authors by id, in one query (those that exist)."""
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(authors).where(authors.c.id.in_(sorted(set(author_ids))))).all()
        return {row.id: author_of(row) for row in rows}

    def token_holder(self, token_hash: str) -> tuple[Author, Member, str] | None:
        """The member whose stored hash is ``token_hash``, its team, and that stored hash (for the constant-time
        compare of :mod:`arena.league.authors`); None when none is."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(members).where(members.c.token_hash == token_hash)).one_or_none()
            if row is None:
                return None
            team = connection.execute(sa.select(authors).where(authors.c.id == row.author_id)).one()
        return author_of(team), member_of(row), row.token_hash

    def member_with_hash(self, team: str, member: str | None) -> tuple[Author, Member, str]:
        """The member named (``None``: the team's captain), its team, and its stored token hash: what the web's
        session cookie of a member is checked against (a new token or a revoke ends the member's sessions)."""
        with self.engine.connect() as connection:
            query = sa.select(members, authors.c.name.label("team")).join(authors, authors.c.id == members.c.author_id)
            query = query.where(authors.c.name == team)
            query = query.where(members.c.captain if member is None else members.c.name == member)
            row = connection.execute(query).one_or_none()
            if row is None:
                raise NotFound(f"no member {member or 'captain'!r} of team {team!r}")
            found = connection.execute(sa.select(authors).where(authors.c.id == row.author_id)).one()
        return author_of(found), member_of(row), row.token_hash

    def replace_token_hash(self, author_id: int, token_hash: str) -> None:
        """A new token for the team's captain (the old one stops working); a revoked team is reinstated by it."""
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(members).where(members.c.author_id == author_id, members.c.captain)
                                      .values(token_hash=token_hash, revoked_at=None))
            if done.rowcount != 1:
                raise NotFound(f"no author number {author_id}")
            connection.execute(sa.update(authors).where(authors.c.id == author_id).values(revoked_at=None))

    def revoke_author(self, author_id: int) -> None:
        """Revoke the team: every member's token is refused (its bots and versions stay)."""
        self._update_author(author_id, revoked_at=utc_now())

    def set_team_state(self, author_id: int, state: str, expected: str) -> Author:
        """The team's state from ``expected`` to ``state`` (the operator's approval or rejection); a StateError when
        it is no longer ``expected``."""
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(authors).where(authors.c.id == author_id,
                                                               authors.c.state == expected).values(state=state))
            if done.rowcount != 1:
                raise StateError(f"team number {author_id} is not {expected}")
        return self.author_by_id(author_id)

    # members

    def members(self, author_id: int) -> list[Member]:
        """The team's members, its captain first."""
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(members).where(members.c.author_id == author_id)
                                      .order_by(members.c.captain.desc(), members.c.id)).all()
        return [member_of(row) for row in rows]

    def member(self, author_id: int, name: str) -> Member:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(members).where(members.c.author_id == author_id,
                                                              members.c.name == name)).one_or_none()
        if row is None:
            team = self.author_by_id(author_id).name
            raise NotFound(f"team {team!r} has no member {name!r}")
        return member_of(row)

    def add_member(self, author_id: int, name: str, token_hash: str) -> Member:
        """A new member of the team (not its captain); its name unique in the team regardless of case."""
        with self.engine.begin() as connection:
            rows = connection.execute(sa.select(members.c.name).where(members.c.author_id == author_id)).all()
            taken = next((row.name for row in rows if name_key(row.name) == name_key(name)), None)
            if taken is not None:
                team = connection.execute(sa.select(authors.c.name).where(authors.c.id == author_id)).scalar_one()
                raise LeagueError(f"team {team!r} has a member {taken!r} already (a member's name is unique in its "
                                  f"team regardless of case)")
            member_id = connection.execute(sa.insert(members).values(
                author_id=author_id, name=name, token_hash=token_hash, captain=False, created_at=utc_now())
            .returning(members.c.id)).scalar_one()
            row = connection.execute(sa.select(members).where(members.c.id == member_id)).one()
        return member_of(row)

    def revoke_member(self, member_id: int) -> Member:
        """Revoke one member's token: every later call with it is refused; the team's other members go on."""
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(members).where(members.c.id == member_id)
                                      .values(revoked_at=utc_now()))
            if done.rowcount != 1:
                raise NotFound(f"no member number {member_id}")
            row = connection.execute(sa.select(members).where(members.c.id == member_id)).one()
        return member_of(row)

    def remove_member(self, member_id: int) -> None:
        """Remove a member: its row and token go (its name is free again in its team); the audit keeps its
        actions."""
        with self.engine.begin() as connection:
            done = connection.execute(sa.delete(members).where(members.c.id == member_id))
        if done.rowcount != 1:
            raise NotFound(f"no member number {member_id}")

    def _update_author(self, author_id: int, **values: Any) -> None:
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(authors).where(authors.c.id == author_id).values(**values))
        if done.rowcount != 1:
            raise NotFound(f"no author number {author_id}")

    def _one_author(self, where: Any, missing: str) -> Author:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(authors).where(where)).one_or_none()
        if row is None:
            raise NotFound(missing)
        return author_of(row)


def taken_name(connection: Connection, name: str) -> str | None:
    """The name of the author whose name is ``name`` regardless of case, or None."""
    return connection.execute(sa.select(authors.c.name).where(sa.func.lower(authors.c.name) == name_key(name))
                              .order_by(authors.c.id).limit(1)).scalar_one_or_none()


def insert_team(connection: Connection, name: str, token_hash: str, captain: str, now: datetime, *,
                state: str = ACTIVE, league_id: int | None = None, address: str | None = None) -> int:
    """A team's row and its captain's, in the caller's transaction; the team's id."""
    author_id = connection.execute(sa.insert(authors).values(
        name=name, name_key=name_key(name), created_at=now, state=state, league_id=league_id,
        signup_address=address).returning(authors.c.id)).scalar_one()
    connection.execute(sa.insert(members).values(author_id=author_id, name=captain, token_hash=token_hash,
                                                 captain=True, created_at=now))
    return int(author_id)


def author_of(row: Any) -> Author:
    return Author(row.id, row.name, aware_utc(row.created_at), aware_utc(row.revoked_at), row.state, row.league_id)


def member_of(row: Any) -> Member:
    return Member(row.id, row.author_id, row.name, bool(row.captain), aware_utc(row.created_at),
                  aware_utc(row.revoked_at))
