"""Sign-ups, invite codes and the audit log: a team's sign-up checked against the league's ``[signup]`` rules
(:mod:`arena.league.rules.teams`) and written in one transaction (the team, its captain, the invite's use), so a
refused sign-up writes nothing; the operator's invite codes (only their hashes); and who did what."""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa

from arena.league.clock import utc_now
from arena.league.rules.config import SignupSettings
from arena.league.rules.model import AuditEntry, Author, Invite
from arena.league.rules.teams import (
    SIGNUP_WINDOW,
    check_invite_terms,
    require_free,
    require_invite,
    require_open,
    require_rate,
    require_room,
    state_after_signup,
)
from arena.league.storage.authors import author_of, insert_team, taken_name
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.tables import audit, authors, invites

AUDIT_SHOWN = 200
"""The newest entries an audit listing gives at most."""


class TeamsGateway(Gateway):
    """The calls on sign-ups, the ``invites`` and the ``audit`` tables."""

    def sign_up(self, league_id: int, league: str, settings: SignupSettings, name: str, captain: str,
                token_hash: str, address: str, code_hash: str | None, now: datetime | None = None) -> Author:
        """A new team of the league, signed up by itself, with its captain; refused (nothing written) by the first
        rule of :mod:`arena.league.rules.teams` it breaks."""
        now = now or utc_now()
        since = now - SIGNUP_WINDOW
        signed_up = sa.select(sa.func.count()).select_from(authors).where(authors.c.league_id == league_id)
        with self.engine.begin() as connection:
            require_open(settings, league)
            from_address = connection.execute(signed_up.where(authors.c.signup_address == address,
                                                              authors.c.created_at > since)).scalar_one()
            to_league = connection.execute(signed_up.where(authors.c.created_at > since)).scalar_one()
            require_rate(settings, league, from_address, to_league)
            require_room(settings, league, connection.execute(signed_up).scalar_one())
            invite = None
            if code_hash is not None:
                row = connection.execute(sa.select(invites).where(invites.c.code_hash == code_hash,
                                                                  invites.c.league_id == league_id)).one_or_none()
                invite = None if row is None else invite_of(row)
            require_invite(settings, league, invite, code_hash is not None, now)
            require_free(name, taken_name(connection, name), prefix="sign-up refused: ")
            if settings.mode == "invite" and invite is not None:
                done = connection.execute(sa.update(invites).where(invites.c.id == invite.id,
                                                                   invites.c.used < invites.c.uses)
                                          .values(used=invites.c.used + 1))
                assert done.rowcount == 1  # the single writer: nothing took the last use meanwhile
            author_id = insert_team(connection, name, token_hash, captain, now, state=state_after_signup(settings),
                                    league_id=league_id, address=address)
            row = connection.execute(sa.select(authors).where(authors.c.id == author_id)).one()
        return author_of(row)

    def add_invite(self, league_id: int, code_hash: str, uses: int, hours: int,
                   now: datetime | None = None) -> Invite:
        check_invite_terms(uses, hours)
        now = now or utc_now()
        with self.engine.begin() as connection:
            invite_id = connection.execute(sa.insert(invites).values(
                league_id=league_id, code_hash=code_hash, uses=uses, used=0, created_at=now,
                expires_at=now + timedelta(hours=hours)).returning(invites.c.id)).scalar_one()
            row = connection.execute(sa.select(invites).where(invites.c.id == invite_id)).one()
        return invite_of(row)

    def invites(self, league_id: int) -> list[Invite]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(invites).where(invites.c.league_id == league_id)
                                      .order_by(invites.c.id)).all()
        return [invite_of(row) for row in rows]

    def teams_of(self, league_id: int | None) -> list[Author]:
        """The teams that signed up through a league (every team with None), by name."""
        query = sa.select(authors).order_by(authors.c.name)
        if league_id is not None:
            query = query.where(authors.c.league_id == league_id)
        with self.engine.connect() as connection:
            return [author_of(row) for row in connection.execute(query).all()]

    def record_audit(self, league_id: int | None, author_id: int | None, member_id: int | None, actor: str,
                     action: str, detail: str) -> AuditEntry:
        with self.engine.begin() as connection:
            entry_id = connection.execute(sa.insert(audit).values(
                at=utc_now(), league_id=league_id, author_id=author_id, member_id=member_id, actor=actor,
                action=action, detail=detail).returning(audit.c.id)).scalar_one()
            row = connection.execute(sa.select(audit).where(audit.c.id == entry_id)).one()
        return audit_of(row)

    def audit(self, league_id: int | None = None, author_id: int | None = None,
              limit: int = AUDIT_SHOWN) -> list[AuditEntry]:
        """The newest entries (at most ``limit``), oldest first: of one league (with the teams' own business, which
        has no league) and of one team, when given."""
        query = sa.select(audit).order_by(audit.c.id.desc()).limit(limit)
        if league_id is not None:
            query = query.where(sa.or_(audit.c.league_id == league_id, audit.c.league_id.is_(None)))
        if author_id is not None:
            query = query.where(audit.c.author_id == author_id)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [audit_of(row) for row in reversed(rows)]


def invite_of(row: sa.Row) -> Invite:  # type: ignore[type-arg]
    return Invite(row.id, row.league_id, row.uses, row.used, aware_utc(row.created_at), aware_utc(row.expires_at))


def audit_of(row: sa.Row) -> AuditEntry:  # type: ignore[type-arg]
    return AuditEntry(row.id, aware_utc(row.at), row.league_id, row.author_id, row.actor, row.action, row.detail)
