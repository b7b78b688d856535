"""``arena run`` of Swiss and knockout files for real: bot processes, one run folder, every game verified by ``arena
replay --verify``, the event in ``standings.json`` and on the console; a run killed with -9 in the middle of a wave
resumes into exactly the pairings and bracket of a run never interrupted."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.store import iter_records
from support.paths import ROOT
from support.processes import bot_processes
from support.tournaments import kill_run_after

GREEDY_BOT = ROOT / "bots" / "python" / "greedy_bot.py"
PICK_BOT = '''"""A bot that always plays the legal action at one place of the list: deterministic, so two runs of
one file play the same games."""
import sys

from arena.botkit import serve

PLACE = int(sys.argv[sys.argv.index("--place") + 1])


def choose(request):
    return min(PLACE, len(request.observation.legal_actions) - 1)


if __name__ == "__main__":
    serve(choose, name="pick")
'''


def event_file(tmp_path: Path, tag: str, event: str, entrants: int = 6) -> Path:
    """A quick Block tournament (to 2 points) of deterministic bots: the greedy bot and bots that play the legal
    action at one place, ``event`` the format's keys."""
    (tmp_path / "bot").mkdir(exist_ok=True)  # a folder of its own: no bot may see the run folder
    bot = tmp_path / "bot" / "pick_bot.py"
    bot.write_text(PICK_BOT)
    bots = [f'[[bots]]\nname = "greedy"\ncommand = {json.dumps([sys.executable, str(GREEDY_BOT), "--tag", tag])}\n']
    bots += [f'[[bots]]\nname = "pick-{place}"\ncommand = '
             f'{json.dumps([sys.executable, str(bot), "--place", str(place), "--tag", tag])}\n'
             for place in range(entrants - 1)]
    path = tmp_path / "event.toml"
    path.write_text(f'name = "event"\nvariant = "block"\nseed = "event-seed"\nconcurrency = 2\n{event}\n'
                    f'[options]\ntarget = 2\n\n' + "\n".join(bots))
    return path


def run(path: Path, out: Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def verify(out: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "arena", "replay", str(out), "--verify"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def event_of(out: Path) -> dict[str, Any]:
    return json.loads(RunFolder(out).standings.read_text())["event"]


def recorded(out: Path) -> list[int]:
    return sorted(index_of(record) for record in iter_records(RunFolder(out).records))


def matches_of(event: dict[str, Any]) -> list[dict[str, Any]]:
    if "bracket" in event:
        return [m for rnd in event["bracket"] for m in rnd["matches"]]
    return [m for rnd in event["rounds"] for m in rnd]


def test_a_swiss_run_plays_every_round_pairs_by_score_and_verifies(tmp_path: Path) -> None:
    """Five bots, three rounds on two referee processes (``--workers 2``): round 1 by seed with a bye to seed 5, no
    pairing twice, a bye each to three bots, the games indexed round after round."""
    tag = uuid.uuid4().hex
    out = tmp_path / "run"
    printed = run(event_file(tmp_path, tag, 'format = "swiss"\nrounds = 3\ngames = 1', entrants=5), out,
                  "--workers", "2")  # on two referee processes, as any run
    event = event_of(out)
    assert event["finished"] and event["format"] == "swiss" and event["stopped"] == ""
    rounds = event["rounds"]
    assert [[m["id"] for m in rnd] for rnd in rounds] == [[f"R{r}-{k}" for k in (1, 2, 3)] for r in (1, 2, 3)]
    assert [m["entrants"] for m in rounds[0]] == [["greedy", "pick-1"], ["pick-0", "pick-2"], ["pick-3"]]
    met = [frozenset(m["entrants"]) for m in matches_of(event) if len(m["entrants"]) == 2]
    assert len(met) == len(set(met)) == 6  # no pairing twice
    byes = [m["entrants"][0] for m in matches_of(event) if m["decided_by"] == "bye"]
    assert len(byes) == len(set(byes)) == 3
    games = [i for m in matches_of(event) for i in m["games"]]
    assert sorted(games) == recorded(out) == list(range(12))  # 2 pairings x 1 deal set x 2 rotations a round
    table = event["table"]
    assert [row["rank"] for row in table] == [1, 2, 3, 4, 5]
    assert sum(row["points"] for row in table) == 9  # 3 rounds of 2 pairings and a bye: a point each
    assert "Swiss table" in printed and "Buchholz" in printed
    assert "OK" in verify(out)
    assert not bot_processes(tag)


def test_a_double_elimination_run_plays_its_bracket_to_the_end_and_verifies(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    out = tmp_path / "run"
    printed = run(event_file(tmp_path, tag, 'format = "knockout"\nelimination = "double"\ngames = 1\n'
                                           'tiebreak_games = 1', entrants=5), out)
    event = event_of(out)
    assert event["finished"] and event["elimination"] == "double"
    played = [m for m in matches_of(event) if len(m["entrants"]) == 2]
    ids = [m["id"] for m in played]
    assert ids[0] == "W1-2" and "GF" in ids and len(ids) in (8, 9)  # 2 x 5 - 2, and the reset when played
    assert all(m["winner"] in m["entrants"] for m in played)
    assert sorted(e for group in event["ranking"] for e in group) == sorted(
        ["greedy", "pick-0", "pick-1", "pick-2", "pick-3"])
    for match in played:  # a tied match played one sudden-death deal set, else the seed decided it
        assert match["deal_sets"] == (1 if match["decided_by"] == "score" else 2)
        assert len(match["games"]) == 2 * match["deal_sets"]
    games = [i for m in played for i in m["games"]]
    assert sorted(games) == recorded(out) == list(range(len(games)))
    assert "placements" in printed and "GF" in printed
    assert "OK" in verify(out)


@pytest.mark.parametrize(("keys", "kill_at"), [
    ('format = "swiss"\nrounds = 3\ngames = 2', 14),  # 12 games a round: killed in round 2
    ('format = "knockout"\nelimination = "double"\ngames = 2\ntiebreak_games = 1', 10),  # W1 is 8 games
], ids=["swiss", "knockout"])
def test_a_run_killed_mid_wave_resumes_into_the_same_pairings(tmp_path: Path, keys: str, kill_at: int) -> None:
    tag = uuid.uuid4().hex
    path = event_file(tmp_path, tag, keys)
    out = tmp_path / "killed"
    left = kill_run_after(path, out, tag, kill_at, ROOT)
    complete = left.count(b"\n")
    assert not RunFolder(out).revealed_file.exists(), "the run must be interrupted before its end"
    resumed = run(path, out, "--resume")
    assert f"{complete} games were already recorded" in resumed
    whole = tmp_path / "whole"
    run(path, whole)
    assert event_of(out) == event_of(whole)  # the same pairings or bracket, scores, games and ranking
    assert recorded(out) == recorded(whole) == list(range(len(recorded(whole))))
    assert complete < len(recorded(whole))
    assert "OK" in verify(out)
    assert not bot_processes(tag)
