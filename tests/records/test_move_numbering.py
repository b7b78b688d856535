"""One numbering of moves wherever people read them: per game, from 1 (a fault, check-bot's lines, ``arena play``,
every replay view)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena import cli
from arena.check_bot import _describe
from arena.players.faults import Fault, FaultKind
from arena.records import replay
from arena.records.html import viewer_data

from support.paths import ROOT
from support.records import MASTER, played, run_of

RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")


def test_every_view_numbers_moves_from_1(tmp_path: Path, capsys) -> None:
    """Guards: point 2. A game whose seat 1 faults in a later round: the terminal (compact and full), the HTML
    viewer's data, ``--against``'s note and verification all name the same moves the same way; the record keeps
    the protocol's number (from 0)."""
    record = next(r for r in (played("draw", f"{MASTER}/0/9", 9, options={"target": 30}, fails_after=after)
                              for after in range(20, 200, 10)) if len(r["rounds"]) >= 2 and r.get("faults"))
    fault = record["faults"][0]
    moves = [m for rnd in record["rounds"] for m in rnd.get("moves", ())]
    assert fault["moveNumber"] == len(moves)  # the decision after the last recorded move, counted from 0
    run = run_of(tmp_path / "run", [record], revealed=False)
    rounds = len(record["rounds"])

    assert cli.main(["replay", str(run), "--game", "9"]) == 0  # not a terminal: compact
    compact = capsys.readouterr().out
    numbers = [int(n) for n in re.findall(r"^move (\d+) · ", compact, re.M)]
    assert numbers == list(range(1, len(moves) + 1))
    assert f"\nFAULT · round {rounds}, move {len(moves) + 1} · seat 1 (fails) · timeout" in compact
    assert "moves: numbered through the whole game from 1, forced moves included" in compact
    assert cli.main(["replay", str(run), "--game", "9", "--full"]) == 0
    full = capsys.readouterr().out
    assert [int(n) for n in re.findall(r"^move (\d+) · ", full, re.M)] == numbers
    assert f"\nFAULT · round {rounds}, move {len(moves) + 1} · seat 1 (fails) · timeout" in full

    data = viewer_data(record)  # the page shows frame k as "move k + 1" and a fault at "move + 1"
    assert [m["s"] for m in data["moves"]] == [m.get("seat", 0) for m in moves]
    assert data["faults"][0]["move"] == fault["moveNumber"]
    page = (ROOT / "arena" / "records" / "viewer.html").read_text()
    assert "fault at move ${fault.move + 1}" in page and "move ${f.k + 1}" in page
    assert "numbered through the whole game from 1, forced moves\n      included" in page

    assert cli.main(["replay", str(run), "--game", "9", "--seat", "0", "--against", "--", sys.executable,
                     RANDOM_BOT]) == 0
    against = capsys.readouterr().out
    assert f"note: the record ends with a fault of seat 1 at move {len(moves) + 1} (timeout)" in against
    for number in (int(n) for n in re.findall(r"^DIVERGENCE move (\d+) ", against, re.M)):
        assert moves[number - 1].get("seat", 0) == 0 and not moves[number - 1].get("forced")

    second = len(record["rounds"][0]["moves"])  # the first move of round 2 is the game's move second + 1
    record["rounds"][1]["moves"][0]["seat"] = 1 - record["rounds"][1]["moves"][0].get("seat", 0)
    found = [str(m) for m in replay.verify_game(record)]
    assert found[0].startswith(f"game 9, round 2, move {second + 1}: seat ")
    assert re.search(rf"^move {second + 1} · seat {1 - record['rounds'][1]['moves'][0]['seat']} ", compact, re.M)


BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


# --- faults, check-bot and `arena play` ------------------------------------------------------------------------


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


@pytest.mark.fast
def test_faults_show_the_recorded_move_plus_one() -> None:
    fault = Fault.make(FaultKind.TIMEOUT, 1, 4, allowed_ms=250)
    assert fault.move_number == 4, "the stored number keeps counting from 0"
    assert str(fault) == "seat 1, move 5: timeout: no reply within 250 ms"
    assert _describe(fault) == "timeout at move 5: no reply within 250 ms"


def test_play_numbers_the_fault_after_the_printed_moves() -> None:
    """The bot exits after 3 decisions; the moves printed before the fault are the game's moves 1 to N, so the
    fault is at move N + 1."""
    out = arena("play", "--variant", "block", "--seed", "3", f"{sys.executable} {BAD_BOT} --mode exit_mid",
                "builtin:random")
    assert out.returncode == 1, out.stdout + out.stderr
    played = len(re.findall(r"^  seat \d: ", out.stdout, re.M))
    faults = re.findall(r"^FAULT seat 0, move (\d+): crashed: ", out.stdout, re.M)
    assert played > 3 and faults == [str(played + 1)], out.stdout
