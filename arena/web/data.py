"""What the web dashboard shows, as plain data: exactly what ``arena watch`` and the other clients may see.

The rules are the gRPC API's (:mod:`arena.server.service`, on :class:`arena.server.core.Arena`), applied here once
for every page and download:

- a tournament's facts and standings are public; its master seed only once revealed (when it has finished), and a
  game's seed likewise;
- a finished game's summary (seats, scores, winner, faults) is public as soon as it is recorded, as ``watch``
  announces it; its record (deals, hands, moves) only once every game of its duplicate deal set is recorded too
  (those games were dealt the very same tiles);
- a game in progress shows the public side of each move (a draw without its tile) and no hand before its round has
  ended (:mod:`arena.web.live`), and only when it may be followed live (no other game of its deal set still to
  finish) and by someone with full access.

Records are read on worker threads (``trio.to_thread``); everything else here runs on the trio thread, where the
Arena's state lives.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.records.compact import Unit
from arena.records.export import GameRow, row_from_record
from arena.records.html import viewer_data
from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.schema import Record, RecordFormatError
from arena.records.store import parse_line, split_units, unit_line
from arena.server.tournaments import STATE_NAMES, Tournament
from arena.tournament.rounds import event_from_records
from arena.tournament.spec import TournamentSpec
from arena.tournament.standings import (
    CALIBRATION_HEADER,
    ELO_HEADER,
    OPENSKILL,
    SKILL_HEADER,
    TIE_RULE,
    GameOutcome,
    OutcomeError,
    Standings,
    StandingsTable,
    outcome_of,
    row_cells,
    shows_calibration,
)
from arena.web.access import Access
from arena.web.live import LiveGames, public_view

CHART_POINTS = 200
"""The rating chart is thinned to at most this many points per entrant."""
ELO_SPAN = 20.0
"""The rating chart's y axis spans at least this many Elo (closer ratings are noise, not worth decimals)."""
RESULTS = ("win", "draw", "loss")


class NotShown(Exception):
    """A page or download this request may not have: the HTTP status and a message saying why."""

    def __init__(self, status: int, message: str, back: tuple[str, str] | None = None) -> None:
        """``back``: where the refusal page links to (where, what), when not the usual way back."""
        super().__init__(message)
        self.status = status
        self.message = message
        self.back = back


# --- tournaments ----------------------------------------------------------------------------------------------


def seed_revealed(t: Tournament) -> bool:
    return STATE_NAMES.get(t.state) == "finished" and bool(t.master_seed())


def tournament_json(t: Tournament) -> dict[str, Any]:
    """A tournament's facts, as ``arena status`` shows them."""
    return {
        "id": t.id, "name": t.name, "variant": t.variant, "players": t.players, "state": STATE_NAMES[t.state],
        "games_done": t.games_done, "games_total": t.games_total, "games_in_progress": len(t.in_progress),
        "entrants": list(t.entrants), "created_at": t.created_at, "started_at": t.started_at,
        "finished_at": t.finished_at, "error": t.error, "seed_commitment": t.commitment(),
        "master_seed": t.master_seed() if seed_revealed(t) else "", "sprt": t.has_sprt,
    }


def followable(t: Tournament, index: int) -> bool:
    """Whether a game's moves may be shown as they are played: no other game of its deal set is still to finish
    (the rule by which the server holds back ``watch``'s move events)."""
    return all(other == index or other in t.done for other in t.deal_set(index))


def tournament_detail(t: Tournament, access: Access, event: dict[str, Any] | None = None,
                      event_html: str = "") -> dict[str, Any]:
    """The tournament page: facts, standings (with SPRT when the standings carry it), a gauntlet's candidates (the
    pairwise table's rows), a Swiss or knockout event (``event``, :class:`TournamentEvent`'s, with its section of the
    page as HTML, ``event_html``: null and "" for another format), and, for full access, the games in progress."""
    standings = t.standings_view()
    detail: dict[str, object] = {
        "tournament": tournament_json(t), "standings": standings.to_json(), "sprt": standings.sprt,
        "table": standings_table(standings), "candidates": list(t.spec.candidates) if t.spec is not None else [],
        "event": event, "event_html": event_html, "access": access.value, "in_progress": []}
    if access is Access.FULL:
        detail["in_progress"] = [{"index": i, "seats": list(t.in_progress[i].seats), "live": followable(t, i)}
                                 for i in sorted(t.in_progress)]
    return detail


def standings_table(standings: StandingsTable) -> dict[str, Any]:
    """The cells of the standings as ``arena run`` prints them (its formatting helpers), one row per entrant."""
    rows = []
    for rank, e in enumerate(standings.entrants, start=1):
        cells = row_cells(rank, e, standings.rating)
        rows.append({"name": cells.name, "points": cells.points, "scored": cells.scored, "conceded": cells.conceded,
                     "rating": cells.rating, "calibration": cells.calibration})
    return {"rating_header": SKILL_HEADER if standings.rating == OPENSKILL else ELO_HEADER, "tie_rule": TIE_RULE,
            "calibration_header": CALIBRATION_HEADER if shows_calibration(standings.entrants) else "",
            "rows": rows}


def standings_csv(standings: StandingsTable) -> str:
    """One row per entrant, in standings order, with the columns of ``arena run``'s table."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("rank", "entrant", "games", "wins", "draws", "losses", "match_points", "scored", "conceded",
                     "faults", "think_ms_per_decision", "elo", "elo_low", "elo_high", "openskill_mu",
                     "openskill_sigma", "openskill_ordinal"))
    for rank, e in enumerate(standings.entrants, start=1):
        low, high = e.elo.elo_interval_by_deal or e.elo.elo_interval or (None, None)
        writer.writerow((rank, e.name, e.games, e.wins, e.draws, e.losses, e.match_points, e.scored, e.conceded,
                         e.faults, _blank(e.think_ms_per_decision), _blank(e.elo.elo), _blank(low), _blank(high),
                         _blank(e.openskill_mu), _blank(e.openskill_sigma), _blank(e.openskill_ordinal)))
    return out.getvalue()


def _blank(value: Any) -> Any:
    return "" if value is None else value


# --- games ----------------------------------------------------------------------------------------------------


def row_json(row: GameRow, withheld: list[int]) -> dict[str, Any]:
    """A recorded game's row as the games list and an entrant's page draw it; ``withheld``, the games of its deal set
    still to finish (:meth:`~arena.server.tournaments.Tournament.withheld_for`): while there are any, its record
    opens to no one, so a page names the game without a link to it."""
    return {"index": row.index, "withheld": withheld, "deal_key": row.deal_key, "rotation": row.rotation, "seats": list(row.seats),
            "side_of_seat": list(row.side_of_seat) or list(range(len(row.seats))), "seed": row.seed,
            "scores": list(row.scores), "winner": row.winner, "winner_names": row.winner_names(),
            "ranking": list(row.ranking), "faults": [list(f) for f in row.faults], "duration_s": row.duration_s}


def result_for(row: dict[str, Any], entrant: str) -> str:
    """``win``, ``draw`` or ``loss`` of an entrant in a game (one of its sides won, the match was drawn, or not)."""
    # not strict: a record read from disk is not checked to give every seat a side; the seats without one are not
    # counted, as before
    sides = {side for name, side in zip(row["seats"], row["side_of_seat"], strict=False) if name == entrant}
    if row["winner"] is None:
        return "draw"
    return "win" if row["winner"] in sides else "loss"


@dataclass
class GameCatalog:
    """The recorded games of one tournament as rows, read once each (a record is never rewritten but by
    ``--repair``, whose new file is read again from its start)."""

    rows: dict[int, GameRow] = field(default_factory=dict)
    seeded: bool = False
    """Whether the rows were read with their seeds (after the reveal they are read again)."""
    identity: tuple[int, int] | None = None

    def refresh(self, t: Tournament) -> list[GameRow]:
        """Every recorded game's row, in schedule order (runs on a worker thread)."""
        t.records.refresh()
        revealed = seed_revealed(t)
        identity = _identity(t.records.path)
        if revealed != self.seeded or identity != self.identity:
            self.rows, self.seeded, self.identity = {}, revealed, identity
        for index in t.records.indices():
            if index in self.rows or index >= t.games_total:
                continue
            record = t.records.read(index)
            if record is None:
                continue
            try:
                self.rows[index] = row_from_record(record, show_seed=revealed)
            except ValueError:
                continue  # the record index already dropped lines that are not records; this cannot be exported
        return [self.rows[i] for i in sorted(self.rows)]


class TournamentEvent:
    """A Swiss or knockout tournament's event as its page shows it (:meth:`~arena.tournament.rounds.Event.to_json`):
    rebuilt from the recorded games only when one was added since the last look (each record read once), so a page
    asked for again and again costs a scan of the record file's tail, not a rebuild. While the tournament can still
    play, the rebuild needs the master seed to check each record against its game (a game's seed is derived from
    it): the server's own secret copy, which never leaves this class (the event holds no seed). A tournament known
    only from its folder (finished before this server started) has no spec in memory: its event is the one its
    run wrote into ``standings.json``. Used from worker threads (one refresh at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[int, Record] = {}
        self._identity: tuple[int, int] | None = None
        self._event: dict[str, Any] | None = None
        self._built = False

    def refresh(self, t: Tournament) -> tuple[dict[str, Any] | None, frozenset[int]]:
        """The event (None for another format) and the indices of its games anyone may open: recorded, and their
        deal set complete (:meth:`~arena.server.tournaments.Tournament.withheld_for`, the rule ``GetGame`` and the
        game pages follow)."""
        if t.spec is not None and not t.spec.event:
            return None, frozenset()
        with self._lock:
            t.records.refresh()
            recorded = t.records.indices()
            if t.spec is None:
                if not self._built:
                    self._event, self._built = _written_event(t.folder), True
            elif self._read_added(t, recorded) or not self._built:
                self._event, self._built = self._rebuild(t.spec, t.folder), True
            return self._event, frozenset(i for i in recorded if not t.withheld_for(i))

    def _read_added(self, t: Tournament, recorded: list[int]) -> bool:
        """Read the records added since the last look (all of them again from another file: a repair's); whether
        there were any."""
        identity = _identity(t.records.path)
        if identity != self._identity:
            self._records, self._identity = {}, identity
        added = False
        for index in recorded:
            if index not in self._records:
                record = t.records.read(index)
                if record is not None:
                    self._records[index] = record
                    added = True
        return added

    def _rebuild(self, spec: TournamentSpec, folder: Path) -> dict[str, Any]:
        return event_from_records(spec, _master_seed(folder), self._records.values()).to_json()


def _master_seed(folder: Path) -> str:
    """The run's master seed: its secret while the run keeps one, then the revealed one ("" before the first run
    wrote either: then no game is recorded, and the event is its first wave's pairings)."""
    run = RunFolder(folder)
    try:
        return run.load_secret().seed if run.keeps_secret() else run.revealed_seed()
    except (OSError, ValueError, KeyError):
        return run.revealed_seed()


def _written_event(folder: Path) -> dict[str, Any] | None:
    """The event a run wrote into ``standings.json`` (None without one)."""
    try:
        event = json.loads(RunFolder(folder).standings.read_text()).get("event")
    except (OSError, ValueError, AttributeError):
        return None
    return event if isinstance(event, dict) else None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def filter_games(rows: list[dict[str, Any]], entrant: str = "", result: str = "", faults: str = "") -> list[dict[str, Any]]:
    """The games list's filters: an entrant's games, its wins, draws or losses (``decided``/``drawn`` without an
    entrant), and games with or without faults. With an entrant, each row says its ``result`` in that game."""
    chosen = []
    for row in rows:
        if entrant and entrant not in row["seats"]:
            continue
        if result in RESULTS and entrant and result_for(row, entrant) != result:
            continue
        if result == "drawn" or (result == "draw" and not entrant):
            if row["winner"] is not None:
                continue
        if result == "decided" and row["winner"] is None:
            continue
        if faults == "yes" and not row["faults"] or faults == "no" and row["faults"]:
            continue
        chosen.append(dict(row, result=result_for(row, entrant)) if entrant else row)
    return chosen


def check_filters(entrant: str, result: str, faults: str, entrants: list[str]) -> None:
    if entrant and entrant not in entrants:
        raise NotShown(400, f"expected an entrant of this tournament ({', '.join(entrants)}), got {entrant!r}")
    if result and result not in (*RESULTS, "decided", "drawn"):
        raise NotShown(400, f"expected result to be one of win, draw, loss, decided, drawn, got {result!r}")
    if faults and faults not in ("yes", "no"):
        raise NotShown(400, f"expected faults to be yes or no, got {faults!r}")


def released_record(t: Tournament, index: int, *, keep_seed: bool = False) -> dict[str, Any]:
    """A finished game's record as a client may fetch it (``GetGame``'s rules); :class:`NotShown` otherwise.
    ``keep_seed``: for the server's own use (replaying rounds after the first needs it), never to be sent as is.
    Runs on a worker thread."""
    if not 0 <= index < t.games_total:
        raise NotShown(404, f"tournament {t.id} has games 0 to {t.games_total - 1}, not {index}")
    t.records.refresh()
    record = t.records.read(index)
    if record is None:
        raise NotShown(404, f"game {index} of tournament {t.id} is not recorded (yet)")
    waiting = t.withheld_for(index)
    if waiting:
        raise NotShown(403, t.withheld_message(index, waiting))
    if not keep_seed and not seed_revealed(t):
        record = dict(record)
        record.pop("seed", None)
    return record


def record_line(record: dict[str, Any]) -> str:
    """One record as a JSON line, ASCII only, as ``arena fetch`` prints it."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n"


def released_lines(t: Tournament) -> Iterable[str]:
    """The tournament's ``games.jsonl`` as a client may have it: every released record, in schedule order, seeds
    only once revealed (runs on a worker thread)."""
    t.records.refresh()
    for index in t.records.indices():
        try:
            yield record_line(released_record(t, index))
        except NotShown:
            continue


async def game_view(t: Tournament, index: int, access: Access, live: LiveGames) -> dict[str, Any]:
    """The viewer's data of a game: its record once released, or the game as it is being played."""
    game = live.get(t, index)
    if game is not None and index not in t.done:
        if access is not Access.FULL:
            raise NotShown(403, f"game {index} is being played; this public site shows it once it has finished")
        if not followable(t, index):
            raise NotShown(403, f"game {index} is being played, and other games of its deal set are still to finish: "
                                f"its moves are held back until they have")
        record = game.record()
        data = await trio.to_thread.run_sync(viewer_data, record)
        view = public_view(data, seed_revealed=False, hands_public=False)
        view["live"] = True
        return view
    record = await trio.to_thread.run_sync(lambda: released_record(t, index, keep_seed=True))
    data = await trio.to_thread.run_sync(viewer_data, record)
    view = public_view(data, seed_revealed=seed_revealed(t), hands_public=True)
    view["live"] = False
    return view


# --- the rating chart -----------------------------------------------------------------------------------------


@dataclass
class RatingHistory:
    """Each entrant's rating as games accumulate, in the order the games finished (the order of ``games.jsonl``):
    Elo against the field in two-sided games, the OpenSkill ordinal otherwise. Read incrementally.

    Memory stays bounded however long the tournament: a point is kept every ``stride`` games, and when more than
    :data:`CHART_POINTS` are kept every other one is dropped and the stride doubles (so the kept points stay evenly
    spaced); the latest game is always shown. The games seen are one byte each in a table of the schedule's size."""

    group_size: int
    games_total: int
    standings: Standings | None = None
    points: list[dict[str, Any]] = field(default_factory=list)
    stride: int = 1
    counted: int = 0
    """Games added to the standings."""
    seen: bytearray = field(default_factory=bytearray)
    position: int = 0
    identity: tuple[int, int] | None = None
    expected_kind: str = ""
    """The rating the games will bring (``Tournament.rating_kind``), named before the first one is counted."""

    def refresh(self, path: Path) -> None:
        """Read the records appended since the last look, in either format (runs on a worker thread)."""
        identity = _identity(path)
        if identity is None:
            return
        if identity != self.identity or os.path.getsize(path) < self.position:
            self.standings, self.points, self.stride, self.counted, self.position = None, [], 1, 0, 0
            self.identity = identity
        with open(path, "rb") as f:
            f.seek(self.position)
            data = f.read()
        units, used = split_units(path, data, self.position)
        self.position += used
        for unit in units:
            self._add_unit(path, unit)

    def _add_unit(self, path: Path, unit: Unit) -> None:
        try:
            if unit.problem:
                return
            record = parse_line(path, unit_line(path, unit.raw))
            index = index_of(record)
            outcome = outcome_of(record)
        except (RecordFormatError, OutcomeError, ValueError, KeyError):
            return
        self.add(index, outcome)

    def add(self, index: int, outcome: GameOutcome) -> None:
        """Count one finished game (once: a game played again on resume is in the file twice), keeping a point when
        its turn comes."""
        if self.standings is None:
            self.standings, self.seen = Standings(group_size=self.group_size), bytearray(self.games_total)
        if not 0 <= index < self.games_total or self.seen[index]:
            return
        try:
            self.standings.add(outcome)
        except (OutcomeError, ValueError, KeyError):
            return
        self.seen[index] = 1
        self.counted += 1
        if self.counted % self.stride == 0:
            self.points.append(self._point())
            if len(self.points) > CHART_POINTS:
                self.points = self.points[1::2]  # those at multiples of twice the stride
                self.stride *= 2

    def _point(self) -> dict[str, Any]:
        """The ratings now: each entrant's value, None where it is not finite (an Elo of a score of 0 or 1, or no
        game yet), and in ``infinite`` the sign of each infinite Elo."""
        assert self.standings is not None
        if self.standings.rating_kind == OPENSKILL:
            values = {name: round(r.ordinal, 2) for name, r in self.standings.ratings().items()}
            return {"games": self.counted, "values": values, "infinite": {}}
        elo_values: dict[str, float | None] = {}
        infinite: dict[str, str] = {}
        for name, e in self.standings.elo().items():
            elo_values[name] = None if e.elo is None else round(e.elo, 1)
            if e.elo is None and e.score is not None:
                infinite[name] = "+" if e.score >= 1.0 else "-"
        return {"games": self.counted, "values": elo_values, "infinite": infinite}

    def chart(self) -> dict[str, Any]:
        """The points to draw (the kept ones and the latest), the y axis's ticks over their finite values, and, per
        entrant, how many points are left out because its Elo was infinite there."""
        kind = self.standings.rating_kind if self.standings is not None and self.counted else self.expected_kind
        shown = list(self.points)
        if self.counted and (not shown or shown[-1]["games"] != self.counted):
            shown.append(self._point())
        left_out: dict[str, int] = {}
        for point in shown:
            for name in point["infinite"]:
                left_out[name] = left_out.get(name, 0) + 1
        finite = [v for point in shown for v in point["values"].values() if v is not None]
        span = 1.0 if kind == OPENSKILL else ELO_SPAN
        return {"rating": "OpenSkill ordinal" if kind == OPENSKILL else "Elo", "points": shown,
                "axis": axis_ticks(min(finite), max(finite), span) if finite else None, "left_out": left_out}


def axis_ticks(low: float, high: float, span: float = 1.0, most: int = 6) -> dict[str, Any]:
    """A y axis over ``low``..``high`` (widened to at least ``span``) with round ticks, 1, 2 or 5 times a power of
    ten apart (about ``most`` of them), their labels, and the axis's ends (the outer ticks), so that every label
    stands where its value is."""
    if high - low < span:
        middle = (low + high) / 2
        low, high = middle - span / 2, middle + span / 2
    rough = (high - low) / (most - 1)
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    ticks = [round(k * step, decimals) for k in range(first, last + 1)]
    return {"low": ticks[0], "high": ticks[-1],
            "ticks": [{"value": v, "label": f"{v:+.{decimals}f}" if v else "0"} for v in ticks]}


# --- entrants -------------------------------------------------------------------------------------------------


def handshakes(folder: Path) -> dict[str, dict[str, Any]]:
    """Each entrant's handshake and process counts from ``bots.json`` (not its command, folder or containment:
    those are the operator's)."""
    try:
        entries = json.loads(RunFolder(folder).bots.read_text())
    except (OSError, ValueError):
        return {}
    shown = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            shown[entry["name"]] = {key: entry.get(key) for key in ("hello", "processes", "starts",
                                                                    "restarts_after_timeouts", "given_up")}
    return shown


def entrant_json(t: Tournament, name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One entrant's page: its standings line, results by opponent and by seat, its games and faults, its
    handshake."""
    if name not in t.entrants:
        raise NotShown(404, f"expected an entrant of tournament {t.id} ({', '.join(t.entrants)}), got {name!r}")
    standings = t.standings_view()
    line = standings.entrant(name)
    games = [row for row in rows if name in row["seats"]]
    by_seat: dict[int, dict[str, int]] = {}
    faults: list[dict[str, Any]] = []
    for row in games:
        result = result_for(row, name)
        for seat, seated in enumerate(row["seats"]):
            if seated == name:
                by_seat.setdefault(seat, dict.fromkeys(RESULTS, 0))[result] += 1
        faults.extend({"game": row["index"], "kind": kind, "seat": seat} for kind, seat in row["faults"]
                      if seat < len(row["seats"]) and row["seats"][seat] == name)
    return {
        "tournament": tournament_json(t), "name": name, "standing": None if line is None else line.to_json(),
        "by_opponent": {b: cell.to_json() for b, cell in standings.against(name).items()},
        "by_seat": [{"seat": seat, **counts} for seat, counts in sorted(by_seat.items())],
        "games": [dict(row, result=result_for(row, name)) for row in games], "faults": faults,
        "handshake": handshakes(t.folder).get(name),
    }
