"""How bots and seats are named: the Node.js bot after its policy unless given a name, a bot without a handshake
after its program, and ``arena play``'s seats by their bots, its winners by their seats (or teams), a bot that
never started after its program."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from arena.players.process import BotProcess, BotSpec
from arena.players.specs import program_name

from support.cli import arena
from support.paths import ROOT

NODE_BOT = ROOT / "bots" / "node" / "bot.js"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed on this machine")


@needs_node
@pytest.mark.parametrize("args, name", [
    ((), "node-random"),
    (("--policy", "heaviest"), "node-heaviest"),
    (("--policy", "heaviest", "--name", "mine"), "mine"),
])
async def test_the_node_bot_is_named_by_its_policy(args: tuple[str, ...], name: str, tmp_path: Path) -> None:
    process = BotProcess(BotSpec(name="node", command=("node", str(NODE_BOT), *args)), tmp_path, startup_s=20)
    try:
        await process.ensure_running()
        assert process.hello is not None and process.hello.name == name
    finally:
        await process.stop()


PY_GREEDY = f"{sys.executable} {ROOT / 'bots/python/greedy_bot.py'}"
PY_RANDOM = f"{sys.executable} {ROOT / 'bots/python/random_bot.py'}"


# --- `arena play` names seats by bot, winners by seat -----------------------------------------------------


@pytest.mark.parametrize("text, name", [
    ("python bots/python/greedy_bot.py", "greedy_bot"),
    ("/usr/bin/python3.11 -u bots/python/random_bot.py --tag x", "random_bot"),
    ("node bots/node/bot.js --policy heaviest", "bot"),
    ("python -m mybots.first", "mybots.first"),
    ("bots/go/bin/bot --policy heaviest", "bot"),
    ("127.0.0.1:50051", "127.0.0.1:50051"),
    ("builtin:greedy", "builtin:greedy"),
])
@pytest.mark.fast
def test_a_handshakeless_bot_is_named_by_program(text: str, name: str) -> None:
    assert program_name(text) == name


def result_line(stdout: str) -> str:
    lines = [line for line in stdout.splitlines() if line.startswith("result: ")]
    assert len(lines) == 1, stdout
    return lines[0]


def test_play_names_seats_by_bot_and_winner_by_seat() -> None:
    out = arena("play", "--variant", "block", "--seed", "3", PY_GREEDY, PY_RANDOM)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "Block (no drawing): seat 0: py-greedy, seat 1: py-random"
    names = {"0": "py-greedy", "1": "py-random"}
    result = re.fullmatch(r"result: seat (\d) \(([\w-]+)\) wins, scores \[\d+, \d+\], ranking \[\d, \d\]",
                          result_line(out.stdout))
    assert result, result_line(out.stdout)
    assert names[result.group(1)] == result.group(2)
    rounds = re.findall(r"^  (?:domino by seat \d|block): (seat (\d) \(([\w-]+)\) wins|nobody scores), ",
                        out.stdout, re.M)
    assert rounds and all(not seat or names[seat] == name for _, seat, name in rounds), rounds
    assert "side" not in out.stdout and "seat0-" not in out.stdout


def test_play_says_team_for_a_multi_seat_side() -> None:
    out = arena("play", "--variant", "la_plaza_teams", "--seed", "5", "builtin:greedy", "builtin:random")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0].endswith(
        "seat 0: builtin:greedy, seat 1: builtin:random, seat 2: builtin:greedy, seat 3: builtin:random")
    teams = {"0": "seats 0+2: builtin:greedy", "1": "seats 1+3: builtin:random"}
    result = re.fullmatch(r"result: (?:team (\d) \((seats [^)]*)\) wins|drawn match), .*", result_line(out.stdout))
    assert result and (result.group(1) is None or teams[result.group(1)] == result.group(2)), result_line(out.stdout)


def test_play_names_an_unstarted_bot_by_program() -> None:
    out = arena("play", "--variant", "block", f"{sys.executable} {ROOT / 'bots/python/no_such_bot.py'}",
                "builtin:random")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.splitlines()[0] == "Block (no drawing): seat 0: no_such_bot, seat 1: builtin:random"
    assert re.search(r"^FAULT seat 0, move 1: start_failed: no_such_bot: the bot did not start", out.stdout, re.M)
    assert result_line(out.stdout) == "result: seat 1 (builtin:random) wins, scores [0, 0], ranking [1, 0] (by fault)"
