"""The record file of a run: append one line per finished game and fsync before it counts; read it back
tolerating a torn last line (a crash mid-write), which resume drops.

A line that is complete (ends with a newline) but is not a record is corruption, not a crash: the reader reports
it with its line number and keeps every readable game. "Not a record" includes valid JSON whose fields have the
wrong types: every line is checked against ``GameRecord`` (:mod:`.schema`) before it is handed to anyone, so the
runner's resume, the server and every replay read only records whose every field has its type. Records are read as
plain dicts (protobuf's JSON mapping of ``GameRecord``, see :mod:`.jsonform`); ``to_message`` makes the protobuf
message when one is wanted. ``repair`` moves the lines that are not records out of the file, into a side file.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from google.protobuf import json_format

from ..protocol import tournament_pb2 as tpb
from .schema import Record, RecordFormatError, parse_record


@dataclass
class ReadReport:
    """What reading a record file found besides the games."""

    games: int = 0
    torn_tail: bool = False
    """The last line had no newline: a write cut short. Resume truncates it."""
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line number, problem) for complete lines that are not records."""


def iter_records(path: Path, report: ReadReport | None = None, *, complete: bool = True) -> Iterator[Record]:
    """Every readable record in order, as checked dicts (:func:`.schema.parse_record`); problems go to ``report``.

    Raises only ``OSError`` (the file cannot be opened or read): a line that is not a record, whatever it holds,
    is a bad line in ``report``. With ``complete`` False, records without a usable result are kept (verification).
    """
    report = report if report is not None else ReadReport()
    for number, raw in complete_lines(path, report):
        try:
            record = parse_record(raw, complete=complete)
        except RecordFormatError as error:
            report.bad_lines.append((number, str(error)))
            continue
        report.games += 1
        yield record


def complete_lines(path: Path, report: ReadReport) -> Iterator[tuple[int, bytes]]:
    """Every complete, non-blank line with its number (from 1); a cut last line sets ``report.torn_tail``."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                report.torn_tail = True
                return
            if raw.strip():
                yield number, raw


def to_message(record: Record) -> tpb.GameRecord:
    """The protobuf message of a checked record (slow: for single games, not for scans).

    Raises :class:`~.schema.RecordFormatError` for a dict that protobuf refuses (one that did not come through
    :func:`iter_records`), never protobuf's own ``ParseError``.
    """
    try:
        return json_format.ParseDict(record, tpb.GameRecord())
    except json_format.ParseError as error:
        raise RecordFormatError(f"not a game record: {str(error)[:200]}") from None


def drop_torn_tail(path: Path) -> int:
    """Truncate an unfinished last line; returns the bytes dropped."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as f:
        block = 1 << 16
        end = size
        keep = 0
        while end > 0:
            start = max(0, end - block)
            f.seek(start)
            chunk = f.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            end = start
        if keep < size:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
        return size - keep


class RecordWriter:
    """Appends records; each is flushed and fsynced before ``write`` returns (only then does the game count).

    A writer holds a shared ``flock`` on the file for as long as it is open, so that :func:`repair` (which takes it
    exclusively) never replaces a file a tournament is appending to. The lock dies with the process, kill -9 too.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = _open_locked(path)

    def write(self, record: Record) -> None:
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        self._file.write(line)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def _open_locked(path: Path) -> BinaryIO:
    """The file opened for appending under a shared lock, and still the file at ``path`` once locked (a repair
    that held the lock meanwhile may have put a new file there: then the new one is opened)."""
    while True:
        f = open(path, "ab")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH)
        except OSError:  # a file system without flock: append unlocked, as before
            return f
        try:
            if os.fstat(f.fileno()).st_ino == os.stat(path).st_ino:
                return f
        except FileNotFoundError:
            pass
        f.close()


# --- repair -------------------------------------------------------------------------------------------------------


@dataclass
class RepairReport:
    """What :func:`repair` did."""

    path: Path
    side_file: Path
    kept: int = 0
    """Records kept in the file, in their order."""
    moved: list[tuple[int, str]] = field(default_factory=list)
    """(line number, problem) of every line moved to the side file."""


def side_file_of(path: Path) -> Path:
    """Where :func:`repair` puts the lines it moves: ``games.jsonl`` -> ``games.rejected.jsonl``, beside it."""
    return path.with_name(f"{path.stem}.rejected{path.suffix}")


def repair(path: Path) -> RepairReport:
    """Move every line that is not a usable record, and a cut last line, to the side file; keep the rest.

    Each moved line is appended to the side file as one JSON object, ``{"line": N, "problem": "...", "text":
    "..."}`` (``text`` the line as it was, without its newline; bytes that are not UTF-8 kept as ``\\udcXX``
    escapes, which Python's ``surrogateescape`` turns back into the same bytes), and fsynced before the record file
    changes. The record file is then replaced whole: the kept lines, byte for byte, are written to a temporary file
    beside it, fsynced, and renamed over it (and the folder fsynced), so a crash at any point leaves either the old
    file or the new one, and no moved line only in the old one. Refused while a :class:`RecordWriter` has the file
    open (a tournament running): raises ``BlockingIOError``. Other problems raise ``OSError``.
    """
    report = RepairReport(path, side_file_of(path))
    with open(path, "rb") as original:
        try:
            fcntl.flock(original.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise
        except OSError:
            pass  # no flock on this file system
        kept, moved = _sort_lines(original, report)
        if not moved:
            return report
        _append_moved(report.side_file, moved)
        _replace(path, kept, os.fstat(original.fileno()).st_mode)
    return report


def _sort_lines(f: BinaryIO, report: RepairReport) -> tuple[list[bytes], list[tuple[int, str, bytes]]]:
    """The lines to keep (records and blank lines) and those to move, (number, problem, bytes), in file order."""
    kept: list[bytes] = []
    moved: list[tuple[int, str, bytes]] = []
    for number, raw in enumerate(f, 1):
        if not raw.endswith(b"\n"):
            moved.append((number, "cut short (the last line, without its newline: an interrupted write)", raw))
            continue
        if raw.strip():
            try:
                parse_record(raw)
            except RecordFormatError as error:
                moved.append((number, str(error), raw))
                continue
            report.kept += 1
        kept.append(raw)
    report.moved = [(number, problem) for number, problem, _ in moved]
    return kept, moved


def _append_moved(side_file: Path, moved: list[tuple[int, str, bytes]]) -> None:
    with open(side_file, "ab") as f:
        for number, problem, raw in moved:
            text = raw.rstrip(b"\n").decode("utf-8", "surrogateescape")
            entry = {"line": number, "problem": problem, "text": text}
            f.write(json.dumps(entry, ensure_ascii=True).encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())


def _replace(path: Path, lines: list[bytes], mode: int) -> None:
    """Replace ``path`` atomically with ``lines``, keeping its permissions."""
    temporary = path.with_name(f".{path.name}.repair")
    try:
        with open(temporary, "wb") as f:
            os.fchmod(f.fileno(), mode & 0o7777)
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
