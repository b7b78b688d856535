"""The record file of a run: append one line per finished game and fsync before it counts; read it back
tolerating a torn last line (a crash mid-write), which resume drops.

A line that is complete (ends with a newline) but does not parse is corruption, not a crash: the reader reports
it with its line number and keeps every readable game.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..protocol import tournament_pb2 as tpb
from .format import RECORD_VERSION, from_json_line, to_json_line


@dataclass
class ReadReport:
    """What reading a record file found besides the games."""

    games: int = 0
    torn_tail: bool = False
    """The last line had no newline: a write cut short. Resume truncates it."""
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line number, problem) for complete lines that are not records."""


def iter_records(path: Path, report: ReadReport | None = None) -> Iterator[tpb.GameRecord]:
    """Every readable record in order; problems go to ``report``."""
    report = report if report is not None else ReadReport()
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                report.torn_tail = True
                return
            text = raw.decode("utf-8", errors="replace").strip()
            if not text:
                continue
            try:
                record = from_json_line(text)
            except Exception as error:  # json or protobuf parse errors: report, keep going
                report.bad_lines.append((number, f"not a game record: {str(error)[:200]}"))
                continue
            if record.record_version != RECORD_VERSION:
                report.bad_lines.append((number, f"record version {record.record_version}, this arena reads "
                                                 f"version {RECORD_VERSION}"))
                continue
            report.games += 1
            yield record


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
        while end > 0:
            start = max(0, end - block)
            f.seek(start)
            chunk = f.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            end = start
        else:
            keep = 0
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

    def write(self, record: tpb.GameRecord) -> None:
        self._file.write(to_json_line(record).encode() + b"\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()
