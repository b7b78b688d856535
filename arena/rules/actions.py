"""Actions: one representation of a move everywhere (engine, protocol, records, replay).

A placement names the tile played and the attachment point it joins: a tile already in the layout and one of its
named sides (docs/reference/rules.md#the-line): a non-double's **high end** / **low end**, a double's **line A** /
**line B**, the All Fives spinner's **side C** / **side D**. In Mexican Train the point also names the train. A lead
joins nothing. Drawing and passing are actions too.

Actions are small immutable tuples; the engine interns placements, so building the legal list allocates nothing new
on the hot path.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from arena.rules.tiles import NAMES


class Kind(IntEnum):
    """What an action does."""

    PLACE = 1
    DRAW = 2
    PASS = 3


class Point(IntEnum):
    """A named side of a tile in the layout, where another tile can attach."""

    NONE = 0
    HIGH_END = 1
    LOW_END = 2
    LINE_A = 3
    LINE_B = 4
    SIDE_C = 5
    SIDE_D = 6

    @property
    def label(self) -> str:
        """The name docs/reference/rules.md uses: ``high end``, ``line A``, ..."""
        return _POINT_LABELS[self]


_POINT_LABELS = {
    Point.NONE: "",
    Point.HIGH_END: "high end",
    Point.LOW_END: "low end",
    Point.LINE_A: "line A",
    Point.LINE_B: "line B",
    Point.SIDE_C: "side C",
    Point.SIDE_D: "side D",
}

NO_TILE = -1
"""Tile field of an action that has no tile (draw, pass), or of a draw whose tile is hidden."""
NO_TRAIN = -1
"""Train field of an action outside Mexican Train."""
MEXICAN_TRAIN = -2
"""Train field naming the shared Mexican train (a seat's own train is named by its seat number)."""


class Action(NamedTuple):
    """One move. ``target``/``point`` name the attachment point; ``train`` is for Mexican Train only."""

    kind: Kind
    tile: int = NO_TILE
    target: int = NO_TILE
    point: Point = Point.NONE
    train: int = NO_TRAIN

    def __str__(self) -> str:
        if self.kind is Kind.DRAW:
            return "draw" if self.tile == NO_TILE else f"draw {NAMES[self.tile]}"
        if self.kind is Kind.PASS:
            return "pass"
        where = ""
        if self.train != NO_TRAIN:
            where = " on the Mexican train" if self.train == MEXICAN_TRAIN else f" on train {self.train}"
        if self.target == NO_TILE:
            return f"lead {NAMES[self.tile]}"
        point = f" {self.point.label}" if self.point is not Point.NONE else ""
        return f"{NAMES[self.tile]} on {NAMES[self.target]}{point}{where}"


DRAW = Action(Kind.DRAW)
PASS = Action(Kind.PASS)
_DRAWS = tuple(Action(Kind.DRAW, tile) for tile in range(len(NAMES)))


def drawn(tile: int) -> Action:
    """The draw of ``tile`` as the full history records it: the same object for the same tile of any set (a draw
    allocates nothing); a placeholder (a round rebuilt from one seat's view holds them) gets its own."""
    return _DRAWS[tile] if 0 <= tile < len(_DRAWS) else Action(Kind.DRAW, tile)

_PLACEMENTS: dict[tuple[int, int, int, int], Action] = {}


def placement(tile: int, target: int = NO_TILE, point: Point = Point.NONE, train: int = NO_TRAIN) -> Action:
    """The interned placement action (same object for the same placement, so legal lists allocate nothing)."""
    key = (tile, target, point, train)
    action = _PLACEMENTS.get(key)
    if action is None:
        action = _PLACEMENTS[key] = Action(Kind.PLACE, tile, target, Point(point), train)
    return action


def lead(tile: int) -> Action:
    """The placement of the first tile of a line."""
    return placement(tile)
