"""Tiles and sets, as small ints with precomputed tables.

A tile ``[a|b]`` (``a <= b``) has the id ``b * (b + 1) // 2 + a``. With that numbering a double-N set is exactly
the ids ``0 .. (N+1)(N+2)/2 - 1``, so every set is a prefix of the double-18 set and one table serves them all.
Hands are bit masks over these ids: "the tiles of this hand that show value v" is one ``&`` with
:data:`VALUE_MASK`, which is what keeps the legal-move generator fast.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from arena.rules.errors import RulesError

MAX_DOUBLE = 18
"""The largest set the arena knows: double-18, 190 tiles."""

SUPPORTED_SETS = (6, 9, 12, 15, 18)


def tile_id(a: int, b: int) -> int:
    """The id of the tile showing ``a`` and ``b`` (in either order)."""
    if a > b:
        a, b = b, a
    if a < 0 or b > MAX_DOUBLE:
        raise RulesError(f"expected tile values between 0 and {MAX_DOUBLE}, got [{a}|{b}]")
    return b * (b + 1) // 2 + a


def set_size(double: int) -> int:
    """How many tiles a double-N set holds: (N+1)(N+2)/2."""
    return (double + 1) * (double + 2) // 2


_COUNT = set_size(MAX_DOUBLE)
LOW: tuple[int, ...] = tuple(a for b in range(MAX_DOUBLE + 1) for a in range(b + 1))
"""The smaller value of each tile id."""
HIGH: tuple[int, ...] = tuple(b for b in range(MAX_DOUBLE + 1) for a in range(b + 1))
"""The larger value of each tile id."""
PIPS: tuple[int, ...] = tuple(LOW[t] + HIGH[t] for t in range(_COUNT))
IS_DOUBLE: tuple[bool, ...] = tuple(LOW[t] == HIGH[t] for t in range(_COUNT))
DOUBLE_OF: tuple[int, ...] = tuple(tile_id(v, v) for v in range(MAX_DOUBLE + 1))
"""The id of the double ``[v|v]`` for each value v."""
VALUE_MASK: tuple[int, ...] = tuple(
    sum(1 << t for t in range(_COUNT) if LOW[t] == v or HIGH[t] == v) for v in range(MAX_DOUBLE + 1)
)
"""For each value v, the bit mask of every tile (of the double-18 set) that shows v on either half."""
NAMES: tuple[str, ...] = tuple(f"[{LOW[t]}|{HIGH[t]}]" for t in range(_COUNT))


def other_value(tile: int, value: int) -> int:
    """The value on the half of ``tile`` that does not touch ``value`` (the tile must show ``value``)."""
    low = LOW[tile]
    return HIGH[tile] if low == value else low


def tile_name(tile: int) -> str:
    """``[a|b]`` for a tile id."""
    return NAMES[tile]


_TILE_RE = re.compile(r"^\s*\[?\s*(\d+)\s*[|,:\-]\s*(\d+)\s*\]?\s*$")


def parse_tile(text: str) -> int:
    """The tile id of a text like ``[3|5]`` (also ``3|5``, ``[5|3]``)."""
    match = _TILE_RE.match(text)
    if not match:
        raise RulesError(f"expected a tile like [3|5], got {text!r}")
    return tile_id(int(match.group(1)), int(match.group(2)))


def full_set(double: int) -> list[int]:
    """Every tile id of the double-N set, in id order."""
    if double not in SUPPORTED_SETS:
        raise RulesError(f"expected a set among double-{', double-'.join(map(str, SUPPORTED_SETS))}, got double-{double}")
    return list(range(set_size(double)))


def mask_of(tiles: Iterable[int]) -> int:
    """The bit mask holding the given tile ids."""
    mask = 0
    for t in tiles:
        mask |= 1 << t
    return mask


def tiles_of(mask: int) -> list[int]:
    """The tile ids in a bit mask, lowest id first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def iter_tiles(mask: int) -> Iterator[int]:
    """Iterate the tile ids in a bit mask, lowest id first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def mask_pips(mask: int, table: tuple[int, ...] = PIPS) -> int:
    """The pip total of the tiles in a mask (``table`` lets Mexican Train count [0|0] as 50)."""
    total = 0
    while mask:
        low = mask & -mask
        total += table[low.bit_length() - 1]
        mask ^= low
    return total
