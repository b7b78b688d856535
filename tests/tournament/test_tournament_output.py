"""What ``arena run`` prints: the progress line's rate after a resume and its labelled leaders, one game counted as
one in the title and the standings, the arena command in the hints as it was run, and where a rerun goes."""

from __future__ import annotations

import json
import re
import uuid
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from arena.invocation import arena_command
from arena.tournament.console import Progress

from support.paths import ROOT
from support.tournaments import ARENA, PYTHON, RANDOM_BOT, arena_run, block_text, write



class Lines:
    """A console stand-in that keeps what is printed."""

    is_terminal = False

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, text: str, **_: Any) -> None:
        self.lines.append(text)


@pytest.mark.fast
def test_the_resumed_rate_counts_this_run_and_leaders_are_named() -> None:
    """A run resumed with 120 of 200 games recorded plays one game in 4 s: 0.25 games/s, not 121 over 4 s."""
    now = [130.0]
    console = Lines()
    progress = Progress(200, 120, console, live=False, clock=lambda: now[0])
    now[0] = 134.0
    progress.advance([("alpha", 25), ("beta", Fraction(25, 2))])
    assert console.lines == ["games 121/200 (60%), 0.2 games/s, ETA 316s; leaders: alpha 25 pts, beta 12.5 pts"]


def test_one_game_is_singular_in_the_title_and_standings(tmp_path: Path) -> None:
    """Mexican Train for 4 with 3 entrants: one of them holds two seats; the only game counts once for each."""
    tag = uuid.uuid4().hex
    text = f'''name = "trio"
variant = "mexican_train"
players = 4
games = 1
duplicate = false
[options]
set = 9
rounds = 1
''' + "".join(f'[[bots]]\nname = "{n}"\ncommand = {json.dumps([PYTHON, str(RANDOM_BOT), "--tag", tag])}\n'
              for n in ("x", "y", "z"))
    out = tmp_path / "run"
    result = arena_run(write(tmp_path, text), "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "trio: mexican_train, 1 game " in result.stdout
    assert not re.search(r"\b1 games\b(?!/s)", result.stdout)  # "1 games" nowhere ("5.1 games/s" is a rate)
    assert f"records: {out}/games.jsonl (1 game); standings: {out}/standings.json" in result.stdout
    standings = json.loads((out / "standings.json").read_text())
    assert standings["games"] == 1
    assert {e["name"]: e["games"] for e in standings["entrants"]} == {"x": 1, "y": 1, "z": 1}
    seats = json.loads((out / "games.jsonl").read_text())["seats"]
    assert sorted(seats) == ["x", "x", "y", "z"], "one entrant held two seats"


@pytest.mark.fast
def test_hints_name_the_command_that_was_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    program = venv / "arena"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert arena_command(".venv/bin/arena") == ".venv/bin/arena"  # set-up puts nothing on the PATH
    assert arena_command(str(program)) == str(program)
    monkeypatch.setenv("PATH", f"{venv}:/usr/bin:/bin")
    assert arena_command(".venv/bin/arena") == "arena"  # the same program is on the PATH
    assert arena_command("arena") == "arena"
    assert arena_command(str(ROOT / "arena" / "__main__.py")) == f"{PYTHON} -m arena"
    assert arena_command("/opt/with space/arena") == "'/opt/with space/arena'"


def test_a_rerun_says_if_finished_and_where_the_new_run_goes(tmp_path: Path) -> None:
    first = tmp_path / "runs" / "t"
    path = write(tmp_path, block_text(uuid.uuid4().hex, 1, output=first))
    assert arena_run(path).returncode == 0
    again = arena_run(path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines()[0] == f"note: {first} holds a finished run; this run goes to {first}-2"
    assert "--resume" not in again.stdout
    # Pretend the first one was interrupted: the next run says how to continue it, by its real command.
    secret = json.loads((first / "seed.json").read_text())
    (first / "seed.json").unlink()
    (first / "seed.secret").write_text(json.dumps({"seed": secret["seed"], "nonce": secret["nonce"]}))
    third = arena_run(path)
    assert third.returncode == 0, third.stdout + third.stderr
    assert third.stdout.splitlines()[0] == (f"note: {first} holds an unfinished run (continue that one with: "
                                            f"{ARENA} run {path} --resume); this run goes to {first}-3")
