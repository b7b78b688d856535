"""The tutorial docs/tutorials/run-a-competition.md, followed as an organiser follows it: every shell block it marks is
run, in its order, by one bash in a fresh folder (tests/support/tutorial.py: the convention, the runner), on a real
PostgreSQL server that the tests start (the page's setup block installs Debian's; here ``ARENA_DB`` names a database of
the session's server); then what the page says you should see is asserted: the server and its public site listen, the
three teams' versions are ready, spectators read the leaderboard without a token, the freeze names the field, the
finals end with a ranking of the field, their records verify and their page shows the seed commitment.

The page's waits are its own bounded loops on the CLI's answers, never sleeps in place of a fact. Its server listens
at the reader's default addresses (tests/support/tutorial.py: ``reader_addresses``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.tutorial import Tutorial, lines_missing

from arena.sandbox import host

pytestmark = pytest.mark.skipif(host().bwrap_problem is not None or host().cgroups is None,
                                reason="a league builds and checks its versions in the sandbox")

TUTORIAL = Tutorial("run-a-competition")
SCRIPT_S = 900
"""A bound for the whole page; it takes about two minutes on a quiet machine."""
FIELD = ("alice-bot-v1 (1)", "bob-bot-v1 (2)", "carol-bot-v1 (3)")


def test_the_setup_block_is_what_this_test_does() -> None:
    setup = TUTORIAL.setup()
    assert "bash scripts/setup.sh" in setup and 'PATH="$PWD/.venv/bin:$PATH"' in setup
    assert "apt-get install postgresql" in setup and "export ARENA_DB=" in setup


def test_the_tutorial_runs_as_written(tmp_path: Path, postgres_database: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(TUTORIAL.blocks()) >= 10, "the page's blocks were not found: see tests/support/tutorial.py"
    monkeypatch.setenv("ARENA_DB", postgres_database)
    ran = TUTORIAL.run_with_server(tmp_path, timeout=SCRIPT_S)
    of = ran.of

    server_log = (tmp_path / "server.log").read_text()
    assert "database=postgresql+psycopg://arena@/" in server_log, server_log[:2000]
    for key in ("arena serve", "add-author", "arena league upload", "curl -s http://127.0.0.1:8080/leagues/cup |",
                "arena league freeze"):
        assert not lines_missing(TUTORIAL.excerpt(key), of(key)), (key, of(key))
    versions = of("arena league versions")
    for version, bot in enumerate(("alice-bot", "bob-bot", "carol-bot"), start=1):
        assert re.search(rf"│ {version}\s+│ {bot}\s+│ 1\s+│ ready \(active\)", versions), versions
    board = of("arena league standings")
    for bot, team in (("alice-bot", "alice"), ("bob-bot", "bob"), ("carol-bot", "carol")):
        assert re.search(rf"│ {bot}\s+│ {team}\s+│\s+-?\d+ │", board), board
    assert re.search(r"^opens = \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", of("tail -2 cup.toml"), re.M)
    status = of("arena league status --token-file alice.token\n")  # open already when the uploads took a minute
    assert re.fullmatch(r"The Block Cup \(cup\): block, (upcoming; opens in .+ \(at .+ UTC\)|open; the operator "
                        r"freezes it for its finals \(arena league freeze\))\n", status), status
    assert "its field: " + ", ".join(FIELD) in of("arena league freeze")
    finals = of("arena league finals --deal-sets 4")
    assert "playing, 0 of 24 games recorded in" in finals and "done, 24 of 24 games recorded" in finals, finals
    ranked = re.findall(r"^│ \S+\s+│ (\S+-bot-v1 \(\d\))", finals, re.M)
    assert sorted(ranked) == list(FIELD), finals
    verified = of("arena replay cup-data/league/leagues/cup/finals --verify")
    assert re.search(r"^verified 24 games, \d+ moves in cup-data/league/leagues/cup/finals: OK; deals checked against "
                     r"the revealed master seed", verified, re.M), verified
    assert verified.rstrip().endswith("\n1"), verified
