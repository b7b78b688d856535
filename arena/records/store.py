"""The record file of a run: append one line per finished game and fsync before it counts; read it back
tolerating a torn last line (a crash mid-write), which resume drops.

A line that is complete (ends with a newline) but is not a record is corruption, not a crash: the reader reports
it with its line number and keeps every readable game. Records are read as plain dicts (protobuf's JSON mapping of
``GameRecord``, see :mod:`.jsonform`); ``to_message`` makes the protobuf message when one is wanted.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from google.protobuf import json_format

from ..protocol import tournament_pb2 as tpb
from .jsonform import RECORD_VERSION

Record = dict[str, Any]


@dataclass
class ReadReport:
    """What reading a record file found besides the games."""

    games: int = 0
    torn_tail: bool = False
    """The last line had no newline: a write cut short. Resume truncates it."""
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line number, problem) for complete lines that are not records."""


def iter_records(path: Path, report: ReadReport | None = None) -> Iterator[Record]:
    """Every readable record in order, as dicts; problems go to ``report``."""
    report = report if report is not None else ReadReport()
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                report.torn_tail = True
                return
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError as error:
                report.bad_lines.append((number, f"not JSON: {str(error)[:120]}"))
                continue
            if not isinstance(record, dict) or "recordVersion" not in record:
                report.bad_lines.append((number, "not a game record (no recordVersion)"))
                continue
            if record["recordVersion"] != RECORD_VERSION:
                report.bad_lines.append((number, f"record version {record['recordVersion']!r}; this arena reads "
                                                 f"version {RECORD_VERSION}"))
                continue
            problem = _incomplete(record)
            if problem:
                report.bad_lines.append((number, f"not a complete game record: {problem}"))
                continue
            report.games += 1
            yield record


def _incomplete(record: Record) -> str | None:
    """What a record lacks that every reader relies on (index, seats, result), or None."""
    try:
        if int(record.get("index", 0)) < 0:
            return "a negative index"
    except (TypeError, ValueError):
        return f"index {record.get('index')!r} is not a number"
    if not isinstance(record.get("seats"), list) or not record["seats"]:
        return "no seats"
    if not isinstance(record.get("result"), dict):
        return "no result"
    return None


def to_message(record: Record) -> tpb.GameRecord:
    """The protobuf message of a record (slow: for single games, not for scans)."""
    return json_format.ParseDict(record, tpb.GameRecord())


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
    """Appends records; each is flushed and fsynced before ``write`` returns (only then does the game count)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = open(path, "ab")

    def write(self, record: Record) -> None:
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        self._file.write(line)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()
