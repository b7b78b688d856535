"""The notices' test helpers: a local HTTP receiver of webhooks (:class:`Receiver`), a feed read and checked as
Atom (:func:`feed`, :func:`titles`) and a delivery's signature verified as a receiver would (:func:`checked`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from support.web import http

ATOM = "{http://www.w3.org/2005/Atom}"


class Receiver:
    """A local HTTP receiver of webhooks: it records each request (headers, body) and answers 500 to the first
    ``failures`` ones, 204 to the others."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    failing = len(receiver.requests) <= receiver.failures
                self.send_response(500 if failing else 204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def got(self) -> list[tuple[dict[str, str], bytes]]:
        with self.lock:
            return list(self.requests)

    def events(self) -> list[dict[str, Any]]:
        """The bodies of the requests it answered 204 to."""
        return [json.loads(body) for _, body in self.got()[self.failures:]]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def feed(url: str) -> list[dict[str, str]]:
    """A feed's entries, after checking it is Atom as RFC 4287 asks: the feed's id, title, updated and author, and
    each entry's id, title, updated, link and content."""
    code, headers, body = http(url)
    assert code == 200, body[:300]
    assert headers["content-type"] == "application/atom+xml; charset=utf-8"
    root = ET.fromstring(body)
    assert root.tag == f"{ATOM}feed"
    for tag in ("id", "title", "updated", "author"):
        assert root.find(f"{ATOM}{tag}") is not None, tag
    assert root.find(f"{ATOM}id").text.startswith("urn:uuid:")
    entries = []
    for entry in root.findall(f"{ATOM}entry"):
        found = {tag: entry.find(f"{ATOM}{tag}") for tag in ("id", "title", "updated", "link", "content")}
        assert all(element is not None for element in found.values()), ET.tostring(entry)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", found["updated"].text)
        assert found["link"].get("href").startswith("http://127.0.0.1:")
        entries.append({"id": found["id"].text, "title": found["title"].text, "content": found["content"].text,
                        "link": found["link"].get("href"), "updated": found["updated"].text})
    assert [e["updated"] for e in entries] == sorted((e["updated"] for e in entries), reverse=True)  # newest first
    return entries


def titles(url: str) -> list[str]:
    return [entry["title"] for entry in feed(url)]


def checked(secret: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """A delivery verified as a receiver would: its HMAC-SHA256 over the timestamp, a dot and the body, with the
    webhook's secret, and a recent timestamp."""
    stamp = headers["x-arena-timestamp"]
    expected = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-arena-signature"], f"sha256={expected}")
    assert abs(time.time() - int(stamp)) < 300
    event = json.loads(body)
    assert headers["x-arena-event"] == event["kind"] and headers["x-arena-delivery"] == event["id"]
    return event
