"""The league's pages live and in full, on a real ``arena serve --league --http --http-public`` whose ladder plays
two real bots in their sandbox over real gRPC:

- in a real headless Chromium, the leaderboard's games count and the queue's recent tables change in the DOM as
  tables end, and the header's phase once the league is frozen, without a reload (the page's marker survives; the DOM
  is polled through the driver with a deadline);
- a bot's page: each version's rating chart ending at the database's online rating, its results by opponent and by
  seat counting the done tables' games, its recent games each opening in the viewer;
- the finals' page: the field, the seed's commitment, never the secret seed while the finals are played, and the
  revealed seed (matching the commitment) and the ranking once they ended.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from arena.league.rules.lifecycle import DONE
from arena.league.rules.model import ONLINE
from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import league_pb2 as lpb
from arena.records.run_folder import FORMAT_VARIABLE, RunFolder, commitment_of
from support.chromium import Chromium, needs_chromium
from support.league import LADDER_BOTS, LADDER_LEAGUE, League, bearer, games_on_board, ladder_uploaded, league_in
from support.waiting import wait_for
from support.web import get_json, http

LADDER_S = 600
"""Generous: every table starts two bots in their sandbox and plays two games, on a busy 2-core machine."""
GAMES_SHOWN = ("Array.from(document.querySelectorAll('#leaderboard tbody tr'))"
               ".reduce((n, tr) => n + parseInt(tr.children[5].textContent, 10), 0)")
"""The leaderboard's games column summed, as the page shows it now (each cell: games, then its deal sets)."""
NEWEST_ENDED = "(document.querySelector('#recent tbody tr td') || {}).textContent || ''"
"""The queue page's newest ended table, as the page shows it now."""


def newest_ended(web: str) -> str:
    recent = get_json(f"{web}/api/leagues/test/queue")["recent"]
    return str(recent[0]["id"]) if recent else ""


def frozen_and_still(league: League) -> None:
    """Freeze the league, then wait until no table is played and the board holds every deal set."""
    frozen = league.league("freeze", token=league.operator)
    assert frozen.returncode == 0, frozen.stderr
    operator = bearer(league.operator.read_text().strip())
    stub = league.stub()

    def still() -> bool:
        queue = stub.GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30, metadata=operator)
        board = stub.GetLadderStandings(lpb.GetLadderStandingsRequest(), timeout=30, metadata=operator)
        return not queue.playing and board.deal_sets_fitted == board.deal_sets_rated and all(
            row.fitted for row in board.standings)

    wait_for(still, LADDER_S, "the frozen league's last table to end and its board to be refitted")


PHASE_SHOWN = "document.getElementById('league-phase').textContent"
"""The league's phase as a league page's header shows it."""
GAME_SHOWN = "test · Block (no drawing), 2 players · 2 s a move"
"""The header's title and what the league's tables play."""
FROZEN_PHASE = f"{GAME_SHOWN} · frozen · the operator starts the finals (arena league finals --start)"


@needs_chromium
def test_the_leaderboard_and_queue_update_live_as_tables_end(tmp_path: Path, browser: Chromium) -> None:
    league = league_in(tmp_path, LADDER_LEAGUE, web=True)
    web = league.server.web  # type: ignore[attr-defined]
    try:
        ladder_uploaded(league)
        wait_for(lambda: games_on_board(web) > 0, LADDER_S, "a first table rated on the board")

        browser.open_page(f"{web}/leagues/test")
        shown = browser.js(GAMES_SHOWN)
        assert shown > 0 and shown % 2 == 0  # the first paint, from the server: two games a table
        browser.js("window.arenaMarker = 'the same page'")
        browser.wait_js(f"({GAMES_SHOWN}) > {shown} && window.arenaMarker === 'the same page'", LADDER_S,
                        "the leaderboard's games count to grow without a reload")
        assert browser.js("document.getElementById('live-state').textContent") == "live"

        browser.goto(f"{web}/leagues/test/queue")
        newest = browser.js(NEWEST_ENDED)
        assert newest.isdigit()
        assert browser.js(PHASE_SHOWN) == (f"{GAME_SHOWN} · open · the operator freezes it for its finals (arena league "
                                           f"freeze)")
        browser.js("window.arenaMarker = 'the same queue'")
        browser.wait_js(f"({NEWEST_ENDED}) !== {json.dumps(newest)} && window.arenaMarker === 'the same queue'",
                        LADDER_S, "the queue's newest ended table to change without a reload")

        frozen_and_still(league)
        browser.wait_js(f"document.body.innerText.includes('the league is frozen for its finals') && "
                        f"({NEWEST_ENDED}) === {json.dumps(newest_ended(web))} && "
                        f"window.arenaMarker === 'the same queue'", LADDER_S,
                        "the queue to show the freeze and the last table without a reload")
        browser.wait_js(f"({PHASE_SHOWN}) === {json.dumps(FROZEN_PHASE)} && window.arenaMarker === 'the same queue'",
                        LADDER_S, "the header to show the frozen phase without a reload")
        browser.goto(f"{web}/leagues/test")
        assert browser.js(GAMES_SHOWN) == games_on_board(web)
        # one tab through more live pages than a browser opens connections to one site (six), then a game: each
        # loads, since a page left closes its event stream (the back-forward cache would keep it open)
        for page in ("queue", "finals", "bots/greedy", "bots/rand", "", "queue", "finals", "bots/greedy"):
            browser.goto(f"{web}/leagues/test/{page}")
            assert browser.js("document.getElementById('main').children.length") > 0, page
        game = get_json(f"{web}/api/leagues/test/bots/greedy")["history"]["recent"][0]["url"]
        browser.goto(f"{web}{game}")
        assert browser.js("document.getElementById('arena-bar').textContent").endswith(
            f"table {game.split('/')[4]} · game {game.split('/')[6]} · {FROZEN_PHASE}")
        assert browser.exceptions() == []
    finally:
        league.server.stop()


def test_bot_and_finals_pages_show_history_keeping_the_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)  # the pages read the league's default records (compact)
    league = league_in(tmp_path, LADDER_LEAGUE, web=True)
    web = league.server.web  # type: ignore[attr-defined]
    db = open_database(sqlite_url(tmp_path / "data"))
    try:
        ladder_uploaded(league)
        wait_for(lambda: games_on_board(web) >= 6, LADDER_S, "three tables rated on the board")
        code, _, body = http(f"{web}/leagues/test/finals")
        assert code == 200 and 'id="finals-state">not frozen<' in body.decode()
        frozen_and_still(league)
        league_id = db.league("test").id
        done = db.tables_in(league_id, [DONE])
        stored = {r.version_id: (r.mu, r.sigma) for r in db.ratings(league_id, ONLINE)}
        versions = {bot.name: version for bot, version in db.active_versions(league_id)}

        # a bot's page: one rating point per done table, ending at the stored online rating; its results
        for name, version in versions.items():
            other = next(n for n in LADDER_BOTS if n != name)
            page = get_json(f"{web}/api/leagues/test/bots/{name}")["history"]
            points = page["ratings"][f"{name}-v1"]
            assert [p["table"] for p in points] == [t.id for t in sorted(done, key=lambda t: t.sequence)]
            assert (points[-1]["mu"], points[-1]["sigma"]) == stored[version.id]
            against = page["by_opponent"][f"{other}-v1"]
            assert list(page["by_opponent"]) == [f"{other}-v1"] and against["played"] == len(done)
            assert against["won"] + against["drawn"] + against["lost"] == len(done)
            assert sorted(page["by_seat"]) == ["0", "1"]
            assert [page["by_seat"][s]["played"] for s in ("0", "1")] == [len(done), len(done)]
            assert len(page["recent"]) == 2 * len(done)
            text = http(f"{web}/leagues/test/bots/{name}")[2].decode()
            assert f'data-version="{name}-v1" data-points="{len(done)}"' in text
            assert '<table id="by-opponent">' in text and '<table id="by-seat">' in text
            for game in page["recent"][:2]:
                assert f'href="{game["url"]}"' in text
                code, headers, viewer = http(f"{web}{game['url']}")
                assert code == 200 and "dominoes" in viewer.decode().lower(), game["url"]
                assert "sha256-" in headers["content-security-policy"]
        code, _, body = http(f"{web}/leagues/test/tables/{done[0].id}/games/99")
        assert code == 404 and f"table {done[0].id} has no game 99" in body.decode()

        # the finals: frozen, then played; the secret seed is in no answer while they play
        finals = get_json(f"{web}/api/leagues/test/finals")
        assert (finals["state"], sorted(finals["field"]), finals["commitment"], finals["seed"]) == (
            "frozen", ["greedy-v1", "rand-v1"], "", "")
        started = league.league("finals", "--deal-sets", "2", token=league.operator)
        assert started.returncode == 0, started.stderr
        run = RunFolder(league.root / "data" / "league" / "leagues" / "test" / "finals")
        secrets: set[str] = set()

        def ended() -> bool:
            if run.keeps_secret():
                try:
                    secrets.add(run.load_secret().seed)
                except (OSError, ValueError, KeyError):
                    pass  # being written
            over = False
            for path, says_done in (("/api/leagues/test/finals", b'"state":"done"'),
                                    ("/leagues/test/finals", b'id="finals-state">done<')):
                code, _, answer = http(f"{web}{path}")
                assert code == 200, path
                if says_done in answer:  # ended: the seed is revealed now
                    over = True
                else:
                    assert not [s for s in secrets if s.encode() in answer], path
            shown = Counter(g["deal_set"] for g in get_json(f"{web}/api/leagues/test/finals")["results"])
            assert set(shown.values()) <= {2}, shown  # a deal set's games only once both are played
            return over

        wait_for(ended, LADDER_S, "the finals to end")
        assert secrets, "the finals' secret seed was never seen on disk while they played"
        finals = get_json(f"{web}/api/leagues/test/finals")
        revealed = run.revealed()
        assert (finals["state"], finals["error"], finals["games"], finals["scheduled"]) == ("done", "", 4, 4)
        assert (finals["seed"], finals["nonce"]) == (revealed["seed"], revealed["nonce"])
        assert finals["seed"] in secrets and commitment_of(finals["seed"], finals["nonce"]) == finals["commitment"]
        assert {row["version"] for row in finals["ranking"]} == {"greedy-v1", "rand-v1"}
        text = http(f"{web}/leagues/test/finals")[2].decode()
        assert f'id="finals-seed">{finals["seed"]} (nonce {finals["nonce"]})<' in text
        assert '<table id="finals-ranking">' in text and '<table id="finals-games">' in text
    finally:
        db.close()
        league.server.stop()
