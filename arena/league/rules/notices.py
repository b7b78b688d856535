"""What a notice says, pure: the short messages that tell a team what happened to its versions and challenges, and
everyone what happened to the league, without polling; how a webhook's delivery is signed; which webhook addresses
are refused; and when a failed delivery is tried again.

A notice is for one team (``team_id``) or public (``None``). A team's notice says only what its members may read
today through the league's own calls: a failed version's reason and the last lines of its build log (its author
reads the whole log with ``arena league log``), the verdict of its own challenge. A version beaten in a challenge is
told to its team without naming the challenger (a challenge is its asker's business). Public notices say what the
league's public pages show (the freeze, the phase, the finals' ranking).

The database (:mod:`arena.league.storage.notices`) records a notice in the transaction of the change it tells.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from arena.league.rules.lifecycle import FAILED, READY, SUSPENDED
from arena.league.rules.verdict import BETTER, verdict_of

READY_KIND, FAILED_KIND, SUSPENDED_KIND = "ready", "failed", "suspended"
BEATEN_KIND, CHALLENGE_KIND, FINALS_KIND, PHASE_KIND = "beaten", "challenge", "finals", "phase"
KINDS = (READY_KIND, FAILED_KIND, SUSPENDED_KIND, BEATEN_KIND, CHALLENGE_KIND, FINALS_KIND, PHASE_KIND)
"""What a notice may tell: a version ready, failed or suspended; a team's version beaten in a challenge; a team's
challenge ended (its verdict, or why it failed); the finals published; the league's phase changed."""

LOG_LINES = 20
"""The build log's last lines a failed version's notice quotes."""
LOG_CHARS = 4000
"""And at most this many of their characters (a build may write very long lines)."""
TITLE_CHARS = 200
TEXT_CHARS = 8000
FEED_ENTRIES = 100
"""The newest notices a feed shows."""
MAX_QUEUED = 100
"""Deliveries waiting for one team's webhook at most; a notice past it is not delivered to the webhook (its
delivery is recorded as dropped), the feed still shows it."""
PHASE_NAME_CHARS = 32

SIGNATURE_HEADER = "X-Arena-Signature"
TIMESTAMP_HEADER = "X-Arena-Timestamp"
EVENT_HEADER = "X-Arena-Event"
DELIVERY_HEADER = "X-Arena-Delivery"


@dataclass(frozen=True)
class NoticeDraft:
    """A notice before it is recorded: for whom (a team's id, None for everyone), what kind, a short title, a text,
    and the path of the dashboard page it concerns (``/leagues/NAME/...``)."""

    team_id: int | None
    kind: str
    title: str
    text: str
    link: str


def league_path(league: str, *parts: str | int) -> str:
    """A page of the league's dashboard, its names quoted: ``/leagues/NAME/PART/...``."""
    return "/".join([f"/leagues/{quote(league, safe='')}", *(quote(str(part), safe="") for part in parts)])


def log_tail(text: str | None, lines: int = LOG_LINES, chars: int = LOG_CHARS) -> str:
    """The last ``lines`` lines of a log (blank ones at its end dropped), at most its last ``chars`` characters."""
    kept = (text or "").rstrip().splitlines()[-lines:]
    tail = "\n".join(kept)
    return tail if len(tail) <= chars else "…" + tail[-(chars - 1):]


def _draft(team_id: int | None, kind: str, title: str, text: str, link: str) -> NoticeDraft:
    title = title if len(title) <= TITLE_CHARS else title[:TITLE_CHARS - 1] + "…"
    text = text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS - 1] + "…"
    return NoticeDraft(team_id, kind, title, text, link)


def version_notice(league: str, team_id: int, bot: str, number: int, version_id: int, before: str, state: str,
                   reason: str | None, build_log: str | None) -> NoticeDraft | None:
    """The team's notice of its version's move from ``before`` to ``state``: ready (or ready again, reinstated),
    failed (its reason, and its build log's last lines when the build failed), suspended (its reason); None for
    the other states, which tell nothing a team waits for."""
    name = f"{bot}-v{number}"
    if state == READY:
        again = before == SUSPENDED
        return _draft(team_id, READY_KIND, f"{name} is ready{' again' if again else ''}",
                      f"Version {version_id} ({name}) of league {league} "
                      + ("was reinstated by the operator and plays again on the ladder." if again else
                         "passed its build and check: it is its bot's active version and plays on the ladder."),
                      league_path(league, "bots", bot))
    if state == FAILED:
        text = f"Version {version_id} ({name}) of league {league} failed: {reason or 'no reason given'}."
        tail = log_tail(build_log)
        if tail:
            text += f"\n\nThe build log's last lines:\n{tail}"
        return _draft(team_id, FAILED_KIND, f"{name} failed", text, league_path(league, "versions", version_id, "log"))
    if state == SUSPENDED:
        return _draft(team_id, SUSPENDED_KIND, f"{name} is suspended",
                      f"Version {version_id} ({name}) of league {league} was suspended: {reason or 'no reason given'}."
                      f" It plays no more until the operator reinstates it.", league_path(league, "mine"))
    return None


def challenge_notices(league: str, challenge_id: int, challenger_team: int | None, opponent_team: int,
                      version: str, opponent: str, result: Mapping[str, Any] | None,
                      error: str | None) -> list[NoticeDraft]:
    """The notices of a challenge that ended: its asker's team is told the verdict (or why it failed); the
    opponent's team, when its version was beaten (the verdict ``better``) and it is another team, is told so
    without the challenger's name. An operator's challenge (no team asked) tells only the beaten team."""
    drafts = []
    if error is not None or result is None:
        if challenger_team is not None:
            drafts.append(_draft(challenger_team, CHALLENGE_KIND, f"challenge {challenge_id} failed",
                                 f"Challenge {challenge_id} of league {league} ({version} against {opponent}) "
                                 f"failed: {error or 'no result'}.", league_path(league, "mine")))
        return drafts
    said = verdict_of(result["sprt"]) if isinstance(result.get("sprt"), Mapping) else None
    outcome, line = (said.outcome, said.line) if said is not None else ("ended", "no verdict")
    if challenger_team is not None:
        drafts.append(_draft(challenger_team, CHALLENGE_KIND, f"challenge {challenge_id}: {version} {outcome}",
                             f"Challenge {challenge_id} of league {league}, {version} against {opponent}: "
                             f"{line}. {result.get('verdict', '')}".rstrip(), league_path(league, "mine")))
    if said is not None and said.outcome == BETTER and opponent_team != challenger_team:
        drafts.append(_draft(opponent_team, BEATEN_KIND, f"{opponent} was beaten in a challenge",
                             f"Your version {opponent} of league {league} was beaten in a challenge: the "
                             f"challenger was {said.line}.", league_path(league, "mine")))
    return drafts


def finals_published_title(league: str) -> str:
    """The title of the notice that publishes the finals' ranking (there is one per league, at most)."""
    return f"the finals of {league} are published"


def finals_notice(league: str, finals: Mapping[str, Any], names: Mapping[int, str] | None = None,
                  published_at: str | None = None) -> NoticeDraft:
    """The public notice of finals that ended: published (their first places), or over with their ranking withheld
    until ``published_at`` (the timeline's ``results``: it names no place), or not played (never why: the reason may
    name a team's bot problem)."""
    link = league_path(league, "finals")
    if finals.get("state") != "done":
        return _draft(None, FINALS_KIND, f"the finals of {league} could not be played",
                      f"The finals of league {league} ended without a ranking; the operator was told why.", link)
    if published_at:
        return _draft(None, FINALS_KIND, f"the finals of {league} are over",
                      f"The finals of league {league} are over; their ranking is published at {published_at}.", link)
    ranking: Sequence[Mapping[str, Any]] = finals.get("ranking") or ()
    top = [f"{row['rank']}. {row['version']}" for row in ranking[:3]]
    text = f"The finals of league {league} are over and their ranking is published"
    more = f" and {len(ranking) - 3} more" if len(ranking) > 3 else ""
    text += (": " + ", ".join(top) + more + ".") if top else "."
    return _draft(None, FINALS_KIND, finals_published_title(league), text, link)


OPEN_PHASE, FROZEN_PHASE, FINALS_PHASE, ENDED_PHASE = "open", "frozen", "finals", "ended"
PHASES = {OPEN_PHASE: "is open: its ladder plays",
          FROZEN_PHASE: "is frozen for its finals: the ladder and the challenges stop",
          FINALS_PHASE: "is playing its finals",
          ENDED_PHASE: "has ended: its finals are over"}
"""How a phase is told; another phase's name is told as it is."""


def check_phase(phase: str) -> str:
    if not phase or len(phase) > PHASE_NAME_CHARS or not all(c.isalnum() or c in "-_ " for c in phase):
        raise ValueError(f"a phase is 1 to {PHASE_NAME_CHARS} letters, digits, '-', '_' or spaces, got {phase!r}")
    return phase


def phase_title(league: str, phase: str) -> str:
    return f"{league}: {phase}"


def phase_notice(league: str, phase: str) -> NoticeDraft:
    """The public notice of the league's new phase."""
    said = PHASES.get(check_phase(phase), f"entered its phase {phase!r}")
    return _draft(None, PHASE_KIND, phase_title(league, phase), f"League {league} {said}.", league_path(league))


# --- webhooks --------------------------------------------------------------------------------------------------------


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Arena-Signature`` of a delivery: ``sha256=`` and the hex HMAC-SHA256, keyed by the webhook's secret,
    of the timestamp (``X-Arena-Timestamp``, Unix seconds), a dot and the body. A receiver computes it again, and
    refuses a timestamp too old (a replay)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={mac}"


def signature_matches(secret: str, timestamp: str, body: bytes, given: str) -> bool:
    return hmac.compare_digest(signature(secret, timestamp, body), given)


MAX_URL_CHARS = 2000


def url_problem(url: str, allow_private: bool) -> str | None:
    """What is wrong with a webhook's address before its host is resolved, in one line; None when nothing is.
    Only ``https://`` (``http://`` too when the league allows private webhooks), a host, no user or password."""
    if len(url) > MAX_URL_CHARS:
        return f"a webhook's URL has at most {MAX_URL_CHARS} characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"cannot read the URL {url[:100]!r}: {error}"
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in schemes:
        return (f"a webhook's URL must start with https:// (got {parts.scheme or 'no'} scheme)"
                + ("" if allow_private else "; plain http is allowed only with [notices] allow_private_webhooks"))
    if not parts.hostname:
        return "a webhook's URL must name a host"
    if parts.username is not None or parts.password is not None:
        return "a webhook's URL may not carry a user or password"
    if port == 0:
        return "a webhook's URL may not name port 0"
    return None


def address_problem(host: str, addresses: Sequence[str], allow_private: bool) -> str | None:
    """Why a webhook's host may not be posted to, given the addresses it resolves to, in one line; None when every
    one is a public address (or private ones are allowed). Refused: loopback, private, link-local, shared, reserved,
    multicast and unspecified addresses, and an IPv4 address mapped into IPv6 that is one of them."""
    if not addresses:
        return f"the webhook's host {host!r} resolves to no address"
    if allow_private:
        return None
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        mapped = getattr(address, "ipv4_mapped", None)
        if mapped is not None:
            address = mapped
        if not address.is_global or address.is_multicast:
            return (f"the webhook's host {host!r} resolves to {address}, {kind_of(address)}: a webhook must reach a "
                    f"public address (a league file may allow others: [notices] allow_private_webhooks)")
    return None


def kind_of(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    return "not a public address"


def retry_delay(attempts: int, first_s: float) -> float:
    """The wait before the next try of a delivery that failed ``attempts`` times: ``first_s``, doubling each time,
    at most an hour."""
    return min(3600.0, first_s * float(2 ** max(0, attempts - 1)))


__all__ = ["KINDS", "NoticeDraft", "version_notice", "challenge_notices", "finals_notice", "phase_notice",
           "signature", "signature_matches", "url_problem", "address_problem", "retry_delay", "log_tail",
           "league_path"]
