"""The two-ended line of Draw, Block and La Plaza.

Doubles lie crosswise and stay in the line; no tile opens a branch. Each of the two open ends is an attachment
point named after the tile that shows it (docs/reference/rules.md#the-line): a non-double's high end or low end, a
double's line A or line B, where line A is the side a double joins by and line B the side it leaves open. A lead
non-double opens its low end and its high end; a lead double opens line A and line B.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from arena.rules.actions import Point
from arena.rules.errors import RulesError
from arena.rules.tiles import HIGH, IS_DOUBLE, LOW, NAMES

End = tuple[int, Point, int]
"""An open attachment point: (tile in the layout, which side of it, the value it accepts)."""


class Connection(NamedTuple):
    """Two tiles touching: ``tile``'s ``tile_point`` joins ``target``'s ``target_point``."""

    target: int
    target_point: Point
    tile: int
    tile_point: Point

    def __str__(self) -> str:
        return f"{NAMES[self.target]} {self.target_point.label} – {NAMES[self.tile]} {self.tile_point.label}"


_new_connection = tuple.__new__
"""Makes a :class:`Connection` from its fields' tuple, as its own ``__new__`` does after a Python call more."""


def joining_points(tile: int, value: int) -> tuple[Point, Point, int]:
    """How ``tile`` joins an end showing ``value``: (its own joining point, its new open point, the new value).

    A double joins by line A and opens line B; a non-double joins by the half that matches and opens the other.
    """
    if IS_DOUBLE[tile]:
        return Point.LINE_A, Point.LINE_B, value
    if HIGH[tile] == value:
        return Point.HIGH_END, Point.LOW_END, LOW[tile]
    return Point.LOW_END, Point.HIGH_END, HIGH[tile]


def find_end(ends: list[End], tile: int, target: int, point: Point, where: str = "line") -> tuple[int, int]:
    """The index in ``ends`` of the open end (``target``, ``point``) and the value it shows, checked against ``tile``.

    Raises :class:`RulesError` when that end is not open or ``tile`` does not match it (``where`` names the layout).
    """
    # index and value are read after the loop: the one it breaks at (ruff's B007 cannot see the break)
    for index, (end_tile, end_point, value) in enumerate(ends):  # noqa: B007
        if end_tile == target and end_point == point:
            break
    else:
        raise RulesError(f"{NAMES[target]} {Point(point).label} is not an open end of the {where}")
    if LOW[tile] != value and HIGH[tile] != value:
        raise RulesError(f"{NAMES[tile]} does not match {value} at {NAMES[target]} {Point(point).label}")
    return index, value


def lead_ends(tile: int) -> list[End]:
    """The two open ends of a line made of one tile, left (low side) first."""
    if IS_DOUBLE[tile]:
        return [(tile, Point.LINE_A, LOW[tile]), (tile, Point.LINE_B, LOW[tile])]
    return [(tile, Point.LOW_END, LOW[tile]), (tile, Point.HIGH_END, HIGH[tile])]


@dataclass(frozen=True)
class LineView:
    """The public picture of a line: what every seat sees."""

    played: tuple[int, ...]
    """Tiles in the order they were played."""
    line: tuple[int, ...]
    """Tiles from the left end to the right end."""
    connections: tuple[Connection, ...]
    open_ends: tuple[End, ...]


class Line:
    """A line of tiles with two open ends (index 0 the left end, 1 the right end)."""

    __slots__ = ("ends", "tiles", "connections", "left", "right")

    def __init__(self) -> None:
        self.ends: list[End] = []
        self.tiles: list[int] = []
        """Tiles in the order they were played."""
        self.connections: list[Connection] = []
        self.left: list[int] = []
        """The tiles placed at the left end, in the order placed (the lead is in neither arm)."""
        self.right: list[int] = []
        """The tiles placed at the right end, in the order placed."""

    def copy(self) -> Line:
        other = Line.__new__(Line)
        other.ends = self.ends.copy()
        other.tiles = self.tiles.copy()
        other.connections = self.connections.copy()
        other.left = self.left.copy()
        other.right = self.right.copy()
        return other

    def is_empty(self) -> bool:
        return not self.tiles

    def open_ends(self) -> list[End]:
        """The open attachment points with the value each accepts."""
        return self.ends

    def lead(self, tile: int) -> None:
        """Put the first tile down."""
        if self.tiles:
            raise RulesError(f"cannot lead {NAMES[tile]}: the line already holds {len(self.tiles)} tiles")
        self.tiles.append(tile)
        self.ends = lead_ends(tile)

    def place(self, tile: int, target: int, point: Point) -> Connection:
        """Join ``tile`` to the open end (``target``, ``point``); return the new connection."""
        ends = self.ends
        index, value = find_end(ends, tile, target, point)
        end_point = ends[index][1]
        own_point, open_point, open_value = joining_points(tile, value)
        ends[index] = (tile, open_point, open_value)
        self.tiles.append(tile)
        (self.left if index == 0 else self.right).append(tile)
        connection = _new_connection(Connection, (target, end_point, tile, own_point))
        self.connections.append(connection)
        return connection

    def view(self) -> LineView:
        return LineView(tuple(self.tiles), tuple(self.in_line_order()), tuple(self.connections), tuple(self.ends))

    def in_line_order(self) -> list[int]:
        """The tiles from the left end to the right end."""
        if not self.tiles:
            return []
        return self.left[::-1] + [self.tiles[0]] + self.right
