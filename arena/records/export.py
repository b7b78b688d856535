"""Flat results for spreadsheets and scripts: one CSV row per game (``arena export RUN --csv``, and through a
server ``arena games ID --csv``).

A row holds what a spreadsheet filters and sums on, never the moves: the game's schedule index, its duplicate deal
key and seat rotation, the entrant per seat, the match seed, the final score per side, the winning side's entrants,
the ranking of the sides, the faults (kind and seat) and the duration. List cells (one item per seat or per side)
are joined with ``;``. The seed is left empty while the tournament's master seed is not revealed (a run folder
holding ``seed.secret`` without ``seed.json``, or a server tournament that has not finished): a game's seed names
the master seed, and with it every deal still to come, so an export never tells more than a watcher sees.

Rows come from a run folder's records (:func:`rows_of_file`) or from a server's game summaries
(:func:`row_from_summary`); both are written by :func:`write_csv` with Python's csv module, so a name holding a
comma or a quote stays one cell. A record that cannot be exported (an unreadable line, a field of the wrong type)
is skipped with a warning naming its line or game; every other game is exported.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from arena.display import safe_name
from arena.errors import ArenaError
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records, record_line

COLUMNS = ("index", "deal_key", "rotation", "seats", "seed", "scores", "winner", "ranking", "faults", "duration_s")
"""The header row, in column order."""
LIST_SEPARATOR = ";"
"""Between the items of a list cell (seats, scores, ranking, faults)."""
TEAM_SEPARATOR = "+"
"""Between the entrants of a winning side that holds several entrants (a team of two bots)."""
LONGEST_NAME = 1000
"""A name longer than this is cut (names from a server are at most 64 characters; a local file may hold anything)."""


class ExportError(ArenaError, ValueError):
    """A record whose fields do not have the types a row needs, or an export that cannot be written (an
    :class:`~arena.errors.ArenaError`, so the command line prints it as one ``error:`` line)."""


@dataclass(frozen=True)
class GameRow:
    """One game as a flat row; ``winner`` is a side (None for a drawn match), ``faults`` (kind, seat) pairs."""

    index: int
    deal_key: str
    rotation: int
    seats: tuple[str, ...]
    side_of_seat: tuple[int, ...]
    seed: str
    scores: tuple[int, ...]
    winner: int | None
    ranking: tuple[int, ...]
    faults: tuple[tuple[str, int], ...]
    duration_s: float

    def winner_names(self) -> str:
        """The entrants on the winning side, each once, in seat order; empty for a drawn match."""
        if self.winner is None:
            return ""
        sides = self.side_of_seat or tuple(range(len(self.seats)))
        names = [name for name, side in zip(self.seats, sides, strict=False) if side == self.winner]
        return TEAM_SEPARATOR.join(dict.fromkeys(names)) or f"side {self.winner}"

    def cells(self) -> list[str | int]:
        """The row's cells in :data:`COLUMNS` order."""
        return [self.index, self.deal_key, self.rotation, _joined(self.seats), self.seed, _joined(self.scores),
                self.winner_names(), _joined(self.ranking),
                _joined(f"{kind} (seat {seat})" for kind, seat in self.faults), f"{self.duration_s:.3f}"]


def _joined(items: Iterable[Any]) -> str:
    """A list cell: one column per seat would change with the variant, one cell keeps every export's columns."""
    return LIST_SEPARATOR.join(str(item) for item in items)


def _text(value: Any, what: str) -> str:
    """A name or key from a record, without control characters (a CSV is often printed to a terminal)."""
    if not isinstance(value, str):
        raise ExportError(f"{what} is not a string: {value!r:.60}")
    return safe_name(value, LONGEST_NAME)


def _integer(value: Any, what: str) -> int:
    """An integer field (int64 fields come as strings in protobuf's JSON mapping)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ExportError(f"{what} is not an integer: {value!r:.60}")
    try:
        return int(value)
    except ValueError:
        raise ExportError(f"{what} is not an integer: {value!r:.60}") from None


def _list(value: Any, what: str) -> list[Any]:
    """A repeated field, checked: iterating a string or a number would make a wrong row, not an error."""
    if not isinstance(value, list):
        raise ExportError(f"{what} is not a list: {value!r:.60}")
    return value


def _dict(value: Any, what: str) -> Mapping[str, Any]:
    """A message field, checked (``.get`` on anything else would be a traceback)."""
    if not isinstance(value, dict):
        raise ExportError(f"{what} is not an object: {value!r:.60}")
    return value


def row_from_record(record: Mapping[str, Any], *, show_seed: bool) -> GameRow:
    """The row of a stored record (protobuf's JSON mapping of GameRecord, defaults left out); every field's type
    is checked, so a record that another reader would choke on is an :class:`ExportError`, never a traceback."""
    result = _dict(record.get("result", {}), "result")
    faults = []
    for fault in _list(record.get("faults", []), "faults"):
        fault = _dict(fault, "a fault")
        faults.append((_text(fault.get("kind", ""), "a fault's kind"), _integer(fault.get("seat", 0), "a fault's seat")))
    duration = record.get("durationS", 0.0)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)):
        raise ExportError(f"durationS is not a number: {duration!r:.60}")
    winner = result.get("winner")
    return GameRow(
        index=_integer(record.get("index", 0), "index"),
        deal_key=_text(record.get("dealKey", ""), "dealKey"),
        rotation=_integer(record.get("rotation", 0), "rotation"),
        seats=tuple(_text(s, "a seat") for s in _list(record.get("seats", []), "seats")),
        side_of_seat=tuple(_integer(s, "sideOfSeat") for s in _list(record.get("sideOfSeat", []), "sideOfSeat")),
        seed=_text(record.get("seed", ""), "seed") if show_seed else "",
        scores=tuple(_integer(s, "a score") for s in _list(result.get("scores", []), "scores")),
        winner=None if winner is None else _integer(winner, "winner"),
        ranking=tuple(_integer(s, "ranking") for s in _list(result.get("ranking", []), "ranking")),
        faults=tuple(faults),
        duration_s=float(duration),
    )


def row_from_summary(game: Any) -> GameRow:
    """The row of a server's ``GameSummary`` (its ``seed`` is empty until the master seed is revealed)."""
    result = game.result
    return GameRow(
        index=game.index, deal_key=safe_name(game.deal_key, LONGEST_NAME), rotation=game.rotation,
        seats=tuple(safe_name(s, LONGEST_NAME) for s in game.seats), side_of_seat=tuple(game.side_of_seat),
        seed=safe_name(game.seed, LONGEST_NAME), scores=tuple(result.scores),
        winner=result.winner if result.HasField("winner") else None, ranking=tuple(result.ranking),
        faults=tuple((safe_name(f.kind), f.seat) for f in game.faults), duration_s=game.duration_s,
    )


def write_csv(rows: Iterable[GameRow], out: TextIO) -> int:
    """The header and one line per row (``\\n`` line ends); returns the rows written."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    count = 0
    for row in rows:
        writer.writerow(row.cells())
        count += 1
    return count


def save_csv(rows: Iterable[GameRow], path: str | Path) -> int:
    """Write the CSV to ``path`` whole or not at all (a ``.part`` file renamed into place: a full disk never leaves
    half a table that looks complete); returns the rows written."""
    out = Path(path)
    part = out.with_name(out.name + ".part")
    text = io.StringIO()
    count = write_csv(rows, text)
    try:
        part.write_text(text.getvalue(), encoding="utf-8")
        os.replace(part, out)
    except OSError as error:
        part.unlink(missing_ok=True)
        raise ExportError(f"cannot write {out}: {error.strerror or error}") from None
    return count


def seeds_revealed(records: Path) -> bool:
    """Whether the seeds in this record file may be shown: not while its run folder keeps the master seed secret
    (``seed.secret`` and no ``seed.json``). A record file alone, outside any run folder, shows what it holds."""
    return RunFolder(records.parent).seeds_shown()


@dataclass
class ExportReport:
    """What an export skipped, as lines for stderr."""

    rows: list[GameRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    read: ReadReport = field(default_factory=ReadReport)
    """What the reader found (games, unreadable lines, a cut last line)."""


def rows_of_file(records: Path) -> ExportReport:
    """Every exportable game of a record file, in schedule order; each game recorded twice is kept once (the first),
    and every line or game that cannot be exported is a warning."""
    show_seed = seeds_revealed(records)
    report = ExportReport()
    read = report.read
    seen: set[int] = set()
    for record in iter_records(records, read):
        try:
            row = row_from_record(record, show_seed=show_seed)
        except ExportError as error:
            report.warnings.append(f"{records}: game {safe_name(str(record.get('index', 0)), 40)}: {error}; "
                                   f"skipped")
            continue
        if row.index in seen:
            report.warnings.append(f"{records}: game {row.index} is recorded twice; the first record is exported")
            continue
        seen.add(row.index)
        report.rows.append(row)
    _read_warnings(records, report)
    report.rows.sort(key=lambda row: row.index)
    return report


def _read_warnings(records: Path, report: ExportReport) -> None:
    """A warning for each unreadable line of the file and for a cut last one."""
    for number, problem in report.read.bad_lines:
        report.warnings.append(f"{records} line {number}: {problem}; skipped")
    if report.read.torn_tail:
        report.warnings.append(f"{records}: the last line is cut short (a game being written, or a crash); skipped")


def lines_of_file(records: Path) -> tuple[list[bytes], ExportReport]:
    """``arena export RUN --jsonl``: every readable record of a record file (either format), in file order, as the
    JSON lines of the readable ``games.jsonl`` (the bytes the arena writes there: a finished run's export of its
    ``games.jsonl.zst`` is its ``games.jsonl`` byte for byte); the seed left out while the master seed is secret."""
    show_seed = seeds_revealed(records)
    report = ExportReport()
    lines = []
    for record in iter_records(records, report.read):
        if not show_seed:
            record = {key: value for key, value in record.items() if key != "seed"}
        lines.append(record_line(record))
    _read_warnings(records, report)
    return lines, report


def save_lines(lines: list[bytes], path: str | Path) -> int:
    """Write the lines to ``path`` whole or not at all, as :func:`save_csv` does; returns the lines written."""
    out = Path(path)
    part = out.with_name(out.name + ".part")
    try:
        part.write_bytes(b"".join(lines))
        os.replace(part, out)
    except OSError as error:
        part.unlink(missing_ok=True)
        raise ExportError(f"cannot write {out}: {error.strerror or error}") from None
    return len(lines)


__all__ = ["COLUMNS", "GameRow", "ExportError", "row_from_record", "row_from_summary", "write_csv", "save_csv",
           "rows_of_file", "seeds_revealed", "lines_of_file", "save_lines"]
