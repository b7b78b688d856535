"""The notices' rows: what the league told (:mod:`arena.league.rules.notices` says what), each team's feed token,
its webhooks and the deliveries to them.

A notice is recorded by :func:`record_notice` inside the transaction of the change it tells (a version's new state
in ``versions.py``, a challenge's end in ``challenges.py``, the freeze and the finals in ``finals.py``), with a
delivery queued for each webhook that should receive it: a crash loses no notice of a change that committed, and
records none of a change that did not. :meth:`NoticesGateway.phase_changed` records the league's new phase, for
the code that changes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.clock import utc_now
from arena.league.rules.errors import NotFound
from arena.league.rules.model import (
    DELIVERED,
    DELIVERY_FAILED,
    DROPPED,
    PENDING_DELIVERY,
    Delivery,
    Notice,
    Webhook,
)
from arena.league.rules.notices import (
    FEED_ENTRIES,
    FINALS_KIND,
    MAX_QUEUED,
    PHASE_KIND,
    NoticeDraft,
    finals_notice,
    finals_published_title,
    phase_notice,
    phase_title,
)
from arena.league.storage.gateway import Gateway, aware_utc
from arena.league.storage.tables import deliveries, feed_tokens, freezes, leagues, notices, webhooks


def league_name(connection: Connection, league_id: int) -> str:
    name = connection.execute(sa.select(leagues.c.name).where(leagues.c.id == league_id)).scalar_one_or_none()
    if name is None:
        raise NotFound(f"no league number {league_id}")
    return str(name)


def record_notice(connection: Connection, league_id: int, draft: NoticeDraft, at: datetime | None = None) -> int:
    """Record a notice in the caller's transaction, and queue its delivery to each webhook that should get it (its
    team's in the league; every team's of the league for a public one): pending, or dropped when the team has
    :data:`MAX_QUEUED` pending already. The notice's id."""
    at = at or utc_now()
    notice_id = int(connection.execute(sa.insert(notices).values(
        uid=str(uuid.uuid4()), league_id=league_id, author_id=draft.team_id, kind=draft.kind, title=draft.title,
        text=draft.text, link=draft.link, at=at).returning(notices.c.id)).scalar_one())
    targets = sa.select(webhooks.c.author_id).where(webhooks.c.league_id == league_id)
    if draft.team_id is not None:
        targets = targets.where(webhooks.c.author_id == draft.team_id)
    for author_id in connection.execute(targets).scalars().all():
        queued = connection.execute(sa.select(sa.func.count()).select_from(deliveries).where(
            deliveries.c.author_id == author_id, deliveries.c.state == PENDING_DELIVERY)).scalar_one()
        full = queued >= MAX_QUEUED
        connection.execute(sa.insert(deliveries).values(
            notice_id=notice_id, league_id=league_id, author_id=author_id,
            state=DROPPED if full else PENDING_DELIVERY, attempts=0, next_at=at,
            error=f"the team's webhook had {MAX_QUEUED} deliveries waiting already" if full else None,
            ended_at=at if full else None))
    return notice_id


def record_phase(connection: Connection, league_id: int, phase: str, at: datetime | None = None) -> int:
    """The league's new phase told to everyone, in the caller's transaction (with the change of phase)."""
    return record_notice(connection, league_id, phase_notice(league_name(connection, league_id), phase), at)


def _told(connection: Connection, league_id: int, kind: str, title: str) -> bool:
    """Whether the league has a public notice of this kind and title."""
    found = connection.execute(sa.select(notices.c.id).where(
        notices.c.league_id == league_id, notices.c.author_id.is_(None), notices.c.kind == kind,
        notices.c.title == title).limit(1)).first()
    return found is not None


class NoticesGateway(Gateway):
    """The calls on the ``notices``, ``feed_tokens``, ``webhooks`` and ``deliveries`` tables."""

    def phase_changed(self, league_id: int, phase: str, at: datetime | None = None) -> Notice:
        """Tell everyone that the league entered ``phase`` (at ``at``, default now): a public notice, delivered to
        every webhook of the league. For a change of phase written elsewhere; inside a transaction of its own,
        :func:`record_phase` takes the caller's connection."""
        with self.engine.begin() as connection:
            notice_id = record_phase(connection, league_id, phase, at)
        return self.notice(notice_id)

    def phase_changed_once(self, league_id: int, phase: str) -> bool:
        """Tell everyone that the league entered ``phase``, unless a notice said so already (a timeline's step seen
        again by a restarted server); whether it was told now."""
        with self.engine.begin() as connection:
            if _told(connection, league_id, PHASE_KIND, phase_title(league_name(connection, league_id), phase)):
                return False
            record_phase(connection, league_id, phase)
        return True

    def publish_finals(self, league_id: int) -> bool:
        """Tell everyone the finals' ranking, once, when the timeline publishes it (their end told only that they
        were over); whether it was told now (not before the finals are done, nor twice)."""
        with self.engine.begin() as connection:
            league = league_name(connection, league_id)
            finals = connection.execute(sa.select(freezes.c.finals).where(freezes.c.league_id == league_id)
                                        ).scalar_one_or_none()
            if not finals or finals.get("state") != "done" or _told(connection, league_id, FINALS_KIND,
                                                                    finals_published_title(league)):
                return False
            record_notice(connection, league_id, finals_notice(league, finals))
        return True

    def notice(self, notice_id: int) -> Notice:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(notices).where(notices.c.id == notice_id)).one_or_none()
        if row is None:
            raise NotFound(f"no notice number {notice_id}")
        return notice_of(row)

    def notices_of(self, league_id: int, author_id: int | None = None, limit: int = FEED_ENTRIES) -> list[Notice]:
        """The league's newest notices, newest first (at most ``limit``): the public ones, and one team's own when
        ``author_id`` is given (never another team's)."""
        mine: sa.ColumnElement[bool] = notices.c.author_id.is_(None)
        if author_id is not None:
            mine = sa.or_(mine, notices.c.author_id == author_id)
        query = (sa.select(notices).where(notices.c.league_id == league_id, mine)
                 .order_by(notices.c.id.desc()).limit(limit))
        with self.engine.connect() as connection:
            return [notice_of(row) for row in connection.execute(query).all()]

    # the feed's token

    def feed_token(self, author_id: int, new: str | None = None) -> str:
        """The team's feed token: ``new`` replaces it (the old address stops working); without ``new``, the token
        it has (a :class:`NotFound` when it has none yet)."""
        with self.engine.begin() as connection:
            if new is not None:
                connection.execute(sa.delete(feed_tokens).where(feed_tokens.c.author_id == author_id))
                connection.execute(sa.insert(feed_tokens).values(author_id=author_id, token=new,
                                                                 created_at=utc_now()))
                return new
            token = connection.execute(sa.select(feed_tokens.c.token)
                                       .where(feed_tokens.c.author_id == author_id)).scalar_one_or_none()
        if token is None:
            raise NotFound(f"team number {author_id} has no feed token yet")
        return str(token)

    def feed_holder(self, token: str) -> int | None:
        """The team whose feed token is ``token``, or None."""
        with self.engine.connect() as connection:
            found = connection.execute(sa.select(feed_tokens.c.author_id)
                                       .where(feed_tokens.c.token == token)).scalar_one_or_none()
        return None if found is None else int(found)

    # webhooks and their deliveries

    def set_webhook(self, league_id: int, author_id: int, url: str, secret: str) -> Webhook:
        """The team's webhook in the league (a new one replaces the old, its pending deliveries going to the new
        address, signed with the new secret)."""
        with self.engine.begin() as connection:
            connection.execute(sa.delete(webhooks).where(webhooks.c.league_id == league_id,
                                                         webhooks.c.author_id == author_id))
            connection.execute(sa.insert(webhooks).values(league_id=league_id, author_id=author_id, url=url,
                                                          secret=secret, created_at=utc_now()))
        found = self.webhook(league_id, author_id)
        assert found is not None
        return found

    def clear_webhook(self, league_id: int, author_id: int) -> bool:
        """Remove the team's webhook in the league (its pending deliveries are dropped); whether it had one."""
        now = utc_now()
        with self.engine.begin() as connection:
            done = connection.execute(sa.delete(webhooks).where(webhooks.c.league_id == league_id,
                                                                webhooks.c.author_id == author_id)).rowcount
            connection.execute(sa.update(deliveries).where(
                deliveries.c.league_id == league_id, deliveries.c.author_id == author_id,
                deliveries.c.state == PENDING_DELIVERY).values(state=DROPPED, error="the webhook was cleared",
                                                               ended_at=now))
        return bool(done)

    def webhook(self, league_id: int, author_id: int) -> Webhook | None:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(webhooks).where(webhooks.c.league_id == league_id,
                                                               webhooks.c.author_id == author_id)).one_or_none()
        return None if row is None else Webhook(row.league_id, row.author_id, row.url, row.secret,
                                                aware_utc(row.created_at))

    def due_deliveries(self, league_id: int, now: datetime, limit: int = 20) -> list[Delivery]:
        """The league's pending deliveries due by ``now``, the oldest first."""
        query = (sa.select(deliveries).where(deliveries.c.league_id == league_id,
                                             deliveries.c.state == PENDING_DELIVERY, deliveries.c.next_at <= now)
                 .order_by(deliveries.c.next_at, deliveries.c.id).limit(limit))
        with self.engine.connect() as connection:
            return [delivery_of(row) for row in connection.execute(query).all()]

    def next_delivery_at(self, league_id: int) -> datetime | None:
        """When the league's next pending delivery is due (None: none is pending)."""
        query = sa.select(sa.func.min(deliveries.c.next_at)).where(deliveries.c.league_id == league_id,
                                                                  deliveries.c.state == PENDING_DELIVERY)
        with self.engine.connect() as connection:
            return aware_utc(connection.execute(query).scalar_one_or_none())

    def deliveries_of(self, author_id: int, states: Sequence[str] | None = None) -> list[Delivery]:
        """A team's deliveries (in these states), oldest first."""
        query = sa.select(deliveries).where(deliveries.c.author_id == author_id).order_by(deliveries.c.id)
        if states is not None:
            query = query.where(deliveries.c.state.in_(states))
        with self.engine.connect() as connection:
            return [delivery_of(row) for row in connection.execute(query).all()]

    def delivery_tried(self, delivery_id: int, error: str | None, next_at: datetime | None) -> Delivery:
        """One try of a pending delivery: delivered (``error`` None), to be tried again at ``next_at``, or given up
        (``next_at`` None); a delivery no longer pending (its webhook cleared meanwhile) stays as it is."""
        now = utc_now()
        if error is None:
            values = {"state": DELIVERED, "error": None, "ended_at": now}
        elif next_at is None:
            values = {"state": DELIVERY_FAILED, "error": error, "ended_at": now}
        else:
            values = {"error": error, "next_at": next_at}
        with self.engine.begin() as connection:
            connection.execute(sa.update(deliveries).where(deliveries.c.id == delivery_id,
                                                           deliveries.c.state == PENDING_DELIVERY)
                               .values(attempts=deliveries.c.attempts + 1, **values))
            row = connection.execute(sa.select(deliveries).where(deliveries.c.id == delivery_id)).one()
        return delivery_of(row)


def notice_of(row: sa.Row) -> Notice:  # type: ignore[type-arg]
    return Notice(row.id, row.uid, row.league_id, row.author_id, row.kind, row.title, row.text, row.link,
                  aware_utc(row.at))


def delivery_of(row: sa.Row) -> Delivery:  # type: ignore[type-arg]
    return Delivery(row.id, row.notice_id, row.league_id, row.author_id, row.state, row.attempts,
                    aware_utc(row.next_at), row.error)
