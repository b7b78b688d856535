"""The hub-and-trains layout of Mexican Train.

The engine double sits in the hub. Each seat owns a personal train and one shared Mexican train also leaves the
hub; every train is a single row of tiles with one open end. Trains are indexed ``0 .. players - 1`` (the seats'
own trains) and ``players`` (the Mexican train); outside this module a train is named as in actions: its seat
number, or :data:`~arena.rules.actions.MEXICAN_TRAIN`.

Attachment points name the train and the tile at its end (docs/reference/rules.md#mexican-train-notation): an empty
train ends at the engine (point ``NONE``: the hub has no named side), a non-double at the half it left open (its high
end or low end, as in :func:`~arena.rules.line.joining_points`), a double, laid across its train's end, at its
line B. A placement is ``placement(tile, end tile, end point, train)``.

Markers: a bit per seat, set when the seat's train is open to everyone. Open doubles: every double that no tile has
been placed on yet, in the order placed (the ones just placed in the current turn included; the round state decides
which of them restricts play).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from arena.rules.actions import MEXICAN_TRAIN, Action, Point, placement
from arena.rules.errors import RulesError
from arena.rules.line import Connection, End, joining_points
from arena.rules.tiles import IS_DOUBLE, LOW, NAMES, VALUE_MASK, iter_tiles

TrainEnd = tuple[int, Point, int, int]
"""An open attachment point of a train: (tile at its end, which side, the value it accepts, train name)."""


class TrainView(NamedTuple):
    """The public picture of one train."""

    train: int
    """The owner's seat, or ``MEXICAN_TRAIN``."""
    tiles: tuple[int, ...]
    """From the hub outwards."""
    marker: bool
    """The owner's marker is on it (open to everyone). Always false for the Mexican train, open by nature."""
    end: End
    """The train's attachment point: (tile, point, value); the engine with point NONE while the train is empty."""
    connections: tuple[Connection, ...]
    """Each tile's joining point and the point it joined, from the hub outwards."""


@dataclass(frozen=True)
class TrainsView:
    """The public picture of the hub and its trains: what every seat sees."""

    engine: int
    trains: tuple[TrainView, ...]
    """The seats' trains in seat order, then the Mexican train."""
    open_doubles: tuple[tuple[int, int], ...]
    """(train, double) for every double not yet satisfied, in the order placed."""
    played: tuple[int, ...]
    """Every tile placed in the round, in play order (the engine excluded)."""


_ACTIONS_AT: dict[tuple[int, int, int], dict[int, Action]] = {}


def _actions_at(tile: int, point: Point, value: int, train: int) -> dict[int, Action]:
    """The interned placements at one attachment point, by tile (every tile showing ``value``)."""
    key = (tile, point, train)
    actions = _ACTIONS_AT.get(key)
    if actions is None:
        actions = _ACTIONS_AT[key] = {t: placement(t, tile, point, train) for t in iter_tiles(VALUE_MASK[value])}
    return actions


class Trains:
    """The engine, the trains with their ends, the markers and the open doubles."""

    __slots__ = (
        "engine", "players", "names", "trains", "connections", "tiles", "end_tile", "end_point", "end_value",
        "actions_at", "marks", "open_doubles", "is_open",
    )

    def __init__(self, players: int, engine: int) -> None:
        if not IS_DOUBLE[engine]:
            raise RulesError(f"expected an engine double like [12|12], got {NAMES[engine]}")
        count = players + 1
        value = LOW[engine]
        self.engine = engine
        self.players = players
        self.names: tuple[int, ...] = tuple(range(players)) + (MEXICAN_TRAIN,)
        self.trains: list[list[int]] = [[] for _ in range(count)]
        self.connections: list[list[Connection]] = [[] for _ in range(count)]
        """Per train, each tile's joining point and the point it joined, from the hub outwards: kept as tiles
        join, so a view does not work them out again for every train."""
        self.tiles: list[int] = []
        """Every tile placed, in play order."""
        self.end_tile = [engine] * count
        self.end_point = [Point.NONE] * count
        self.end_value = [value] * count
        self.actions_at = [_actions_at(engine, Point.NONE, value, name) for name in self.names]
        """For each train, its end's placements by tile: the legal-move generator's lookup table."""
        self.marks = 0
        """Bit ``s`` set when seat ``s``'s marker is on its train."""
        self.open_doubles: list[int] = []
        """Indices of the trains that end in an unsatisfied double, in the order the doubles were placed."""
        self.is_open = [False] * count

    def copy(self) -> Trains:
        other = Trains.__new__(Trains)
        other.engine = self.engine
        other.players = self.players
        other.names = self.names
        other.trains = [train.copy() for train in self.trains]
        other.connections = [connections.copy() for connections in self.connections]
        other.tiles = self.tiles.copy()
        other.end_tile = self.end_tile.copy()
        other.end_point = self.end_point.copy()
        other.end_value = self.end_value.copy()
        other.actions_at = self.actions_at.copy()
        other.marks = self.marks
        other.open_doubles = self.open_doubles.copy()
        other.is_open = self.is_open.copy()
        return other

    # --- reading -------------------------------------------------------------------------------------------

    def index(self, train: int) -> int:
        """The internal index of a train name (a seat, or ``MEXICAN_TRAIN``)."""
        if train == MEXICAN_TRAIN:
            return self.players
        if not 0 <= train < self.players:
            raise RulesError(f"expected a train between 0 and {self.players - 1} or the Mexican train, got {train}")
        return train

    def is_empty(self) -> bool:
        return not self.tiles

    def end(self, train: int) -> End:
        """A train's attachment point: (tile, point, value)."""
        i = self.index(train)
        return self.end_tile[i], self.end_point[i], self.end_value[i]

    def open_ends(self) -> list[TrainEnd]:
        """Every train's attachment point with the value it accepts and the train's name."""
        return [
            (self.end_tile[i], self.end_point[i], self.end_value[i], self.names[i]) for i in range(self.players + 1)
        ]

    def has_marker(self, seat: int) -> bool:
        return bool(self.marks >> seat & 1)

    def first_satisfiable(self, live: int, reverse: bool = False) -> int:
        """The train index of the open double that must be answered first, or -1 when none restricts play.

        Open doubles are taken in the order placed (``reverse``: last placed first); a double that no tile in
        ``live`` (the hands and the boneyard) can satisfy is skipped: it no longer restricts play.
        """
        order = reversed(self.open_doubles) if reverse else self.open_doubles
        end_value = self.end_value
        for i in order:
            if live & VALUE_MASK[end_value[i]]:
                return i
        return -1

    # --- changing --------------------------------------------------------------------------------------------

    def place(self, tile: int, train: int, target: int, point: Point) -> Connection:
        """Join ``tile`` to the end (``target``, ``point``) of ``train``, checked; return the new connection."""
        i = self.index(train)
        end_tile, end_point, value = self.end_tile[i], self.end_point[i], self.end_value[i]
        if end_tile != target or end_point != point:
            where = "the Mexican train" if i == self.players else f"train {train}"
            raise RulesError(
                f"expected the end of {where} ({NAMES[end_tile]} {Point(end_point).label or 'hub'}), "
                f"got {NAMES[target]} {Point(point).label or 'hub'}"
            )
        if not VALUE_MASK[value] >> tile & 1:
            raise RulesError(f"{NAMES[tile]} does not match {value} at the end of train {train}")
        self.extend(i, tile)
        return self.connections[i][-1]

    def extend(self, i: int, tile: int) -> None:
        """Put ``tile`` at the end of train index ``i`` (unchecked: the caller placed a legal action)."""
        own_point, open_point, open_value = joining_points(tile, self.end_value[i])
        self.connections[i].append(Connection(self.end_tile[i], self.end_point[i], tile, own_point))
        self.trains[i].append(tile)
        self.tiles.append(tile)
        if self.is_open[i]:
            self.is_open[i] = False
            self.open_doubles.remove(i)
        if IS_DOUBLE[tile]:
            self.is_open[i] = True
            self.open_doubles.append(i)
        self.end_tile[i] = tile
        self.end_point[i] = open_point
        self.end_value[i] = open_value
        self.actions_at[i] = _actions_at(tile, open_point, open_value, self.names[i])

    def set_marker(self, seat: int, on: bool) -> None:
        if on:
            self.marks |= 1 << seat
        else:
            self.marks &= ~(1 << seat)

    # --- the public picture ----------------------------------------------------------------------------------

    def view(self) -> TrainsView:
        return TrainsView(
            self.engine, tuple([self.train_view(i) for i in range(len(self.names))]),
            tuple((self.names[i], self.end_tile[i]) for i in self.open_doubles), tuple(self.tiles),
        )

    def train_view(self, i: int) -> TrainView:
        """The public picture of the train of index ``i``: what :meth:`view` shows of it. It changes only when a
        tile joins the train or its marker goes on or off (:meth:`has_marker`), which lets an encoder keep it."""
        return TrainView(
            self.names[i], tuple(self.trains[i]), i < self.players and bool(self.marks >> i & 1),
            (self.end_tile[i], self.end_point[i], self.end_value[i]), tuple(self.connections[i]),
        )
