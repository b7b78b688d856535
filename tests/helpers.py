"""Small helpers shared by the tests: write tiles and deals the way docs/rules.md does."""

from __future__ import annotations

from arena.rules import Deal, parse_tile
from arena.rules.tiles import NAMES


def tiles(text: str) -> tuple[int, ...]:
    """``"[1|4] [6|6]"`` -> tile ids in that order."""
    return tuple(parse_tile(t) for t in text.split())


def t(text: str) -> int:
    """One tile id from ``"[3|5]"``."""
    return parse_tile(text)


def deal(*hands: str, boneyard: str = "", leader: int = 0, lead_tile: str | None = None) -> Deal:
    """A deal written as text, one string per hand, boneyard top first."""
    return Deal(
        tuple(tiles(h) for h in hands),
        tiles(boneyard) if boneyard else (),
        leader,
        parse_tile(lead_tile) if lead_tile else None,
    )


def names(ids) -> list[str]:
    return [NAMES[i] for i in ids]


def show(actions) -> list[str]:
    """Actions as the strings docs/rules.md writes (docs/rules.md#the-line)."""
    return [str(a) for a in actions]


def do(state, *moves: str) -> None:
    """Apply actions written as their strings (``"lead [6|6]"``, ``"[5|6] on [6|6] line B"``, ``"draw"``, ``"pass"``).

    Each must be among the legal actions of the moment; a draw matches whatever tile is drawn.
    """
    for move in moves:
        legal = state.legal_actions()
        wanted = [a for a in legal if str(a) == move or (move == "draw" and str(a).startswith("draw"))]
        assert wanted, f"{move!r} is not legal; legal: {show(legal)}"
        state.apply(wanted[0])


def bot_processes(tag: str) -> list[int]:
    """Pids of live processes whose command line contains ``tag`` (a marker the test put on its bots)."""
    from pathlib import Path

    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def wait_for(condition, seconds: float, what: str) -> None:
    """Wait for a condition with a deadline (polling a fact, never sleeping in place of one)."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def kill_run_after(path, out, tag: str, games: int, root) -> bytes:
    """Start ``arena run path --out out`` (its bots marked with ``tag``), kill -9 it once ``games`` games are
    recorded, wait for its bots to die with it; the records file's bytes as the kill left them."""
    import signal
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=root)
    records_file = out / "games.jsonl"
    wait_for(lambda: records_file.exists() and records_file.read_bytes().count(b"\n") >= games, 120,
             f"{games} games")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    wait_for(lambda: not bot_processes(tag), 20, "the bots to die with the arena")
    return records_file.read_bytes()


def fails_after(seed: str, after: int, name: str = "fails"):
    """A random in-process player whose bot stops answering at its decision number ``after`` (a recorded timeout
    fault)."""
    from arena.players import RandomPlayer
    from arena.players.base import LocalPlayer
    from arena.players.faults import BotFailure, FaultKind

    class FailsAfter(LocalPlayer):
        def __init__(self) -> None:
            super().__init__(RandomPlayer(seed), name=name)
            self.left = after

        async def act(self, request, timeout_s: float):
            if self.left == 0:
                raise BotFailure(FaultKind.TIMEOUT, allowed_ms=2250)
            self.left -= 1
            return await super().act(request, timeout_s)

    return FailsAfter()
