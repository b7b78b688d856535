"""The SPRT of a tournament file run by ``arena serve``: the server keeps its own test, fed
the same games as its live standings, and shows it while the tournament runs and after it ended, in ``GetStandings``
and the watch's standings, in ``arena status`` and on the web dashboard; a restarted server shows the same test from
``standings.json``.

One real server runs one quick SPRT (Block to 1 point, the greedy bot against a bot whose choice is a hash of what it
sees, a fixed seed: the games are the same at every run, and H1 is accepted after a few hundred games, as in
test_gauntlet_sprt.py); the tests read what it showed during and after the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.protocol import arena_pb2 as apb
from arena.tournament.sprt import H1, bounds, llr
from support.chromium import Chromium, needs_chromium
from support.paths import ROOT
from support.servers import Server, bot_entry, registry, submit, watch
from support.web import SHOTS, WebServer, get_json, wait_state

GREEDY = str(ROOT / "bots" / "python" / "greedy_bot.py")
HASHED = str(ROOT / "tests" / "bots" / "hashed_bot.py")
CAP = 800
"""The test's cap in games: 400 deal sets of two games."""
LOWER, UPPER = bounds(0.05, 0.05)

SPRT_FILE = """name = "sprt"
variant = "block"
games = 400
duplicate = true
seed = "sprt-test"
concurrency = 2

[options]
target = 1

[sprt]
elo0 = 0
elo1 = 40

[[bots]]
name = "first"

[[bots]]
name = "second"
"""


@dataclass
class Run:
    """What the server showed of the SPRT run."""

    server: WebServer
    tid: str
    events: list[apb.TournamentEvent] = field(default_factory=list)
    polled: list[dict[str, Any]] = field(default_factory=list)
    """The web's tournament JSON, asked for again and again while it ran."""

    @property
    def folder(self) -> Path:
        return self.server.data / "tournaments" / self.tid

    def saved_test(self) -> dict[str, Any]:
        """The runner's own test, as it wrote it in standings.json."""
        return json.loads((self.folder / "standings.json").read_text())["sprt"]

    def status(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arena", "status", *args, "--server", self.server.address],
                              capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("sprt")
    bots = bot_entry("first", GREEDY) + bot_entry("second", HASHED, "--salt", "b")
    server = WebServer(folder / "data", "--concurrency", "2", *registry(folder, bots))
    try:
        info = submit(server.stub(), SPRT_FILE)
        done = Run(server, info.id)
        watcher = threading.Thread(target=lambda: done.events.extend(watch(server.stub(), info.id, seconds=300)))
        watcher.start()
        while True:  # the web's view while the games are played, until the end
            detail = get_json(f"{server.web}/api/t/{info.id}")
            done.polled.append(detail)
            if detail["tournament"]["state"] not in ("queued", "running"):
                break
            time.sleep(0.02)
        watcher.join(300)
        yield done
    finally:
        server.stop()


def check_consistent(test: apb.SprtState) -> None:
    """A test as the server sends it: its LLR is the one of its counts, its units and games agree."""
    assert (test.candidate, test.opponent, test.unit) == ("first", "second", "deal sets")
    assert (test.elo0, test.elo1) == (0.0, 40.0)
    assert (test.lower_bound, test.upper_bound) == (pytest.approx(LOWER), pytest.approx(UPPER))
    assert sum(test.counts) == test.units and len(test.counts) == 5 and test.games == 2 * test.units
    assert test.llr == pytest.approx(llr(list(test.counts), 0, 40))


def test_the_watch_sees_the_test_move(run: Run) -> None:
    snapshot = run.events[0].snapshot
    assert snapshot.tournament.sprt is True and snapshot.tournament.games_total == CAP
    live = [e.standings.standings.sprt for e in run.events if e.WhichOneof("kind") == "standings"
            and e.standings.standings.HasField("sprt")]
    undecided = [test for test in live if test.state == "continue" and test.units > 0]
    assert len(undecided) >= 3, "the test is shown as it goes, not only at the end"
    assert [test.units for test in live] == sorted(test.units for test in live)
    for test in live:
        check_consistent(test)
    assert all(test.summary.startswith("SPRT first vs second: undecided: LLR ") for test in undecided)

    final = run.events[-1].finished
    assert final.tournament.state == apb.TOURNAMENT_STATE_FINISHED
    test, saved = final.standings.sprt, run.saved_test()
    check_consistent(test)
    assert (test.state, list(test.counts), test.decided_at, test.units) == (
        H1, saved["counts"], saved["decided_at"], saved["units"]), "the server's test is the runner's"
    assert test.llr > test.upper_bound and test.elo == pytest.approx(saved["estimate"]["elo"])
    assert (test.elo_low, test.elo_high) == tuple(pytest.approx(v) for v in saved["estimate"]["elo_interval"])
    assert test.summary.startswith(f"SPRT first vs second: H1 accepted: LLR {test.llr:.2f} [-2.94, 2.94], Elo +")
    extra = final.standings.games - test.games  # games of deal sets left unfinished when the test decided
    assert test.summary.endswith(f"(95%), {test.units} deal sets ({test.games} games)" + (
        f"; the standings also count {extra} game{'' if extra == 1 else 's'} of "
        f"{'a deal set' if extra == 1 else 'deal sets'} left unfinished when the test decided (the test counts "
        f"complete deal sets only), so their games and Elo differ" if extra else ""))
    assert final.tournament.games_done < CAP, "stopped at the bound, not at the cap"


def test_the_web_shows_the_live_test_and_the_total_as_a_cap(run: Run) -> None:
    running = [d for d in run.polled if d["tournament"]["state"] == "running" and d["sprt"] is not None
               and d["sprt"]["state"] == "continue" and d["sprt"]["units"] > 0]
    assert running, "the web shows the test before standings.json is written"
    for detail in running:
        assert detail["tournament"]["sprt"] is True and detail["sprt"]["games"] == 2 * detail["sprt"]["units"]
        assert detail["standings"]["sprt"] == detail["sprt"]
    ended = get_json(f"{run.server.web}/api/t/{run.tid}")
    assert ended["sprt"] == run.saved_test()
    listed = next(t for t in get_json(f"{run.server.web}/api/tournaments")["tournaments"] if t["id"] == run.tid)
    assert (listed["sprt"], listed["games_total"]) == (True, CAP)


def test_status_prints_the_verdict_and_the_cap(run: Run) -> None:
    reply = run.server.stub().GetStandings(apb.GetStandingsRequest(id=run.tid), timeout=30)
    info, test = reply.tournament, reply.standings.sprt
    assert info.sprt is True and test.state == H1
    one = run.status(run.tid)
    assert one.returncode == 0, one.stderr
    lines = one.stdout.splitlines()
    assert f"games: {info.games_done} recorded (SPRT: stops when it decides; cap {CAP}), 0 being played" in lines
    assert lines[-1] == test.summary
    every = run.status()
    assert every.returncode == 0 and f"{info.games_done} (SPRT, cap {CAP})" in every.stdout, every.stdout
    watched = subprocess.run([sys.executable, "-m", "arena", "watch", run.tid, "--server", run.server.address],
                             capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert watched.returncode == 0, watched.stderr
    lines = watched.stdout.splitlines()
    recorded = f"{info.games_done} games recorded (SPRT: stops when it decides; cap {CAP})"
    assert lines[0] == f"tournament {run.tid}: 'sprt' (block), finished; {recorded}, 0 being played"
    assert lines[-2:] == [f"tournament {run.tid} finished: {recorded}; master seed sprt-test", test.summary]


def test_a_restarted_server_shows_the_test_it_ended_with(run: Run, tmp_path: Path) -> None:
    before = run.server.stub().GetStandings(apb.GetStandingsRequest(id=run.tid), timeout=30)
    again = Server(run.server.data)  # the same data folder, read back (the first server is still up: another port)
    try:
        after = again.stub().GetStandings(apb.GetStandingsRequest(id=run.tid), timeout=30)
    finally:
        again.stop()
    assert after.standings.sprt == before.standings.sprt and after.tournament.sprt is True


def signed(elo: float) -> str:
    """An Elo as the page writes it: one decimal, a sign, a true minus."""
    return ("+" if elo > 0 else "−" if elo < 0 else "") + f"{abs(elo):.1f}"


@needs_chromium
def test_the_page_draws_the_verdict_and_the_llr_bar(run: Run, tmp_path: Path) -> None:
    test = run.saved_test()
    browser = Chromium(tmp_path)
    try:
        browser.open_page(f"{run.server.web}/t/{run.tid}")
        deadline = time.monotonic() + 30
        while not browser.js("!!document.getElementById('sprt-verdict')"):
            assert time.monotonic() < deadline, browser.js("document.body.innerText.slice(0, 500)")
            time.sleep(0.1)
        shown = browser.js("[...['sprt-verdict', 'sprt-llr', 'sprt-elo', 'sprt-units']]"
                           ".map((id) => document.getElementById(id).textContent)")
        assert shown[0] == "H1 accepted"
        assert shown[1] == f"{test['llr']:.2f} [-2.94, 2.94]"
        low, high = test["estimate"]["elo_interval"]
        assert shown[2] == f"{signed(test['estimate']['elo'])} [{signed(low)}, {signed(high)}] (95%)"
        assert shown[3] == f"{test['units']} deal sets ({test['games']} games); decided at {test['decided_at']}"
        mark, right = browser.js("[document.getElementById('llr-mark').getAttribute('x1'), "
                                 "document.querySelector('#sprt .llr-bar .h1').getBBox().x + "
                                 "document.querySelector('#sprt .llr-bar .h1').getBBox().width]")
        assert float(mark) == pytest.approx(right), "an LLR beyond the upper bound is marked at the bar's end"
        recorded = json.loads((run.folder / "standings.json").read_text())["games"]
        assert browser.js("document.getElementById('progress').textContent") == (
            f"{recorded} recorded (SPRT: stops when it decides; cap {CAP})")
        SHOTS.mkdir(exist_ok=True)
        browser.screenshot(SHOTS / "tournament-sprt.png")
    finally:
        browser.close()
