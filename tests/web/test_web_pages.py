"""What the dashboard's pages say and how they are laid out, read in a real headless Chromium (tests/support/
chromium.py) from a real ``arena serve --http`` with real bots: the headings of every table, the rating named
before the first game, a chart where every Elo is infinite, the entrant page's counts and handshake, and wide
tables kept inside their cards. Screenshots go to /tmp/arena-web-shots (outside the repository)."""

from __future__ import annotations

import re
import uuid

import pytest
from support.chromium import Chromium, needs_chromium
from support.paths import ROOT
from support.servers import bot_entry, gated_bot, named, open_gate, random_bot, registry, submit, tournament
from support.web import SHOTS, WebServer, get_json, wait_state

from arena.rules.beliefs import Calibration
from arena.tournament.standings import CALIBRATION_HEADER, SKILL_HEADER, calibration_cell

BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"
BELIEF_BOT = ROOT / "tests" / "bots" / "belief_bot.py"
MANY = ("random-alpha", "random-beta", "random-gamma", "random-delta", "random-epsilon")
"""Five entrants with names as long as real ones: the pairwise table of five is wider than its card."""

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """Random bots (the five of :data:`MANY`), ``faulty`` (an illegal answer every time: it loses every game),
    ``gated`` (answers only as far as the test lets it) and ``believer`` (sends a belief with every choice)."""
    folder = tmp_path_factory.mktemp("pages")
    tag = uuid.uuid4().hex
    bots = ("".join(random_bot(name, tag) for name in MANY)
            + bot_entry("faulty", str(BAD_BOT), "--mode", "illegal_index") + gated_bot(folder / "gated", tag)
            + bot_entry("believer", str(BELIEF_BOT), "--mode", "valid"))
    running = WebServer(folder / "data", "--concurrency", "4", *registry(folder, bots))
    running.gate = folder / "gated" / "gate"
    yield running
    running.stop()


def finished(detail: dict) -> bool:
    return detail["tournament"]["state"] == "finished"


HEADS = "(id) => [...document.querySelectorAll(`#${id} thead th`)].map((th) => th.textContent)"


def test_a_three_sided_tournament_before_and_after_play(server: WebServer, browser: Chromium) -> None:
    """All Fives at three seats: headed OpenSkill before any game is counted (the standings learn the rating only
    from a game), its "Being played" table has a heading in every column, and once finished the entrant page says
    that its table by opponent counts meetings and that an empty list of variants claims every variant."""
    SHOTS.mkdir(exist_ok=True)
    open_gate(server.gate, 0)
    info = submit(server.stub(), tournament(games=1, variant="all_fives", duplicate=False, concurrency=1,
                                            extra="players = 3\n[time]\nmove_ms = 600000\n", name="three",
                                            bots=named("random-alpha", "random-beta", "gated")))
    web, tid = server.web, info.id
    detail = wait_state(web, tid, lambda d: d["in_progress"], 90, "a game in progress")
    assert detail["standings"]["games"] == 0
    assert detail["table"]["rating_header"] == SKILL_HEADER
    assert get_json(f"{web}/api/t/{tid}/ratings")["rating"] == "OpenSkill ordinal"

    browser.open_page(f"{web}/t/{tid}")
    browser.wait_js("!!document.querySelector('#in-progress tbody tr')", 30, "the game being played")
    assert browser.js(f"({HEADS})('in-progress')") == ["game", "seats", "moves"]
    assert browser.js(f"({HEADS})('standings')")[-1] == SKILL_HEADER
    assert "[object Object]" not in browser.js("document.body.innerText")
    assert "OpenSkill ordinal as games accumulate" in browser.js("document.body.textContent")
    browser.screenshot(SHOTS / "three-before.png")

    open_gate(server.gate, 10 ** 9)
    wait_state(web, tid, finished, 180, "the tournament to finish")
    browser.goto(f"{web}/t/{tid}/entrants/random-alpha")
    summary = browser.wait_js("document.getElementById('summary') && document.getElementById('summary')"
                              ".textContent", 30, "the entrant's summary")
    assert re.match(r"(1 game|\d+ games): \d+ won, \d+ drawn, \d+ lost \(", summary), summary
    assert "(a game is won by its winner alone; the table by opponent counts meetings)" in summary
    assert browser.js("document.getElementById('by-opponent-note').textContent").startswith(
        "Counted by meeting, not by game")
    variants = browser.js("[...document.querySelectorAll('#handshake dt')].find((dt) => dt.textContent === "
                          "'variants').nextElementSibling.textContent")
    assert variants == "every variant (the handshake names none, which claims them all)"
    browser.screenshot(SHOTS / "three-entrant.png")


def test_a_clean_sweep_says_why_its_chart_has_no_line(server: WebServer, browser: Chromium) -> None:
    info = submit(server.stub(), tournament(games=4, duplicate=False, name="sweep",
                                            bots=named("random-alpha", "faulty")))
    web, tid = server.web, info.id
    wait_state(web, tid, finished, 120, "the tournament to finish")
    browser.open_page(f"{web}/t/{tid}")
    text = browser.wait_js("document.getElementById('no-finite-rating') && "
                           "document.getElementById('no-finite-rating').textContent", 30, "the chart's note")
    assert text == ("No finite Elo after 4 games: random-alpha +∞ (won every game), faulty −∞ (won none). An Elo is "
                    "finite once an entrant has a score strictly between 0 and 1; the standings show the score.")


def test_the_beliefs_calibration_and_a_belief_beside_the_truth(server: WebServer, browser: Chromium) -> None:
    """A bot that sends beliefs: the standings' last column is its calibration, as standings.json has it (the other
    entrant's a dash), and its finished game's page shows a belief beside the truth."""
    info = submit(server.stub(), tournament(games=1, variant="draw", name="beliefs",
                                            bots=named("believer", "random-alpha")))
    web, tid = server.web, info.id
    detail = wait_state(web, tid, finished, 120, "the tournament to finish")
    saved = {e["name"]: e.get("calibration") for e in detail["standings"]["entrants"]}
    assert saved["random-alpha"] is None and saved["believer"]["beliefs"] > 0
    c = saved["believer"]
    cell = calibration_cell(Calibration(c["beliefs"], c["tiles"], c["brier"] * c["tiles"], c["log_loss"] * c["tiles"]))
    browser.open_page(f"{web}/t/{tid}")
    browser.wait_js("!!document.querySelector('#standings tbody tr')", 30, "the standings")
    assert browser.js(f"({HEADS})('standings')")[-1] == CALIBRATION_HEADER
    cells = browser.js("Object.fromEntries([...document.querySelectorAll('#standings tbody tr')].map((tr) => "
                       "[tr.children[1].textContent, tr.lastElementChild.textContent]))")
    assert cells == {"believer": cell, "random-alpha": "-"}

    record = get_json(f"{web}/api/t/{tid}/games/0.json")
    moves = [m for r in record["rounds"] for m in r["moves"]]
    k = next(k for k, m in enumerate(moves) if "belief" in m)
    browser.goto(f"{web}/t/{tid}/games/0")
    browser.wait_js("!!document.getElementById('moves')", 30, "the game's page")
    browser.click(f'#moves [data-k="{k}"]')
    shown = browser.js("({hidden: document.getElementById('belief-box').hidden,"
                       " rows: document.querySelectorAll('#belief tbody tr').length,"
                       " truths: document.querySelectorAll('#belief td.truth').length})")
    assert shown == {"hidden": False, "rows": len(moves[k]["belief"]["tiles"]),
                     "truths": len(moves[k]["belief"]["tiles"])}
    assert browser.exceptions() == []


def test_the_pairwise_table_of_five_stays_inside_its_card(server: WebServer, browser: Chromium) -> None:
    """The card scrolls its table sideways rather than let it run over the chart beside it."""
    info = submit(server.stub(), tournament(games=1, duplicate=False, name="five", bots=named(*MANY)))
    web, tid = server.web, info.id
    wait_state(web, tid, finished, 180, "the tournament to finish")
    browser.open_page(f"{web}/t/{tid}", width=1100)
    browser.wait_js("document.querySelectorAll('#pairwise tbody tr').length === 5", 30, "the pairwise table")
    fit = browser.js("""(() => {
      const table = document.getElementById('pairwise'), card = table.closest('section');
      const box = card.getBoundingClientRect();
      return {tableRight: table.getBoundingClientRect().right, cardRight: box.right,
              overflow: getComputedStyle(card).overflowX, scrolls: card.scrollWidth > card.clientWidth};
    })()""")
    assert fit["tableRight"] > fit["cardRight"], "five long names: wider than the card (else this tests nothing)"
    assert fit["overflow"] == "auto" and fit["scrolls"], fit
    browser.screenshot(SHOTS / "five.png")


def test_a_gauntlets_pairwise_rows_are_its_candidates_only(server: WebServer, browser: Chromium) -> None:
    """As ``arena run`` prints it: the candidate's row against each other entrant, no column of it against
    itself."""
    info = submit(server.stub(), tournament(games=1, duplicate=False, name="gauntlet",
                                            extra='format = "gauntlet"\ncandidates = ["random-alpha"]\n',
                                            bots=named("random-alpha", "random-beta", "random-gamma")))
    web, tid = server.web, info.id
    wait_state(web, tid, finished, 180, "the tournament to finish")
    browser.open_page(f"{web}/t/{tid}")
    browser.wait_js("document.querySelectorAll('#pairwise tbody tr').length > 0", 30, "the pairwise table")
    heads = browser.js(f"({HEADS})('pairwise')")
    assert heads[0] == "W-D-L of each candidate against each entrant"
    assert sorted(heads[1:]) == ["random-beta", "random-gamma"]
    rows = browser.js("[...document.querySelectorAll('#pairwise tbody tr')].map((tr) => "
                      "[...tr.cells].map((td) => td.textContent))")
    assert [row[0] for row in rows] == ["random-alpha"] and "·" not in rows[0]
    assert all(re.fullmatch(r"\d+-\d+-\d+", cell) for cell in rows[0][1:])
