"""Quick tournament files between tagged random bots, ``arena run`` in a subprocess, and a full disk on cue."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.store import RecordWriter, iter_records

from support.paths import ROOT
from support.processes import bot_processes
from support.waiting import wait_for

RANDOM_BOT = ROOT / "bots" / "python" / "random_bot.py"
PYTHON = sys.executable
ARENA = f"{PYTHON} -m arena"
"""How these tests start the arena, so how its hints must say to start it again."""


def block_text(tag: str, games: int, *, extra_bots: str = "", concurrency: int = 2, output: Path | None = None,
               first: list[str] | None = None) -> str:
    """A quick Block tournament (to 1 point) between two random bots tagged ``tag``; ``first`` replaces the first
    bot's command."""
    alpha = first if first is not None else [PYTHON, str(RANDOM_BOT), "--tag", tag]
    out = f'output = "{output}"\n' if output is not None else ""
    return f'''name = "t"
variant = "block"
games = {games}
seed = "hardening"
concurrency = {concurrency}
{out}
[options]
target = 1

[[bots]]
name = "alpha"
command = {json.dumps(alpha)}

[[bots]]
name = "beta"
command = {json.dumps([PYTHON, str(RANDOM_BOT), "--tag", tag])}
{extra_bots}'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


def arena_run(path: Path, *extra: str, timeout: int = 300, **popen: Any) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "arena", "run", str(path), *extra], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, **popen)


def indices(out: Path) -> list[int]:
    """The schedule indices of the run's recorded games, sorted, from whichever record file it has."""
    return sorted(index_of(record) for record in iter_records(RunFolder(out).records))


def fail_on_write(monkeypatch: pytest.MonkeyPatch, after: int) -> list[int]:
    """Every record write after the first ``after`` raises ENOSPC, as a full disk does."""
    real = RecordWriter.write
    calls: list[int] = []

    def write(self: RecordWriter, record: dict, unit: bytes | None = None) -> None:
        calls.append(1)
        if len(calls) > after:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(self, record, unit)

    monkeypatch.setattr(RecordWriter, "write", write)
    return calls


def kill_run_after(path, out, tag: str, games: int, root) -> bytes:
    """Start ``arena run path --out out`` (its bots marked with ``tag``), kill -9 it once ``games`` games are
    recorded, wait for its bots to die with it; the records file's bytes as the kill left them."""
    process = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
    records_file = out / "games.jsonl"
    wait_for(lambda: records_file.exists() and records_file.read_bytes().count(b"\n") >= games, 120,
             f"{games} games")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    wait_for(lambda: not bot_processes(tag), 20, "the bots to die with the arena")
    return records_file.read_bytes()
