"""What a round needs of its layout, as protocols: the line (:mod:`arena.rules.line`), the All Fives spinner
(:mod:`arena.rules.spinner`) and the Mexican Train hub (:mod:`arena.rules.trains`) fill them by shape, not by
inheritance.

Every layout is a :class:`Layout`: it copies itself, says whether anything is down, lists the tiles played and gives
its public view. The line and the spinner are also a :class:`LineLayout`, the one the shared turn structure of
:class:`~arena.rules.state.RoundState` plays on (lead a tile, place at an open end). The hub is not: a placement
there names a train, and Mexican Train's round brings its own turn structure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, Self

from arena.rules.actions import Point
from arena.rules.line import Connection, End, LineView
from arena.rules.trains import TrainEnd, TrainsView


class Layout(Protocol):
    """What every variant's layout offers."""

    tiles: list[int]
    """Tiles in the order they were played."""

    def copy(self) -> Self: ...

    def is_empty(self) -> bool: ...

    def open_ends(self) -> Sequence[End | TrainEnd]:
        """The open attachment points, each starting (tile, point, accepted value); a train's also names the train."""
        ...

    def view(self) -> LineView | TrainsView:
        """The public picture every seat sees."""
        ...


class LineLayout(Layout, Protocol):
    """A layout of open ends that a tile is led on, then placed at: the line and the spinner."""

    def open_ends(self) -> list[End]: ...

    def lead(self, tile: int) -> None: ...

    def place(self, tile: int, target: int, point: Point) -> Connection: ...

    def view(self) -> LineView: ...
