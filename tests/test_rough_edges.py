"""Rough edges a newcomer hit (issue 12): how `arena play` names seats and winners, what `arena watch` prints, the
Node.js bot's handshake name, a port already in use, and a set-up without setuptools' banner.

Real bot processes over real gRPC, a real server, real subprocesses of the CLI; no sleeps (a server's output lines
and its watch stream are waited on with deadlines)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

from arena.players.process import BotProcess, BotSpec
from arena.players.specs import program_name

ROOT = Path(__file__).resolve().parents[1]
PY_GREEDY = f"{sys.executable} {ROOT / 'bots/python/greedy_bot.py'}"
PY_RANDOM = f"{sys.executable} {ROOT / 'bots/python/random_bot.py'}"
NODE_BOT = ROOT / "bots" / "node" / "bot.js"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed on this machine")


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


# --- point 4: the Node.js bot's name ----------------------------------------------------------------------------


@needs_node
@pytest.mark.parametrize("args, name", [
    ((), "node-random"),
    (("--policy", "heaviest"), "node-heaviest"),
    (("--policy", "heaviest", "--name", "mine"), "mine"),
])
async def test_the_node_bot_is_named_after_its_policy_unless_given_a_name(args: tuple[str, ...], name: str,
                                                                           tmp_path: Path) -> None:
    process = BotProcess(BotSpec(name="node", command=("node", str(NODE_BOT), *args)), tmp_path, startup_s=20)
    try:
        await process.ensure_running()
        assert process.hello is not None and process.hello.name == name
    finally:
        await process.stop()


# --- point 10: `arena play` names seats by bot, winners by seat -------------------------------------------------


@pytest.mark.parametrize("text, name", [
    ("python bots/python/greedy_bot.py", "greedy_bot"),
    ("/usr/bin/python3.11 -u bots/python/random_bot.py --tag x", "random_bot"),
    ("node bots/node/bot.js --policy heaviest", "bot"),
    ("python -m mybots.first", "mybots.first"),
    ("bots/go/bin/bot --policy heaviest", "bot"),
    ("127.0.0.1:50051", "127.0.0.1:50051"),
    ("builtin:greedy", "builtin:greedy"),
])
def test_a_bot_without_a_handshake_is_named_after_its_program(text: str, name: str) -> None:
    assert program_name(text) == name


def result_line(stdout: str) -> str:
    lines = [line for line in stdout.splitlines() if line.startswith("result: ")]
    assert len(lines) == 1, stdout
    return lines[0]


def test_arena_play_names_each_seat_by_its_bot_and_the_winner_by_its_seat() -> None:
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


def test_arena_play_says_team_when_a_side_holds_several_seats() -> None:
    out = arena("play", "--variant", "la_plaza_teams", "--seed", "5", "builtin:greedy", "builtin:random")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0].endswith(
        "seat 0: builtin:greedy, seat 1: builtin:random, seat 2: builtin:greedy, seat 3: builtin:random")
    teams = {"0": "seats 0+2: builtin:greedy", "1": "seats 1+3: builtin:random"}
    result = re.fullmatch(r"result: (?:team (\d) \((seats [^)]*)\) wins|drawn match), .*", result_line(out.stdout))
    assert result and (result.group(1) is None or teams[result.group(1)] == result.group(2)), result_line(out.stdout)


def test_arena_play_names_a_bot_that_never_started_after_its_program() -> None:
    out = arena("play", "--variant", "block", f"{sys.executable} {ROOT / 'bots/python/no_such_bot.py'}",
                "builtin:random")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.splitlines()[0] == "Block (no drawing): seat 0: no_such_bot, seat 1: builtin:random"
    assert re.search(r"^FAULT seat 0, move 1: start_failed: no_such_bot: the bot did not start", out.stdout, re.M)
    assert result_line(out.stdout) == "result: seat 1 (builtin:random) wins, scores [0, 0], ranking [1, 0] (by fault)"


# --- point 10: `arena watch` -----------------------------------------------------------------------------------


def test_arena_watch_prints_a_line_per_game_and_the_full_standings_at_the_end(tmp_path: Path) -> None:
    from support.servers import Server, bot_entry, named, registry, tournament

    tag = uuid.uuid4().hex
    watched = str(ROOT / "tests" / "bots" / "watched_bot.py")
    bots = (bot_entry("slow", watched, "--mode", "slow", "--delay", "0.1", "--tag", tag)
            + bot_entry("quick", str(ROOT / "bots" / "python" / "random_bot.py"), "--tag", tag))
    server = Server(tmp_path / "data", *registry(tmp_path, bots))
    try:
        path = tmp_path / "t.toml"
        path.write_text(tournament(games=3, name="watched", bots=named("slow", "quick")))
        submitted = server.cli("submit", str(path))
        assert submitted.returncode == 0, submitted.stderr
        tournament_id = re.match(r"submitted (\w+):", submitted.stdout).group(1)
        out = server.cli("watch", tournament_id)
        status = server.cli("status", tournament_id)
    finally:
        server.stop()
    assert out.returncode == 0, out.stdout + out.stderr
    recorded = int(re.match(rf"tournament {tournament_id}: 'watched' \(block\), \w+; (\d)/6 games recorded",
                            out.stdout).group(1))
    game_lines = [line for line in out.stdout.splitlines() if line.startswith("game ")]
    assert len(game_lines) == 6 - recorded, out.stdout
    assert all(re.fullmatch(r"game \d finished \(\d/6\): (slow|quick) \d+, (slow|quick) \d+; winner \w+", line)
               for line in game_lines), game_lines
    assert "started" not in out.stdout and "standings after" not in out.stdout
    header = next(line for line in out.stdout.splitlines() if "rank" in line and "entrant" in line)
    assert re.search(r"scored\s*┃\s*conceded", header), header
    assert "pairwise (W-D-L of the" in out.stdout
    pairwise = [line for line in out.stdout.splitlines() if re.match(r"│ (slow|quick) +│", line)]
    cells = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]] for line in pairwise}
    assert sorted(cells) == ["quick", "slow"], out.stdout
    for name, row in cells.items():
        wins, draws, losses = map(int, next(c for c in row if c != "·").split("-"))
        assert wins + draws + losses == 6, (name, row)
    for name in ("slow", "quick"):  # the same games, wins and points as the server's own standings
        watch_row = re.search(rf"│\s*\d+\s*│ {name}\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│", out.stdout)
        status_row = re.search(rf"│\s*\d+\s*│ {name}\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│", status.stdout)
        assert watch_row and status_row and watch_row.groups() == status_row.groups(), (out.stdout, status.stdout)
    assert out.stdout.rstrip().splitlines()[-1].startswith(f"tournament {tournament_id} finished: 6/6 games")


def test_the_watch_standings_rebuilt_from_the_games_are_the_servers(tmp_path: Path) -> None:
    """The tables `arena watch` prints come from a Standings fed with the server's game summaries (in the order the
    games finished, each entrant's think time from the server's standings): the numbers are the server's own, for
    three sides (OpenSkill, conceded as a mean) as for two."""
    import json

    from arena.records.store import iter_records
    from arena.cli.server import standings_from_games
    from arena.server.events import game_summary, standings_pb
    from arena.tournament.runner import outcome_of
    from arena.tournament.standings import Standings

    entrants = "".join(f'[[bots]]\nname = "{name}"\ncommand = {json.dumps([sys.executable, str(ROOT / bot)])}\n'
                       for name, bot in (("r", "bots/python/random_bot.py"), ("g", "bots/python/greedy_bot.py"),
                                         ("s", "bots/python/random_bot.py")))
    spec = tmp_path / "t.toml"
    spec.write_text(f'name = "three"\nvariant = "block"\nplayers = 3\ngames = 2\nconcurrency = 1\n'
                    f'[options]\ntarget = 1\n{entrants}')
    done = arena("run", str(spec), "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stdout + done.stderr
    stored = list(iter_records(tmp_path / "run" / "games.jsonl"))
    server = Standings(group_size=3)
    for record in stored:  # as the server counts them: in the order they were recorded
        server.add(outcome_of(record))
    expected = server.to_json()
    rebuilt = standings_from_games([game_summary(r) for r in reversed(stored)], standings_pb(expected)).to_json()
    assert expected["rating"] == "openskill" and expected["games"] == 6
    think = [[t for e in data["entrants"] for t in (e.pop("think_ms"), e.pop("think_ms_per_decision"))]
             for data in (expected, rebuilt)]
    assert think[1] == pytest.approx(think[0], rel=1e-9)  # one sum against the sum of the games: rounding only
    assert rebuilt == expected


# --- point 8: a port in use, a set-up without a banner ----------------------------------------------------------


def test_a_port_in_use_is_one_line_saying_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        out = arena("serve", "--listen", address, "--data", str(tmp_path / "data"), timeout=60)
    assert out.returncode == 2
    assert out.stderr == f"error: cannot listen on {address}: address already in use\n"
    assert out.stdout == ""


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.1:99999", "expected HOST:PORT with a port from 0 to 65535 (0: any free port), or unix:/path"),
    ("127.0.0.1", "expected HOST:PORT with a port from 0 to 65535 (0: any free port), or unix:/path"),
    ("unix:/no/such/folder/arena.sock", "no such file or directory"),
])
def test_an_address_that_cannot_be_listened_on_is_one_line_saying_why(address: str, reason: str,
                                                                       tmp_path: Path) -> None:
    out = arena("serve", "--listen", address, "--data", str(tmp_path / "data"), timeout=60)
    assert out.returncode == 2
    assert out.stderr == f"error: cannot listen on {address}: {reason}\n"


def test_the_editable_install_prints_no_setuptools_banner(tmp_path: Path) -> None:
    """What `pip install -e` (scripts/setup.sh) runs, setuptools' build_editable, on a copy of the project: no
    warning on stderr, and a plain .pth file naming the project folder (no meta path finder)."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "arena", project / "arena", ignore=shutil.ignore_patterns("__pycache__", "_generated"))
    out = subprocess.run([sys.executable, "-c", "from setuptools import build_meta; "
                          "print(build_meta.build_editable('dist'))"],
                         capture_output=True, text=True, timeout=300, cwd=project)
    assert out.returncode == 0, out.stderr
    assert "Editable installation" not in out.stderr and "!!" not in out.stderr, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    with zipfile.ZipFile(project / "dist" / out.stdout.split()[-1]) as wheel:
        pth = [n for n in wheel.namelist() if n.endswith(".pth")]
        assert len(pth) == 1 and wheel.read(pth[0]).decode().strip() == str(project), pth
