"""A tournament as the server keeps it: its folder under the data folder, its state on disk, its record index.

``<data>/tournaments/<id>/`` is the tournament's run folder (the layout of :mod:`arena.tournament.runner`:
``tournament.toml``, ``games.jsonl``, ``standings.json``, seeds, logs) plus ``server.json``, the server's own
facts (name, state, times, counts), replaced atomically at every change of state. A restarted server reads every
``server.json`` back: finished, cancelled and failed tournaments are listed; queued and running ones are resumed,
and so are those FAILED by a write error (``resumable``: a full disk, once space is freed).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import trio

from arena.protocol import arena_pb2 as apb
from arena.records.compact import Unit
from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.schema import RecordFormatError
from arena.records.store import parse_line, split_units, unit_line
from arena.rules import RulesError, new_game
from arena.server.events import Watcher
from arena.tournament.sequential import MatchupTest
from arena.tournament.spec import TournamentSpec
from arena.tournament.standings import ELO, OPENSKILL, Standings, StandingsTable

SERVER_FILE = "server.json"
STATE_NAMES = {
    apb.TOURNAMENT_STATE_QUEUED: "queued",
    apb.TOURNAMENT_STATE_RUNNING: "running",
    apb.TOURNAMENT_STATE_FINISHED: "finished",
    apb.TOURNAMENT_STATE_CANCELLED: "cancelled",
    apb.TOURNAMENT_STATE_FAILED: "failed",
}
STATES = {name: value for value, name in STATE_NAMES.items()}
ACTIVE = (apb.TOURNAMENT_STATE_QUEUED, apb.TOURNAMENT_STATE_RUNNING)


@dataclass
class Tournament:
    """One tournament. The fields after ``group_size`` live only in memory and belong to the trio thread, except
    ``records``, which the handlers read on worker threads (it has its own lock)."""

    id: str
    folder: Path
    name: str
    variant: str
    players: int
    entrants: list[str]
    games_total: int
    group_size: int
    created_at: float = field(default_factory=time.time)
    state: apb.TournamentState.ValueType = apb.TOURNAMENT_STATE_QUEUED
    started_at: float = 0.0
    finished_at: float = 0.0
    error: str = ""
    games_done: int = 0
    resumable: bool = False
    """FAILED by a write error (a full disk): its recorded games are safe, and the next start of the server resumes
    it."""
    given_up: list[str] = field(default_factory=list)
    """One line per entrant given up on in its last run (``RunSummary.given_up``)."""
    has_sprt: bool = False
    """Its file has [sprt]: it ends when the test decides, and ``games_total`` is only the test's cap."""

    spec: TournamentSpec | None = None
    spec_text: str = ""
    processes: int = 0
    """Bot processes it keeps alive while active (counted against --max-bot-processes)."""
    cancel_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    cancel_requested: bool = False
    ended_event: trio.Event = field(default_factory=trio.Event)
    ended: bool = False
    """The runner is over (FINISHED, CANCELLED, FAILED, or interrupted by shutdown)."""
    done: set[int] = field(default_factory=set)
    in_progress: dict[int, apb.GameStarted] = field(default_factory=dict)
    standings: Standings | None = None
    sprt: MatchupTest | None = None
    """The live test of a file with [sprt], fed the same games as ``standings`` (None without [sprt])."""
    final_standings: StandingsTable | None = None
    watchers: list[Watcher] = field(default_factory=list)
    move_watchers: int = 0
    pending: list[apb.TournamentEvent] = field(default_factory=list)
    standings_dirty: bool = False
    held: dict[int, list[apb.TournamentEvent]] = field(default_factory=dict)
    records: RecordIndex = None  # type: ignore[assignment]
    _commitment: str = ""
    _master_seed: str = ""

    def __post_init__(self) -> None:
        if self.records is None:
            self.records = RecordIndex(RunFolder(self.folder).records)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    # --- on disk ---

    def save(self) -> None:
        facts = {
            "id": self.id, "name": self.name, "variant": self.variant, "players": self.players,
            "entrants": self.entrants, "games_total": self.games_total, "group_size": self.group_size,
            "created_at": self.created_at, "state": STATE_NAMES[self.state], "started_at": self.started_at,
            "finished_at": self.finished_at, "error": self.error, "games_done": self.games_done,
            "resumable": self.resumable, "given_up": self.given_up, "sprt": self.has_sprt,
        }
        temporary = self.folder / (SERVER_FILE + ".tmp")
        with open(temporary, "w") as f:
            json.dump(facts, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, self.folder / SERVER_FILE)

    @classmethod
    def load(cls, folder: Path) -> Tournament:
        facts = json.loads((folder / SERVER_FILE).read_text())
        return cls(
            id=facts["id"], folder=folder, name=facts["name"], variant=facts["variant"], players=facts["players"],
            entrants=list(facts["entrants"]), games_total=facts["games_total"], group_size=facts["group_size"],
            created_at=facts["created_at"], state=STATES[facts["state"]], started_at=facts.get("started_at", 0.0),
            finished_at=facts.get("finished_at", 0.0), error=facts.get("error", ""),
            games_done=facts.get("games_done", 0), resumable=bool(facts.get("resumable", False)),
            given_up=[str(line) for line in facts.get("given_up", [])], has_sprt=bool(facts.get("sprt", False)),
        )

    # --- as the API shows it ---

    def commitment(self) -> str:
        """Published before the first game (read once)."""
        if not self._commitment:
            self._commitment = RunFolder(self.folder).commitment() or ""
        return self._commitment

    def master_seed(self) -> str:
        """Revealed when the last game is recorded (read once)."""
        if not self._master_seed:
            self._master_seed = RunFolder(self.folder).revealed_seed()
        return self._master_seed

    def info(self) -> apb.TournamentInfo:
        return apb.TournamentInfo(
            id=self.id, name=self.name, variant=self.variant, players=self.players, state=self.state,
            games_done=self.games_done, games_total=self.games_total, created_at=self.created_at,
            started_at=self.started_at, finished_at=self.finished_at, error=self.error, entrants=self.entrants,
            games_in_progress=len(self.in_progress), seed_commitment=self.commitment(),
            master_seed=self.master_seed() if self.state == apb.TOURNAMENT_STATE_FINISHED else "",
            resumable=self.resumable, given_up=self.given_up, sprt=self.has_sprt,
        )

    @property
    def rating_kind(self) -> str:
        """The rating its standings show, known before any game: OpenSkill where a game has more than two sides
        (the standings themselves only learn it from the first game)."""
        try:
            game = self.spec.game() if self.spec is not None else new_game(self.variant, self.players)
        except (RulesError, ValueError):
            return ELO
        return OPENSKILL if game.num_sides > 2 else ELO

    def standings_view(self) -> StandingsTable:
        """The standings as standings.json holds them (with the test beside them when there is one): live while
        the tournament runs, then final; before the first game, with the rating the games will bring."""
        if self.standings is not None:
            table = self.standings.snapshot(self.sprt.to_json() if self.sprt is not None else None)
            return table if table.games else replace(table, rating=self.rating_kind)
        if self.final_standings is None and not self.active:
            path = RunFolder(self.folder).standings
            if path.exists():
                try:
                    self.final_standings = StandingsTable.from_json(json.loads(path.read_text()))
                except (ValueError, KeyError, TypeError, AttributeError):
                    self.final_standings = None
        return self.final_standings or StandingsTable(games=0, group_size=self.group_size, rating=self.rating_kind,
                                                      entrants=(), pairwise={})

    def withheld_for(self, index: int) -> list[int]:
        """The games of game ``index``'s deal set still to be recorded, while any may yet be played: its record is
        withheld until then, in every state in which the tournament can still play (QUEUED, RUNNING, and FAILED but
        resumable: a full disk, whose restart plays the set's other rotations). A tournament that will never play
        again (finished, cancelled, failed for good) has nothing to hide: its sets stay as they are."""
        if not (self.active or self.resumable):
            return []
        return [i for i in self.deal_set(index) if i != index and i not in self.records]

    def withheld_message(self, index: int, waiting: list[int]) -> str:
        """Why game ``index``'s record is not given (``waiting``: :meth:`withheld_for`)."""
        return (f"game {index} shares its deals with game(s) {', '.join(map(str, waiting))}, still to finish; its "
                f"record is withheld until then")

    def deal_set(self, index: int) -> range:
        """The games dealt the same deals as game ``index``: the schedule numbers a deal set's rotations
        consecutively (arena/tournament/schedule.py), so they are the block of ``group_size`` around it."""
        first = index - index % self.group_size
        return range(first, first + self.group_size)


_PREFIX = re.compile(rb'^\{"recordVersion":1(?:,"index":"(\d{1,20})")?[,}]')
"""The first bytes of a record line as the arena writes it (recordVersion, then the index unless it is 0)."""


class RecordIndex:
    """Where each recorded game is in the record file, found by reading only what was appended since the last look.

    A line (in a compact file, a record's frame, decompressed: :func:`~arena.records.store.split_units`) is placed by
    the index in its first bytes (:data:`_PREFIX`; a line that does not start that way is parsed whole to find it),
    and checked whole (:func:`~arena.records.schema.parse_record`) when it is read: so a listing
    of a long run costs a scan, not a parse of every game. A line that is not a record, whatever it holds, is then
    dropped from the index, with its line number and problem in ``bad_lines``; a later line of the same game (one
    played again on resume) takes its place. Nothing a line holds raises out of this class.

    Used from the handlers' worker threads. While the server runs the file is only appended to, except by ``arena replay
    --repair``, which replaces it: a file that shrank or is another file is read again from its start.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._offsets: dict[int, list[tuple[int, int, int]]] = {}
        """Game index -> where its lines are: (offset, length, line number), in file order."""
        self._position = 0
        self._lines = 0
        self._identity: tuple[int, int] | None = None
        self.bad_lines: list[tuple[int, str]] = []
        """(line number, problem) of every line found not to be a record."""
        self._unreadable: dict[int, tuple[int, str]] = {}
        """Game index -> (line number, problem) of the last line placed as that game's and found not to be a record."""

    def refresh(self) -> None:
        with self._lock:
            try:
                with open(self.path, "rb") as f:
                    info = os.fstat(f.fileno())
                    if (info.st_dev, info.st_ino) != self._identity or info.st_size < self._position:
                        self._forget((info.st_dev, info.st_ino))
                    f.seek(self._position)
                    data = f.read()
            except FileNotFoundError:
                return
            units, used = split_units(self.path, data, self._position)
            for unit in units:
                self._lines += 1
                self._place(unit, self._lines)
            self._position += used

    def _forget(self, identity: tuple[int, int]) -> None:
        """Start over on another file (or a shorter one: a torn tail dropped, a repair)."""
        self._identity = identity
        self._position = self._lines = 0
        self._offsets.clear()
        self.bad_lines.clear()
        self._unreadable.clear()

    def _place(self, unit: Unit, number: int) -> None:
        try:
            if unit.problem:
                raise RecordFormatError(unit.problem)
            line = unit_line(self.path, unit.raw)
            if not line.strip():
                return
            match = _PREFIX.match(line)
            index = int(match.group(1) or 0) if match else index_of(parse_line(self.path, line))
        except RecordFormatError as error:
            self.bad_lines.append((number, str(error)))
            return
        self._offsets.setdefault(index, []).append((unit.offset, unit.length, number))

    def indices(self) -> list[int]:
        with self._lock:
            return sorted(self._offsets)

    def __contains__(self, index: int) -> bool:
        with self._lock:
            return index in self._offsets

    def read(self, index: int) -> dict[str, Any] | None:
        """The game's record, checked; None when no readable line holds it."""
        while True:
            with self._lock:
                places = self._offsets.get(index)
                if not places:
                    return None
                place, identity = places[0], self._identity
            try:
                raw = self._bytes_at(place, identity)
            except FileNotFoundError:
                return None
            if raw is None:  # replaced by a repair since the last look: find the lines again
                self.refresh()
                continue
            try:
                return parse_line(self.path, unit_line(self.path, raw))
            except RecordFormatError as error:
                self._drop(index, place, str(error))

    def unreadable(self, index: int) -> tuple[int, str] | None:
        """(line number, problem) of a line that held game ``index`` but is not a record, when :meth:`read` found
        one; None otherwise (a line too broken to name its game is only in ``bad_lines``)."""
        with self._lock:
            return self._unreadable.get(index)

    def _bytes_at(self, place: tuple[int, int, int], identity: tuple[int, int] | None) -> bytes | None:
        """The line at ``place`` in the file last looked at; None if the file there is another one now."""
        with open(self.path, "rb") as f:
            info = os.fstat(f.fileno())
            if (info.st_dev, info.st_ino) != identity:
                return None
            f.seek(place[0])
            return f.read(place[1])

    def _drop(self, index: int, place: tuple[int, int, int], problem: str) -> None:
        with self._lock:
            places = self._offsets.get(index)
            if places and place in places:
                places.remove(place)
                self.bad_lines.append((place[2], problem))
                self._unreadable[index] = (place[2], problem)
                if not places:
                    del self._offsets[index]
