"""The All Fives layout: a line whose first double becomes the spinner, which can open two more arms.

The rules (docs/reference/rules.md#all-fives-spinner): the first double played (the lead or later) is the only spinner, laid
crosswise. Its long sides are line A and line B (a spinner played mid-line joins by line A and leaves line B open).
Once tiles touch both long sides, its short sides **side C** and **side D** open too, and the layout grows in four
directions.

The **count** after each placement is the sum of the outer values of every open arm end: a double at the end of an
arm counts both halves; the spinner counts both halves while one of its long sides is still open and nothing after
that; arms C and D count only once a tile is on them; the lead alone counts both of its halves.

The count is kept up to date on every placement (an int add or two), so scoring reads it without walking the layout.
Ends keep a fixed place: index 0 the left end of the line, 1 the right end, 2 side C and 3 side D once they open.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.rules.actions import Point
from arena.rules.errors import RulesError
from arena.rules.line import Connection, End, LineView, find_end, joining_points, lead_ends
from arena.rules.tiles import HIGH, IS_DOUBLE, LOW, NAMES

NO_SPINNER = -1
"""The spinner field while no double has been played."""

_LINE_B = int(Point.LINE_B)
"""Points up to line B are long sides (high end, low end, line A, line B); above are the spinner's short sides."""


@dataclass(frozen=True)
class SpinnerView(LineView):
    """The public picture of a spinner layout: the line (through the spinner's long sides), arms C and D, the count."""

    spinner: int = NO_SPINNER
    """The spinner's tile id, or -1 while no double has been played."""
    side_c: tuple[int, ...] = ()
    """Tiles on side C, outward from the spinner."""
    side_d: tuple[int, ...] = ()
    """Tiles on side D, outward from the spinner."""
    count: int = 0
    """The layout count: the sum of the outer values of every open arm end (see the module docstring)."""


class Spinner:
    """The All Fives layout: a two-ended line, then four arms once the spinner's long sides are both covered."""

    __slots__ = ("ends", "tiles", "connections", "spinner", "long_open", "_count", "_arms")

    def __init__(self) -> None:
        self.ends: list[End] = []
        """The open attachment points (tile, point, accepted value), in a fixed order: left, right, C, D."""
        self.tiles: list[int] = []
        """Tiles in the order they were played."""
        self.connections: list[Connection] = []
        self.spinner = NO_SPINNER
        self.long_open = 0
        """How many of the spinner's long sides (line A, line B) are still open."""
        self._count = 0
        self._arms: tuple[list[int], ...] = ([], [], [], [])
        """Tiles outward from the lead along each end's arm: left, right, side C, side D."""

    def copy(self) -> Spinner:
        other = Spinner.__new__(Spinner)
        other.ends = self.ends.copy()
        other.tiles = self.tiles.copy()
        other.connections = self.connections.copy()
        other.spinner = self.spinner
        other.long_open = self.long_open
        other._count = self._count
        other._arms = tuple(arm.copy() for arm in self._arms)
        return other

    def is_empty(self) -> bool:
        return not self.tiles

    def open_ends(self) -> list[End]:
        """The open attachment points with the value each accepts."""
        return self.ends

    def count(self) -> int:
        """The layout count: the sum of the outer values of every open arm end, by the rules above."""
        return self._count

    def count_after(self, tile: int, target: int, point: Point) -> int:
        """The count the layout would have after placing ``tile`` on (``target``, ``point``) (``target`` -1: the
        lead), without placing it: what a placement would score is ``points_in_play`` of it. Unchecked: the
        placement must be legal."""
        if target < 0:
            return LOW[tile] + HIGH[tile]
        # value is read after the loop: the end it breaks at (ruff's B007 cannot see the break)
        for end_tile, end_point, value in self.ends:  # noqa: B007
            if end_tile == target and end_point == point:
                break
        else:
            raise RulesError(f"{NAMES[target]} {Point(point).label} is not an open end of the layout")
        open_value = value if IS_DOUBLE[tile] else (LOW[tile] if HIGH[tile] == value else HIGH[tile])
        worth = open_value + open_value if IS_DOUBLE[tile] else open_value
        if target == self.spinner:
            if end_point <= _LINE_B and self.long_open == 1:
                worth -= value + value
            return self._count + worth
        return self._count + worth - (value + value if IS_DOUBLE[target] else value)

    def lead(self, tile: int) -> None:
        """Put the first tile down; a double lead is the spinner, with both long sides open."""
        if self.tiles:
            raise RulesError(f"cannot lead {NAMES[tile]}: the layout already holds {len(self.tiles)} tiles")
        self.tiles.append(tile)
        self.ends = lead_ends(tile)
        self._count = LOW[tile] + HIGH[tile]
        if IS_DOUBLE[tile]:
            self.spinner = tile
            self.long_open = 2

    def place(self, tile: int, target: int, point: Point) -> Connection:
        """Join ``tile`` to the open end (``target``, ``point``); return the new connection."""
        ends = self.ends
        index, value = find_end(ends, tile, target, point, "layout")
        end_point = ends[index][1]
        own_point, open_point, open_value = joining_points(tile, value)
        ends[index] = (tile, open_point, open_value)
        worth = open_value + open_value if IS_DOUBLE[tile] else open_value
        if target == self.spinner:
            if end_point <= _LINE_B:
                self.long_open -= 1
                if self.long_open == 0:
                    # both long sides covered: the spinner stops counting and its short sides open
                    worth -= value + value
                    ends.append((target, Point.SIDE_C, value))
                    ends.append((target, Point.SIDE_D, value))
            # else a first tile on side C or D, which counted nothing before
            self._count += worth
        else:
            self._count += worth - (value + value if IS_DOUBLE[target] else value)
            if self.spinner == NO_SPINNER and IS_DOUBLE[tile]:
                self.spinner = tile
                self.long_open = 1
        self.tiles.append(tile)
        self._arms[index].append(tile)
        connection = Connection(target, end_point, tile, own_point)
        self.connections.append(connection)
        return connection

    def view(self) -> SpinnerView:
        left, right, side_c, side_d = self._arms
        return SpinnerView(
            played=tuple(self.tiles),
            line=tuple(self.in_line_order()),
            connections=tuple(self.connections),
            open_ends=tuple(self.ends),
            spinner=self.spinner,
            side_c=tuple(side_c),
            side_d=tuple(side_d),
            count=self._count,
        )

    def in_line_order(self) -> list[int]:
        """The tiles of the line through the spinner's long sides, from the left end to the right end."""
        if not self.tiles:
            return []
        left, right = self._arms[0], self._arms[1]
        return left[::-1] + [self.tiles[0]] + right
