"""A tournament's page as the server renders it before any script runs: its facts and its standings table, the
same cells ``static/dashboard.js`` draws (``data.tournament_detail``'s ``standings`` and ``table``), so a link preview,
a plain screenshot or a browser without JavaScript shows the leaderboard. The script replaces it with its own
drawing (the charts, the pairwise table, the games in progress) and keeps it current.
"""

from __future__ import annotations

import html
import urllib.parse
from typing import Any

from arena.web.league import html_table


def _e(value: Any) -> str:
    return html.escape(str(value))


def standings_html(detail: dict[str, Any]) -> str:
    """The tournament's heading, progress and standings rows (rank, entrant, games, W-D-L, points, scored,
    conceded, faults, rating), as HTML."""
    t = detail["tournament"]
    tid = urllib.parse.quote(t["id"], safe="")
    cells = detail["table"]["rows"]
    rows = [[(_e(rank), False),
             (f'<a href="/t/{tid}/entrants/{urllib.parse.quote(e["name"], safe="")}">{_e(e["name"])}</a>', True),
             (_e(e["games"]), False), (_e(e["wins"]), False), (_e(e["draws"]), False), (_e(e["losses"]), False),
             (_e(cell["points"]), False), (_e(cell["scored"]), False), (_e(cell["conceded"]), False),
             (_e(e["faults"]), False), (_e(cell["rating"]), False)]
            for rank, (e, cell) in enumerate(zip(detail["standings"]["entrants"], cells, strict=True), start=1)]
    headers = [("rank", False), ("entrant", True), ("games", False), ("W", False), ("D", False), ("L", False),
               ("points", False), ("scored", False), ("conceded", False), ("faults", False),
               (detail["table"]["rating_header"], False)]
    return (f'<h1>{_e(t["name"])}</h1><p class="meta">{_e(t["variant"])} · {_e(t["state"])} · '
            f'{_e(t["games_done"])} of {_e(t["games_total"])} games</p>'
            f'<h2>Standings after {_e(detail["standings"].get("games", t["games_done"]))} games</h2>'
            + html_table("standings", headers, rows, "No game recorded yet.")
            + f'<p class="caption">{_e(detail["table"]["tie_rule"])}</p>')
