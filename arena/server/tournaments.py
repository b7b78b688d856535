"""A tournament as the server keeps it: its folder under the data folder, its state on disk, its record index.

``<data>/tournaments/<id>/`` is the tournament's run folder (the layout of :mod:`arena.tournament.runner`:
``tournament.toml``, ``games.jsonl``, ``standings.json``, seeds, logs) plus ``server.json``, the server's own
facts (name, state, times, counts), replaced atomically at every change of state. A restarted server reads every
``server.json`` back: finished, cancelled and failed tournaments are listed; queued and running ones are resumed.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..protocol import arena_pb2 as apb
from ..tournament.seed import COMMITMENT_FILE, REVEALED_FILE
from ..tournament.spec import TournamentSpec
from ..tournament.standings import Standings
from .events import Watcher

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
    ``records``, which gRPC threads use (it has its own lock)."""

    id: str
    folder: Path
    name: str
    variant: str
    players: int
    entrants: list[str]
    games_total: int
    group_size: int
    created_at: float = field(default_factory=time.time)
    state: int = apb.TOURNAMENT_STATE_QUEUED
    started_at: float = 0.0
    finished_at: float = 0.0
    error: str = ""
    games_done: int = 0

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
    final_standings: dict[str, Any] | None = None
    watchers: list[Watcher] = field(default_factory=list)
    move_watchers: int = 0
    pending: list[apb.TournamentEvent] = field(default_factory=list)
    standings_dirty: bool = False
    held: dict[int, list[apb.TournamentEvent]] = field(default_factory=dict)
    records: "RecordIndex" = None  # type: ignore[assignment]
    _commitment: str = ""
    _master_seed: str = ""

    def __post_init__(self) -> None:
        if self.records is None:
            self.records = RecordIndex(self.folder / "games.jsonl")

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
        }
        temporary = self.folder / (SERVER_FILE + ".tmp")
        with open(temporary, "w") as f:
            json.dump(facts, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, self.folder / SERVER_FILE)

    @classmethod
    def load(cls, folder: Path) -> "Tournament":
        facts = json.loads((folder / SERVER_FILE).read_text())
        return cls(
            id=facts["id"], folder=folder, name=facts["name"], variant=facts["variant"], players=facts["players"],
            entrants=list(facts["entrants"]), games_total=facts["games_total"], group_size=facts["group_size"],
            created_at=facts["created_at"], state=STATES[facts["state"]], started_at=facts.get("started_at", 0.0),
            finished_at=facts.get("finished_at", 0.0), error=facts.get("error", ""),
            games_done=facts.get("games_done", 0),
        )

    # --- as the API shows it ---

    def commitment(self) -> str:
        """Published before the first game (read once)."""
        if not self._commitment:
            path = self.folder / COMMITMENT_FILE
            self._commitment = path.read_text().split()[0] if path.exists() else ""
        return self._commitment

    def master_seed(self) -> str:
        """Revealed when the last game is recorded (read once)."""
        if not self._master_seed:
            try:
                self._master_seed = str(json.loads((self.folder / REVEALED_FILE).read_text())["seed"])
            except (OSError, ValueError, KeyError):
                return ""
        return self._master_seed

    def info(self) -> apb.TournamentInfo:
        return apb.TournamentInfo(
            id=self.id, name=self.name, variant=self.variant, players=self.players, state=self.state,
            games_done=self.games_done, games_total=self.games_total, created_at=self.created_at,
            started_at=self.started_at, finished_at=self.finished_at, error=self.error, entrants=self.entrants,
            games_in_progress=len(self.in_progress), seed_commitment=self.commitment(),
            master_seed=self.master_seed() if self.state == apb.TOURNAMENT_STATE_FINISHED else "",
        )

    def standings_json(self) -> dict[str, Any]:
        if self.standings is not None:
            return self.standings.to_json()
        if self.final_standings is None and not self.active:
            path = self.folder / "standings.json"
            if path.exists():
                try:
                    self.final_standings = json.loads(path.read_text())
                except ValueError:
                    self.final_standings = None
        return self.final_standings or {"games": 0, "group_size": self.group_size, "entrants": [], "pairwise": {}}

    def deal_set(self, index: int) -> range:
        """The games dealt the same deals as game ``index``: the schedule numbers a deal set's rotations
        consecutively (arena/tournament/schedule.py), so they are the block of ``group_size`` around it."""
        first = index - index % self.group_size
        return range(first, first + self.group_size)


_PREFIX = re.compile(rb'^\{"recordVersion":1(?:,"index":"(\d+)")?[,}]')


class RecordIndex:
    """Where each recorded game is in games.jsonl, found by reading only what was appended since the last look.
    Used from gRPC threads; the file is only ever appended to while the server runs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._offsets: dict[int, tuple[int, int]] = {}
        self._position = 0

    def refresh(self) -> None:
        with self._lock:
            try:
                with open(self.path, "rb") as f:
                    if os.fstat(f.fileno()).st_size < self._position:  # truncated (a torn tail dropped)
                        self._position = 0
                        self._offsets.clear()
                    f.seek(self._position)
                    data = f.read()
            except FileNotFoundError:
                return
            start = 0
            while True:
                end = data.find(b"\n", start)
                if end < 0:
                    break
                index = _index_of_line(data[start:end])
                if index is not None and index not in self._offsets:
                    self._offsets[index] = (self._position + start, end - start)
                start = end + 1
            self._position += start

    def indices(self) -> list[int]:
        with self._lock:
            return sorted(self._offsets)

    def __contains__(self, index: int) -> bool:
        with self._lock:
            return index in self._offsets

    def read(self, index: int) -> dict[str, Any] | None:
        with self._lock:
            where = self._offsets.get(index)
        if where is None:
            return None
        with open(self.path, "rb") as f:
            f.seek(where[0])
            return json.loads(f.read(where[1]))


def _index_of_line(line: bytes) -> int | None:
    match = _PREFIX.match(line)
    if match:
        return int(match.group(1) or 0)
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("recordVersion") != 1:
        return None
    return int(record.get("index", 0))
