"""The league on the public web dashboard: a real ``arena serve --league --http --http-public`` whose ladder plays a
few tables between two versions uploaded with the CLI (real bots in their sandbox, real gRPC); its leaderboard,
queue and bot pages as JSON and as server-rendered HTML, read without a token: exact rows against the gRPC calls
and the database, an unknown bot or league a 404 with one line, and no token, build log or archive hash in any
answer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.web.league import form_text, place_text
from arena.league.rules.lifecycle import DONE, UNFINISHED
from arena.league.storage.db import open_database, sqlite_url
from arena.league.play.ladder import FROZEN
from arena.league.views import ChallengeView, Leaderboard, LeagueStatus, Standing
from arena.protocol import league_pb2 as lpb
from arena.web.access import Access, Viewer
from arena.tournament.spec import TimeSpec
from arena.web.league import BAR, author_html, leaderboard_html, leaderboard_json, phase_html
from support.league import GAME, League, bearer, bot_folder, database_of, league_in
from support.paths import ROOT
from support.waiting import wait_for
from support.web import get_json, http

LADDER_S = 600
"""Generous: every table starts two bots in their sandbox and plays two games, on a busy 2-core machine."""
LEAGUE = GAME + """[ladder]
concurrency = 1
coverage = 2
placement = 1
"""
BOTS = {"rand": ROOT / "bots" / "python" / "random_bot.py", "greedy": ROOT / "bots" / "python" / "greedy_bot.py"}
TABLES = 3
"""Done tables the ladder plays before the league is frozen (and so holds still for exact rows)."""


def elo(value: float) -> str:
    """An Elo as the pages show it: signed to the point, and 0 for what rounds to zero (never "-0")."""
    return "0" if round(value) == 0 else f"{value:+.0f}"


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> str | None:
    return database_of(request)


def ladder_played(league: League) -> None:
    """Both bots uploaded by their own authors and ready; the ladder plays ``TABLES`` tables at least; then the
    league is frozen and waited on until no table is being played and the board's refit holds every deal set."""
    for name, source in BOTS.items():
        league.add_author(f"author-{name}")
        league.upload(f"author-{name}", bot_folder(league.root / f"{name}-bot", source), name)
    for name in BOTS:
        assert league.settled(league.token(f"author-{name}"), name).state == lpb.VERSION_STATE_READY
    operator = bearer(league.operator.read_text().strip())
    stub = league.stub()

    def queue() -> lpb.GetLadderQueueResponse:
        return stub.GetLadderQueue(lpb.GetLadderQueueRequest(), timeout=30, metadata=operator)

    wait_for(lambda: sum(t.state == lpb.TABLE_STATE_DONE for t in queue().recent) >= TABLES, LADDER_S,
             f"{TABLES} tables done")
    frozen = league.league("freeze", token=league.operator)
    assert frozen.returncode == 0, frozen.stderr

    def still() -> bool:
        board = stub.GetLadderStandings(lpb.GetLadderStandingsRequest(), timeout=30, metadata=operator)
        return not queue().playing and board.deal_sets_fitted == board.deal_sets_rated and all(
            row.fitted for row in board.standings)

    wait_for(still, LADDER_S, "the frozen league's last table to end and its board to be refitted")


def test_public_league_pages_are_exact_and_keep_secrets(tmp_path: Path, database: str | None) -> None:
    league = league_in(tmp_path, LEAGUE, database, web=True)
    web = league.server.web  # type: ignore[attr-defined]
    db = open_database(database or sqlite_url(tmp_path / "data"))
    try:
        ladder_played(league)
        league_id = db.league("test").id
        done = db.tables_in(league_id, [DONE])
        assert len(done) >= TABLES and not db.tables_in(league_id, UNFINISHED)
        versions = {bot.name: version for bot, version in db.active_versions(league_id)}
        operator = bearer(league.operator.read_text().strip())
        grpc_board = league.stub().GetLadderStandings(lpb.GetLadderStandingsRequest(), timeout=30,
                                                      metadata=operator)

        # the leaderboard: the gRPC call's rows, field by field, each version active, two games per deal set
        board = get_json(f"{web}/api/leagues/test/standings")
        assert board["league"] == board["title"] == "test" and board["rating"] == grpc_board.rating
        assert board["deal_sets_fitted"] == board["deal_sets_rated"] == len(done)
        bots_of = {f"{bot}-v1": bot for bot in BOTS}
        expected = [{"rank": row.rank, "rank_best": row.rank_best, "rank_worst": row.rank_worst,
                     "version": f"{row.bot}-v1", "version_id": versions[row.bot].id, "bot": row.bot, "number": 1,
                     "author": f"author-{row.bot}", "team": f"author-{row.bot}", "rating": row.rating,
                     "rating_low": row.rating_low, "rating_high": row.rating_high, "fitted": True,
                     "deal_sets": len(done), "games": 2 * len(done), "state": "ready", "active": True,
                     "tied_with": list(row.tied_with), "tied_with_bots": [bots_of[n] for n in row.tied_with],
                     "form": list(row.form), "form_text": form_text(row.form),
                     "place": place_text(row.rank_best, row.rank_worst, True, [bots_of[n] for n in row.tied_with])}
                    for row in grpc_board.standings]
        assert board["standings"] == expected
        assert [row["rank"] for row in board["standings"]] == [1, 2]
        assert {row["bot"] for row in board["standings"]} == set(BOTS)
        assert all(row["rating_low"] < row["rating"] < row["rating_high"] for row in board["standings"])
        assert all(len(row["form"]) == len(done) for row in board["standings"])  # every table: both bots

        # the queue: nothing played or next (frozen), the done tables newest first with their reasons and points
        queue = get_json(f"{web}/api/leagues/test/queue")
        assert (queue["league"], queue["concurrency"], queue["note"], queue["playing"], queue["next"]) == (
            "test", 1, FROZEN, [], [])
        names = {v.id: f"{bot}-v1" for bot, v in versions.items()}
        assert [(t["id"], t["versions"], t["version_ids"], t["reason"], t["state"], t["error"])
                for t in queue["recent"]] == [(t.id, [names[v] for v in t.versions], list(t.versions), t.reason,
                                               "done", "") for t in reversed(done)]
        assert all(sum(t["points"]) == 2.0 and t["ended_at"] for t in queue["recent"])

        # a bot's page: its one version and its tables (every table: two bots), newest first
        for name, version in versions.items():
            page = get_json(f"{web}/api/leagues/test/bots/{name}")
            assert (page["league"], page["bot"], page["author"]) == ("test", name, f"author-{name}")
            assert [(v["id"], v["version"], v["state"], v["active"]) for v in page["versions"]] == [
                (version.id, f"{name}-v1", "ready", True)]
            assert page["versions"][0]["created_at"].startswith(version.created_at.strftime("%Y-%m-%dT%H:%M"))
            assert [t["id"] for t in page["tables"]] == [t.id for t in reversed(done)]

        # the pages: the same rows in the page itself (no script needed); the front page links to the league
        code, headers, body = http(f"{web}/leagues/test")
        text = body.decode()
        assert code == 200 and headers["content-type"].startswith("text/html")
        assert '<table id="leaderboard">' in text  # in the page itself; its one script only keeps it live
        assert text.count("<script") == 1 and '<script src="/static/league.js" defer></script>' in text
        for row in board["standings"]:
            assert f'<a href="/leagues/test/bots/{row["bot"]}">{row["bot"]}</a></td><td class="l">v1</td>' in text
            assert f'{elo(row["rating"])} [{elo(row["rating_low"])}, {elo(row["rating_high"])}]' in text
        code, _, body = http(f"{web}/leagues/test/queue")
        assert code == 200 and '<table id="recent">' in body.decode()
        assert all(f'<td class="">{t["id"]}</td>' in body.decode() for t in queue["recent"])
        assert FROZEN in body.decode()
        code, _, body = http(f"{web}/leagues/test/bots/greedy")
        assert code == 200 and '<table id="versions">' in body.decode() and "by author-greedy" in body.decode()
        code, _, body = http(f"{web}/")
        assert code == 200 and '<a href="/leagues/test">league test</a>' in body.decode()
        header = '<b id="league-title">test</b> · Block (no drawing), 2 players · 2 s a move · <b>frozen</b>'
        for path in ("", "/queue", "/bots/rand", "/finals"):  # every public page's header
            code, _, body = http(f"{web}/leagues/test{path}")
            assert code == 200 and header in body.decode(), path

        # unknown bot or league: 404 with its one line
        for url, line in ((f"{web}/api/leagues/test/bots/nobody", "no bot 'nobody' in this league"),
                          (f"{web}/api/leagues/other/standings", "no league 'other' on this server (it runs test)")):
            code, _, body = http(url)
            assert (code, body.count(b"\n"), json.loads(body)) == (404, 0, {"error": line})
        code, _, body = http(f"{web}/leagues/test/bots/nobody")
        assert code == 404 and "no bot &#x27;nobody&#x27; in this league" in body.decode()

        # nothing secret in any answer: the tokens, the build logs, the archives' hashes
        secrets = [league.operator.read_text().strip(), *(league.token(f"author-{n}") for n in BOTS), "build.log"]
        for version in versions.values():
            secrets.append(version.sha256)
            full = db.version(version.id)
            secrets += [line for line in (full.build_log or "").splitlines() if len(line) > 20]
        for path in ("/", "/leagues/test", "/leagues/test/queue", "/api/leagues/test/standings",
                     "/api/leagues/test/queue", *(f"/{p}leagues/test/bots/{n}" for p in ("", "api/") for n in BOTS)):
            code, _, body = http(f"{web}{path}")
            assert code == 200, path
            assert not [s for s in secrets if s.encode() in body], path
    finally:
        db.close()
        league.server.stop()


def test_a_server_without_a_league_says_so(tmp_path: Path) -> None:
    from support.web import WebServer

    server = WebServer(tmp_path / "data")
    try:
        code, _, body = http(f"{server.web}/api/leagues/test/standings")
        assert (code, json.loads(body)) == (404, {"error": "this server runs no league (arena serve --league FILE)"})
        code, _, body = http(f"{server.web}/")
        assert code == 200 and b"/leagues/" not in body
    finally:
        server.stop()


@pytest.mark.fast
def test_the_author_page_shows_a_challenges_outcome_beside_the_sprt_line() -> None:
    """A done challenge's row: its outcome in words, why, and the SPRT's own line, every text escaped."""
    done = ChallengeView(
        id=3, league="test", author="alice", version_id=12, version="mine-v2", opponent_id=7, opponent="<b>-v1",
        deal_sets=300, state="done", error="", created_at=0.0, started_at=0.0, ended_at=0.0,
        verdict="SPRT mine-v2 vs <b>-v1: undecided: LLR -0.61 [-2.94, 2.94], Elo -70.4 [-141.4, -4.9] (95%), "
                "300 deal sets (600 games)", sprt_state="continue", elo=-70.4, elo_low=-141.4, elo_high=-4.9,
        units=300, outcome="worse",
        outcome_why="the SPRT did not stop within 300 deal sets; the Elo difference's 95% interval [-141.4, -4.9] "
                    "lies below 0")
    page = author_html("test", "author 'alice'", [], [done], {"standings": []}, "csrf", Viewer(Access.FULL))
    table = page[page.index('id="my-challenges"'):]
    assert ("<strong>worse</strong> (the SPRT did not stop within 300 deal sets; the Elo difference&#x27;s 95% "
            "interval [-141.4, -4.9] lies below 0)") in table
    assert "SPRT mine-v2 vs &lt;b&gt;-v1: undecided: LLR -0.61" in table
    assert ">outcome<" in table and ">SPRT<" in table


def standing(rank: int, bot: str, rating: float, low: float, high: float, best: int, worst: int,
             tied: tuple[str, ...], form: tuple[float, ...]) -> Standing:
    return Standing(rank=rank, version_id=rank * 10, bot=bot, number=2, author="Team <1>", rating=rating,
                    rating_low=low, rating_high=high, sigma=1.0, online_mu=25.0, deal_sets=3, games=6,
                    state="ready", rank_best=best, rank_worst=worst, fitted=True, tied_with=tied, form=form)


@pytest.mark.fast
def test_the_leaderboard_draws_each_interval_to_scale_and_says_the_place_in_words() -> None:
    """Three bots' rows: each rating's 95% interval a bar whose ends sit at x proportional to their Elo on the
    board's common scale (its lowest and highest interval ends), the rating a dot inside it, 0 a line; the place
    and the form in words, no jargon; names escaped."""
    board = Leaderboard(league="test", rating="ml", deal_sets_fitted=9, deal_sets_rated=9, rank_rule="rule",
                        standings=(standing(1, "foo", 150.0, 50.0, 250.0, 1, 2, ("bar-v2",), (1.0, 1.0, 0.0)),
                                   standing(2, "bar", 40.0, -60.0, 140.0, 1, 3, ("foo-v2", "baz-v2"), (0.5,)),
                                   standing(3, "baz", -190.0, -250.0, -130.0, 2, 3, ("bar-v2",), ())))
    shown = leaderboard_json(board)
    assert [(r["team"], r["active"], r["tied_with_bots"], r["place"]) for r in shown["standings"]] == [
        ("Team <1>", True, ["bar"], "could be 1st to 2nd; not yet told apart from bar"),
        ("Team <1>", True, ["foo", "baz"], "could be 1st to 3rd; not yet told apart from foo and baz"),
        ("Team <1>", True, ["bar"], "could be 2nd to 3rd; not yet told apart from bar")]
    page = leaderboard_html(shown, Viewer(Access.PUBLIC))
    width, _, margin = BAR
    low, high = -250.0, 250.0  # the board's scale

    def x(elo: float) -> float:
        return margin + (width - 2 * margin) * (elo - low) / (high - low)

    bars = re.findall(r'<rect class="interval" x="([-\d.]+)" y="[-\d.]+" width="([-\d.]+)"', page)
    dots = re.findall(r'<circle class="rating" cx="([-\d.]+)"', page)
    means = set(re.findall(r'<line class="mean" x1="([-\d.]+)"', page))
    rows = board.standings
    assert [(float(left), float(span)) for left, span in bars] == [
        (round(x(r.rating_low), 1), round(x(r.rating_high) - x(r.rating_low), 1)) for r in rows]
    assert [float(cx) for cx in dots] == [round(x(r.rating), 1) for r in rows]
    assert means == {f"{x(0.0):.1f}"} and float(bars[2][1]) / float(bars[0][1]) == pytest.approx(120 / 200, abs=0.01)
    assert "rank a" not in page and "One row per bot, the version it plays now, ranked by rating" in page
    assert "could be 1st to 3rd; not yet told apart from foo and baz" in page
    assert "won 2, lost 1 of its last 3 deal sets" in page and "Team &lt;1&gt;" in page
    assert page.count('<rect class="won"') == 2 and page.count('<rect class="lost"') == 1
    assert '<a href="/leagues/test/bots/foo">foo</a>' in page and "6 (3 deal sets)" in page


@pytest.mark.fast
def test_the_league_header_names_title_game_time_control_and_phase() -> None:
    status = LeagueStatus(league="nc", title="Night <cup>", variant="draw", phase="open", next_phase="frozen",
                          next_at=0.0, next="", results_published=False,
                          variant_title="Draw (Pagat's individual Draw game)", players=2,
                          time_control=TimeSpec(move_ms=1000, bank_ms=30000).describe())
    assert phase_html(status) == (
        '<span id="league-phase" data-phase="open"><b id="league-title">Night &lt;cup&gt;</b> · Draw (Pagat&#x27;s '
        'individual Draw game), 2 players · 1 s a move, a 30 s bank per seat per match · <b>open</b></span>')
    assert TimeSpec(move_ms=500, first_move_ms=5000).describe() == "0.5 s a move, 5 s for a seat's first move"
