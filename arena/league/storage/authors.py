"""The authors' rows: each author's name and token hash (never a token), and its revocation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import LeagueError, NotFound
from arena.league.rules.model import Author
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.tables import authors


class AuthorsGateway(Gateway):
    """The calls on the ``authors`` table."""

    def add_author(self, name: str, token_hash: str) -> Author:
        with self.engine.begin() as connection:
            if connection.execute(sa.select(authors.c.id).where(authors.c.name == name)).first() is not None:
                raise LeagueError(f"author {name!r} exists already")
            connection.execute(sa.insert(authors).values(name=name, token_hash=token_hash, created_at=utc_now()))
        return self.author(name)

    def author(self, name: str) -> Author:
        return self._one_author(authors.c.name == name, f"no author {name!r}")

    def author_by_id(self, author_id: int) -> Author:
        return self._one_author(authors.c.id == author_id, f"no author number {author_id}")

    def authors(self) -> list[Author]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(authors).order_by(authors.c.name)).all()
        return [_author(row) for row in rows]

    def authors_by_id(self, author_ids: Iterable[int]) -> dict[int, Author]:
        """These authors by id, in one query (those that exist)."""
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(authors).where(authors.c.id.in_(sorted(set(author_ids))))).all()
        return {row.id: _author(row) for row in rows}

    def token_holder(self, token_hash: str) -> tuple[Author, str] | None:
        """The author whose stored hash is ``token_hash``, with that stored hash (for the constant-time compare of
        :mod:`.authors`); None when none is."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(authors).where(authors.c.token_hash == token_hash)).one_or_none()
        return None if row is None else (_author(row), row.token_hash)

    def author_with_hash(self, name: str) -> tuple[Author, str]:
        """The author named, with its stored token hash: what the web's session cookie of the author is checked
        against (a new token or a revoke ends the author's sessions)."""
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(authors).where(authors.c.name == name)).one_or_none()
        if row is None:
            raise NotFound(f"no author {name!r}")
        return _author(row), row.token_hash

    def replace_token_hash(self, author_id: int, token_hash: str) -> None:
        """A new token for the author (the old one stops working); a revoked author is reinstated by it."""
        self._update_author(author_id, token_hash=token_hash, revoked_at=None)

    def revoke_author(self, author_id: int) -> None:
        self._update_author(author_id, revoked_at=utc_now())

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
        return _author(row)


def _author(row: Any) -> Author:
    return Author(row.id, row.name, aware_utc(row.created_at), aware_utc(row.revoked_at))
