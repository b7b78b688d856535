"""The example bots as users run them: Python against Node.js through ``arena play`` in every variant, and
``arena check-bot`` passing the good bots and failing each misbehaving one with a clear message."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.play import play_once
from arena.referee import TimeControl
from arena.rules import VARIANTS, new_game
from support.paths import ROOT

PY_RANDOM = f"{sys.executable} {ROOT / 'bots/python/random_bot.py'}"
PY_GREEDY = f"{sys.executable} {ROOT / 'bots/python/greedy_bot.py'}"
NODE_BOT = f"node {ROOT / 'bots/node/bot.js'}"
BAD_BOT = f"{sys.executable} {ROOT / 'tests/bots/bad_bot.py'}"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed on this machine")


@needs_node
@pytest.mark.fast
def test_node_packages_are_installed_by_setup() -> None:
    assert (ROOT / "bots/node/node_modules/@grpc/grpc-js").is_dir(), "run scripts/setup.sh (npm ci in bots/node)"


@needs_node
@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_python_and_node_bots_play_every_variant(variant: str, tmp_path: Path) -> None:
    game = new_game(variant)
    bots = [PY_GREEDY, NODE_BOT, PY_RANDOM, f"{NODE_BOT} --policy heaviest"][: max(2, game.players)]
    record = await play_once(game, bots, seed=f"play/{variant}", time_control=TimeControl(move_ms=5000),
                             log_dir=tmp_path, startup_s=20)
    assert record.faults == [], [str(f) for f in record.faults]
    assert record.result is not None and record.result.rounds == len(record.rounds) >= 1
    logs = sorted(p.name for p in tmp_path.glob("*.log"))
    assert len(logs) == game.players, logs  # one process (and one log) per seat


def arena(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def test_play_prints_the_game_and_the_result() -> None:
    out = arena("play", "--variant", "block", "--seed", "3", PY_RANDOM, "builtin:greedy")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "round 1, seat" in out.stdout
    assert "result: " in out.stdout and "FAULT" not in out.stdout
    assert " on [" in out.stdout or "lead [" in out.stdout


@pytest.mark.parametrize("bot", [PY_RANDOM, PY_GREEDY] + ([NODE_BOT, "node bots/node"] if shutil.which("node") else []))
def test_check_bot_passes_the_example_bots(bot: str) -> None:
    """``node bots/node`` too: a folder given as the argument is the bot's folder, visible in its sandbox (Node
    runs the package's main file from it)."""
    out = arena("check-bot", "--matches", "1", "--", *bot.split())
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("PASS") == len(VARIANTS) + 1
    assert "FAIL" not in out.stdout


@pytest.mark.parametrize(
    "mode, message",
    [
        ("illegal_index", "illegal_action"),
        ("garbage", "malformed_reply"),
        ("exit_mid", "crashed"),
        ("error", "bot_error"),
        ("never_start", "the bot did not start: the process exited with status 4"),
        ("bad_version", "expected protocol version 1, got 99"),
    ],
)
def test_check_bot_fails_each_bad_bot_clearly(mode: str, message: str) -> None:
    out = arena("check-bot", "--matches", "1", "--variants", "draw,block", "--", *BAD_BOT.split(), "--mode", mode)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAIL" in out.stdout
    assert message in " ".join(out.stdout.split())
    assert "Traceback" not in out.stdout + out.stderr


def test_check_bot_times_out_a_hanging_bot() -> None:
    out = arena("check-bot", "--matches", "1", "--variants", "draw", "--move-ms", "200", "--", *BAD_BOT.split(),
                "--mode", "hang")
    assert out.returncode == 1
    assert "timeout" in out.stdout and "no reply within 450 ms" in " ".join(out.stdout.split())


def test_play_refuses_a_bot_without_the_variant() -> None:
    out = arena("play", "--variant", "draw", f"{BAD_BOT} --mode block_only", "builtin:random")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "handshake_failed" in out.stdout and "the bot does not play 'draw' (it plays block)" in out.stdout
    ok = arena("play", "--variant", "block", f"{BAD_BOT} --mode block_only", "builtin:random")
    assert ok.returncode == 0, ok.stdout + ok.stderr
