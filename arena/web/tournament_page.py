"""A tournament's page as the server renders it before any script runs: its facts and its standings table, the
same cells ``static/dashboard.js`` draws (``data.tournament_detail``'s ``table``, both from :func:`row_cells`), so a
link preview, a plain screenshot or a browser without JavaScript shows the leaderboard. The script replaces it with
its own drawing (the charts, the pairwise table, the games in progress) and keeps it current.
"""

from __future__ import annotations

import html
import urllib.parse
from collections.abc import Mapping
from typing import Any

from arena.tournament.standings import ELO_HEADER, OPENSKILL, SKILL_HEADER, TIE_RULE, StandingsTable, row_cells
from arena.web.tables import html_table


def _e(value: Any) -> str:
    return html.escape(str(value))


def standings_html(tournament: Mapping[str, Any], standings: StandingsTable) -> str:
    """The tournament's heading (``tournament``: ``data.tournament_json``), progress and standings rows (rank,
    entrant, games, W-D-L, points, scored, conceded, faults, rating), as HTML."""
    t = tournament
    tid = urllib.parse.quote(t["id"], safe="")
    rows = []
    for rank, e in enumerate(standings.entrants, start=1):
        cell = row_cells(rank, e, standings.rating)
        rows.append([(_e(cell.rank), False),
                     (f'<a href="/t/{tid}/entrants/{urllib.parse.quote(e.name, safe="")}">{_e(e.name)}</a>', True),
                     (_e(cell.games), False), (_e(cell.wins), False), (_e(cell.draws), False),
                     (_e(cell.losses), False), (_e(cell.points), False), (_e(cell.scored), False),
                     (_e(cell.conceded), False), (_e(cell.faults), False), (_e(cell.rating), False)])
    headers = [("rank", False), ("entrant", True), ("games", False), ("W", False), ("D", False), ("L", False),
               ("points", False), ("scored", False), ("conceded", False), ("faults", False),
               (SKILL_HEADER if standings.rating == OPENSKILL else ELO_HEADER, False)]
    return (f'<h1>{_e(t["name"])}</h1><p class="meta">{_e(t["variant"])} · {_e(t["state"])} · '
            f'{_e(t["games_done"])} of {_e(t["games_total"])} games</p>'
            f'<h2>Standings after {_e(standings.games)} games</h2>'
            + html_table("standings", headers, rows, "No game recorded yet.")
            + f'<p class="caption">{_e(TIE_RULE)}</p>')
