"""The challenges' rows: an author's version against a named one, unrated, and its result once played."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.errors import NotFound
from arena.league.rules.lifecycle import DONE, PLAYING, QUEUED, TABLE_FAILED, TABLE_STATES, UNFINISHED
from arena.league.rules.model import ChallengeRow
from arena.league.rules.notices import challenge_notices
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.notices import league_name, record_notice
from arena.league.storage.tables import bots, challenges, versions


class ChallengesGateway(Gateway):
    """The calls on the ``challenges`` table."""

    def add_challenge(self, league_id: int, author_id: int | None, version_id: int, opponent_id: int,
                      deal_sets: int) -> ChallengeRow:
        with self.engine.begin() as connection:
            challenge_id = connection.execute(sa.insert(challenges).values(
                league_id=league_id, author_id=author_id, version_id=version_id, opponent_id=opponent_id,
                deal_sets=deal_sets, state=QUEUED, created_at=utc_now()).returning(challenges.c.id)).scalar_one()
        return self.challenge(challenge_id)

    def challenge(self, challenge_id: int) -> ChallengeRow:
        found = self._challenges_where(challenges.c.id == challenge_id)
        if not found:
            raise NotFound(f"no challenge number {challenge_id}")
        return found[0]

    def challenges_of(self, league_id: int, author_id: int | None = None,
                      states: Sequence[str] = TABLE_STATES) -> list[ChallengeRow]:
        """The league's challenges in these states (an author's only, when given), oldest first."""
        where = [challenges.c.league_id == league_id, challenges.c.state.in_(states)]
        if author_id is not None:
            where.append(challenges.c.author_id == author_id)
        return self._challenges_where(*where)

    def challenges_since(self, author_id: int, league_id: int, since: datetime) -> int:
        """The challenges an author asked for in the league since ``since`` (its rate limit counts them)."""
        query = (sa.select(sa.func.count()).select_from(challenges)
                 .where(challenges.c.author_id == author_id, challenges.c.league_id == league_id,
                        challenges.c.created_at >= since))
        with self.engine.connect() as connection:
            return connection.execute(query).scalar_one()

    def start_challenge(self, challenge_id: int) -> ChallengeRow:
        """A queued challenge is being played (a playing one found at a restart keeps its start)."""
        return self._update_challenge(challenge_id, (QUEUED,), state=PLAYING, started_at=utc_now())

    def end_challenge(self, challenge_id: int, result: Any, error: str | None = None) -> ChallengeRow:
        """An unfinished challenge ends: done with its result, or failed with why (``error``); an ended one stays
        as it is (a result is written once). Its notices (:func:`arena.league.rules.notices.challenge_notices`)
        are recorded in the same transaction."""
        now = utc_now()
        with self.engine.begin() as connection:
            done = connection.execute(sa.update(challenges).where(
                challenges.c.id == challenge_id, challenges.c.state.in_(UNFINISHED)).values(
                state=DONE if error is None else TABLE_FAILED, result=result, error=error, ended_at=now)).rowcount
            if done:
                row = connection.execute(sa.select(challenges).where(challenges.c.id == challenge_id)).one()
                sides = {side.id: side for side in connection.execute(
                    sa.select(versions.c.id, versions.c.number, bots.c.name, bots.c.author_id)
                    .select_from(versions.join(bots)).where(versions.c.id.in_([row.version_id, row.opponent_id])))}
                version, opponent = sides[row.version_id], sides[row.opponent_id]
                league = league_name(connection, row.league_id)
                for draft in challenge_notices(league, row.id, row.author_id, opponent.author_id,
                                               f"{version.name}-v{version.number}",
                                               f"{opponent.name}-v{opponent.number}", result, error):
                    record_notice(connection, row.league_id, draft, now)
        return self.challenge(challenge_id)

    def _update_challenge(self, challenge_id: int, states: Sequence[str], **values: Any) -> ChallengeRow:
        with self.engine.begin() as connection:
            connection.execute(sa.update(challenges).where(challenges.c.id == challenge_id,
                                                           challenges.c.state.in_(states)).values(**values))
        return self.challenge(challenge_id)

    def _challenges_where(self, *where: Any) -> list[ChallengeRow]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(challenges).where(*where).order_by(challenges.c.id)).all()
        return [ChallengeRow(row.id, row.league_id, row.author_id, row.version_id, row.opponent_id, row.deal_sets,
                             row.state, row.result, row.error, aware_utc(row.created_at), aware_utc(row.started_at),
                             aware_utc(row.ended_at)) for row in rows]
