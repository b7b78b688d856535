"""The league's notices as Atom feeds (RFC 4287): the public feed of a league (its public notices only) and a
team's private feed (its own notices and the public ones), each the newest :data:`FEED_ENTRIES`, newest first.

A feed's ``id`` is a ``urn:uuid:`` made from the league's name (and the team's id for a private feed), so it stays
the same when the team's feed token is replaced; an entry's is its notice's own ``uid``. Links are absolute, made
from the address the request came to.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime

from arena.league.rules.model import Notice
from arena.league.rules.notices import FEED_ENTRIES

ATOM = "http://www.w3.org/2005/Atom"
CONTENT_TYPE = "application/atom+xml; charset=utf-8"
FEEDS = uuid.UUID("7f0e4bd4-5d36-4c1e-9a8e-3f6d0c2f1b77")
"""The namespace of the feeds' ids (uuid5 of a league's, or a team's, name in it)."""


def feed_id(league: str, team_id: int | None = None) -> str:
    name = f"league/{league}" if team_id is None else f"league/{league}/team/{team_id}"
    return f"urn:uuid:{uuid.uuid5(FEEDS, name)}"


def _stamp(moment: datetime) -> str:
    """An RFC 3339 date-time in UTC, as Atom's ``updated`` takes it."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def atom(*, id_: str, title: str, author: str, self_url: str, base: str, notices: Sequence[Notice],
         now: datetime) -> bytes:
    """The feed's XML: its id, title, author, ``updated`` (its newest entry's, ``now`` when it has none), its own
    address, and an entry per notice (id, title, updated, the page it concerns, its text)."""
    ET.register_namespace("", ATOM)

    def sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attributes)
        if text is not None:
            element.text = text
        return element

    shown = list(notices)[:FEED_ENTRIES]
    feed = ET.Element(f"{{{ATOM}}}feed")
    sub(feed, "id", id_)
    sub(feed, "title", title)
    sub(feed, "updated", _stamp(shown[0].at if shown else now))
    sub(sub(feed, "author"), "name", author)
    sub(feed, "link", rel="self", type="application/atom+xml", href=self_url)
    sub(feed, "generator", "dominoes-arena")
    for notice in shown:
        entry = sub(feed, "entry")
        sub(entry, "id", f"urn:uuid:{notice.uid}")
        sub(entry, "title", notice.title)
        sub(entry, "updated", _stamp(notice.at))
        sub(entry, "link", rel="alternate", type="text/html", href=base + notice.link)
        sub(entry, "category", term=notice.kind)
        sub(entry, "content", notice.text, type="text")
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + bytes(ET.tostring(feed, encoding="utf-8"))
