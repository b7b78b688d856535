"""The HTML viewer of one recorded game: ``arena replay PATH --game ID --html FILE``.

One self-contained file (no network, no server, nothing external): the frames of the game are built here by
replaying the record through the rules engine (:func:`.replay.positions`) and embedded as JSON in the page
template ``viewer.html`` (next to this module, shipped as package data), whose small vanilla-JS renderer draws the
layout as dominoes in SVG (the two-ended line, All Fives' spinner with its arms, Mexican Train's hub with trains,
markers and open doubles), the hands, the score track and the move list, with controls to step through the game.

What the page holds, and why a seat view cannot leak: the public part of each frame (layout, hand counts, boneyard
count, scores, whose turn) is stored once; each seat's hand is stored per frame from ``state.observation(seat)``,
and the tiles of a seat's own draws only in that seat's part (others see ``draw``). The seat view of seat K reads
only the public part and seat K's part; hands revealed at a round's end are public (they are in the round's
result). The "all hands" view reads every seat's part.

Data layout (keys kept short: a match has hundreds of frames)::

    frames[i] = {r: round, k: move index or -1 (round start), t: turn or -1, lay: layout, n: hand counts,
                 b: boneyard count, sc: scores per side, last: [low, high] of the tile just placed, end: 1 at a
                 round's end}
    hands[seat][i] = the seat's hand at frame i, two value characters per tile ("0335": [0|3] [3|5])
    seen[seat] = {move index: the move as that seat saw it, where it differs from the public text (own draws)}
    moves[k] = {r: round, s: seat, t: public text, f: 1 if forced, ms: think time, pts: points scored}
    beliefs[k] = {s: seat, t: the tiles named (as a hand), p: per tile its probabilities in thousandths (the other
                  seats in order, then the boneyard), w: per tile the index of the place it really was in, brier and
                  log: the belief's mean Brier score and log loss per tile}: the belief sent with move k, if any

Layouts (``layout`` says which kind) are chains of values, one character each (base 36: ``0``-``9``, ``a`` = 10 ...),
since each tile's inner half shows the previous tile's outer value: a line is ``{line: "0336", lead: 1}``
(``[0|3] [3|3] [3|6]`` from the left end, the lead at index 1); a spinner layout adds ``spinner`` (its index in the
line), arms ``c`` and ``d`` as the outer values from the spinner outwards, and ``count``; trains are ``{engine: 9,
trains: ["95", "", ...] (each seat's train, then the Mexican train, outer values from the hub), markers: [seats],
open: [[train index, value]]}``.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from arena.records.beliefs import recorded_beliefs
from arena.records.jsonform import index_of
from arena.records.replay import RecordError, game_of, positions
from arena.records.schema import Record
from arena.rules import Kind, RoundResult
from arena.rules.beliefs import QUANTUM, scored
from arena.rules.line import LineView
from arena.rules.results import Ending
from arena.rules.spinner import NO_SPINNER, SpinnerView
from arena.rules.tiles import HIGH, LOW, other_value
from arena.rules.trains import TrainsView

TEMPLATE = "viewer.html"
DATA_MARK = "__GAME_DATA__"
TITLE_MARK = "__TITLE__"
NUMERALS_ABOVE = 9
"""Sets larger than double-9 show numerals instead of pips."""
DIGITS = "0123456789abcdefghi"
"""A value as one character (base 36) in the chains of the layout data."""


def write_html(record: Record, path: Path) -> None:
    """Write the self-contained viewer of ``record`` to ``path``; :class:`RecordError` if it cannot be written."""
    page = render_html(record)
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        raise RecordError(f"{path}: cannot write the HTML viewer ({reason})") from None


def render_html(record: Record) -> str:
    """The whole page as text."""
    return page_html(viewer_data(record))


def page_html(data: dict[str, Any]) -> str:
    """The page showing viewer data (the web dashboard also gives it data cut to what spectators may see)."""
    try:
        template = resources.files(__package__).joinpath(TEMPLATE).read_text(encoding="utf-8")
    except OSError:
        raise RecordError(f"the viewer template {TEMPLATE} is missing from the arena.records package "
                          f"(reinstall the arena)") from None
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    # JSON inside <script>: no "<", ">" or "&" may appear raw (a name like "</script>" would end the element).
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return template.replace(TITLE_MARK, html.escape(data["title"]), 1).replace(DATA_MARK, payload, 1)


# --- the frames -----------------------------------------------------------------------------------------------


def viewer_data(record: Record) -> dict[str, Any]:
    """Everything the page shows, replayed through the engine (see the module docstring for the layout)."""
    game = game_of(record)
    players = game.players
    seat_names = _seat_names(record, players)
    side_of = list(game.side_of)
    names = _seat_labels(seat_names, side_of)
    sides = [" + ".join(names[s] for s in range(players) if side_of[s] == side) for side in range(game.num_sides)]
    heads = _column_heads(seat_names, side_of, game.num_sides)
    frames: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    hands: list[list[str]] = [[] for _ in range(players)]
    seen: list[dict[int, str]] = [{} for _ in range(players)]
    rounds: list[dict[str, Any]] = []
    before: tuple[int, ...] = ()
    kind = "line"
    for position in positions(record):
        match = position.match
        state = match.round
        over = state.is_over()
        scores = match.scores if over else state.scores()
        frame: dict[str, Any] = {"r": position.round, "k": -1, "t": state.turn}
        if position.move is None:
            info: dict[str, Any] = {"leader": state.deal.leader}
            if state.deal.engine is not None:
                info["engine"] = LOW[state.deal.engine]
            rounds.append(info)
        else:
            k = len(moves)
            frame["k"] = k
            seat = position.seat or 0
            # The public text is the move as another seat saw it (a draw without its tile).
            public = str(state.observation((seat + 1) % players).history[-1][1])
            move: dict[str, Any] = {"r": position.round, "s": seat, "t": public}
            if position.forced:
                move["f"] = 1
            if round(position.think_ms):
                move["ms"] = round(position.think_ms)
            gained = [[side, now - then] for side, (now, then) in enumerate(zip(state.scores(), before, strict=True))
                      if now != then]
            if gained:
                move["pts"] = gained
            moves.append(move)
            if position.action.kind == Kind.PLACE:
                tile = position.action.tile
                frame["last"] = [LOW[tile], HIGH[tile]]
        before = state.scores()
        for seat in range(players):
            observation = state.observation(seat)
            hands[seat].append(_hand(observation.hand))
            if position.move is not None:
                text = str(observation.history[-1][1])
                if text != moves[-1]["t"]:
                    seen[seat][len(moves) - 1] = text
        view = state.layout.view()
        kind = layout_kind(view)
        frame.update(lay=layout_data(view), n=list(state.counts), b=len(state.boneyard), sc=list(scores))
        if over:
            frame["end"] = 1
            rounds[position.round]["result"] = _round_result(state.result(), match.scores, names, sides)
        frames.append(frame)
    result = record.get("result", {})
    return {
        "title": f"game {index_of(record)}: {game.name}, {' v '.join(sides)}",
        "index": index_of(record),
        "variant": game.name,
        "variantTitle": game.title,
        "matchId": record.get("matchId", ""),
        "seed": record.get("seed", ""),
        "tournament": record.get("tournament", ""),
        "options": dict(game.options),
        "players": players,
        "seats": seat_names,
        "sideOf": side_of,
        "sides": sides,
        "sideHeads": heads,
        "target": game.options.get("target"),
        "lowestWins": not game.higher_scores_win,
        "numerals": game.double > NUMERALS_ABOVE,
        "layout": kind,
        "frames": frames,
        "moves": moves,
        "hands": hands,
        "seen": [{str(k): text for k, text in s.items()} for s in seen],
        "rounds": rounds,
        "faults": [_fault(f, names) for f in record.get("faults", ())],
        "result": _match_result(result, sides) if result else None,
        "beliefs": beliefs_data(record),
        "beliefFaults": [_fault(f, names) for f in record.get("beliefFaults", ())],
    }


def beliefs_data(record: Record) -> dict[str, dict[str, Any]]:
    """Each recorded belief beside the truth, by move index (see the module docstring); empty without beliefs."""
    data = {}
    for item in recorded_beliefs(record):
        score = scored(item.belief, item.truth)
        data[str(item.number)] = {
            "s": item.seat, "t": _hand(item.belief.tiles),
            "p": [[round(p * QUANTUM) for p in row] for row in item.belief.probabilities],
            "w": list(item.truth), "brier": round(score.brier or 0.0, 4), "log": round(score.log_loss or 0.0, 4),
        }
    return data


def layout_data(view: Any) -> dict[str, Any]:
    """The public layout, compact: chains of values (see the module docstring)."""
    if isinstance(view, TrainsView):
        names = [train.train for train in view.trains]
        return {
            "engine": LOW[view.engine],
            "trains": [_outward(train.tiles, LOW[view.engine]) for train in view.trains],
            "markers": [i for i, train in enumerate(view.trains) if train.marker],
            "open": [[names.index(train), LOW[double]] for train, double in view.open_doubles],
        }
    if isinstance(view, SpinnerView):
        data = _line(view)
        if view.spinner != NO_SPINNER:
            data["spinner"] = view.line.index(view.spinner)
            data["c"] = _outward(view.side_c, LOW[view.spinner])
            data["d"] = _outward(view.side_d, LOW[view.spinner])
        data["count"] = view.count
        return data
    if isinstance(view, LineView):
        return _line(view)
    raise RecordError(f"no HTML drawing for the layout {type(view).__name__}")


def layout_kind(view: Any) -> str:
    if isinstance(view, TrainsView):
        return "trains"
    return "spinner" if isinstance(view, SpinnerView) else "line"


def _chars(values: list[int]) -> str:
    return "".join(DIGITS[v] for v in values)


def _line(view: LineView) -> dict[str, Any]:
    """The line from its left end to its right end as a chain of values: tile i shows chain[i] on its left and
    chain[i + 1] on its right. The lead shows its low half on the left (the lead's ends in docs/reference/rules.md#the-line)."""
    line = view.line
    if not line:
        return {"line": "", "lead": -1}
    lead = line.index(view.played[0])
    right = _outward(line[lead + 1:], HIGH[line[lead]])
    left = _outward(line[:lead][::-1], LOW[line[lead]])
    return {"line": left[::-1] + DIGITS[LOW[line[lead]]] + DIGITS[HIGH[line[lead]]] + right, "lead": lead}


def _hand(tiles: tuple[int, ...]) -> str:
    """A hand as two value characters per tile, low then high: ``[0|3] [3|5]`` is ``"0335"``."""
    return "".join(DIGITS[LOW[t]] + DIGITS[HIGH[t]] for t in tiles)


def _outward(tiles: tuple[int, ...], value: int) -> str:
    """An arm or a train from where it starts (showing ``value``): each tile's outer value, in order."""
    values = []
    for tile in tiles:
        value = other_value(tile, value)
        values.append(value)
    return _chars(values)


def _seat_names(record: Record, players: int) -> list[str]:
    seats = list(record.get("seats", ()))
    return [str(seats[s]) if s < len(seats) and seats[s] else f"seat {s}" for s in range(players)]


def _seat_labels(names: list[str], side_of: list[int]) -> list[str]:
    """Each seat's name as the scores and results say it: with its seat number when the same entrant holds seats on
    two sides (fewer entrants than seats fill the seats in turn), which would otherwise be two bars, two columns and
    two winners of one name with nothing to tell them apart."""
    sides_of: dict[str, set[int]] = {}
    for seat, name in enumerate(names):
        sides_of.setdefault(name, set()).add(side_of[seat])
    return [f"{name} (seat {seat})" if len(sides_of[name]) > 1 else name for seat, name in enumerate(names)]


HEAD_CHARS = 7
"""A per-round table's column head is cut to this many characters (the full name is its title): six seats fit."""


def _column_heads(names: list[str], side_of: list[int], sides: int) -> list[str]:
    """Each side's short column head: its first seat's name cut to :data:`HEAD_CHARS`, with ``·N`` (the seat) when
    the name is on another side too, so that two columns of one entrant stay apart when cut."""
    heads = []
    labels = _seat_labels(names, side_of)
    for side in range(sides):
        seat = side_of.index(side)
        name = names[seat] + ("+" if side_of.count(side) > 1 else "")
        tag = f"·{seat}" if labels[seat] != names[seat] else ""
        room = HEAD_CHARS - len(tag)
        heads.append((name if len(name) <= room else name[:room - 1] + "…") + tag)
    return heads


def _round_result(result: RoundResult, scores: tuple[int, ...], names: list[str], sides: list[str]
                  ) -> dict[str, Any]:
    if result.ending is Ending.DOMINO:
        how = f"domino by {names[result.out_seat]}" if result.out_seat is not None else "domino"
        if result.capicu:
            how += " (capicú)"
    else:
        how = "block"
    who = "no round winner" if result.winner is None else f"{sides[result.winner]} wins the round"
    points = ", ".join(f"{sides[side]} {points:+d}" for side, points in enumerate(result.points))
    return {
        "text": f"{how}: {who}; points {points}",
        "points": list(result.points),
        "scores": list(scores),
        "hands": [_hand(hand) for hand in result.hands],
        "pips": list(result.pips),
    }


def _fault(fault: dict[str, Any], names: list[str]) -> dict[str, Any]:
    seat = int(fault.get("seat", 0))
    who = names[seat] if seat < len(names) else f"seat {seat}"
    return {"seat": seat, "move": int(fault.get("moveNumber", 0)),
            "text": f"{who} ({fault.get('kind', 'fault')}): {fault.get('message', '')}"}


def _match_result(result: dict[str, Any], sides: list[str]) -> dict[str, Any]:
    scores = [int(s) for s in result.get("scores", ())]
    winner = result.get("winner")
    if winner is not None and int(winner) < len(sides):
        text = f"{sides[int(winner)]} wins the match"
    else:
        text = "the match is drawn"
    if result.get("byFault"):
        text += " (by forfeit after a fault)"
    return {"scores": scores, "winner": winner, "byFault": bool(result.get("byFault")), "text": text}

