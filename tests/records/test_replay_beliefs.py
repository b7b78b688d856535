"""Beliefs in records and on the replay page: the page shows every recorded belief beside where its tiles really were
(checked in a real headless Chromium against the rules engine), spectators of a game in play never get them, the
compact file keeps them exactly, verification refuses a tampered one, and a record without beliefs is written as
before."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import trio
from rich.console import Console
from support.beliefs import BRIER, LOG_LOSS, bottom_tiles, played_record
from support.chromium import needs_chromium
from support.paths import ROOT

from arena.players import RandomPlayer
from arena.players.base import Decision, DecisionRequest, LocalPlayer
from arena.players.search import SearchPlayer
from arena.records import compact
from arena.records.format import game_record_pb, to_json_line
from arena.records.html import viewer_data, write_html
from arena.records.jsonform import game_record_dict
from arena.records.replay import steps, verify_game
from arena.records.terminal import show_game
from arena.referee import play_match
from arena.rules import new_game
from arena.rules.tiles import NAMES
from arena.web.live import public_view

ARTIFACTS = ROOT / "test-artifacts" / "replay_html"


class Searching:
    """An in-process seat that searches (a few playouts) and sends the search's belief, as the search bot does."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.search = SearchPlayer(seed=seed, max_playouts=40)

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        index = self.search.choose(request.observation)
        belief = self.search.last.belief if self.search.last is not None else None
        return Decision(request.observation.legal_actions[index], 0.002, "", belief)

    async def round_ended(self, *args: Any) -> None:
        return None

    async def match_ended(self, *args: Any) -> None:
        return None


async def believed_record(variant: str = "draw", players: int = 3, options: dict | None = None) -> dict:
    game = new_game(variant, players, options or {"target": 40})
    played = await play_match(game, [Searching(f"s{seat}", seat) for seat in range(players)], seed="believed",
                              match_id="b")
    assert played.belief_faults == [] and not played.faults
    return game_record_dict(played, index=3, tournament="t", deal_key="0/3", rotation=0, side_of=game.side_of)


def truths(record: dict) -> dict[int, tuple[int, list[str], list[str]]]:
    """For each move with a belief, from the engine: the seat, the tiles it named and where each really was (a
    seat number, or "boneyard")."""
    found = {}
    for step in steps(record):
        move = step.recorded
        if step.kind != "move" or move is None or "belief" not in move:
            continue
        state = step.match.round
        seat = move.get("seat", 0)
        tiles = [f"[{d['low']}|{d['high']}]" for d in move["belief"]["tiles"]]
        where = []
        for name in tiles:
            holder = [s for s in range(len(state.counts)) if name in (NAMES[t] for t in state.hand(s))]
            where.append(str(holder[0]) if holder else "boneyard" if name in (NAMES[t] for t in state.boneyard)
                         else "?")
        found[step.number] = (seat, tiles, where)
    return found


@pytest.mark.fast
async def test_the_viewer_data_holds_each_belief_beside_the_truth() -> None:
    record = await believed_record()
    want = truths(record)
    data = viewer_data(record)
    assert want and sorted(int(k) for k in data["beliefs"]) == sorted(want)
    for number, (seat, _, where) in want.items():
        shown = data["beliefs"][str(number)]
        places = [str(s) for s in range(3) if s != seat] + ["boneyard"]
        assert shown["s"] == seat
        assert [places[w] for w in shown["w"]] == where
        recorded = [m for r in record["rounds"] for m in r["moves"]][number]["belief"]
        assert [n for row in shown["p"] for n in row] == recorded["thousandths"]
        assert all(sum(row) == 1000 for row in shown["p"])
    # Spectators of a game in play get no belief: beside the truth, it is the hidden hands.
    assert public_view(data, seed_revealed=False, hands_public=False)["beliefs"] == {}
    assert public_view(data, seed_revealed=True, hands_public=True)["beliefs"] == data["beliefs"]


@pytest.mark.fast
async def test_beliefs_are_kept_exactly_by_the_compact_file_and_verified() -> None:
    record = await believed_record()
    unit = compact.encode(record)
    assert compact.unpack(compact.decode(unit[compact.HEADER.size:])) == record
    assert verify_game(record) == []

    moves = [m for r in record["rounds"] for m in r["moves"] if "belief" in m]
    moves[0]["belief"]["thousandths"][0] += 1
    assert any("values of" in m.problem and "sum to 1001, not 1000" in m.problem for m in verify_game(record))
    moves[0]["belief"]["thousandths"][0] -= 1
    seat = moves[0].get("seat", 0)
    own = record["rounds"][0]["deal"]["hands"][seat]["tiles"][0]
    moves[0]["belief"]["tiles"][0] = own       # a tile of its own hand at its first decision: never hidden from it
    problems = [m.problem for m in verify_game(record)]
    assert any(p.startswith("the recorded belief would have been refused: ") and "it is in its own hand" in p
               for p in problems), problems


@pytest.mark.fast
async def test_a_record_without_beliefs_is_written_as_before() -> None:
    game = new_game("draw", 2)
    played = await play_match(game, [LocalPlayer(RandomPlayer(s)) for s in range(2)], seed="plain", match_id="p")
    record = game_record_dict(played, index=1, tournament="t", deal_key="0/1", rotation=0, side_of=game.side_of)
    line = to_json_line(record)
    assert '"belief' not in line
    message = game_record_pb(played, index=1, tournament="t", deal_key="0/1", rotation=0, side_of=game.side_of)
    assert json.loads(line) == json.loads(to_json_line(message))   # protobuf's own mapping: no new field written
    assert verify_game(record) == []
    assert viewer_data(record)["beliefs"] == {}


TABLE = """(() => {
  const box = document.getElementById('belief-box');
  const table = document.querySelector('#belief table.belief');
  return {
    hidden: box.hidden,
    note: document.getElementById('belief').textContent,
    seat: table ? Number(table.dataset.seat) : null,
    heads: table ? [...table.querySelectorAll('thead th')].map((th) => th.textContent) : [],
    rows: table ? [...table.querySelectorAll('tbody tr')].map((tr) => ({
      tile: tr.dataset.tile,
      p: [...tr.querySelectorAll('td[data-p]')].map((td) => Number(td.dataset.p)),
      truth: [...tr.querySelectorAll('td.truth')].map((td) => [...tr.children].indexOf(td) - 1),
      was: tr.lastElementChild.textContent,
    })) : [],
  };
})()"""


@needs_chromium
async def test_the_replay_page_shows_each_belief_beside_the_truth(browser) -> None:
    record = await believed_record()
    want = truths(record)
    data = viewer_data(record)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = ARTIFACTS / "beliefs.html"
    write_html(record, page)
    browser.open_page(page.as_uri())
    assert browser.js(TABLE)["hidden"] is True                     # the deal: no belief
    checked = 0
    for number, (seat, tiles, where) in sorted(want.items())[:12]:
        browser.click(f'#moves [data-k="{number}"]')
        shown = browser.js(TABLE)
        assert shown["hidden"] is False and shown["seat"] == seat
        places = [f"{s} · s{s}" for s in range(3) if s != seat] + ["boneyard"]
        assert shown["heads"] == ["tile", *places, "was in"]
        assert [row["tile"] for row in shown["rows"]] == tiles
        assert [row["was"] for row in shown["rows"]] == [f"{w} · s{w}" if w != "boneyard" else w for w in where]
        assert [row["truth"] for row in shown["rows"]] == [[w] for w in data["beliefs"][str(number)]["w"]]
        assert [row["p"] for row in shown["rows"]] == data["beliefs"][str(number)]["p"]
        checked += 1
    assert checked >= 6
    first = min(want)
    browser.click(f'#moves [data-k="{first}"]')
    browser.js("(() => { const s = document.getElementById('seat'); s.value = '1';"
               " s.dispatchEvent(new Event('change')); })()")
    shown = browser.js(TABLE)
    assert shown["rows"] == [] and "all hands" in shown["note"]     # a seat's view: no truth of other hands
    assert browser.exceptions() == []
    browser.screenshot(ARTIFACTS / "beliefs.png")


@pytest.mark.fast
@pytest.mark.parametrize("compact", [True, False], ids=["compact", "full"])
def test_the_terminal_replay_shows_a_belief_beside_the_truth(compact: bool) -> None:
    """Under the move it came with, one line: the tiles named, the scores, and each tile's probability of the place
    it really was in (both in the boneyard: 75% and 0%); the seat view says only how many tiles."""
    record = trio.run(played_record)
    first, second = bottom_tiles()
    lines = shown(record, compact=compact).splitlines()
    [at] = [i for i, line in enumerate(lines) if "belief:" in line]
    assert lines[at] == (f"  belief: 2 tiles · Brier {BRIER:.3f} · log loss {LOG_LOSS:.2f} · where each was: "
                         f"{NAMES[first]} 75% · {NAMES[second]} 0%")
    number = next(n for n, m in enumerate(m for r in record["rounds"] for m in r["moves"]) if "belief" in m)
    header = lines[at - 1] if compact else next(line for line in reversed(lines[:at]) if line.startswith("move "))
    assert header.startswith(f"move {number + 1} · seat 0 (believer)")
    seat_view = shown(record, compact=compact, seat=0)
    assert "  belief: 2 tiles (beside the truth in the every-hand view)" in seat_view.splitlines()
    assert "75%" not in seat_view


def shown(record: dict, **kwargs: Any) -> str:
    console = Console(file=io.StringIO(), width=200)
    show_game(record, console=console, **kwargs)
    return console.file.getvalue()
