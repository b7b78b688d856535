"""Rich tables as the text the CLI prints."""

from __future__ import annotations

import io

from rich.console import Console


def rendered(table: object) -> str:
    """A rich table as text, at the width the CLI uses when its output is not a terminal."""
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()
