"""Swiss and knockout tournaments on a real ``arena serve --http`` (one server, real bots, HTTP from the standard
library): the tournament's JSON carries its event as the run itself writes it into standings.json, and its page
draws the Swiss table and rounds or the bracket with every finished game a link to its page; while a deal set is
being played, no page names its finished half, to the public or to the token's holder."""

from __future__ import annotations

import json
import re
import secrets
import uuid

import pytest

from support.chromium import Chromium, needs_chromium
from support.servers import gated_bot, named, open_gate, random_bot, registry, submit, tournament
from support.waiting import wait_for
from support.web import SHOTS, WebServer, get_json, http, wait_state

SWISS = 'format = "swiss"\nrounds = 2\n'
KNOCKOUT = 'format = "knockout"\n[time]\nmove_ms = 600000\n'
"""Three entrants, the first (``gated``) seeded into a bye: its first game is the final's."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """A public site (``--http-public``) with a token: alpha to delta (random) and ``gated``, which answers only in
    the seats its gate lists."""
    folder = tmp_path_factory.mktemp("events")
    token = secrets.token_urlsafe(24)
    (folder / "token").write_text(token + "\n")
    (folder / "token").chmod(0o600)
    tag = uuid.uuid4().hex
    bots = ("".join(random_bot(name, tag) for name in ("alpha", "beta", "gamma", "delta"))
            + gated_bot(folder / "gated", tag, "--gate-unit", "seat"))
    running = WebServer(folder / "data", "--concurrency", "4", "--token-file", str(folder / "token"), "--http-public",
                        *registry(folder, bots))
    running.gate = folder / "gated" / "gate"
    running.full = {"Authorization": f"Bearer {token}"}
    running.grpc_auth = (("authorization", f"Bearer {token}"),)
    yield running
    running.stop()


def finished(detail: dict) -> bool:
    return detail["tournament"]["state"] == "finished"


def written_event(server: WebServer, tid: str) -> dict:
    return json.loads((server.data / "tournaments" / tid / "standings.json").read_text())["event"]


def linked(html: str, tid: str) -> list[int]:
    """The games the HTML links to, in order."""
    return [int(n) for n in re.findall(rf'href="/t/{tid}/games/(\d+)"', html)]


def event_games(event: dict) -> list[int]:
    """The games of the event's decided matches (a Swiss's rounds, a bracket's columns)."""
    matches = ([m for column in event["bracket"] for m in column["matches"]] if "bracket" in event
               else [m for matches in event["rounds"] for m in matches])
    return sorted(index for m in matches for index in m["games"])


def test_swiss_and_knockout_pages_show_their_event_and_hold_back_a_deal_set_in_flight(server: WebServer) -> None:
    web = server.web
    open_gate(server.gate, "0")  # gated answers in seat 0 only: the final's other rotation waits
    knockout = submit(server.stub(), tournament(games=1, name="cup", extra=KNOCKOUT,
                                                bots=named("gated", "alpha", "beta")), server.grpc_auth).id
    swiss = submit(server.stub(), tournament(games=1, name="swiss <b>", extra=SWISS,
                                             bots=named("alpha", "beta", "gamma", "delta")), server.grpc_auth).id

    # the Swiss, run to its end: 2 rounds of 2 pairings, each one deal set of 2 games
    detail = wait_state(web, swiss, finished, 180, "the Swiss to finish")
    assert detail["tournament"]["games_total"] == detail["tournament"]["games_done"] == 8
    event = detail["event"]
    assert event == written_event(server, swiss)  # rebuilt from the records as the run itself built it
    assert [len(pairings) for pairings in event["rounds"]] == [2, 2] and len(event["table"]) == 4
    assert event_games(event) == list(range(8))
    page = http(f"{web}/t/{swiss}")[2].decode()  # the page as drawn before any script runs, for the public
    for html in (page, detail["event_html"]):
        assert sorted(linked(html, swiss)) == list(range(8))  # every game once, in its pairing
        assert len(re.findall(r'<td class="l">R\d-\d</td>', html)) == 4
        assert re.findall(r'<table id="(swiss-table|round-\d)"', html) == ["swiss-table", "round-1", "round-2"]
        assert html.count(f'href="/t/{swiss}/entrants/alpha"') >= 3  # its table row, its two pairings
    assert "swiss &lt;b&gt;" in page
    assert get_json(f"{web}/api/t/{swiss}/standings.json")["event"] == event

    # the knockout's final in flight: one rotation recorded, the other held at gated's gate (and started: its
    # process may still be starting when the first is recorded)
    def final_half_recorded() -> bool:
        games = get_json(f"{web}/api/t/{knockout}/games", headers=server.full)["games"]
        playing = get_json(f"{web}/api/t/{knockout}", headers=server.full)["in_progress"]
        return any("gated" in g["seats"] for g in games) and bool(playing)

    wait_for(final_half_recorded, 180, "the final's first game, and its second being played")
    games = get_json(f"{web}/api/t/{knockout}/games", headers=server.full)["games"]
    half = next(g["index"] for g in games if "gated" in g["seats"])
    deal_set = (half - half % 2, half - half % 2 + 1)  # the recorded game and the one held at the gate
    for headers in ({}, server.full):
        detail = get_json(f"{web}/api/t/{knockout}", headers=headers)
        assert detail["tournament"]["games_in_progress"] == 1
        event = detail["event"]
        final = event["bracket"][-1]["matches"][0]
        assert (final["id"], final["decided_by"], final["games"]) == ("W2-1", "", []) and "gated" in final["entrants"]
        first_round = event_games(event)
        assert not set(deal_set) & set(first_round) and len(first_round) >= 2
        for html in (detail["event_html"], http(f"{web}/t/{knockout}", headers=headers)[2].decode()):
            assert sorted(linked(html, knockout)) == first_round  # every decided game, and no other
            assert all(f"game {index}<" not in html for index in deal_set)  # not linked, not even named
            assert 'id="match-W2-1"' in html and "W2-1 · to play" in html

    open_gate(server.gate, "0 1")
    detail = wait_state(web, knockout, finished, 180, "the knockout to finish")
    event = detail["event"]
    assert event == written_event(server, knockout)
    done = detail["tournament"]["games_done"]
    assert event_games(event) == list(range(done)) and done < detail["tournament"]["games_total"]
    assert [m["id"] for column in event["bracket"] for m in column["matches"]] == ["W1-1", "W1-2", "W2-1"]
    html = http(f"{web}/t/{knockout}")[2].decode()
    assert html.count('class="match"') == 3 and 'id="bracket-w"' in html and "W1-1 · a bye" in html
    assert sorted(linked(html, knockout)) == list(range(done))
    assert re.findall(r'<td class="">(\S+)</td><td class="l"><a href="/t/\w+/entrants/(\w+)"', html)[:3] == [
        ("1", event["ranking"][0][0]), ("2", event["ranking"][1][0]), ("3", event["ranking"][2][0])]


@needs_chromium
def test_the_script_draws_the_same_event_and_keeps_it(server: WebServer, browser: Chromium) -> None:
    """In a real Chromium the script's drawing of the page (which replaces the server's) holds the same section:
    the bracket of a two-entrant knockout, its one match's games linked."""
    SHOTS.mkdir(exist_ok=True)
    tid = submit(server.stub(), tournament(games=1, name="duel", extra='format = "knockout"\ntiebreak_games = 0\n',
                                           bots=named("alpha", "beta")), server.grpc_auth).id
    detail = wait_state(server.web, tid, finished, 120, "the knockout to finish")
    browser.open_page(f"{server.web}/t/{tid}")
    browser.wait_js("!!document.getElementById('standings-games')", 30, "the script's drawing")
    drawn = browser.js("document.getElementById('event').outerHTML")
    assert drawn == detail["event_html"]
    assert browser.js("[...document.querySelectorAll('#event .match a[href*=\"/games/\"]')].map((a) => a.textContent)"
                      ) == ["game 0", "game 1"]
    browser.screenshot(SHOTS / "knockout-tournament.png")
