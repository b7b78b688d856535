"""The league on the web: its leaderboard, its queue and its bots' pages, as JSON and as server-rendered HTML.

Everything here is public (a spectator sees it): the rows come from the league's own service
(:class:`arena.league.core.LeagueCore`'s ``standings``, ``queue`` and ``bot_page``, which the gRPC calls use too,
answered as :mod:`arena.league.views`' types), and this module only picks the fields it shows and renders them.
What it never shows is decided here, field by field: a version's build log, check report, archive hash and failure
reason (the author's business), the authors' tokens, and of a table being played anything beyond its sides and why
it was chosen (what GetLadderQueue shows).
The HTML pages hold their table in the page itself, so a page without JavaScript (a link preview, a plain
screenshot) still shows it.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from arena.display import count_text, names_text, ordinal
from arena.league.core import LeagueCore
from arena.league.play.pages import BotHistory, FinalsPage, RatingPoint, Tally
from arena.league.rules.config import shown_moment
from arena.league.rules.errors import LeagueError, NotFound, PermissionDenied, StateError, Unauthenticated
from arena.league.rules.rating import Z95, online_elo
from arena.league.views import (
    BotPage,
    BuildLog,
    ChallengeView,
    LadderQueue,
    Leaderboard,
    LeagueStatus,
    Standing,
    TableView,
    TeamView,
    VersionView,
)
from arena.web.access import Viewer
from arena.web.data import NotShown, axis_ticks
from arena.web.events import bracket_html, rounds_html, swiss_table_html
from arena.web.tables import Cell, escape, html_table

STATUS_OF: tuple[tuple[type[LeagueError], int], ...] = (
    (NotFound, 404), (Unauthenticated, 401), (PermissionDenied, 403), (StateError, 409), (LeagueError, 400))
"""The league's refusals as HTTP statuses (as the gRPC service's codes), the first match wins."""


def shown_error(error: LeagueError) -> NotShown:
    """A league's refusal as the web's, with its one line: an unknown league, bot or version is 404, another
    author's 403, a bad or revoked sign-in 401, a state that does not allow it 409, anything else 400. Its page
    links back the viewer's usual way (the app's), which for a share link is not the list of tournaments."""
    status = next(code for kind, code in STATUS_OF if isinstance(error, kind))
    return NotShown(status, str(error))


def _when(seconds: float) -> str | None:
    """A Unix time as ISO 8601 in UTC (None for 0: not yet)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds") if seconds else None


def standing_json(row: Standing, bot_of: dict[str, str]) -> dict[str, Any]:
    """One leaderboard row, a bot's active version: its rank and rank range among the rows shown, rating and 95%
    interval (None before the version is fitted), deal sets and games, its team (``author``, as before), the rows
    it cannot yet be told apart from (as ``bot-vN``, and as bots), its form and its place in words. ``active`` is
    always true (every row is its bot's active version); ``bot_of``: each shown row's ``bot-vN`` to its bot."""
    fitted = row.fitted
    tied_bots = [bot_of.get(name, name) for name in row.tied_with]
    return {"rank": row.rank, "rank_best": row.rank_best, "rank_worst": row.rank_worst,
            "version": f"{row.bot}-v{row.number}", "version_id": row.version_id, "bot": row.bot,
            "number": row.number, "author": row.author, "team": row.author,
            "rating": row.rating if fitted else None, "rating_low": row.rating_low if fitted else None,
            "rating_high": row.rating_high if fitted else None, "fitted": fitted,
            "deal_sets": row.deal_sets, "games": row.games, "state": row.state,
            "active": True, "tied_with": list(row.tied_with), "tied_with_bots": tied_bots,
            "form": list(row.form), "form_text": form_text(row.form),
            "place": place_text(row.rank_best, row.rank_worst, fitted, tied_bots)}


def place_text(best: int, worst: int, fitted: bool, tied_with: Sequence[str]) -> str:
    """A row's place in the words a spectator reads without a legend: ``2nd``, or ``could be 2nd to 4th; not yet
    told apart from foo and bar``; for a row the fit does not hold yet, that it waits for the next refit."""
    if not fitted:
        return "new: placed after the rated bots until the ratings are next refitted"
    where = ordinal(best) if best == worst else f"could be {ordinal(best)} to {ordinal(worst)}"
    return f"{where}; not yet told apart from {names_text(tied_with)}" if tied_with else where


def form_text(form: Sequence[float]) -> str:
    """A row's form in words: ``won 6, lost 3 of its last 10 deal sets`` (a deal set won outright, or lost to
    every other side; the others were drawn or placed between)."""
    if not form:
        return "no deal set yet"
    won, lost = sum(1 for score in form if score == 1.0), sum(1 for score in form if score == 0.0)
    last = "its deal set" if len(form) == 1 else f"its last {len(form)} deal sets"
    return f"won {won}, lost {lost} of {last}"



def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard: one row per bot (its active version), best first."""
    bot_of = {f"{row.bot}-v{row.number}": row.bot for row in board.standings}
    return {"league": board.league, "title": board.title or board.league, "rating": board.rating,
            "rank_rule": board.rank_rule,
            "deal_sets_fitted": board.deal_sets_fitted, "deal_sets_rated": board.deal_sets_rated,
            "standings": [standing_json(row, bot_of) for row in board.standings]}


def table_json(table: TableView, league: str) -> dict[str, Any]:
    """A table as the queue shows it: its sides and why it was chosen; its times, and its points and games (each
    with the address of its viewer) once done."""
    return {"id": table.id or None, "versions": list(table.versions), "version_ids": list(table.version_ids),
            "reason": table.reason, "state": table.state, "created_at": _when(table.created_at),
            "started_at": _when(table.started_at), "ended_at": _when(table.ended_at), "error": table.error,
            "points": list(table.points),
            "games": [{"game": key, "url": game_url(league, table.id, key)} for key in table.games]}


def queue_json(queue: LadderQueue) -> dict[str, Any]:
    league = queue.league
    return {"league": league, "concurrency": queue.concurrency, "note": queue.note,
            "playing": [table_json(t, league) for t in queue.playing],
            "next": [table_json(t, league) for t in queue.next],
            "recent": [table_json(t, league) for t in queue.recent]}


def version_json(version: VersionView) -> dict[str, Any]:
    """A version as the public sees it: number, state and dates, whether active (never its reason, hash or log)."""
    return {"id": version.id, "version": f"{version.bot}-v{version.number}", "number": version.number,
            "state": version.state, "active": version.active, "created_at": _when(version.created_at),
            "updated_at": _when(version.updated_at)}


def bot_json(page: BotPage) -> dict[str, Any]:
    return {"league": page.league, "bot": page.bot, "author": page.author,
            "versions": [version_json(v) for v in page.versions],
            "tables": [table_json(t, page.league) for t in page.tables]}


async def leaderboard(core: LeagueCore, league: str) -> dict[str, Any]:
    try:
        return leaderboard_json(await core.standings(league))
    except LeagueError as error:
        raise shown_error(error) from None


async def queue(core: LeagueCore, league: str) -> dict[str, Any]:
    try:
        return queue_json(await core.queue(league))
    except LeagueError as error:
        raise shown_error(error) from None


async def bot(core: LeagueCore, league: str, name: str) -> dict[str, Any]:
    try:
        return bot_json(await core.bot_page(league, name))
    except LeagueError as error:
        raise shown_error(error) from None


# --- the HTML pages: the main content, rendered on the server -------------------------------------------------------


_e = escape


def _q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _elo(value: float) -> str:
    """An Elo to the point, signed; a value that rounds to zero is "0" (never "-0", which reads as a loss)."""
    shown = f"{value:+.0f}"
    return "0" if shown in ("+0", "-0") else shown


def _interval(row: dict[str, Any]) -> str:
    if row["rating"] is None:
        return "not fitted yet"
    return f'{_elo(row["rating"])} [{_elo(row["rating_low"])}, {_elo(row["rating_high"])}]'


def _bot_link(league: str, name: str) -> str:
    return f'<a href="/leagues/{_q(league)}/bots/{_q(name)}">{_e(name)}</a>'


BAR = (150, 14, 5)
"""A rating bar's width, height and side margin, in SVG units."""
FORM_BAR = (6, 2, 16)
"""A form bar's width, the gap after it, and the form chart's height."""


def rating_scale(rows: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """The Elo span every row's bar is drawn on: the fitted rows' lowest and highest interval ends, with the
    field's mean (0) in it; (−1, 1) when no row is fitted."""
    ends = [end for r in rows if r["fitted"] for end in (r["rating_low"], r["rating_high"])]
    low, high = min([0.0, *ends]), max([0.0, *ends])
    return (low, high) if high > low else (-1.0, 1.0)


def rating_bar(row: dict[str, Any], scale: tuple[float, float]) -> str:
    """A row's rating as an inline SVG on the board's common scale: its 95% interval a bar, its rating a dot, the
    field's mean (0) a thin line; every x proportional to the Elo it marks (:func:`rating_scale`)."""
    width, height, margin = BAR
    low, high = scale

    def x(elo: float) -> float:
        return margin + (width - 2 * margin) * (elo - low) / (high - low)

    mid = height / 2
    label = (f'{_elo(row["rating"])}, 95% interval {_elo(row["rating_low"])} to {_elo(row["rating_high"])}'
             if row["fitted"] else "not rated by the fit yet")
    svg = f'<line class="mean" x1="{x(0.0):.1f}" x2="{x(0.0):.1f}" y1="0" y2="{height}"/>'
    if row["fitted"]:
        left, right = x(row["rating_low"]), x(row["rating_high"])
        svg += (f'<rect class="interval" x="{left:.1f}" y="{mid - 3:.1f}" width="{right - left:.1f}" height="6" '
                f'rx="3"/><circle class="rating" cx="{x(row["rating"]):.1f}" cy="{mid:.1f}" r="3.5"/>')
    return (f'<svg class="rating-bar" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{_e(label)}">{svg}</svg>')


def form_chart(form: Sequence[float]) -> str:
    """A row's form as a tiny inline SVG, one bar per deal set, oldest first: up for a deal set won (its full
    height won outright), down for one lost, a flat mark for an even one."""
    bar, gap, height = FORM_BAR
    mid = height / 2
    marks = ""
    for index, score in enumerate(form):
        reach = max(abs(score - 0.5) * 2 * (mid - 1), 1.0)
        top = mid - reach if score > 0.5 else mid if score < 0.5 else mid - 0.5
        kind = "won" if score > 0.5 else "lost" if score < 0.5 else "even"
        marks += (f'<rect class="{kind}" x="{index * (bar + gap)}" y="{top:.1f}" width="{bar}" '
                  f'height="{reach if score != 0.5 else 1.0:.1f}"/>')
    width = max(len(form) * (bar + gap) - gap, bar)
    return (f'<svg class="form" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'aria-hidden="true">{marks}</svg>')


def leaderboard_html(board: dict[str, Any], viewer: Viewer) -> str:
    """The leaderboard: one row per bot (its active version), with its team, its rating drawn as a bar on the
    board's common scale, its games, its form and its place in words."""
    league = board["league"]
    rows = board["standings"]
    scale = rating_scale(rows)
    cells = [[(_e(r["rank"]), False), (_e(r["team"]), True), (_bot_link(league, r["bot"]), True),
              (_e(f'v{r["number"]}'), True),
              (f'{rating_bar(r, scale)} <span class="rating-text">{_e(_interval(r))}</span>', True),
              (_e(f'{r["games"]} ({count_text(r["deal_sets"], "deal set")})'), False),
              (f'{form_chart(r["form"])} <span class="form-text">{_e(r["form_text"])}</span>', True),
              (f'<span class="place">{_e(r["place"])}</span>', True)]
             for r in rows]
    headers = [("#", False), ("team", True), ("bot", True), ("version", True), ("rating (95% interval)", True),
               ("games (deal sets)", False), ("form", True), ("place", True)]
    intro = (f'One row per bot, the version it plays now, ranked by rating (0 is the field\'s average). The bar '
             f'spans where the rating lies with 95% confidence and the dot marks it; a bot whose bar still overlaps '
             f'its neighbours\' could be any of several places until more games tell them apart. Rated on '
             f'{count_text(board["deal_sets_rated"], "deal set")}'
             + (f' ({board["deal_sets_fitted"]} of them in the ratings so far).'
                if board["deal_sets_fitted"] != board["deal_sets_rated"] else ".")
             + " A replaced version keeps its rating on its bot's page.")
    return (f'<h1>Leaderboard</h1>{_league_nav(league, viewer)}<p class="meta" id="board-intro">'
            f'{_e(intro)}</p>' + html_table("leaderboard", headers, cells, "No bot rated yet."))


TABLE_TIMES = {"started_at": "started", "created_at": "proposed", "ended_at": "ended"}
"""The time a list of tables shows, by its field, and its column's heading."""


def _games_links(games: list[dict[str, Any]]) -> str:
    """A done table's games, each a link to its viewer ("-" before the table is done: none is shown then)."""
    return " ".join(f'<a href="{_e(g["url"])}">game {int(g["game"]) + 1}</a>' for g in games) or "-"


def _tables_html(table_id: str, tables: list[dict[str, Any]], empty: str, when: str, now: datetime) -> str:
    rows = [[(_e(t["id"] or "-"), False), (_e(" vs ".join(t["versions"])), True), (_e(t["reason"]), True),
             (_e(t["state"]), True), (human_time(t[when], now), True),
             (_e(" – ".join(f"{p:g}" for p in t["points"]) or "-"), False), (_games_links(t["games"]), True)]
            for t in tables]
    headers = [("table", False), ("sides", True), ("why chosen", True), ("state", True), (TABLE_TIMES[when], True),
               ("points", False), ("games", True)]
    return html_table(table_id, headers, rows, empty)


def queue_html(queue: dict[str, Any], viewer: Viewer, now: datetime | None = None) -> str:
    league = queue["league"]
    now = now or datetime.now(UTC)
    note = f'<p class="meta">{_e(queue["note"])}</p>' if queue["note"] else ""
    return (f'<h1>Queue</h1>{_league_nav(league, viewer)}'
            f'<p class="meta">{_e(queue["concurrency"])} tables at once at most.</p>{note}'
            f'<h2>Being played</h2>' + _tables_html("playing", queue["playing"], "None.", "started_at", now)
            + '<h2>Next</h2>' + _tables_html("next", queue["next"], "None proposed.", "created_at", now)
            + '<h2>Recently ended</h2>' + _tables_html("recent", queue["recent"], "None yet.", "ended_at", now))


def human_time(moment: str | None, now: datetime) -> str:
    """An ISO moment (UTC) as a person reads it, relative to ``now`` ("just now", "3 min ago", "today 14:02",
    "yesterday 14:02", "Tue 14:02", "3 Dec 14:02", "3 Dec 2025"), in a ``<time>`` element whose ``datetime`` is
    the moment and whose title, shown on hover, is the exact time in UTC; "-" for none (not yet)."""
    if not moment:
        return "-"
    when = datetime.fromisoformat(moment).astimezone(UTC)
    now = now.astimezone(UTC)
    exact = when.strftime("%Y-%m-%d %H:%M:%S UTC")
    return f'<time datetime="{_e(when.isoformat())}" title="{exact}">{_e(_relative(when, now))}</time>'


def _relative(when: datetime, now: datetime) -> str:
    seconds = (now - when).total_seconds()
    days = (now.date() - when.date()).days
    if abs(seconds) < 60:
        return "just now"
    if seconds < 0:  # a moment to come (a clock a little ahead, a timeline's step)
        return f"in {math.ceil(-seconds / 60)} min" if -seconds < 3600 else f"{when:%Y-%m-%d %H:%M} UTC"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if days == 0:
        return f"today {when:%H:%M}"
    if days == 1:
        return f"yesterday {when:%H:%M}"
    if days < 7:
        return f"{when:%a %H:%M}"
    return f"{when.day} {when:%b %H:%M}" if when.year == now.year else f"{when.day} {when:%b %Y}"


def bot_html(page: dict[str, Any], viewer: Viewer, now: datetime | None = None) -> str:
    league = page["league"]
    now = now or datetime.now(UTC)
    versions = [[(_e(v["version"]), True), (_e(v["state"]), True), ("yes" if v["active"] else "", True),
                 (human_time(v["created_at"], now), True), (human_time(v["updated_at"], now), True)]
                for v in page["versions"]]
    headers = [("version", True), ("state", True), ("active", True), ("uploaded", True), ("last change", True)]
    return (f'<h1>{_e(page["bot"])}</h1>{_league_nav(league, viewer)}<p class="meta">by {_e(page["author"])}</p>'
            '<h2>Versions</h2>' + html_table("versions", headers, versions, "No version.")
            + '<h2>Recent tables</h2>' + _tables_html("tables", page["tables"], "No table ended yet.", "ended_at",
                                                     now))


def _league_nav(league: str, viewer: Viewer) -> str:
    """The league's links: its public pages, then, for a viewer not confined to a share link, the author's page
    (an author's own bots; a spectator's way to sign in) and the list of tournaments. A share link opens this
    league's public pages only: those two would answer it 403."""
    q = _q(league)
    links = [(f"/leagues/{q}", "leaderboard"), (f"/leagues/{q}/queue", "queue"), (f"/leagues/{q}/finals", "finals")]
    if not viewer.confined:
        links += [(f"/leagues/{q}/mine", "my bots"), ("/", "tournaments")]
    return '<p class="downloads">' + "".join(f'<a href="{href}">{text}</a>' for href, text in links) + "</p>"


def game_text(status: LeagueStatus) -> str:
    """What a league's tables play, in words: ``Draw (Pagat's individual Draw game), 2 players · 2 s a move``."""
    return f'{status.variant_title or status.variant}, {count_text(status.players, "player")} · {status.time_control}'


def phase_html(status: LeagueStatus) -> str:
    """A league page's header: the league's title, what its tables play (variant, players, time control), its
    phase and the next step (``open · freezes in 2 h 14 min (at 2026-12-05 18:00 UTC)``)."""
    return (f'<span id="league-phase" data-phase="{_e(status.phase)}"><b id="league-title">{_e(status.title)}</b> · '
            f'{_e(game_text(status))} · '
            f'<b>{_e(status.phase)}</b>{" · " + _e(status.next) if status.next else ""}</span>')


def leagues_nav(names: Sequence[str]) -> str:
    """The front page's links to each league served (empty when none)."""
    return "".join(f'<a href="/leagues/{_q(name)}">league {_e(name)}</a>' for name in sorted(names))



# --- an author's own pages: its versions with their logs, and its forms -------------------------------------------


def log_json(reply: BuildLog) -> dict[str, Any]:
    """A version's build log and check report, as its author (or the operator) reads them."""
    return {"version": {**version_json(reply.version), "reason": reply.version.reason},
            "build_log": reply.build_log, "check_report": reply.check_report}


def log_html(league: str, log: dict[str, Any], viewer: Viewer) -> str:
    v = log["version"]
    return (f'<h1>{_e(v["version"])} · build log</h1>{_league_nav(league, viewer)}'
            f'<p class="meta">{_e(v["state"])}{(" · " + _e(v["reason"])) if v["reason"] else ""}</p>'
            f'<h2>Build log</h2><section class="card"><pre id="build-log">{_e(log["build_log"] or "(empty)")}</pre>'
            f'</section><h2>Check report</h2>' + check_report_html(log["check_report"]))


def _ms(value: Any) -> str:
    """A duration in milliseconds as a person reads it: whole milliseconds, a tenth below 10 ms ("-": none)."""
    if not isinstance(value, int | float):
        return "-"
    return f"{value:.1f} ms" if value < 10 else f"{value:,.0f} ms"


def check_report_html(text: str) -> str:
    """The check's report (the JSON the pipeline stores: :func:`arena.league.intake.pipeline.report_json`) as a
    summary and a table of the variants played: times rounded, with their units. A report of another shape is
    shown as it is, in a block of its own."""
    try:
        report = json.loads(text) if text else None
    except ValueError:
        report = None
    if not isinstance(report, dict):
        return f'<section class="card"><pre id="check-report">{_e(text or "(none yet)")}</pre></section>'
    facts = [("result", "passed" if report.get("passed") else "failed"), ("startup", _ms(report.get("startup_ms"))),
             ("said hello as", report.get("hello") or "-"), ("contained", report.get("containment") or "-")]
    if report.get("start_fault"):
        facts.append(("failed to start", report["start_fault"]))
    kv = "".join(f'<dt>{_e(k)}</dt><dd id="check-{_e(k.replace(" ", "-"))}">{_e(v)}</dd>' for k, v in facts)
    variants = [[(_e(c.get("variant")), True), (_e(c.get("players")), False), (_e(c.get("matches")), False),
                 (_e(c.get("decisions")), False), (_e(_ms(c.get("median_ms"))), False),
                 (_e(_ms(c.get("worst_ms"))), False), (_e("; ".join(c.get("faults") or []) or "none"), True),
                 ("yes" if c.get("passed") else "no", True)]
                for c in report.get("variants") or [] if isinstance(c, dict)]
    headers = [("variant", True), ("players", False), ("matches", False), ("decisions", False),
               ("median reply", False), ("slowest reply", False), ("faults", True), ("passed", True)]
    return (f'<section class="card"><dl class="kv" id="check-report">{kv}</dl></section>'
            + html_table("check-variants", headers, variants, "No match played."))


def done_html(league: str, message: str, viewer: Viewer) -> str:
    return (f'<h1>Done</h1>{_league_nav(league, viewer)}<p class="message" id="outcome">{_e(message)}</p>'
            f'<p><a href="/leagues/{_q(league)}/mine">← my bots</a></p>')


def _hidden(csrf: str) -> str:
    return f'<input type="hidden" name="csrf" value="{_e(csrf)}">'


def _option(value: int, text: str, selected: bool) -> str:
    return f'<option value="{value}"{" selected" if selected else ""}>{_e(text)}</option>'


def challenge_pair(versions: Sequence[VersionView], standings: Sequence[dict[str, Any]]) -> tuple[int, int] | None:
    """The challenge form's preselected pair (the author's version, its opponent), or None when there is none to
    offer: the author's active version placed best on the leaderboard (else its newest ready one) against the
    entry just above it, or, at the top or not placed yet, the best entry that is not its own version; without a
    leaderboard entry to meet, another ready version of the author's. Never a version against itself."""
    ready = [v for v in versions if v.state == "ready"]
    if not ready:
        return None
    place = {row["version_id"]: n for n, row in enumerate(standings)}
    mine = min(ready, key=lambda v: (not v.active, place.get(v.id, len(standings)), -v.id))
    ranked = [row["version_id"] for row in standings]
    at = place.get(mine.id)
    above = [vid for vid in ranked[:at] if vid != mine.id] if at is not None else []
    others = [vid for vid in ranked if vid != mine.id] + [v.id for v in ready if v.id != mine.id]
    opponent = above[-1] if above else next(iter(others), None)
    return (mine.id, opponent) if opponent is not None else None


def author_html(league: str, who: str, versions: list[VersionView], challenges: list[ChallengeView],
                board: dict[str, Any], csrf: str, viewer: Viewer, feed: str = "", now: datetime | None = None) -> str:
    """The author's page: each version (when uploaded) with its log's link and a retire button, the upload form
    (the archive last, after the bot's name), the challenge form (a version of its own against a leaderboard entry
    or another of its own, a sensible pair preselected: :func:`challenge_pair`), its challenges, and its team's
    private feed (``feed``, its address) with the form that replaces it. Every form carries the session's CSRF
    token."""
    q = _q(league)
    now = now or datetime.now(UTC)
    rows = [[(_e(f"{v.bot}-v{v.number}"), True), (_e(v.id), False), (_e(v.state), True),
             ("yes" if v.active else "", True), (human_time(_when(v.created_at), now), True), (_e(v.reason), True),
             (f'<a href="/leagues/{q}/versions/{v.id}/log">build log and check</a>', True),
             (f'<form method="post" action="/leagues/{q}/versions/{v.id}/retire">{_hidden(csrf)}'
              f'<button type="submit">retire</button></form>' if v.state != "retired" else "", True)]
            for v in versions]
    headers = [("version", True), ("id", False), ("state", True), ("active", True), ("uploaded", True), ("why", True),
               ("log", True), ("", True)]
    opponents = sorted(({r["version_id"]: r["version"] for r in board["standings"]} |
                        {v.id: f"{v.bot}-v{v.number}" for v in versions}).items())
    pair = challenge_pair(versions, board["standings"])
    chosen = pair or (None, None)
    mine = "".join(_option(v.id, f"{v.bot}-v{v.number}", v.id == chosen[0]) for v in versions if v.state == "ready")
    others = ("" if pair else '<option value="" selected disabled>choose an opponent</option>') + "".join(
        _option(vid, name, vid == chosen[1]) for vid, name in opponents)
    made = [[(_e(c.id), False), (_e(c.version), True), (_e(c.opponent), True), (_e(c.deal_sets), False),
             (_e(c.state), True), (f"<strong>{_e(c.outcome)}</strong> ({_e(c.outcome_why)})" if c.outcome else "-",
                                   True), (_e(c.verdict or c.error or "-"), True)] for c in challenges]
    return (f'<h1>My bots</h1>{_league_nav(league, viewer)}<p class="meta">signed in as {_e(who)}</p>'
            '<h2>Versions</h2>' + html_table("my-versions", headers, rows, "No version yet: upload one below.")
            + f'<h2>Upload a version</h2><form id="upload" method="post" enctype="multipart/form-data" '
              f'action="/leagues/{q}/upload?csrf={_q(csrf)}"><label>bot <input name="bot" required></label> '
              f'<label>archive (tar, tar.gz or zip) <input type="file" name="archive" required></label> '
              f'<button type="submit">upload</button></form>'
            + f'<h2>Challenge</h2><form id="challenge" method="post" action="/leagues/{q}/challenges">'
              f'{_hidden(csrf)}<label>version <select name="version">{mine}</select></label> '
              f'<label>against <select name="opponent">{others}</select></label> '
              f'<label>deal sets <input name="deal_sets" inputmode="numeric" placeholder="the most allowed"></label> '
              f'<button type="submit">challenge</button></form>'
            + '<h2>My challenges</h2>' + html_table("my-challenges", [("id", False), ("version", True),
                                                                     ("against", True), ("deal sets", False),
                                                                     ("state", True), ("outcome", True),
                                                                     ("SPRT", True)],
                                                    made, "None yet.")
            + (f'<h2>Notices</h2><p>Your team\'s private feed (keep it secret: it reads your team\'s notices): '
               f'<a id="team-feed" href="{_e(feed)}">{_e(feed)}</a></p><form id="feed-token" method="post" '
               f'action="/leagues/{q}/feed-token">{_hidden(csrf)}<button type="submit">replace its address</button>'
               f'</form><p>The league\'s public feed: <a href="/leagues/{q}/feed.atom">feed.atom</a></p>'
               if feed else ""))


# --- a team's sign-up: its form, and its captain's token shown once ------------------------------------------------


def signup_html(league: str, mode: str, csrf: str, viewer: Viewer) -> str:
    """The sign-up form of a league open to sign-ups: the team's name, the captain's, and the invite code in
    ``invite`` mode; it carries the form's CSRF token (:func:`arena.web.app.signup_form`)."""
    q = _q(league)
    how = ("with the invite code its operator gave you" if mode == "invite" else
           "then the operator approves your team: until then it can do nothing")
    invite = ('<label>invite code <input name="invite" required autocomplete="off"></label> '
              if mode == "invite" else "")
    return (f'<h1>Sign up</h1>{_league_nav(league, viewer)}'
            f'<p class="meta">Sign a team up to this league, {how}. Its captain gets a token, shown once: keep it, '
            f'it is how your team uploads, challenges and signs in; the captain adds the other members.</p>'
            f'<form id="signup" method="post" action="/leagues/{q}/signup">{_hidden(csrf)}'
            f'<label>team <input name="team" required maxlength="64" autocomplete="off"></label> '
            f'<label>captain <input name="captain" maxlength="64" placeholder="captain" autocomplete="off"></label> '
            f'{invite}<button type="submit">sign up</button></form>')


def signed_up_html(league: str, team: TeamView, token: str, viewer: Viewer) -> str:
    """A team's sign-up done: its captain's token, shown this once, and how to keep and use it."""
    q = _q(league)
    captain = team.members[0].name if team.members else "captain"
    waiting = ('<p class="message" id="pending">Your team awaits the operator\'s approval: it can do nothing, and '
               'cannot sign in, until then.</p>' if team.state == "pending" else "")
    return (f'<h1>Signed up</h1>{_league_nav(league, viewer)}'
            f'<p class="message" id="outcome">team {_e(team.name)} signed up; the token of its captain '
            f'{_e(captain)}:</p>{waiting}'
            f'<section class="card"><pre id="token">{_e(token)}</pre></section>'
            '<p>Copy it now: it is shown this once, and the server keeps only its hash (nobody can show it again). '
            'Save it in a private file, e.g. <code>umask 077; cat &gt; team.token</code>, then paste it and press '
            'Ctrl-D; give that file to the command line (<code>arena league upload DIR --bot NAME --token-file '
            'team.token</code>), and sign in here with it. The captain adds members with <code>arena league '
            'add-member NAME --token-file team.token</code>.</p>'
            f'<p><a href="/signin?next={_q(f"/leagues/{league}/mine")}">sign in with it</a> · '
            f'<a href="/leagues/{q}">← the league</a></p>')


def signup_links(leagues: Sequence[tuple[str, str]]) -> str:
    """The sign-in page's links to the sign-up of each league open to sign-ups (name, mode)."""
    links = "".join(f'<a href="/leagues/{_q(name)}/signup">sign a team up to {_e(name)}</a>'
                    for name, mode in sorted(leagues) if mode != "operator")
    return f'<p class="downloads" id="signup-links">No token yet? {links}</p>' if links else ""


# --- a bot's history, the finals, a done table's game: the league layer's pages (arena/league/play/pages.py) ------------

COLORS = ("#1f6fb2", "#c0392b", "#2e8b57", "#6c3483", "#b9770e", "#117a65", "#884ea0", "#a04000")
"""The chart's line colours, the dashboard's own (static/dashboard.js), one per version."""


def tally_json(tally: Tally) -> dict[str, Any]:
    return {"played": tally.played, "won": tally.won, "drawn": tally.drawn, "lost": tally.lost,
            "points": round(tally.points, 6)}


def rating_point_json(point: RatingPoint) -> dict[str, Any]:
    """A version's online rating after a deal set: its table, the table's place in the league's rating order
    (``sequence``) and the bot's own count of deal sets rated (``deal_set``, the chart's x), when it ended, OpenSkill's
    mu and sigma, and the same on the Elo scale with its 95% interval (``elo``, ``elo_low``, ``elo_high``)."""
    return {"table": point.table_id, "sequence": point.sequence, "deal_set": point.deal_set,
            "ended_at": _when(point.ended_at), "mu": point.mu, "sigma": point.sigma,
            "elo": round(online_elo(point.mu), 1), "elo_low": round(online_elo(point.mu, point.sigma, -Z95), 1),
            "elo_high": round(online_elo(point.mu, point.sigma, Z95), 1)}


def history_json(history: BotHistory, league: str) -> dict[str, Any]:
    """A bot's history as JSON: each version's rating points, results by opponent and by seat, recent games (each
    with the address of its viewer)."""
    return {"ratings": {name: [rating_point_json(p) for p in points] for name, points in history.ratings.items()},
            "by_opponent": {name: tally_json(t) for name, t in sorted(history.by_opponent.items())},
            "by_seat": {str(seat): tally_json(t) for seat, t in sorted(history.by_seat.items())},
            "recent": [{"table": g.table_id, "game": g.game_key, "ended_at": _when(g.ended_at), "seats": g.seats,
                        "points": g.points, "url": game_url(league, g.table_id, g.game_key)} for g in history.recent]}


def game_url(league: str, table_id: int, game_key: str) -> str:
    return f"/leagues/{_q(league)}/tables/{table_id}/games/{_q(game_key)}"


async def bot_full(core: LeagueCore, league: str, name: str) -> dict[str, Any]:
    """The bot's page: its versions and tables (:func:`bot`) and its history."""
    page = await bot(core, league, name)
    try:
        page["history"] = history_json(await core.bot_history(league, name), page["league"])
    except LeagueError as error:
        raise shown_error(error) from None
    return page


def finals_json(page: FinalsPage, league: str) -> dict[str, Any]:
    """The finals as anyone sees them (``scheduled``: the games played once a Swiss ``stopped`` early, after round
    ``stopped_after``); ``seed`` and ``nonce`` are empty until the finals ended, ``ranking``,
    ``results`` and ``event`` until the league's timeline publishes them (``results_at``, null once published).
    Each game names its deal set in words and has the address of its replay."""
    return {"state": page.state, "field": page.field, "frozen_at": _when(page.frozen_at),
            "results_at": _when(page.results_at), "settings": page.settings, "entrants": page.entrants,
            "deal_sets": page.deal_sets, "scheduled": page.scheduled, "stopped": page.stopped,
            "stopped_after": page.stopped_after, "games": len(page.results),
            "started_at": _when(page.started_at), "ended_at": _when(page.ended_at), "error": page.error,
            "ranking": page.ranking, "event": page.event,
            "results": [{**game, "words": deal_set_words(game["deal_set"], page.games_per_match,
                                                         page.settings.get("deal_sets", 0)),
                         "url": finals_game_url(league, game["index"])} for game in page.results],
            "commitment": page.commitment, "seed": page.seed, "nonce": page.nonce}


def deal_set_words(deal_key: str, games: int, deal_sets: int) -> str:
    """A finals game's deal set in words: its deal key (``"<pairing or match>/<number>"``) as "deal set 3 of 8",
    "tie-break deal set 1" past a knockout match's ``games``, or "game 3 of 16" when each game had a deal of its
    own (``games`` more than ``deal_sets``: no duplicate deals)."""
    _match, _, number = deal_key.rpartition("/")
    if not number.isdigit() or games <= 0:
        return deal_key or "-"
    unit = "deal set" if games <= deal_sets or not deal_sets else "game"
    at = int(number) + 1
    return f"{unit} {at} of {games}" if at <= games else f"tie-break {unit} {at - games}"


async def finals(core: LeagueCore, league: str) -> dict[str, Any]:
    try:
        served = core.league(league)
        return {"league": served.config.name, **finals_json(await core.finals_page(league), served.config.name)}
    except LeagueError as error:
        raise shown_error(error) from None


async def table_game(core: LeagueCore, league: str, table_id: int, game_key: str) -> dict[str, Any]:
    try:
        return await core.table_game(league, table_id, game_key)
    except LeagueError as error:
        raise shown_error(error) from None


async def finals_game(core: LeagueCore, league: str, index: int) -> dict[str, Any]:
    try:
        return await core.finals_game(league, index)
    except LeagueError as error:
        raise shown_error(error) from None


def finals_game_url(league: str, index: int) -> str:
    return f"/leagues/{_q(league)}/finals/games/{index}"


CHART = {"width": 760, "height": 290, "left": 56, "right": 14, "top": 12, "bottom": 46}
"""The rating chart's size and margins (SVG user units): room for the Elo labels on the left, the deal-set ticks
and their caption below."""


def count_ticks(last: int, most: int = 6) -> list[int]:
    """Round ticks of a count axis running from 1 to ``last``: 1, then multiples of 1, 2 or 5 times a power of ten
    (about ``most`` of them), so that a person reads "deal set 1 … 100" at a glance."""
    rough = max(1.0, last / most)
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough)
    return [1, *range(step, last + 1, step)] if step > 1 else list(range(1, last + 1))


def rating_chart(ratings: dict[str, list[dict[str, Any]]]) -> str:
    """Each version's online rating after each of the bot's deal sets as a server-rendered SVG, on the Elo scale
    (:func:`arena.league.rules.rating.online_elo`: 0 is a new version's start) with its 95% interval as a shaded
    band. The x axis is the order the bot's deal sets were rated in (each point's ``deal_set``, which only grows),
    never the tables' numbers: tables end, and are rated, in another order than they were numbered."""
    points = [p for series in ratings.values() for p in series]
    last = max((p["deal_set"] for p in points), default=0)
    if last < 2:
        return '<p class="meta">The chart starts after two deal sets.</p>'
    axis = axis_ticks(min(p["elo_low"] for p in points), max(p["elo_high"] for p in points), span=100.0)
    lo: float = axis["low"]
    hi: float = axis["high"]
    width, height, left, right, top, bottom = (CHART[k] for k in ("width", "height", "left", "right", "top",
                                                                  "bottom"))
    floor = height - bottom

    def x(n: int) -> float:
        return left + (width - left - right) * (n - 1) / (last - 1)

    def y(v: float) -> float:
        return top + (floor - top) * (hi - v) / (hi - lo)

    svg = "".join(f'<line class="grid-line" x1="{left}" x2="{width - right}" y1="{y(t["value"]):.1f}" '
                  f'y2="{y(t["value"]):.1f}"/><text class="tick" x="{left - 6}" y="{y(t["value"]) + 4:.1f}" '
                  f'text-anchor="end">{_e(t["label"])}</text>' for t in axis["ticks"])
    svg += f'<line class="axis" x1="{left}" x2="{width - right}" y1="{floor}" y2="{floor}"/>'
    svg += "".join(f'<line class="axis" x1="{x(n):.1f}" x2="{x(n):.1f}" y1="{floor}" y2="{floor + 4}"/>'
                   f'<text class="tick" x="{x(n):.1f}" y="{floor + 16}" text-anchor="middle">{n}</text>'
                   for n in count_ticks(last))
    svg += (f'<text x="{(left + width - right) / 2:.0f}" y="{height - 6}" text-anchor="middle">'
            f'{_e(_chart_caption(points, last))}</text>'
            f'<text x="12" y="{(top + floor) / 2:.0f}" text-anchor="middle" transform="rotate(-90 12 '
            f'{(top + floor) / 2:.0f})">Elo (0: a new version)</text>')
    legend = ""
    for i, (name, series) in enumerate(sorted(ratings.items())):
        color = COLORS[i % len(COLORS)]
        ordered = sorted(series, key=lambda p: p["deal_set"])
        upper = [f'{x(p["deal_set"]):.1f},{y(p["elo_high"]):.1f}' for p in ordered]
        lower = [f'{x(p["deal_set"]):.1f},{y(p["elo_low"]):.1f}' for p in reversed(ordered)]
        svg += (f'<path class="band" d="M{" L".join(upper + lower)} Z" fill="{color}" fill-opacity="0.15" '
                f'stroke="none" data-band="{_e(name)}"/>')
        path = " ".join(f'{"L" if k else "M"}{x(p["deal_set"]):.1f},{y(p["elo"]):.1f}' for k, p in enumerate(ordered))
        svg += (f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2" data-version="{_e(name)}" '
                f'data-points="{len(ordered)}"/>')
        if len(ordered) == 1:
            svg += (f'<circle cx="{x(ordered[0]["deal_set"]):.1f}" cy="{y(ordered[0]["elo"]):.1f}" r="3" '
                    f'fill="{color}"/>')
        now = ordered[-1]
        legend += (f'<span><i style="background:{color}"></i>{_e(name)}: {_e(_elo(now["elo"]))} '
                   f'[{_e(_elo(now["elo_low"]))}, {_e(_elo(now["elo_high"]))}] after {len(ordered)} deal sets</span>')
    return (f'<svg viewBox="0 0 {width} {height}" id="rating-chart" role="img" aria-label="online rating of each '
            f'version on the Elo scale, with its 95% interval, after each deal set in the order they were rated">'
            f'<title>Online rating of each version (Elo, 95% interval shaded)</title>{svg}</svg>'
            f'<div class="legend">{legend}</div>')


def _chart_caption(points: list[dict[str, Any]], last: int) -> str:
    """The x axis's caption: what it counts, and the days its first and last deal sets ended."""
    ended = sorted(p["ended_at"] for p in points if p["ended_at"])
    days = f" ({_day(ended[0])} to {_day(ended[-1])})" if ended else ""
    return f"the bot's {last} deal sets, in the order they were rated{days}"


def _day(moment: str) -> str:
    """An ISO moment as its day in UTC: ``5 Dec 2026``."""
    when = datetime.fromisoformat(moment).astimezone(UTC)
    return f"{when.day} {when:%b %Y}"


def _tally_rows(rows: dict[str, dict[str, Any]], label: Any) -> list[list[Cell]]:
    return [[(label(key), True), (_e(t["played"]), False), (_e(t["won"]), False), (_e(t["drawn"]), False),
             (_e(t["lost"]), False), (_e(f'{t["points"]:g}'), False),
             (_e(f'{t["points"] / t["played"]:.2f}' if t["played"] else "-"), False)] for key, t in rows.items()]


def history_html(league: str, history: dict[str, Any], now: datetime | None = None) -> str:
    """The bot page's chart, its results by opponent and by seat, and its recent games linking to the viewer."""
    tally_headers = [("played", False), ("won", False), ("drawn", False), ("lost", False), ("points", False),
                     ("mean points", False)]
    opponents = _tally_rows(history["by_opponent"], lambda name: _bot_link(league, name.rsplit("-v", 1)[0])
                            + _e(f' v{name.rsplit("-v", 1)[1]}') if "-v" in name else _e(name))
    seats = _tally_rows(history["by_seat"], lambda seat: _e(f"seat {int(seat) + 1}"))
    games = [[(f'<a href="{_e(g["url"])}">table {_e(g["table"])} game {_e(g["game"])}</a>', True),
              (_e(" vs ".join(g["seats"])), True), (_e(" – ".join(f"{p:g}" for p in g["points"])), False),
              (human_time(g["ended_at"], now or datetime.now(UTC)), True)] for g in history["recent"]]
    return ('<h2>Online rating of each version</h2><section class="card chart">'
            + rating_chart(history["ratings"]) + '</section>'
            '<h2>Results by opponent</h2><p class="meta">Per deal set: won on more match points than the opponent '
            'over the seat rotations.</p>'
            + html_table("by-opponent", [("opponent", True), *tally_headers], opponents, "No deal set yet.")
            + '<h2>Results by seat</h2><p class="meta">Per game, by the seat held: won on more match points than the other sides.</p>'
            + html_table("by-seat", [("seat", True), *tally_headers], seats, "No game yet.")
            + '<h2>Recent games</h2>'
            + html_table("games", [("game", True), ("seats", True), ("points", False), ("ended", True)], games,
                         "No game yet."))


def bot_full_html(page: dict[str, Any], viewer: Viewer, now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    return bot_html(page, viewer, now) + history_html(page["league"], page["history"], now)


FORMAT_NAMES = {"round_robin": "round robin", "swiss": "Swiss", "knockout": "knockout"}


def format_words(settings: dict[str, Any]) -> str:
    """The finals' format in a line: "Swiss, 3 rounds, 2 deal sets a pairing", "knockout (double elimination),
    2 deal sets a match, up to 1 tie-break deal set", "round robin, 4 deal sets a pairing"."""
    fmt = settings.get("format", "round_robin")
    deal_sets = count_text(settings.get("deal_sets", 0), "deal set")
    if fmt == "swiss":
        rounds = count_text(settings["rounds"], "round") if settings.get("rounds") else "ceil(log2(field)) rounds"
        return f"Swiss, {rounds}, {deal_sets} a pairing"
    if fmt == "knockout":
        tiebreak = settings.get("tiebreak_deal_sets", 0)
        then = (f"up to {count_text(tiebreak, 'tie-break deal set')}, then the better seed" if tiebreak
                else "the better seed")
        return f'knockout ({settings.get("elimination", "single")} elimination), {deal_sets} a match; a tie: {then}'
    return f"round robin, {deal_sets} a pairing" + (f', {settings["tables"]} tables' if settings.get("tables") else "")


def _who(league: str, entrant: dict[str, Any] | None, name: str) -> str:
    """A version as the finals show it: its team, its bot (a link to the bot's page) and its version."""
    if entrant is None:
        return _e(name)
    return (f'<span class="team">{_e(entrant["team"])}</span> · {_bot_link(league, entrant["bot"])} '
            f'v{_e(entrant["number"])}')


def _game_link(game: dict[str, Any]) -> str:
    return f'<a href="{_e(game["url"])}">game {_e(game["index"])}</a>'


def schedule_words(page: Mapping[str, Any], bound: str) -> str:
    """The finals' games in words: "at most 36 games" (``bound``, a knockout's), "12 games (the event stopped after
    round 2: why)" for a Swiss that could not pair its next round, "not started"."""
    if not page["scheduled"]:
        return "not started"
    if page.get("stopped"):
        return f'{page["scheduled"]} games (the event stopped after round {page["stopped_after"]}: {page["stopped"]})'
    return f'{bound}{page["scheduled"]} games'


def finals_html(page: dict[str, Any], viewer: Viewer) -> str:
    """The finals: their format, state and field (seeded, each version's team named), the ranking once done (the
    fit's for a round robin, the Swiss table, the bracket's placements), a Swiss's rounds or a knockout's bracket
    with every match's score, every game a link to its replay with its deal set in words, the seed's commitment,
    and its reveal only once they ended."""
    league = page["league"]
    entrants = {e["version"]: e for e in page["entrants"]}
    fmt = page["settings"].get("format", "round_robin")
    bound = "at most " if fmt == "knockout" else ""
    now = datetime.now(UTC)
    facts = [("format", _e(format_words(page["settings"]))), ("state", _e(page["state"])),
             ("frozen at", human_time(page["frozen_at"], now)), ("field", _e(", ".join(page["field"]) or "-")),
             ("schedule", _e(schedule_words(page, bound))),
             ("games shown", _e(f'{page["games"]} (of complete deal sets only)')),
             ("started", human_time(page["started_at"], now)), ("ended", human_time(page["ended_at"], now)),
             ("seed commitment", _e(page["commitment"] or "published when the finals start")),
             ("seed", _e(f'{page["seed"]} (nonce {page["nonce"]})' if page["seed"] else "revealed when the finals end"))]
    withheld = (f'Results are published at {shown_moment(datetime.fromisoformat(page["results_at"]))}.'
                if page["results_at"] else "")
    if withheld:
        facts.append(("results", _e(withheld)))
    if page["error"]:
        facts.append(("error", _e(page["error"])))
    kv = "".join(f'<dt>{_e(k)}</dt><dd id="finals-{_e(k.replace(" ", "-"))}">{v}</dd>' for k, v in facts)
    field = [[(_e(e["seed"]), False), (_who(league, e, e["version"]), True)] for e in page["entrants"]]
    games = {g["index"]: g for g in page["results"]}
    body = (f'<h1>Finals</h1>{_league_nav(league, viewer)}<section class="card"><dl class="kv">{kv}'
            '</dl></section><h2>Field</h2><p class="meta">Seeded by the leaderboard at the freeze.</p>'
            + html_table("finals-field", [("seed", False), ("team · bot version", True)], field, "Not frozen yet.")
            + '<h2>Ranking</h2>' + _ranking_html(league, page, entrants, withheld or "Ranked once the finals end."))
    event = page["event"]

    def who(name: str) -> str:
        return _who(league, entrants.get(name), name)

    def game_link(index: int) -> str:
        return _game_link(games[index]) if index in games else ""

    if event is not None and "bracket" in event:
        body += '<h2>Bracket</h2>' + bracket_html(event, who, game_link)
    elif event is not None:
        body += '<h2>Rounds</h2>' + rounds_html(event, who, game_link)
    results = [[(_game_link(g), True), (_e(g["words"]), True),
                (" vs ".join(_who(league, entrants.get(n), n) for n in g["seats"]), True),
                (_e(" – ".join(str(s) for s in g["scores"])), False)] for g in page["results"]]
    return (body + '<h2>Games</h2>'
            + html_table("finals-games", [("game", True), ("deal set", True), ("seats", True), ("scores", False)],
                         results, withheld or "No game recorded yet."))


def _ranking_html(league: str, page: dict[str, Any], entrants: dict[str, Any], empty: str) -> str:
    """The finals' ranking: the fit's (Elo and interval) for a round robin, the Swiss table (points, Buchholz,
    wins-draws-losses), or the bracket's placements."""
    fmt = page["settings"].get("format", "round_robin")
    rows = page["ranking"]
    if fmt == "swiss":
        return swiss_table_html(rows, lambda name: _who(league, entrants.get(name), name), table_id="finals-ranking",
                                entrant_header="team · bot version", empty=empty, name_key="version")
    if fmt == "knockout":
        table = [[(_e(r["rank"]), False), (_who(league, entrants.get(r["version"]), r["version"]), True),
                  (_e(r["deal_sets"]), False)] for r in rows]
        return ('<p class="meta">Placed by the bracket: versions out in the same round share a place.</p>'
                + html_table("finals-ranking", [("place", False), ("team · bot version", True),
                                                ("deal sets", False)], table, empty))
    table = [[(_e(r["rank"]), False), (_who(league, entrants.get(r["version"]), r["version"]), True),
              (_e(f'{_elo(r["rating"])} [{_elo(r["low"])}, {_elo(r["high"])}]'), False), (_e(r["deal_sets"]), False),
              (_e(", ".join(r["tied_with"]) or "-"), True)] for r in rows]
    return html_table("finals-ranking", [("rank", False), ("team · bot version", True), ("Elo [95%]", False),
                                         ("deal sets", False), ("not yet told apart from", True)], table, empty)
