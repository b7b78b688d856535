"""The rest of issue 12: one move numbering everywhere (per game, from 1), `arena watch --moves` numbering moves
per game, `arena status` standings as the local ones, fractional points kept by the server, unreadable record lines
logged and named by GetGame, a tournament failed by a write error resumed by a restarted server, and the entrants
given up on kept and shown by the server.

Real bot processes over real gRPC, real server processes (tests/test_server.py's ``Server``), real subprocesses of
the CLI; no sleeps (output lines, watch streams and files are waited on with deadlines)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from arena.check_bot import _describe
from arena.players.faults import Fault, FaultKind

ROOT = Path(__file__).resolve().parents[1]
BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


# --- item 1: moves numbered per game from 1 wherever people read them ---------------------------------------------


def test_a_fault_and_a_check_bot_line_show_the_recorded_move_plus_one() -> None:
    fault = Fault.make(FaultKind.TIMEOUT, 1, 4, allowed_ms=250)
    assert fault.move_number == 4, "the stored number keeps counting from 0"
    assert str(fault) == "seat 1, move 5: timeout: no reply within 250 ms"
    assert _describe(fault) == "timeout at move 5: no reply within 250 ms"


def test_arena_play_numbers_the_faulting_move_after_the_moves_it_printed() -> None:
    """The bot exits after 3 decisions; the moves printed before the fault are the game's moves 1 to N, so the
    fault is at move N + 1."""
    out = arena("play", "--variant", "block", "--seed", "3", f"{sys.executable} {BAD_BOT} --mode exit_mid",
                "builtin:random")
    assert out.returncode == 1, out.stdout + out.stderr
    played = len(re.findall(r"^  seat \d: ", out.stdout, re.M))
    faults = re.findall(r"^FAULT seat 0, move (\d+): crashed: ", out.stdout, re.M)
    assert played > 3 and faults == [str(played + 1)], out.stdout
