"""``arena replay --html``: the self-contained viewer, checked against the rules engine and in a real headless
Chromium (a line game, All Fives and Mexican Train), plus what the page may hold for each seat and bad output paths.

The browser is driven over the Chrome DevTools Protocol on a pipe (``--remote-debugging-pipe``: JSON messages
separated by NUL bytes, requests on the browser's fd 3 and replies on its fd 4) rather than through selenium: it
adds no dependency (selenium pulls in several packages and a chromedriver that must match the browser's version),
opens no TCP port, and CDP gives directly all the test needs: load a file:// page, real key and mouse input,
DOM queries, every network request the page makes, JavaScript exceptions, and a screenshot.

Screenshots (and the pages) are written to ``test-artifacts/replay_html/`` at the top of the repository.
"""

from __future__ import annotations

import json
import re
import select
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as cli_main
from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.records.format import to_json_line
from arena.records.html import render_html, viewer_data, write_html
from arena.records.jsonform import game_record_dict
from arena.records.replay import RecordError, positions
from arena.referee import play_match
from arena.rules import PASS, VARIANTS, Kind, new_game
from arena.rules.spinner import NO_SPINNER, SpinnerView
from arena.rules.tiles import HIGH, LOW, NAMES
from arena.rules.trains import TrainsView
from support.chromium import Chromium, needs_chromium
from support.paths import ROOT

ARTIFACTS = ROOT / "test-artifacts" / "replay_html"
NAMES_OF_SEATS = ["ann", "<b>bo</b>", "cy & co", "dee"]


async def make_record(variant: str, players: int, seed: str, options: dict | None = None) -> dict[str, Any]:
    game = new_game(variant, players, options or {})
    seats = [LocalPlayer(RandomPlayer(f"{seed}/{s}"), NAMES_OF_SEATS[s % 4] if s < 4 else f"p{s}")
             for s in range(players)]
    record = await play_match(game, seats, seed=seed, match_id="m1")
    return game_record_dict(record, index=4, tournament="t", deal_key="0/4", rotation=0, side_of=game.side_of)


def names(tiles) -> str:
    return " ".join(NAMES[t] for t in tiles)


def hand_text(tiles) -> str:
    digits = "0123456789abcdefghi"
    return "".join(digits[LOW[t]] + digits[HIGH[t]] for t in tiles)


def expected_frames(record: dict) -> list[dict[str, Any]]:
    """What each frame must show, straight from the engine (independent of the page's own encoding)."""
    frames = []
    for position in positions(record):
        match = position.match
        state = match.round
        view = state.layout.view()
        players = len(state.counts)
        frame: dict[str, Any] = {
            "round": position.round,
            "scores": " ".join(str(s) for s in (match.scores if state.is_over() else state.scores())),
            "hands": [names(state.hand(s)) for s in range(players)],
            "counts": list(state.counts),
            "over": state.is_over(),
            "turn": state.turn,
            "draw_by": position.seat if position.action is not None and position.action.kind == Kind.DRAW else None,
        }
        if isinstance(view, TrainsView):
            frame["engine"] = NAMES[view.engine]
            frame["trains"] = [[str(t.train if t.train >= 0 else "M"), names(t.tiles), "1" if t.marker else "0"]
                               for t in view.trains]
        else:
            frame["line"] = names(view.line)
            if isinstance(view, SpinnerView):
                frame["spinner"] = NAMES[view.spinner] if view.spinner != NO_SPINNER else ""
                frame["c"], frame["d"], frame["count"] = names(view.side_c), names(view.side_d), str(view.count)
        frames.append(frame)
    return frames


# --- the data, without a browser ----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
async def test_each_seat_part_holds_only_what_that_seat_knew(variant: str) -> None:
    record = await make_record(variant, new_game(variant).players, f"{variant}/leak")
    data = viewer_data(record)
    frames = expected_frames(record)
    assert len(data["frames"]) == len(frames) and len(data["moves"]) == sum(len(r.get("moves", ()))
                                                                            for r in record["rounds"])
    for i, position in enumerate(positions(record)):
        state = position.match.round
        for seat, hands in enumerate(data["hands"]):
            assert hands[i] == hand_text(state.observation(seat).hand)
        assert data["frames"][i]["sc"] == [int(s) for s in frames[i]["scores"].split()]
    draws = [k for k, move in enumerate(data["moves"]) if move["t"].startswith("draw")]
    for k in draws:
        assert data["moves"][k]["t"] == "draw"                       # the public text never names the tile
    for seat, seen in enumerate(data["seen"]):
        for k, text in seen.items():                                 # a seat's own draws, with their tiles
            assert data["moves"][int(k)]["s"] == seat and re.fullmatch(r"draw \[\d+\|\d+\]", text)
    assert sum(len(seen) for seen in data["seen"]) == len(draws)


@pytest.mark.fast
async def test_the_page_is_self_contained_and_names_cannot_escape(tmp_path: Path) -> None:
    record = await make_record("draw", 2, "self-contained")
    record["seats"] = ["</script><script>alert(1)</script>", "<!-- x"]
    page = render_html(record)
    assert page.count("</script>") == 2 and page.count("<script") == 2   # the template's two, nothing injected
    for external in ("<link", "src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest", "https://"):
        assert external not in page, external
    assert re.findall(r"http://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"]   # a namespace, never fetched
    assert resources.files("arena.records").joinpath("viewer.html").is_file()
    data = json.loads(re.search(r'<script id="game-data" type="application/json">(.*?)</script>', page, re.S)[1])
    assert data["seats"] == record["seats"]


@pytest.mark.fast
async def test_an_unwritable_output_path_is_a_record_error(tmp_path: Path) -> None:
    record = await make_record("block", 2, "unwritable")
    with pytest.raises(RecordError, match=r"cannot write the HTML viewer \(is a directory\)"):
        write_html(record, tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(RecordError, match=r"file/game\.html: cannot write the HTML viewer \(not a directory\)"):
        write_html(record, tmp_path / "file" / "game.html")
    with pytest.raises(RecordError, match=r"no-such-folder/game\.html: cannot write the HTML viewer \(no such file"):
        write_html(record, tmp_path / "no-such-folder" / "game.html")


@pytest.mark.fast
async def test_arena_replay_html_writes_the_viewer(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    record = await make_record("all_fives", 2, "cli")
    (tmp_path / "games.jsonl").write_text(to_json_line(record) + "\n")
    out = tmp_path / "game.html"
    assert cli_main(["replay", str(tmp_path), "--game", "4", "--html", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert out.read_text().startswith("<!DOCTYPE html>") and '"variant":"all_fives"' in out.read_text()
    assert cli_main(["replay", str(tmp_path), "--game", "4", "--html", str(tmp_path)]) == 2
    assert "cannot write the HTML viewer (is a directory)" in capsys.readouterr().err


# --- the browser ------------------------------------------------------------------------------------------------


SNAPSHOT = """(() => {
  const svg = document.getElementById('layout');
  const tiles = (sel) => [...svg.querySelectorAll(sel)].map((g) => g.getAttribute('data-tile')).join(' ');
  const boxes = [...svg.querySelectorAll('.tile')].map((g) => g.getBBox());
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
    const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    if (w > 0.5 && h > 0.5) overlaps++;
  }
  const corners = [...svg.querySelectorAll('.line .tile')].filter((g) => {
    const [a, b] = g.getAttribute('data-tile').slice(1, -1).split('|');
    const r = g.getBBox(); return a !== b && r.height > r.width; }).length;
  return {
    frame: Number(document.body.getAttribute('data-frame')),
    kind: svg.getAttribute('data-kind'),
    line: svg.getAttribute('data-line'), drawnLine: tiles('.line .tile'),
    spinner: svg.getAttribute('data-spinner'), count: svg.getAttribute('data-count'),
    c: svg.getAttribute('data-side-c'), drawnC: tiles('.side-c .tile'),
    d: svg.getAttribute('data-side-d'), drawnD: tiles('.side-d .tile'),
    engine: svg.getAttribute('data-engine'),
    trains: [...svg.querySelectorAll('.train')].map((g) => [g.getAttribute('data-train'),
      g.getAttribute('data-tiles'), g.getAttribute('data-marker'),
      [...g.querySelectorAll('.tile')].map((t) => t.getAttribute('data-tile')).join(' ')]),
    scores: document.getElementById('scores').getAttribute('data-scores'),
    hands: [...document.querySelectorAll('.hand')].map((h) => ({
      hidden: h.getAttribute('data-hidden'), tiles: h.getAttribute('data-tiles'),
      drawn: [...h.querySelectorAll('.tile')].map((t) => t.getAttribute('data-tile')).join(' '),
      backs: h.querySelectorAll('.back').length, name: h.querySelector('.name').textContent,
      turn: h.classList.contains('turn')})),
    status: document.getElementById('status').textContent,
    current: [...document.querySelectorAll('#moves .current')].map((e) => e.textContent),
    overlaps, corners,
  };
})()"""


def check_frame(shown: dict, frames: list[dict], index: int, view: str = "all") -> None:
    """The page shows frame ``index`` as the engine has it, hands as ``view`` may see them."""
    want = frames[index]
    where = f"frame {index}"
    assert shown["frame"] == index, where
    assert shown["scores"] == want["scores"], where
    assert shown["overlaps"] == 0, f"{where}: tiles drawn on top of each other"
    if "trains" in want:
        assert shown["engine"] == want["engine"], where
        assert [t[:3] for t in shown["trains"]] == want["trains"], where
        assert [t[3] for t in shown["trains"]] == [t[1] for t in want["trains"]], where   # drawn = claimed
    else:
        assert shown["line"] == shown["drawnLine"] == want["line"], where
        if "spinner" in want:
            assert (shown["spinner"], shown["count"]) == (want["spinner"], want["count"]), where
            assert shown["c"] == shown["drawnC"] == want["c"] and shown["d"] == shown["drawnD"] == want["d"], where
    for seat, hand in enumerate(shown["hands"]):
        visible = view == "all" or view == str(seat) or want["over"]
        assert hand["turn"] == (want["turn"] == seat), where
        if visible:
            assert hand["hidden"] == "0" and hand["tiles"] == hand["drawn"] == want["hands"][seat], where
        else:
            assert hand["hidden"] == "1" and hand["tiles"] == "" and hand["drawn"] == "", where
            assert hand["backs"] == want["counts"][seat], where


CASES = [("draw", 2, "line-game/3", {}), ("all_fives", 3, "fives/1", {}), ("mexican_train", 3, "trains/2", {"set": 9})]


@needs_chromium
@pytest.mark.parametrize("variant,players,seed,options", CASES, ids=[c[0] for c in CASES])
async def test_the_viewer_in_headless_chromium(variant: str, players: int, seed: str, options: dict, browser) -> None:
    record = await make_record(variant, players, seed, options)
    want = expected_frames(record)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = ARTIFACTS / f"{variant}.html"
    write_html(record, page)
    browser.open_page(page.as_uri())

    def snap() -> dict:
        return browser.js(SNAPSHOT)

    def select(view: str) -> None:
        browser.js(f"(() => {{ const s = document.getElementById('seat'); s.value = '{view}';"
                   " s.dispatchEvent(new Event('change')); })()")

    # Forward through the whole game, by key and by button in turn; every frame shows the engine's position.
    shown = snap()
    check_frame(shown, want, 0)
    assert shown["hands"][1]["name"] == "1 · <b>bo</b>"               # names are text, never markup
    assert browser.js("document.querySelector('#controls #prev').disabled") is True
    corners = 0
    for i in range(1, len(want)):
        if i % 2:
            browser.key("ArrowRight")
        else:
            browser.click("#next")
        shown = snap()
        check_frame(shown, want, i)
        corners += shown["corners"]
    assert browser.js("document.getElementById('next').disabled") is True
    if variant == "draw":
        assert corners > 0, "no line was long enough to turn a corner: pick another seed"
    browser.key("ArrowRight")
    assert snap()["frame"] == len(want) - 1                            # stays on the last frame
    assert "the match" in browser.js("document.getElementById('info').textContent")   # wins it, or is drawn

    # Back and forth with the other controls.
    browser.key("Home")
    check_frame(snap(), want, 0)
    browser.key("End")
    check_frame(snap(), want, len(want) - 1)
    browser.key("ArrowLeft")
    check_frame(snap(), want, len(want) - 2)
    browser.click("#prev")
    check_frame(snap(), want, len(want) - 3)
    browser.click("#first")
    check_frame(snap(), want, 0)
    browser.click("#last")
    check_frame(snap(), want, len(want) - 1)

    # Click a move in the list to jump to it.
    target = len(want) // 2
    browser.click(f'#moves [data-frame="{target}"]')
    shown = snap()
    check_frame(shown, want, target)
    assert shown["current"] and all(str(text) for text in shown["current"])

    # The seat view: only seat 1's hand (others face down, by count) until a round's end reveals every hand.
    mid = next(i for i, w in enumerate(want) if i > 3 and not w["over"] and all(w["counts"]))
    select("1")
    browser.click(f'#moves [data-frame="{mid}"]')
    shown = snap()
    check_frame(shown, want, mid, view="1")
    assert shown["hands"][0]["tiles"] == "" and shown["hands"][0]["backs"] == want[mid]["counts"][0] > 0
    round_end = next(i for i, w in enumerate(want) if w["over"])
    browser.click(f'#moves .result[data-frame="{round_end}"]')
    check_frame(snap(), want, round_end, view="1")
    # Another seat's draws show without their tiles in seat 1's move list, with them in the all-hands view.
    draws = [f'#moves .move[data-frame="{i}"]' for i, w in enumerate(want) if w["draw_by"] not in (None, 1)]
    move_texts = f"[{', '.join(repr(d) for d in draws)}].map((s) => document.querySelector(s).textContent)"
    assert all("draw [" not in text for text in browser.js(move_texts))
    select("all")
    check_frame(snap(), want, round_end)
    assert all("draw [" in text for text in browser.js(move_texts))

    # A screenshot of the fullest table of the first round, in seat 0's view (the other hands face down).
    shot = round_end - 1
    select("0")
    browser.click(f'#moves [data-frame="{shot}"]')
    check_frame(snap(), want, shot, view="0")
    browser.screenshot(ARTIFACTS / f"{variant}.png")
    assert (ARTIFACTS / f"{variant}.png").stat().st_size > 10_000

    # Nothing but the file itself was requested, and the page raised no error.
    requests = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert requests == [page.as_uri()]
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown" or (
        e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") == "error")]
    assert errors == []


class PassesWhenItMayNot:
    """Plays at random, then answers ``pass`` where it is not legal: the referee records a fault."""

    name = "faulty"

    def __init__(self, after: int) -> None:
        self.random = RandomPlayer("faulty")
        self.left = after

    def __call__(self, observation):
        self.left -= 1
        return self.random(observation) if self.left > 0 else PASS


SCORES = """(() => {
  const section = document.getElementById('scores').closest('section').getBoundingClientRect();
  const wrap = document.querySelector('.rounds-wrap');
  return {
    names: [...document.querySelectorAll('#score-bars .bar .name')].map((e) => e.textContent),
    fills: [...document.querySelectorAll('#score-bars .fill')].map((e) => e.getBoundingClientRect().width),
    heads: [...document.querySelectorAll('table.rounds th')].map((e) => e.textContent),
    outside: [...document.querySelectorAll('table.rounds th')].filter((e) =>
      e.getBoundingClientRect().right > section.right + 0.5 && !(wrap && wrap.contains(e) &&
      getComputedStyle(wrap).overflowX === 'auto')).length,
    wrapRight: wrap ? wrap.getBoundingClientRect().right : null, sectionRight: section.right,
  };
})()"""


@needs_chromium
async def test_six_seats_lowest_wins_in_chromium(tmp_path: Path, browser) -> None:
    """Mexican Train at six seats, three entrants in two seats each: the side names tell the seats apart, the
    fullest bar is the lowest total's (it is winning), and the per-round table stays inside its card (it scrolls
    there rather than being cut off at the page's edge)."""
    game = new_game("mexican_train", 6, {"rounds": 3})
    names = ["ann", "bo", "cy", "ann", "bo", "cy"]
    played = await play_match(game, [LocalPlayer(RandomPlayer(f"six/{s}"), names[s]) for s in range(6)],
                              seed="six", match_id="m6")
    record = game_record_dict(played, index=2, tournament="t", deal_key="0/2", rotation=0, side_of=game.side_of)
    data = viewer_data(record)
    assert data["sides"] == [f"{name} (seat {seat})" for seat, name in enumerate(names)]
    assert data["seats"] == names                              # the hands say their seat number already
    write_html(record, tmp_path / "six.html")
    browser.open_page((tmp_path / "six.html").as_uri(), width=1100)
    browser.key("End")
    shown = browser.js(SCORES)
    scores = [int(s) for s in record["result"]["scores"]]
    assert shown["names"] == data["sides"]
    assert len(set(scores)) > 1, "pick another seed: every total equal"
    assert shown["fills"].index(max(shown["fills"])) == scores.index(min(scores))
    assert shown["fills"][scores.index(max(scores))] == 0
    assert shown["heads"] == ["round", *(f"{name}·{seat}" for seat, name in enumerate(names))]
    assert shown["outside"] == 0 and shown["wrapRight"] <= shown["sectionRight"]
    browser.screenshot(tmp_path / "six.png")


@needs_chromium
async def test_faults_and_a_moveless_game_in_chromium(tmp_path: Path, browser) -> None:
    game = new_game("draw", 2)
    played = await play_match(game, [LocalPlayer(RandomPlayer("ok"), "ann"), LocalPlayer(PassesWhenItMayNot(4))],
                              seed="fault", match_id="m2")
    record = game_record_dict(played, index=1, tournament="t", deal_key="0/1", rotation=0, side_of=game.side_of)
    assert record["faults"] and record["result"]["byFault"]
    write_html(record, tmp_path / "fault.html")
    browser.open_page((tmp_path / "fault.html").as_uri())
    browser.key("End")
    info = browser.js("document.getElementById('info').textContent")
    assert "fault: faulty (illegal_action): chose pass, which is not a legal action" in info
    assert "ann wins the match (by forfeit after a fault)" in info
    assert "fault at move" in browser.js("document.getElementById('faults').textContent")

    record.update(rounds=[], faults=[{"kind": "start_failed", "seat": 1, "message": "exited with status 1"}])
    write_html(record, tmp_path / "empty.html")
    browser.call("Page.navigate", {"url": (tmp_path / "empty.html").as_uri()})
    browser.wait_event("Page.loadEventFired")
    assert "no moves" in browser.js("document.getElementById('status').textContent")
    assert browser.js("document.getElementById('next').disabled") is True
    errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
    assert errors == []
