"""The proof of strength (issue 13, item 4): each of the four SPRT files in tournaments/ runs as it is, the search bot
against the greedy bot on duplicate deals, and accepts H1 (the search bot is stronger). These are the longest tests
of the suite (a minute or two each here); the numbers in docs/bots.md come from the same files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
FILES = ("sprt_draw", "sprt_all_fives", "sprt_la_plaza_teams", "sprt_mexican_train")


@pytest.mark.parametrize("name", FILES)
def test_the_search_bot_is_accepted_as_stronger(name: str, tmp_path: Path) -> None:
    path = ROOT / "tournaments" / f"{name}.toml"
    spec = load_spec(path)
    assert spec.sprt is not None and spec.duplicate and spec.bots[0].name == "py-search"
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)], capture_output=True,
                          text=True, timeout=1200, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    test = json.loads((out / "standings.json").read_text())["sprt"]
    assert (test["candidate"], test["opponent"], test["state"]) == ("py-search", "py-greedy", "H1"), test
    estimate = test["estimate"]
    assert estimate["score"] > 0.5
    if estimate["elo_interval"] is None:  # every deal set won: an infinite Elo, which has no interval
        assert estimate["score"] == 1.0 and estimate["elo"] is None, estimate
        print(f"{name}: {test['units']} deal sets ({test['games']} games), every one won")
        return
    low, high = estimate["elo_interval"]
    assert low > 0, "the whole 95% interval is above the greedy bot"
    print(f"{name}: {test['units']} deal sets ({test['games']} games), Elo {estimate['elo']:+.0f} "
          f"[{low:+.0f}, {high:+.0f}]")
