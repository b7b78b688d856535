"""The record file of a run: append one line per finished game and fsync before it counts; read it back
tolerating a torn last line (a crash mid-write), which resume drops.

A line that is complete (ends with a newline) but is not a record is corruption, not a crash: the reader reports
it with its line number and keeps every readable game. "Not a record" includes valid JSON whose fields have the
wrong types: every line is checked against ``GameRecord`` (:mod:`.schema`) before it is handed to anyone, so the
runner's resume, the server and every replay read only records whose every field has its type. Records are read as
plain dicts (protobuf's JSON mapping of ``GameRecord``, see :mod:`.jsonform`); ``to_message`` makes the protobuf
message when one is wanted. ``repair`` moves the lines that are not records out of the file, into a side file.

This module owns the record file's format, for every reader and writer: a file whose name ends in ``.zst``
(``games.jsonl.zst``, what new runs write) holds one zstd frame per game (:mod:`.compact`), any other name one JSON
line per game (``games.jsonl``, what runs wrote before, and still append to on resume). Both are read the same way
and yield the same records; in the compact file a "line number" is the record's place in the file (from 1), and a
damaged frame is a bad line like a line that is not JSON.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from google.protobuf import json_format

from arena.protocol import tournament_pb2 as tpb
from arena.records import compact
from arena.records.compact import Unit
from arena.records.schema import Record, RecordFormatError, parse_record


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


def is_compact(path: Path) -> bool:
    """Whether ``path`` is (or is to be) a compact record file (:mod:`.compact`): by its name, ``*.zst``."""
    return path.name.endswith(".zst")


def complete_lines(path: Path, report: ReadReport) -> Iterator[tuple[int, bytes]]:
    """Every complete, non-blank record line with its number (from 1), for :func:`~.schema.parse_record`: a JSON
    line's bytes, or from a compact file its frame decompressed, a :class:`~.compact.PackedLine` (a damaged frame is
    a bad line in ``report`` here). A cut last line sets ``report.torn_tail``."""
    if not is_compact(path):
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    report.torn_tail = True
                    return
                if raw.strip():
                    yield number, raw
        return
    for number, unit in enumerate(compact_units(path, report), 1):
        try:
            if unit.problem:
                raise RecordFormatError(unit.problem)
            line = compact.PackedLine(compact.decode(unit.raw))
        except RecordFormatError as error:
            report.bad_lines.append((number, str(error)))
            continue
        yield number, line


CHUNK_BYTES = 1 << 20


def compact_units(path: Path, report: ReadReport) -> Iterator[Unit]:
    """Every unit of a compact file, read a chunk at a time; a unit cut short at the end sets ``report.torn_tail``."""
    with open(path, "rb") as f:
        pending, base = b"", 0
        while True:
            chunk = f.read(CHUNK_BYTES)
            pending += chunk
            units, used = compact.split(pending, base, final=not chunk)
            yield from units
            pending, base = pending[used:], base + used
            if not chunk:
                report.torn_tail = bool(pending)
                return


def split_units(path: Path, data: bytes, base: int, final: bool = False) -> tuple[list[Unit], int]:
    """The whole units in ``data`` (the bytes of the record file ``path`` from offset ``base``) and the bytes they
    take, in either format (a JSON line's unit is the line without its newline, blank lines included): for readers
    that keep offsets (the server's record index)."""
    if is_compact(path):
        return compact.split(data, base, final)
    units, position = [], 0
    while (end := data.find(b"\n", position)) >= 0:
        units.append(Unit(base + position, end - position, data[position:end]))
        position = end + 1
    return units, position


def unit_line(path: Path, raw: bytes) -> bytes:
    """The JSON line a unit of ``path`` holds (a compact frame decompressed: its line packed, but starting as the
    readable one does); RecordFormatError when it is damaged."""
    return compact.decode(raw) if is_compact(path) else raw


def parse_line(path: Path, line: bytes) -> Record:
    """The checked record of a line of :func:`unit_line`; RecordFormatError says why it is not one."""
    return parse_record(compact.PackedLine(line) if is_compact(path) else line)


def looks_like_records(path: Path) -> bool:
    """Whether the file starts as a record file of its kind would (not a tournament file or a log given by mistake);
    OSError when it cannot be read."""
    with open(path, "rb") as f:
        start = f.read(4096)
    return compact.looks_compact(start) if is_compact(path) else start.lstrip().startswith(b"{")


TYPICAL_GAME_BYTES = {False: 20_000, True: 1_500}
"""About how many bytes a game takes in each format (is_compact -> bytes): to guess a file's games from its size."""


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
    """Truncate an unfinished last record (a JSON line without its newline, a compact unit cut short); returns the
    bytes dropped."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    keep = _compact_intact(path) if is_compact(path) else _lines_intact(path, size)
    if keep < size:
        with open(path, "rb+") as f:
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
    return size - keep


def _lines_intact(path: Path, size: int) -> int:
    """The bytes of a JSON lines file up to its last newline (read from the end: a long file costs one block)."""
    with open(path, "rb") as f:
        block = 1 << 16
        end = size
        while end > 0:
            start = max(0, end - block)
            f.seek(start)
            chunk = f.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            end = start
    return 0


def _compact_intact(path: Path) -> int:
    """The bytes of a compact file up to the end of its last whole unit (damaged units included: they are not a
    torn tail, and repair, not resume, deals with them)."""
    end = 0
    for unit in compact_units(path, ReadReport()):
        end = unit.offset + unit.length
    return end


def record_line(record: Record) -> bytes:
    """A record as its JSON line (compact separators, UTF-8, newline included), as every record file holds it."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def record_unit(record: Record, compact_file: bool) -> bytes:
    """A record's bytes as a record file holds them: a compact unit for a ``*.zst`` file, its JSON line otherwise."""
    return compact.encode(record) if compact_file else record_line(record)


def record_of_unit(unit: bytes, compact_file: bool) -> Record:
    """The record :func:`record_unit` made ``unit`` of, read back as a record file's reader reads it."""
    if not compact_file:
        return parse_record(unit)
    units, _ = compact.split(unit, 0, final=True)
    if len(units) != 1 or units[0].problem:
        raise RecordFormatError("not one record unit")
    return parse_record(compact.PackedLine(compact.decode(units[0].raw)))


class RecordWriter:
    """Appends records; each is flushed and fsynced before ``write`` returns (only then does the game count). The
    file's name decides the format (:func:`is_compact`): a compact unit for ``*.zst``, a JSON line otherwise; either
    is one ``write``, so a crash leaves at most the last one cut short.

    A writer holds a shared ``flock`` on the file for as long as it is open, so that :func:`repair` (which takes it
    exclusively) never replaces a file a tournament is appending to. The lock dies with the process, kill -9 too.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.compact = is_compact(path)
        self._file = _open_locked(path)

    def write(self, record: Record, unit: bytes | None = None) -> None:
        """Append ``record``; ``unit`` is its bytes in this file's format when they were made elsewhere (by
        :func:`record_unit`, in a worker process: the one writer then only appends and fsyncs)."""
        self._file.write(unit if unit is not None else record_unit(record, self.compact))
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
    """Where :func:`repair` puts the lines it moves: ``games.jsonl`` (or ``games.jsonl.zst``) ->
    ``games.rejected.jsonl``, beside it."""
    name = path.name.removesuffix(".zst")
    stem, dot, suffix = name.rpartition(".")
    return path.with_name(f"{stem}.rejected.{suffix}" if dot else f"{name}.rejected")


def repair(path: Path) -> RepairReport:
    """Move every line that is not a usable record, and a cut last line, to the side file; keep the rest.

    Each moved line is appended to the side file as one JSON object, ``{"line": N, "problem": "...", "text":
    "..."}`` (``text`` the line as it was, without its newline; bytes that are not UTF-8 kept as ``\\udcXX``
    escapes, which Python's ``surrogateescape`` turns back into the same bytes; from a compact file ``{"record": N,
    "problem": "...", "base64": "..."}``, the unit's bytes as stored), and fsynced before the record file
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
        kept, moved = _sort_units(original, report) if is_compact(path) else _sort_lines(original, report)
        if not moved:
            return report
        _append_moved(report.side_file, moved, is_compact(path))
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


def _sort_units(f: BinaryIO, report: RepairReport) -> tuple[list[bytes], list[tuple[int, str, bytes]]]:
    """:func:`_sort_lines` for a compact file: the units to keep (header and frame, as stored) and those to move."""
    data = f.read()
    units, used = compact.split(data, 0, final=True)
    kept: list[bytes] = []
    moved: list[tuple[int, str, bytes]] = []
    for number, unit in enumerate(units, 1):
        stored = data[unit.offset - compact.HEADER.size if not unit.problem else unit.offset:unit.offset + unit.length]
        try:
            if unit.problem:
                raise RecordFormatError(unit.problem)
            parse_record(compact.unpack(compact.decode(unit.raw)))
        except RecordFormatError as error:
            moved.append((number, str(error), stored))
            continue
        report.kept += 1
        kept.append(stored)
    if used < len(data):
        moved.append((len(units) + 1, "cut short (the last record, an interrupted write)", data[used:]))
    report.moved = [(number, problem) for number, problem, _ in moved]
    return kept, moved


def _append_moved(side_file: Path, moved: list[tuple[int, str, bytes]], compact_file: bool) -> None:
    with open(side_file, "ab") as f:
        for number, problem, raw in moved:
            if compact_file:  # binary: kept whole, as base64 of the unit's bytes
                entry: dict[str, int | str] = {"record": number, "problem": problem,
                                               "base64": base64.b64encode(raw).decode()}
            else:
                entry = {"line": number, "problem": problem,
                         "text": raw.rstrip(b"\n").decode("utf-8", "surrogateescape")}
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
