"""Durability of the records: a game counts, and is announced to anyone (standings, watchers, the server), only
once its line is in games.jsonl and fsynced. tests/README.md says which test guards which promise."""

from __future__ import annotations

import json
import os
import sys
from itertools import accumulate
from pathlib import Path

import pytest

from arena.records.jsonform import index_of
from arena.records.store import RecordWriter
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.paths import ROOT

RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")


@pytest.mark.fast
def test_write_fsyncs_the_file_after_writing_its_line(tmp_path: Path, monkeypatch) -> None:
    """Guards: the fsync in RecordWriter.write, on the record file's descriptor, after the line reached the file."""
    path = tmp_path / "games.jsonl"
    synced: list[tuple[int, int, bytes]] = []  # (device, inode) of each descriptor fsynced, and the file's bytes then
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino, path.read_bytes()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writer = RecordWriter(path)
    try:
        identity = (path.stat().st_dev, path.stat().st_ino)
        writer.write({"recordVersion": 1, "index": "1", "seats": ["a", "b"]})
        first = b'{"recordVersion":1,"index":"1","seats":["a","b"]}\n'
        assert synced == [(*identity, first)]  # before write returned, the line already in the file
        writer.write({"recordVersion": 1, "index": "2", "seats": ["é"]})
        second = '{"recordVersion":1,"index":"2","seats":["é"]}\n'.encode()
        assert synced == [(*identity, first), (*identity, first + second)]
    finally:
        writer.close()
    assert path.read_bytes() == first + second


async def test_on_game_sees_its_line_already_fsynced(tmp_path: Path, monkeypatch) -> None:
    """Guards: the runner tells ``on_game`` (standings, watchers, the server) of a game only after its line is
    written and fsynced. A real tournament with real bot processes."""
    run = tmp_path / "run"
    records = run / "games.jsonl"
    synced: list[tuple[int, int, int]] = []  # (device, inode, size) of each file fsynced
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino, info.st_size))

    monkeypatch.setattr(os, "fsync", fsync)
    told: list[tuple[int, int, bool]] = []  # (game, how many lines of the file are its record, fsynced through it)

    def on_game(message: dict) -> None:
        info = records.stat()
        lines = records.read_bytes().splitlines(keepends=True)
        ends = [end for line, end in zip(lines, accumulate(map(len, lines))) if json.loads(line) == message]
        durable = len(ends) == 1 and any((device, inode) == (info.st_dev, info.st_ino) and size >= ends[0]
                                         for device, inode, size in synced)
        told.append((index_of(message), len(ends), durable))

    table = {"name": "durable", "variant": "block", "players": 2, "games": 2, "duplicate": True, "seed": "guard",
             "concurrency": 2, "options": {"target": 1},
             "bots": [{"name": name, "command": [sys.executable, RANDOM_BOT]} for name in ("a", "b")]}
    summary = await run_tournament(spec_from_dict(table), "# test\n", run, on_game=on_game)
    assert summary.played_now == 4
    assert sorted(told) == [(0, 1, True), (1, 1, True), (2, 1, True), (3, 1, True)]
