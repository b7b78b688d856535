"""The teams' webhooks: one trio task per league posts each pending delivery (a notice to a team's webhook, queued
with the notice in the database) as JSON, signed, and retries a failed one later.

- **What is posted**: the notice as JSON (:func:`payload`), with ``X-Arena-Timestamp`` (Unix seconds) and
  ``X-Arena-Signature: sha256=<hex>``, the HMAC-SHA256 keyed by the webhook's secret of the timestamp, a dot and
  the body (:func:`arena.league.rules.notices.signature`); ``X-Arena-Event`` (the notice's kind) and
  ``X-Arena-Delivery`` (the notice's id: a receiver that sees it twice drops the second).
- **Where**: the webhook's host is resolved at every try and refused unless each address is public (the league
  file may allow others, ``[notices] allow_private_webhooks``), and the request goes to that address, the host
  named in ``Host:`` and in TLS's SNI (its certificate is checked against the host): a name that resolved to a
  public address when the webhook was set and to a private one later (DNS rebinding) is refused then too.
- **How**: one try at a time per league, each within ``[notices] timeout_s``, never following a redirect; a 2xx
  answer delivers it; anything else is tried again after ``retry_s``, twice as long each time
  (:func:`arena.league.rules.notices.retry_delay`), until ``attempts`` tries, then given up. The state is in the
  database (``deliveries``), so a restarted server resumes the pending ones. The task only reads and writes its
  own rows between tries: the league's own work never waits for a receiver.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import trio

from arena.league.clock import utc_now
from arena.league.intake.pipeline import Served
from arena.league.rules.config import NoticeSettings
from arena.league.rules.errors import LeagueError
from arena.league.rules.model import Delivery, Notice
from arena.league.rules.notices import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    address_problem,
    retry_delay,
    signature,
    url_problem,
)
from arena.league.storage.db import AsyncDatabase, Database

POLL_S = 1.0
"""How often the task looks for deliveries that came due (a notice is queued by whichever call recorded it)."""
ERROR_CHARS = 300
USER_AGENT = "dominoes-arena-webhooks"


class WebhookRefused(LeagueError):
    """A webhook address the league will not post to (INVALID_ARGUMENT): nothing was stored."""


async def resolved(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to now (an address is itself), or a :class:`WebhookRefused`."""
    try:
        found = await trio.socket.getaddrinfo(host, port, type=trio.socket.SOCK_STREAM)
    except OSError as error:
        raise WebhookRefused(f"the webhook's host {host!r} cannot be resolved: {error}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


async def checked_url(url: str, settings: NoticeSettings) -> list[str]:
    """A webhook's URL checked as :func:`arena.league.rules.notices.url_problem` and
    :func:`~arena.league.rules.notices.address_problem` say, its host resolved now: the addresses to post to, or
    one :class:`WebhookRefused` line."""
    problem = url_problem(url, settings.allow_private_webhooks)
    if problem is not None:
        raise WebhookRefused(problem)
    host = urlsplit(url).hostname or ""
    addresses = await resolved(host, _port(url))
    problem = address_problem(host, addresses, settings.allow_private_webhooks)
    if problem is not None:
        raise WebhookRefused(problem)
    return addresses


def payload(notice: Notice, league: str, team: str | None) -> bytes:
    """What a delivery posts: the notice as JSON (``link`` is the page's path on the server's dashboard)."""
    return json.dumps({"id": notice.uid, "league": league, "team": team, "kind": notice.kind,
                       "title": notice.title, "text": notice.text, "link": notice.link,
                       "at": notice.at.isoformat()}, ensure_ascii=False).encode()


def pinned(url: str, address: str) -> str:
    """The URL with its host replaced by the address it was resolved to (an IPv6 one in brackets)."""
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


async def post(url: str, secret: str, body: bytes, event: str, delivery: str, settings: NoticeSettings) -> None:
    """One try: the host resolved and checked again, the signed body posted to the first address; a
    :class:`LeagueError` line when it was refused, failed or not answered with a 2xx."""
    addresses = await checked_url(url, settings)
    parts = urlsplit(url)
    stamp = str(int(time.time()))
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "Host": parts.netloc.rsplit("@", 1)[-1],
               TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: signature(secret, stamp, body), EVENT_HEADER: event,
               DELIVERY_HEADER: delivery}
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    try:
        async with httpx.AsyncClient(timeout=settings.timeout_s, follow_redirects=False, trust_env=False) as client:
            with trio.fail_after(settings.timeout_s + 1):
                answer = await client.post(pinned(url, addresses[0]), content=body, headers=headers,
                                           extensions=extensions)
    except (httpx.HTTPError, trio.TooSlowError, OSError) as error:
        raise LeagueError(f"{type(error).__name__}: {error}"[:ERROR_CHARS]) from None
    if not 200 <= answer.status_code < 300:
        raise LeagueError(f"answered {answer.status_code} {answer.reason_phrase}"[:ERROR_CHARS])


class Webhooks:
    """One league's deliveries on the trio loop: :meth:`run` until cancelled; :meth:`wake` when a notice may have
    been queued."""

    def __init__(self, database: AsyncDatabase, served: Served, log: Any) -> None:
        self.database = database
        self.served = served
        self.log = log
        self._wake = trio.Event()

    @property
    def settings(self) -> NoticeSettings:
        return self.served.config.notices

    def wake(self) -> None:
        self._wake.set()

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        league_id = self.served.league_id
        task_status.started()
        while True:
            self._wake = trio.Event()
            for delivery in await self.database.run(Database.due_deliveries, league_id, utc_now()):
                await self.deliver(delivery)
            due = await self.database.run(Database.next_delivery_at, league_id)
            wait = POLL_S if due is None else max(0.0, min(POLL_S, (due - utc_now()).total_seconds()))
            with trio.move_on_after(wait):
                await self._wake.wait()

    async def deliver(self, delivery: Delivery) -> Delivery:
        """One try of a pending delivery, and its outcome written."""
        webhook = await self.database.run(Database.webhook, delivery.league_id, delivery.author_id)
        if webhook is None:  # cleared meanwhile: its pending deliveries were dropped with it
            return delivery
        notice = await self.database.run(Database.notice, delivery.notice_id)
        team = None
        if notice.author_id is not None:
            team = (await self.database.run(Database.author_by_id, notice.author_id)).name
        body = payload(notice, self.served.config.name, team)
        try:
            await post(webhook.url, webhook.secret, body, notice.kind, notice.uid, self.settings)
        except LeagueError as error:
            tried = delivery.attempts + 1
            later = None if tried >= self.settings.attempts else utc_now() + timedelta(
                seconds=retry_delay(tried, self.settings.retry_s))
            self.log.warning("webhook_failed", league=self.served.config.name, delivery=delivery.id, try_=tried,
                             error=str(error), retry=later.isoformat() if later else "given up")
            return await self.database.run(Database.delivery_tried, delivery.id, str(error), later)
        self.log.info("webhook_delivered", league=self.served.config.name, delivery=delivery.id)
        return await self.database.run(Database.delivery_tried, delivery.id, None, None)
