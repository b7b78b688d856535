"""The webhooks' deliverer (arena/league/play/webhooks.py) on a real database and real sockets: a webhook whose
host resolves to a loopback address when it is tried (DNS rebinding: it was set while it resolved elsewhere) is
refused before any connection is made; a receiver that always fails is given up after the league's ``attempts``;
a delivered body is signed as the receiver checks it."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import socket
from pathlib import Path
from typing import Any

import trio

from arena.league.authors import create_author
from arena.league.intake.pipeline import Served
from arena.league.play.webhooks import Webhooks
from arena.league.rules.config import league_from_text
from arena.league.storage.db import AsyncDatabase, Database, open_database, sqlite_url

LEAGUE = 'name = "ladder"\nvariant = "draw"\n[notices]\ntimeout_s = 0.5\nretry_s = 0.01\nattempts = 2\n'


class Log:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **values: Any) -> None:
        self.events.append((event, values))

    warning = error = info


def deliverer(tmp_path: Path, text: str, url: str) -> tuple[Database, Webhooks, int]:
    """A league's database with a team whose webhook is ``url`` and one public notice queued for it."""
    database = open_database(sqlite_url(tmp_path))
    config = league_from_text(text)
    league = database.ensure_league(config.name, config.title, config.variant)
    author, _ = create_author(database, "ann")
    database.set_webhook(league.id, author.id, url, "s" * 43)
    database.phase_changed(league.id, "open")
    return database, Webhooks(AsyncDatabase(database), Served(config, league.id), Log()), author.id


async def test_a_host_resolving_to_loopback_when_tried_is_refused_before_connecting(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:  # stored as if it had resolved to a public address when it was set
        database, hooks, author_id = deliverer(tmp_path, LEAGUE, f"https://localhost:{port}/hook")
        (delivery,) = database.deliveries_of(author_id)
        tried = await hooks.deliver(delivery)
        assert (tried.state, tried.attempts) == ("pending", 1)
        assert tried.error is not None and tried.error.startswith("the webhook's host 'localhost' resolves to ")
        assert "a loopback address: a webhook must reach a public address" in tried.error
        try:
            listener.accept()
        except BlockingIOError:
            pass  # no connection was ever made
        else:
            raise AssertionError("the deliverer connected to a loopback address")
        database.close()
    finally:
        listener.close()


async def test_a_failing_receiver_is_given_up_after_the_attempts(tmp_path: Path) -> None:
    got: list[tuple[dict[str, str], bytes]] = []

    async def receiver(stream: trio.SocketStream) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive_some(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
        while len(body) < int(headers["Content-Length"]):
            body += await stream.receive_some(65536)
        got.append(({k.lower(): v for k, v in headers.items()}, body))
        await stream.send_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, receiver, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        text = LEAGUE.replace("[notices]\n", "[notices]\nallow_private_webhooks = true\n")
        database, hooks, author_id = deliverer(tmp_path, text, f"http://127.0.0.1:{port}/hook")
        (delivery,) = database.deliveries_of(author_id)
        first = await hooks.deliver(delivery)
        assert (first.state, first.attempts, first.error) == ("pending", 1, "answered 503 Service Unavailable")
        second = await hooks.deliver(first)
        assert (second.state, second.attempts) == ("failed", 2)  # [notices] attempts = 2
        assert database.due_deliveries(first.league_id, second.next_at) == []
        nursery.cancel_scope.cancel()
    assert len(got) == 2
    for headers, body in got:
        stamp = headers["x-arena-timestamp"]
        mac = hmac.new(b"s" * 43, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        assert headers["x-arena-signature"] == f"sha256={mac}"
        assert json.loads(body)["title"] == "ladder: open"
    database.close()
