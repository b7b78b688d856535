"""A Swiss or knockout event as HTML: the Swiss table, the rounds of pairings, the placements and the bracket, drawn
from the event's JSON (:meth:`arena.tournament.rounds.Event.to_json`, as ``standings.json`` holds it).

Two pages draw events: the league's finals and a tournament's page. They differ only in how they name an entrant (a
version with its team and bot page; an entrant with its page in the tournament) and where a game's link goes (and
whether it may have one yet), so both are given: a :data:`Who` and a :data:`GameLink`. A game its link function
does not show (``""``) is left out of its match, never named.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from arena.web.tables import Cell, html_table
from arena.web.tables import escape as _e

Who = Callable[[str], str]
"""An entrant's name to its HTML (a link to its page, its team beside it...)."""
GameLink = Callable[[int], str]
"""A game's index to its link's HTML, or "" when the page may not show that game (not recorded, or its deal set
still being played)."""

SWISS_RULE = ("Points (a pairing won 1, drawn ½, a bye 1), then Buchholz (the opponents' points), then "
              "Sonneborn-Berger, then seed.")
"""How a Swiss table ranks its entrants, in words (arena/tournament/swiss.py's TIE_BREAKS)."""
HOW_DECIDED = {"score": "", "tiebreak": " (after a tie-break)", "seed": " (tied: the better seed)",
               "bye": " · a bye"}
BRACKETS = (("W", "Winners' bracket"), ("L", "Losers' bracket"), ("GF", "Grand final"))


def swiss_table_html(rows: Sequence[Mapping[str, Any]], who: Who, *, table_id: str, entrant_header: str,
                     empty: str, name_key: str = "entrant") -> str:
    """A Swiss table, best first: rank, entrant (its name under ``name_key``), points, Buchholz and
    wins–draws–losses with the byes, after the rule that ranks them."""
    table = [[(_e(r["rank"]), False), (who(r[name_key]), True), (_e(f'{r["points"]:g}'), False),
              (_e(f'{r["buchholz"]:g}'), False),
              (_e(f'{r["wins"]}–{r["draws"]}–{r["losses"]}' + (f' ({r["byes"]} bye)' if r["byes"] else "")), False)]
             for r in rows]
    return (f'<p class="meta">{_e(SWISS_RULE)}</p>'
            + html_table(table_id, [("rank", False), (entrant_header, True), ("points", False), ("Buchholz", False),
                                    ("W–D–L", False)], table, empty))


def placements_html(event: Mapping[str, Any], who: Who, *, table_id: str, entrant_header: str, empty: str) -> str:
    """A knockout's placements: each entrant's place, those out in the same round sharing theirs ("3–4")."""
    rows: list[list[Cell]] = []
    place = 1
    for group in event["ranking"]:
        shown = f"{place}–{place + len(group) - 1}" if len(group) > 1 else str(place)
        rows.extend([(_e(shown), False), (who(name), True)] for name in group)
        place += len(group)
    return ('<p class="meta">Placed by the bracket: entrants out in the same round share a place.</p>'
            + html_table(table_id, [("place", False), (entrant_header, True)], rows, empty))


def _score(match: Mapping[str, Any]) -> str:
    if match["score"] is None:
        return "bye" if len(match["entrants"]) == 1 else "to play"
    return " – ".join(f"{points:g}" for points in match["score"])


def _match_games(match: Mapping[str, Any], game_link: GameLink) -> str:
    """A match's games the page may show, each a link to its replay."""
    return " ".join(link for link in map(game_link, match["games"]) if link)


def rounds_html(event: Mapping[str, Any], who: Who, game_link: GameLink) -> str:
    """A Swiss's rounds, one table each (``round-N``): every pairing's two sides, its score over its deal sets, the
    winner, its games."""
    out = ""
    for number, matches in enumerate(event.get("rounds", ()), 1):
        rows = []
        for m in matches:
            sides = [who(name) for name in m["entrants"]]
            winner = ("bye" if m["decided_by"] == "bye" else "draw" if m["decided_by"] and m["winner"] is None
                      else who(m["winner"]) if m["winner"] else "-")
            rows.append([(_e(m["id"]), True), (sides[0], True), (sides[1] if len(sides) > 1 else "-", True),
                         (_e(_score(m)), False), (winner, True), (_match_games(m, game_link) or "-", True)])
        out += f'<h3>Round {number}</h3>' + html_table(f"round-{number}", [
            ("pairing", True), ("first", True), ("second", True), ("score", False), ("winner", True),
            ("games", True)], rows, "Not paired yet.")
    return out


def bracket_html(event: Mapping[str, Any], who: Who, game_link: GameLink) -> str:
    """A knockout's bracket: its rounds as columns (the winners' bracket, then the losers' and the grand final of a
    double elimination, each ``bracket-w``, ``-l``, ``-gf``), each match a box with both sides, their score, the
    winner in bold and its games. The bracket scrolls sideways inside its box on a narrow screen."""
    out = ""
    for prefix, title in BRACKETS:
        columns = [column for column in event["bracket"]
                   if column["matches"] and _bracket_of(column["matches"][0]["id"]) == prefix]
        if not columns:
            continue
        cols = "".join(f'<div class="bracket-round"><h4>{_e(round_title(column["round"]))}</h4>'
                       + "".join(_match_box(m, who, game_link) for m in column["matches"]) + '</div>'
                       for column in columns)
        label = title if event.get("elimination") == "double" else "Bracket"
        out += f'<h3>{_e(label)}</h3><section class="card bracket" id="bracket-{prefix.lower()}">{cols}</section>'
    return out


def round_title(name: str) -> str:
    """A bracket's round in words: ``W2`` and ``L2`` "round 2" (under their bracket's title), ``GF`` "grand
    final", ``GF2`` "bracket reset"."""
    if name.startswith("GF"):
        return "bracket reset" if name == "GF2" else "grand final"
    return f"round {name[1:]}"


def _bracket_of(match_id: str) -> str:
    return "GF" if match_id.startswith("GF") else match_id[:1]


def _match_box(match: Mapping[str, Any], who: Who, game_link: GameLink) -> str:
    score = match["score"] or ()
    lines = ""
    for k, name in enumerate(match["entrants"]):
        mark = ' class="won"' if match["winner"] == name and len(match["entrants"]) > 1 else ""
        points = f'<b class="points">{score[k]:g}</b>' if score else ""
        lines += f'<li{mark}><span>{who(name)}</span>{points}</li>'
    how = HOW_DECIDED.get(match["decided_by"], "") if match["decided_by"] else " · to play"
    return (f'<div class="match" id="match-{_e(match["id"])}"><p class="meta">{_e(match["id"])}{_e(how)}</p>'
            f'<ul>{lines}</ul><p class="games">{_match_games(match, game_link)}</p></div>')


def event_html(event: Mapping[str, Any], who: Who, game_link: GameLink) -> str:
    """A tournament's event whole: a Swiss's table and rounds, or a knockout's placements (once it is over) and
    bracket; and why a Swiss ended early, when it did."""
    if "bracket" in event:
        body = ('<h2>Placements</h2>'
                + placements_html(event, who, table_id="placements", entrant_header="entrant",
                                  empty="Placed once the bracket is played.")
                if event["finished"] else "")
        body += f'<h2>Knockout ({_e(event.get("elimination", "single"))} elimination)</h2>' + bracket_html(
            event, who, game_link)
    else:
        body = ('<h2>Swiss table</h2>'
                + swiss_table_html(event.get("table", ()), who, table_id="swiss-table", entrant_header="entrant",
                                   empty="No round decided yet.")
                + '<h2>Rounds</h2>' + rounds_html(event, who, game_link))
    if event.get("stopped"):
        body += f'<p class="message" id="event-stopped">The event ended early: {_e(event["stopped"])}</p>'
    return f'<section id="event">{body}</section>'
