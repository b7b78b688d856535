"""The seven worked examples of docs/reference/rules.md#line-examples (the line and its attachment points), each a
test vector.

Each checks the tiles, the connections and the exact set of legal attachment points with their values.
"""

from __future__ import annotations

import pytest

from arena.rules import Point, RulesError
from arena.rules.line import Line
from arena.rules.tiles import NAMES
from support.notation import t

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

HIGH, LOW, A, B = Point.HIGH_END, Point.LOW_END, Point.LINE_A, Point.LINE_B


def play(*moves: tuple[str, str | None, Point | None]) -> Line:
    """Lead the first tile, then join each next one to (target, point)."""
    line = Line()
    first, *rest = moves
    line.lead(t(first[0]))
    for tile, target, point in rest:
        line.place(t(tile), t(target), point)
    return line


def open_points(line: Line) -> set[str]:
    return {f"{NAMES[tile]} {point.label} {value}" for tile, point, value in line.open_ends()}


def connections(line: Line) -> list[str]:
    return [str(c) for c in line.connections]


CASES = [
    pytest.param(
        [("[1|4]", None, None)], "[1|4]", [], {"[1|4] high end 4", "[1|4] low end 1"}, id="lead [1|4]"
    ),
    pytest.param(
        [("[1|4]", None, None), ("[1|1]", "[1|4]", LOW)],
        "[1|4] [1|1]",
        ["[1|4] low end – [1|1] line A"],
        {"[1|1] line B 1", "[1|4] high end 4"},
        id="[1|1] on the 1",
    ),
    pytest.param(
        [("[1|4]", None, None), ("[1|1]", "[1|4]", LOW), ("[4|4]", "[1|4]", HIGH)],
        "[1|4] [1|1] [4|4]",
        ["[1|4] low end – [1|1] line A", "[1|4] high end – [4|4] line A"],
        {"[1|1] line B 1", "[4|4] line B 4"},
        id="[4|4] on the 4",
    ),
    pytest.param(
        [("[1|4]", None, None), ("[1|1]", "[1|4]", LOW), ("[4|4]", "[1|4]", HIGH), ("[3|4]", "[4|4]", B)],
        "[1|4] [1|1] [4|4] [3|4]",
        ["[1|4] low end – [1|1] line A", "[1|4] high end – [4|4] line A", "[4|4] line B – [3|4] high end"],
        {"[1|1] line B 1", "[3|4] low end 3"},
        id="[3|4] on the 4",
    ),
    pytest.param(
        [("[3|6]", None, None), ("[6|6]", "[3|6]", HIGH)],
        "[3|6] [6|6]",
        ["[3|6] high end – [6|6] line A"],
        {"[3|6] low end 3", "[6|6] line B 6"},
        id="lead [3|6] then [6|6]",
    ),
    pytest.param([("[0|0]", None, None)], "[0|0]", [], {"[0|0] line A 0", "[0|0] line B 0"}, id="lead [0|0]"),
    pytest.param([("[2|2]", None, None)], "[2|2]", [], {"[2|2] line A 2", "[2|2] line B 2"}, id="lead [2|2]"),
]


@pytest.mark.parametrize("moves, played, expected_connections, expected_open", CASES)
def test_worked_example(moves, played, expected_connections, expected_open) -> None:
    line = play(*moves)
    assert " ".join(NAMES[x] for x in line.tiles) == played
    assert connections(line) == expected_connections
    assert open_points(line) == expected_open
    assert len(line.open_ends()) == 2


def test_line_order_left_to_right() -> None:
    line = play(("[1|4]", None, None), ("[1|1]", "[1|4]", LOW), ("[4|4]", "[1|4]", HIGH), ("[3|4]", "[4|4]", B))
    assert [NAMES[x] for x in line.in_line_order()] == ["[1|1]", "[1|4]", "[4|4]", "[3|4]"]


def test_a_tile_that_does_not_match_is_refused() -> None:
    line = play(("[1|4]", None, None))
    with pytest.raises(RulesError, match=r"\[2\|3\] does not match 4"):
        line.place(t("[2|3]"), t("[1|4]"), HIGH)
    with pytest.raises(RulesError, match="not an open end"):
        line.place(t("[4|5]"), t("[1|4]"), A)
