"""The league's pages as the server renders them, from known data and without a server: the bot page's rating chart
(its line only moves right, whatever order the tables ended in; the 95% band; axes a person reads), the human
timestamps, the check report as a table, the challenge form's preselected pair, and the queue's and the bot page's
links to the games."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from arena.league.rules.rating import online_elo
from arena.league.views import BotPage, LadderQueue, TableView, VersionView
from arena.web.access import Access, Viewer
from arena.web.league import (
    author_html,
    bot_html,
    bot_json,
    challenge_pair,
    check_report_html,
    human_time,
    log_html,
    queue_html,
    queue_json,
    rating_chart,
)
from support.charts import path_xs

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def point(table: int, deal_set: int, mu: float, sigma: float, ended: str = "2026-12-05T10:00:00+00:00") -> dict:
    """A rating point as history_json writes it."""
    return {"table": table, "sequence": deal_set, "deal_set": deal_set, "ended_at": ended, "mu": mu, "sigma": sigma,
            "elo": online_elo(mu), "elo_low": online_elo(mu, sigma, -1.96), "elo_high": online_elo(mu, sigma, 1.96)}


def test_the_rating_chart_moves_right_when_tables_ended_out_of_order() -> None:
    """Table 9 was rated before table 4, and table 4 before table 2 (numbered as queued, rated as they ended): x
    follows the rating order, never the tables' numbers."""
    ratings = {"bot-v1": [point(9, 1, 26.0, 7.0), point(4, 2, 27.0, 6.0), point(2, 3, 25.5, 5.5),
                          point(12, 5, 28.0, 5.0)],
               "bot-v2": [point(11, 4, 24.0, 8.0), point(7, 6, 29.0, 6.5)]}
    svg = rating_chart(ratings)
    for name, count in (("bot-v1", 4), ("bot-v2", 2)):
        xs = path_xs(svg, name)
        assert len(xs) == count and all(a < b for a, b in zip(xs, xs[1:])), (name, xs)
    assert path_xs(svg, "bot-v1")[0] == 56.0 and path_xs(svg, "bot-v2")[-1] == 760 - 14  # deal set 1 and 6
    # the 95% interval as a band per version: its upper edge forward, its lower edge back
    assert re.findall(r'<path class="band" d="M[^"]+ Z" fill="#[0-9a-f]{6}" fill-opacity="0.15" stroke="none" '
                      r'data-band="(bot-v\d)"/>', svg) == ["bot-v1", "bot-v2"]
    # the axes: Elo ticks with signs, round deal-set ticks, what the x axis counts, the legend with each version's now
    assert ">Elo (0: a new version)</text>" in svg
    assert re.findall(r'text-anchor="middle">(\d+)</text>', svg) == ["1", "2", "3", "4", "5", "6"]
    assert "the bot&#x27;s 6 deal sets, in the order they were rated (5 Dec 2026 to 5 Dec 2026)" in svg
    assert "bot-v2: +118 [-258, +494] after 2 deal sets" in svg.replace("&#x27;", "'")
    assert ">0</text>" in svg and re.search(r">\+\d+</text>", svg) and re.search(r">-\d+</text>", svg)


def test_the_rating_chart_waits_for_two_deal_sets() -> None:
    assert rating_chart({"bot-v1": [point(3, 1, 26.0, 7.0)]}) == (
        '<p class="meta">The chart starts after two deal sets.</p>')


def test_online_ratings_read_as_elo() -> None:
    """A new version is 0; a point of mu is about 29.5 Elo (Plackett–Luce's logistic over beta √2, Elo's over
    400 / ln 10); the interval's ends are z sigmas away."""
    assert online_elo(25.0) == 0.0
    assert online_elo(26.0) == pytest.approx(29.4809, abs=1e-4)
    assert online_elo(25.0, 2.0, 1.96) == pytest.approx(2 * 1.96 * 29.4809, abs=1e-3)


NOW = datetime(2026, 12, 5, 14, 30, 0, tzinfo=UTC)


@pytest.mark.parametrize(("moment", "shown"), [
    ("2026-12-05T14:29:31+00:00", "just now"), ("2026-12-05T14:27:00+00:00", "3 min ago"),
    ("2026-12-05T09:05:00+00:00", "today 09:05"), ("2026-12-04T14:02:09+00:00", "yesterday 14:02"),
    ("2026-12-01T08:00:00+00:00", "Tue 08:00"), ("2026-11-03T18:45:00+00:00", "3 Nov 18:45"),
    ("2025-12-24T10:00:00+00:00", "24 Dec 2025"), ("2026-12-05T14:40:00+00:00", "in 10 min")])
def test_moments_read_as_a_person_says_them_with_the_exact_time_on_hover(moment: str, shown: str) -> None:
    exact = datetime.fromisoformat(moment).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert human_time(moment, NOW) == f'<time datetime="{moment}" title="{exact}">{shown}</time>'
    assert human_time(None, NOW) == "-"


def table(id_: int, state: str, games: tuple[str, ...] = (), ended: float = 0.0) -> TableView:
    return TableView(id=id_, versions=("a-v1", "b-v1"), version_ids=(1, 2), reason="coverage", state=state,
                     created_at=NOW.timestamp() - 600, started_at=NOW.timestamp() - 300, ended_at=ended,
                     points=(1.5, 0.5) if state == "done" else (), games=games)


def test_the_queue_links_each_done_tables_games_and_says_when_as_a_person() -> None:
    """A done table's row links each of its games to its viewer; a table being played links none (its games share
    their deals); every time is a <time> with the exact moment on hover."""
    queue = queue_json(LadderQueue(league="my league", concurrency=1, playing=(table(8, "playing"),), next=(),
                                   recent=(table(7, "done", ("0", "1"), NOW.timestamp() - 180),), note=""))
    assert queue["recent"][0]["games"] == [{"game": "0", "url": "/leagues/my%20league/tables/7/games/0"},
                                           {"game": "1", "url": "/leagues/my%20league/tables/7/games/1"}]
    page = queue_html(queue, Viewer(Access.PUBLIC), NOW)
    recent = page[page.index('<table id="recent">'):]
    assert ('<a href="/leagues/my%20league/tables/7/games/0">game 1</a> '
            '<a href="/leagues/my%20league/tables/7/games/1">game 2</a>') in recent
    assert '<time datetime="2026-12-05T14:27:00+00:00" title="2026-12-05 14:27:00 UTC">3 min ago</time>' in recent
    playing = page[page.index('<table id="playing">'):page.index('<table id="recent">')]
    assert "/tables/8/games" not in page and ">started<" in playing and ">5 min ago</time>" in playing


def test_the_bot_page_links_its_recent_tables_games() -> None:
    page = bot_json(BotPage(league="test", bot="a", author="alice", versions=(version(1, "ready", True),),
                            tables=(table(7, "done", ("0", "1"), NOW.timestamp() - 7200),)))
    html = bot_html(page, Viewer(Access.PUBLIC), NOW)
    assert '<a href="/leagues/test/tables/7/games/1">game 2</a>' in html and ">today 12:30</time>" in html
    assert html.count("<time ") == 3  # the version's upload and last change, the table's end


REPORT = {"passed": True, "bot": "a", "startup_ms": 491.53007200004595, "hello": "py-random 1 by alice",
          "containment": "sandbox: bubblewrap", "start_fault": None,
          "variants": [{"variant": "block", "players": 2, "matches": 2, "decisions": 31, "faults": [],
                        "median_ms": 0.8312, "worst_ms": 12.4999, "passed": True}]}


def test_the_check_report_is_a_table_with_rounded_times_and_units() -> None:
    page = log_html("test", {"version": {"version": "a-v1", "state": "ready", "reason": ""}, "build_log": "ok",
                             "check_report": json.dumps(REPORT, indent=2)}, Viewer(Access.FULL))
    assert '<dd id="check-startup">492 ms</dd>' in page and '<dd id="check-result">passed</dd>' in page
    assert "491.53" not in page and '"startup_ms"' not in page
    row = re.search(r'<table id="check-variants">.*?<tbody>(.*?)</tbody>', page).group(1)
    assert re.findall(r"<td[^>]*>(.*?)</td>", row) == ["block", "2", "2", "31", "0.8 ms", "12 ms", "none", "yes"]
    failed = {**REPORT, "passed": False, "start_fault": "did not start", "startup_ms": None, "variants": []}
    page = check_report_html(json.dumps(failed))
    assert '<dd id="check-failed-to-start">did not start</dd>' in page and '<dd id="check-startup">-</dd>' in page
    assert check_report_html("") == '<section class="card"><pre id="check-report">(none yet)</pre></section>'
    assert check_report_html("[1") == '<section class="card"><pre id="check-report">[1</pre></section>'


def version(id_: int, state: str, active: bool, bot: str = "a", number: int = 1) -> VersionView:
    return VersionView(id=id_, league="test", bot=bot, author="alice", number=number, sha256="0" * 64, state=state,
                       reason="", created_at=NOW.timestamp() - 86400, updated_at=NOW.timestamp() - 60,
                       active=active, dial_in=False)


def board(*ids: int) -> list[dict]:
    return [{"version_id": vid, "version": f"v{vid}"} for vid in ids]


@pytest.mark.parametrize(("versions", "ranked", "pair"), [
    ([version(3, "ready", True)], board(9, 3, 5), (3, 9)),  # the neighbour just above
    ([version(3, "ready", True)], board(3, 9, 5), (3, 9)),  # at the top: the best other
    ([version(3, "ready", True)], board(9, 5), (3, 9)),  # not placed yet: the best other
    ([version(2, "ready", False), version(3, "ready", True)], board(2, 3), (3, 2)),  # the active one, not the older
    ([version(2, "ready", False), version(3, "ready", True)], [], (3, 2)),  # no board: another of its own
    ([version(3, "ready", True)], board(3), None),  # alone: nothing to meet
    ([version(3, "failed", False)], board(9), None),  # nothing ready
    ([version(3, "ready", True), version(7, "ready", True, "b")], board(9, 7, 5, 3), (7, 9)),  # its best-placed bot
])
def test_the_challenge_form_preselects_a_sensible_pair(versions: list, ranked: list, pair: tuple | None) -> None:
    assert challenge_pair(versions, ranked) == pair
    page = author_html("test", "alice", versions, [], {"standings": ranked}, "csrf", Viewer(Access.FULL))
    form = page[page.index('<form id="challenge"'):]
    form = form[:form.index("</form>")]
    selected = re.findall(r'<option value="(\d*)" selected', form)
    if pair is None:
        assert '<option value="" selected disabled>choose an opponent</option>' in form
    else:
        assert selected == [str(pair[0]), str(pair[1])] and pair[0] != pair[1]


def test_the_author_page_says_when_each_version_was_uploaded() -> None:
    page = author_html("test", "alice", [version(3, "ready", True)], [], {"standings": []}, "csrf",
                       Viewer(Access.FULL), now=NOW)
    rows = page[page.index('<table id="my-versions">'):]
    assert ('<time datetime="2026-12-04T14:30:00+00:00" title="2026-12-04 14:30:00 UTC">yesterday 14:30</time>'
            in rows[:rows.index("</table>")])
