"""The wire, visible when asked: ``arena --log-level debug`` (or ``ARENA_LOG_WIRE=1``) logs every request to a bot
and its reply as one shortened line on stderr, over gRPC and over stdio alike; off by default; never in a record.

Real bot processes over their real transports, as a user runs ``arena play`` and ``arena run``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.players.client import WIRE_LINE
from arena.records.jsonform import index_of
from support.paths import ROOT

BOTS = {"grpc": "bots/python/greedy_bot.py", "stdio": "bots/stdio/bot.py --policy heaviest"}
"""Bots whose choices are the same at every run (the records of two runs can be compared)."""
HEAD = "DEBUG arena.wire: "
REQUEST = re.compile(r"^DEBUG arena\.wire: seat0-\w+ -> act match [0-9a-f]{8} move \d+ seat 0: \{\"time\":")
REPLY = re.compile(r"^DEBUG arena\.wire: seat0-\w+ <- act match [0-9a-f]{8} move \d+ seat 0: \d+\.\d ms \{\"index\":")
TIMING = re.compile(r"\(\d+\.\d ms\)")


def arena(*args: str, wire_env: bool = False, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # The readable record file: the test scans every file of the run for the wire log's text, which a compressed
    # games.jsonl.zst would hide.
    env = {"COLUMNS": "200", "PATH": os.environ["PATH"], "ARENA_RECORDS": "jsonl"}
    if wire_env:
        env["ARENA_LOG_WIRE"] = "1"
    out = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300,
                         env=env, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out


def play(protocol: str, *global_options: str, wire_env: bool = False) -> subprocess.CompletedProcess:
    return arena(*global_options, "play", "--variant", "draw", "--seed", "7", "--protocol", protocol, "--no-sandbox",
                 f"{sys.executable} {BOTS[protocol]}", "builtin:greedy", wire_env=wire_env)


def wire_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "arena.wire" in line]


def the_match(stdout: str) -> list[str]:
    """The printed record of a match, without what differs from run to run anyway (think times, the log folder)."""
    return [TIMING.sub("(T)", line) for line in stdout.splitlines() if not line.startswith("bot logs: ")]


@pytest.mark.parametrize("protocol", ["grpc", "stdio"])
def test_debug_shows_each_request_and_reply(protocol: str) -> None:
    quiet = play(protocol)
    logged = play(protocol, "--log-level", "debug")
    assert wire_lines(quiet.stderr) == []
    lines = wire_lines(logged.stderr)
    bot = Path(BOTS[protocol].split()[0]).stem
    assert lines[0] == f'{HEAD}seat0-{bot} -> hello: {{"arenaVersion":"0.1.0","protocolVersion":1}}'
    assert re.match(rf'^{HEAD}seat0-\w+ <- hello: {{"name":"', lines[1]), lines[1]
    requests = [line for line in lines if REQUEST.match(line)]
    replies = [line for line in lines if REPLY.match(line)]
    assert requests and len(requests) == len(replies), lines[:6]
    assert any(" -> notify match " in line for line in lines)
    assert max(len(line) for line in lines) <= len(HEAD) + WIRE_LINE
    assert the_match(logged.stdout) == the_match(quiet.stdout)  # the same match, the log aside


def test_the_variable_turns_it_on_at_any_level() -> None:
    lines = wire_lines(play("grpc", wire_env=True).stderr)
    assert any(REQUEST.match(line) for line in lines) and any(REPLY.match(line) for line in lines)


VARYING = ("thinkMs", "startedAt", "durationS", "matchId")


def without_times(value: Any) -> Any:
    """A record without the fields that differ between two runs of the same tournament (times, the match id)."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def test_the_wire_log_never_reaches_the_records(tmp_path: Path) -> None:
    spec = tmp_path / "wire.toml"
    spec.write_text(f"""
name = "wire"
variant = "draw"
games = 1
seed = "wire-log"
sandbox = false
output = "unused"
[[bots]]
name = "grpc-greedy"
command = "{sys.executable} {ROOT / BOTS['grpc']}"
[[bots]]
name = "stdio-heaviest"
command = "{sys.executable} {ROOT / BOTS['stdio']}"
protocol = "stdio"
""")
    folders = {}
    for mode in ("quiet", "wire"):
        folders[mode] = tmp_path / mode
        out = arena("run", str(spec), "--out", str(folders[mode]), wire_env=mode == "wire")
        assert (mode == "wire") == bool(wire_lines(out.stderr)), out.stderr[-2000:]
    records = {mode: sorted((json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()),
                            key=index_of)  # written as they finish: the two games in either order
               for mode, folder in folders.items()}
    assert len(records["wire"]) == 2
    assert [without_times(r) for r in records["wire"]] == [without_times(r) for r in records["quiet"]]
    for path in folders["wire"].rglob("*"):
        if path.is_file():
            assert "arena.wire" not in path.read_text(errors="replace"), path
