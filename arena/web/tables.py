"""HTML tables in the dashboard's style, for the pages rendered on the server (the league's, a tournament's first
drawing, a Swiss or knockout event's): one place for their markup, so that every page's tables read alike."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

Cell = tuple[str, bool]
"""A cell's HTML and whether it is left-aligned (text) rather than right-aligned (numbers)."""


def escape(value: Any) -> str:
    """A value as HTML text (None as nothing)."""
    return html.escape("" if value is None else str(value))


def html_table(table_id: str, headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[Cell]], empty: str) -> str:
    """A table in the dashboard's style (each header and cell left-aligned or not), or ``empty`` when no row."""
    if not rows:
        return f'<p class="meta">{escape(empty)}</p>'
    head = "".join(f'<th class="{"l" if left else ""}">{escape(text)}</th>' for text, left in headers)
    body = "".join("<tr>" + "".join(f'<td class="{"l" if left else ""}">{cell}</td>' for cell, left in row) + "</tr>"
                   for row in rows)
    return f'<section class="card"><table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>'
