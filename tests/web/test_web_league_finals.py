"""A league's finals as a Swiss and as a double-elimination knockout, on a real ``arena serve --league --http
--http-public`` with three real bots (the Python kit's random and greedy examples and a quick search bot, each its
own team's, in their sandbox over real gRPC): frozen, played to the end, their folder verified by ``arena replay
--verify``, and their page showing the seeded field with its teams, the Swiss table and rounds or the bracket, and
every game of the run as a link to its replay page, each answering 200 with the viewer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.protocol import league_pb2 as lpb
from arena.records.jsonform import index_of
from arena.records.run_folder import FORMAT_VARIABLE, RunFolder
from arena.records.store import iter_records
from support.ladder import QUICK_SEARCH
from support.league import GAME, bot_folder, league_in
from support.paths import ROOT
from support.waiting import wait_for
from support.web import get_json, http

FINALS_S = 900
"""Generous: three sandboxed bots' builds, then every wave of the event, on a busy 2-core machine."""
EXAMPLES = ROOT / "bots" / "python"
FIELD = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py", "search": QUICK_SEARCH}
LEAGUE = GAME + """[ladder]
concurrency = 1
placement = 1
[finals]
deal_sets = 1
"""
FORMATS = {"swiss": 'format = "swiss"\n',
           "knockout": 'format = "knockout"\nelimination = "double"\ntiebreak_deal_sets = 1\n'}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_finals_event_is_played_verified_and_every_game_a_click_away(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)  # the finals' default records (compact), as a server writes them
    league = league_in(tmp_path, LEAGUE + FORMATS[fmt], web=True)
    web = league.server.web  # type: ignore[attr-defined]
    try:
        for bot, source in FIELD.items():
            league.add_author(f"team-{bot}")
            league.upload(f"team-{bot}", bot_folder(league.root / bot, source), bot)
        for bot in FIELD:
            assert league.settled(league.token(f"team-{bot}"), bot).state == lpb.VERSION_STATE_READY
        assert league.league("freeze", token=league.operator).returncode == 0
        started = league.league("finals", "--start", token=league.operator)
        assert started.returncode == 0, started.stderr

        wait_for(lambda: get_json(f"{web}/api/leagues/test/finals")["state"] in ("done", "failed"), FINALS_S,
                 f"the {fmt} finals to end")
        finals = get_json(f"{web}/api/leagues/test/finals")
        folder = RunFolder(league.root / "data" / "league" / "leagues" / "test" / "finals")
        assert (finals["state"], finals["error"]) == ("done", "")
        indices = sorted(index_of(record) for record in iter_records(folder.records))
        assert finals["settings"]["format"] == fmt and finals["games"] == len(indices) > 0
        assert indices == list(range(len(indices))) and len(indices) <= finals["scheduled"]
        verified = subprocess.run([sys.executable, "-m", "arena", "replay", str(folder.path), "--verify", "--jobs",
                                   "1"], capture_output=True, text=True, timeout=300, cwd=ROOT)
        said = " ".join(verified.stdout.split())
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert said.startswith(f"verified {len(indices)} games")

        # seeded: the run's entrants in the page's seed order, each with its team
        seeded = [entrant["version"] for entrant in finals["entrants"]]
        assert [e["seed"] for e in finals["entrants"]] == [1, 2, 3] and sorted(seeded) == sorted(finals["field"])
        names = [line.split('"')[1] for line in folder.spec_copy.read_text().splitlines() if line.startswith("name =")]
        assert names[1:] == seeded  # the tournament's name, then its bots in seed order
        ranking = finals["ranking"]
        printed = " ".join(league.league("finals", token=league.operator).stdout.split())
        assert "ranked by the event (a Swiss's table, a knockout's placements)" in printed and "interval" not in printed
        assert sorted(row["version"] for row in ranking) == sorted(seeded) and ranking[0]["rank"] == "1"

        text = http(f"{web}/leagues/test/finals")[2].decode()
        links = set(re.findall(r'href="(/leagues/test/finals/games/\d+)"', text))
        assert links == {f"/leagues/test/finals/games/{index}" for index in indices}  # every game, and no other
        assert all(f"team-{bot}" in text for bot in FIELD) and "0/0" not in text
        assert re.search(r">deal set 1 of 1<", text)
        if fmt == "swiss":
            assert '<table id="round-1">' in text and '<table id="round-2">' in text
            assert all("points" in row and "buchholz" in row for row in ranking)
        else:
            assert all(f'id="bracket-{part}"' in text for part in ("w", "l", "gf"))
        for link in sorted(links):
            code, headers, page = http(f"{web}{link}")
            assert code == 200 and 'id="arena-bar"' in page.decode() and "finals · game" in page.decode(), link
            assert "sha256-" in headers["content-security-policy"]
        code, _, body = http(f"{web}/leagues/test/finals/games/{len(indices)}")
        assert code == 404 and f"the finals have no game {len(indices)}" in body.decode()
    finally:
        league.server.stop()
