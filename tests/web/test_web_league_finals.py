"""A league's finals as a Swiss and as a double-elimination knockout, on a real ``arena serve --league --http
--http-public`` with three real bots (the Python kit's random and greedy examples and a quick search bot, each its
own team's, in their sandbox over real gRPC): frozen, played to the end, their folder verified by ``arena replay
--verify``, and their page showing the seeded field with its teams, the Swiss table and rounds or the bracket, and
every game of the run as a link to its replay page, each answering 200 with the viewer. A server killed with
SIGKILL in the middle of a double-elimination finals resumes them at its next start into the bracket of a run never
interrupted (its league file edited meanwhile): the same seeds and tournament file, the games recorded before the
kill kept and none played twice, every match's pairing the one the recorded results make, the folder verified
against the one committed seed."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.play.table_run import table_spec
from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import league_pb2 as lpb
from arena.records.jsonform import index_of
from arena.records.run_folder import FORMAT_VARIABLE, RunFolder
from arena.records.store import ReadReport, iter_records
from arena.tournament.rounds import event_from_records
from support.ladder import QUICK_SEARCH
from support.league import GAME, League, bot_folder, league_in, restarted, verified
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
KILL_AT = 5
"""Games recorded when the server is killed: the second game of a deal set, at the earliest the third match's (a
double elimination of three plays four matches at least, two games each), so the finals are cut in the middle."""


def field_ready(league: League) -> None:
    """The field uploaded, each bot by a team of its own, and every version ready."""
    for bot, source in FIELD.items():
        league.add_author(f"team-{bot}")
        league.upload(f"team-{bot}", bot_folder(league.root / bot, source), bot)
    for bot in FIELD:
        assert league.settled(league.token(f"team-{bot}"), bot).state == lpb.VERSION_STATE_READY


def finals_folder(league: League) -> RunFolder:
    return RunFolder(league.root / "data" / "league" / "leagues" / "test" / "finals")


def recorded(folder: RunFolder) -> dict[int, dict]:
    """The run's complete records by game index (a record cut by a kill is not one)."""
    if not folder.records.exists():
        return {}
    return {index_of(record): record for record in iter_records(folder.records, ReadReport())}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_finals_event_is_played_verified_and_every_game_a_click_away(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)  # the finals' default records (compact), as a server writes them
    league = league_in(tmp_path, LEAGUE + FORMATS[fmt], web=True)
    web = league.server.web  # type: ignore[attr-defined]
    try:
        field_ready(league)
        assert league.league("freeze", token=league.operator).returncode == 0
        started = league.league("finals", "--start", token=league.operator)
        assert started.returncode == 0, started.stderr

        wait_for(lambda: get_json(f"{web}/api/leagues/test/finals")["state"] in ("done", "failed"), FINALS_S,
                 f"the {fmt} finals to end")
        finals = get_json(f"{web}/api/leagues/test/finals")
        folder = finals_folder(league)
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
        title = "the Swiss table" if fmt == "swiss" else "the knockout's placements"
        assert f"ranked by {title} (" in printed and "interval" not in printed
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


def test_a_server_killed_mid_knockout_resumes_into_the_bracket_of_an_uninterrupted_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)  # the finals' default records (compact): a kill may cut a frame
    league = league_in(tmp_path, LEAGUE + FORMATS["knockout"], web=True)
    database = open_database(sqlite_url(league.root / "data"))
    folder = finals_folder(league)
    try:
        field_ready(league)
        assert league.league("freeze", token=league.operator).returncode == 0
        started = league.league("finals", "--start", token=league.operator)
        assert started.returncode == 0, started.stderr
        league_id = database.league("test").id
        try:
            wait_for(lambda: len(recorded(folder)) >= KILL_AT, FINALS_S, f"{KILL_AT} games of the finals")
        finally:
            league.server.stop(signal.SIGKILL)
        before = recorded(folder)
        cut = database.frozen(league_id).finals
        assert cut["state"] == "playing" and folder.keeps_secret() and not folder.revealed_file.exists()
        commitment, started_with = folder.commitment_file.read_text(), folder.spec_copy.read_text()
        league_file = league.root / "league.toml"  # edited while the server is down: the finals keep their own
        league_file.write_text(league_file.read_text().replace("move_ms = 2000", "move_ms = 2500"))

        league = restarted(league, None, web=True)
        web = league.server.web  # type: ignore[attr-defined]
        wait_for(lambda: get_json(f"{web}/api/leagues/test/finals")["state"] in ("done", "failed"), FINALS_S,
                 "the resumed finals to end")
        finals = get_json(f"{web}/api/leagues/test/finals")
        assert (finals["state"], finals["error"]) == ("done", "")
        ended = database.frozen(league_id).finals
        assert ended["seeds"] == cut["seeds"] and [e["version_id"] for e in finals["entrants"]] == cut["seeds"]
        assert folder.commitment_file.read_text() == commitment and folder.is_finished()
        assert folder.spec_copy.read_text() == started_with and "move_ms = 2000" in started_with

        # every game once, those recorded before the kill kept as they were, and more played after it
        records = list(iter_records(folder.records))
        after = {index_of(record): record for record in records}
        assert sorted(index_of(record) for record in records) == list(range(len(records))) == list(after)
        assert KILL_AT <= len(before) < len(records) <= ended["scheduled"]
        assert all(after[index] == record for index, record in before.items())
        assert len({record["dealKey"] + str(record["seats"]) for record in records}) == len(records)
        verified(folder.path, len(records))  # one master seed, committed before the kill, for every game

        # the bracket an uninterrupted run makes of these results (rebuilt from the seeds and the records alone):
        # no record refused, the seeds' first round, every game in the match of its deal key, seated by it
        spec = table_spec(folder.spec_copy.read_text())
        names = [bot.name for bot in spec.bots]
        assert names == [entrant["version"] for entrant in finals["entrants"]]  # seeded as before the kill
        whole = event_from_records(spec, folder.revealed_seed(), records)
        assert whole.finished and whole.rejected == () and whole.done == frozenset(after)
        assert [m.entrants for m in whole.matches() if m.id == "W1-2"] == [(1, 2)]  # seed 2 against seed 3
        for match in whole.matches():
            for index in match.games:
                assert after[index]["dealKey"].startswith(f"{match.id}/")
                assert sorted(after[index]["seats"]) == sorted(names[e] for e in match.entrants)
        assert finals["event"] == whole.to_json()  # the page's bracket is that one
        assert [[row["version"] for row in ended["ranking"] if row["best"] == best]
                for best in sorted({row["best"] for row in ended["ranking"]})] == finals["event"]["ranking"]
    finally:
        database.close()
        league.server.stop()
