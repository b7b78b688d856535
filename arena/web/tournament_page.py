"""A tournament's page as the server renders it before any script runs: its facts and its standings table, the
same cells ``static/dashboard.js`` draws (``data.tournament_detail``'s ``table``, both from :func:`row_cells`), so a
link preview, a plain screenshot or a browser without JavaScript shows the leaderboard. The script replaces it with
its own drawing (the charts, the pairwise table, the games in progress) and keeps it current.

A Swiss or knockout tournament's event (its Swiss table and rounds, or its bracket) is drawn here only, by
:mod:`arena.web.events` as the league's finals are: the page's first drawing holds it, and the tournament's JSON
carries the same HTML (``event_html``) for the script to put in its place, so the two never differ and the bracket
is written once, in Python.
"""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Collection, Mapping
from typing import Any

from arena.tournament.standings import (
    CALIBRATION_HEADER,
    ELO_HEADER,
    OPENSKILL,
    SKILL_HEADER,
    TIE_RULE,
    StandingsTable,
    row_cells,
    shows_calibration,
)
from arena.web.events import event_html
from arena.web.tables import html_table


def _e(value: Any) -> str:
    return html.escape(str(value))


def event_section(tournament_id: str, event: Mapping[str, Any] | None, released: Collection[int]) -> str:
    """A Swiss or knockout event's section ("" for another format): each entrant a link to its page, and each game
    in ``released`` (recorded, its deal set complete: anyone may open it) a link to its page; any other game of a
    match is not named at all, so no page tells of a game its viewer may not open."""
    if event is None:
        return ""
    tid = urllib.parse.quote(tournament_id, safe="")

    def who(name: str) -> str:
        return f'<a href="/t/{tid}/entrants/{urllib.parse.quote(name, safe="")}">{_e(name)}</a>'

    def game_link(index: int) -> str:
        return f'<a href="/t/{tid}/games/{index}">game {index}</a>' if index in released else ""

    return event_html(event, who, game_link)


def standings_html(tournament: Mapping[str, Any], standings: StandingsTable, event: str = "") -> str:
    """The tournament's heading (``tournament``: ``data.tournament_json``), progress and standings rows (rank,
    entrant, games, W-D-L, points, scored, conceded, faults, rating, and the beliefs' calibration when some entrant
    sent beliefs), as HTML; ``event``, the section of a Swiss or
    knockout event (:func:`event_section`), goes before the standings."""
    t = tournament
    tid = urllib.parse.quote(t["id"], safe="")
    rows = []
    calibration = shows_calibration(standings.entrants)
    for rank, e in enumerate(standings.entrants, start=1):
        cell = row_cells(rank, e, standings.rating)
        rows.append([(_e(cell.rank), False),
                     (f'<a href="/t/{tid}/entrants/{urllib.parse.quote(e.name, safe="")}">{_e(e.name)}</a>', True),
                     (_e(cell.games), False), (_e(cell.wins), False), (_e(cell.draws), False),
                     (_e(cell.losses), False), (_e(cell.points), False), (_e(cell.scored), False),
                     (_e(cell.conceded), False), (_e(cell.faults), False), (_e(cell.rating), False)]
                    + ([(_e(cell.calibration), False)] if calibration else []))
    headers = [("rank", False), ("entrant", True), ("games", False), ("W", False), ("D", False), ("L", False),
               ("points", False), ("scored", False), ("conceded", False), ("faults", False),
               (SKILL_HEADER if standings.rating == OPENSKILL else ELO_HEADER, False)]
    if calibration:
        headers.append((CALIBRATION_HEADER, False))
    return (f'<h1>{_e(t["name"])}</h1><p class="meta">{_e(t["variant"])} · {_e(t["state"])} · '
            f'{_e(t["games_done"])} of {_e(t["games_total"])} games</p>{event}'
            f'<h2>Standings after {_e(standings.games)} games</h2>'
            + html_table("standings", headers, rows, "No game recorded yet.")
            + f'<p class="caption">{_e(TIE_RULE)}</p>')
