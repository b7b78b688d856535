"""Where a league keeps its games under a server's data folder: one folder per league, and in it a run folder per
ladder table, per challenge, and the finals'. Apart from the tables' runs (:mod:`.table_run`, which writes them),
so that ``arena export DATA --league NAME`` finds them without loading the league's database.
"""

from __future__ import annotations

from pathlib import Path

from arena.records.run_folder import RunFolder

LEAGUES = "leagues"
"""The folder of a server's data folder that holds one folder per league (:func:`league_folder`)."""
TABLES = "tables"
"""In a league's folder: one run folder per ladder table, named by the table's id."""
CHALLENGES = "challenges"
"""In a league's folder: one run folder per challenge, named by its id."""
FINALS = "finals"
"""In a league's folder: the finals' run folder."""

def league_folder(data: Path, name: str) -> Path:
    """Where league ``name`` keeps its runs under a server's data folder (``arena serve --data``)."""
    return data / LEAGUES / name


def run_folders(folder: Path) -> list[tuple[str, Path]]:
    """Every run folder of a league's folder that holds games, as (its path relative to the league's folder, its
    path): the ladder's tables and the challenges in the order of their ids, then the finals. What
    ``arena export DATA --league NAME --parquet DIR`` exports."""
    found: list[tuple[str, Path]] = []
    for kind in (TABLES, CHALLENGES):
        parent = folder / kind
        children = [p for p in parent.iterdir() if p.name.isdigit()] if parent.is_dir() else []
        for child in sorted(children, key=lambda p: int(p.name)):
            if RunFolder(child).holds_games():
                found.append((f"{kind}/{child.name}", child))
    if RunFolder(folder / FINALS).holds_games():
        found.append((FINALS, folder / FINALS))
    return found
