"""Balanced schedules: a given number of tables drawn from many entrants so that every entrant plays about as often,
every pair of entrants meets about as often, and every entrant sits in every seat about as often.

A k-player round robin plays every k-combination (20 entrants at 6 seats: 38,760 tables); a balanced schedule plays
as many tables as the file asks. The tables are drawn greedily, one after the other:

- **Who plays**: every entrant's table count stays within one of every other's after every table (the entrants
  with the fewest tables so far are seated first; the others are taken from the next count up only when too few
  are left), so any prefix of the tables is as fair as the whole.
- **Who meets whom**: among the entrants allowed at a table, each next one is the one that has met the already
  seated ones least (which keeps the pair meetings' spread small: the sum of squares of the meeting counts grows
  least).
- **Who never meets at a table**: entrants may be grouped in *houses* (a league puts the versions of one author in
  one); no table seats two entrants of one house. An entrant of a house already seated is passed over, and when
  every entrant at the fewest tables is, the table is topped up from the next counts up, fewest first. A house of
  several entrants then shares the seats its one place a table gives it, so its entrants play less often than the
  others: the counts stay within one only where the houses allow it. Without houses (every entrant a house of its
  own) the drawing is the same as it always was.
- **Who sits where**: the seated entrants are then placed on the table's positions so that each gets the seats it
  has held least. With duplicate deals every deal set is played under every rotation, so every position plays every
  seat and the placement changes nothing; without, game g of a table plays rotation g, so only the deal sets beyond
  whole cycles of rotations favour a position, and the placement balances those.

Ties are broken by a pseudo-random key derived from the master seed with SHA-256 and SplitMix64, both fixed
algorithms (never Python's ``random``, whose sequences may change with the interpreter), so a resumed run draws the
same tables. ``VERSION`` names the drawing; a run started with another could not be resumed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

VERSION = 1
"""The drawing's version: a change to how tables are drawn must change it (the tables of a run are derived again
from its seed when it is resumed)."""
_MASK = (1 << 64) - 1


class _Keys:
    """SplitMix64 keyed by SHA-256 of a text: a stream of 64-bit tie-breaking keys, the same on every machine."""

    def __init__(self, seed: str) -> None:
        self.state = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)


@dataclass
class _Tally:
    """What the tables drawn so far gave each entrant: tables, meetings with each other entrant, seats held."""

    tables: list[int]
    meetings: list[list[int]]
    seats: list[list[int]]

    @classmethod
    def empty(cls, entrants: int, size: int) -> _Tally:
        return cls([0] * entrants, [[0] * entrants for _ in range(entrants)], [[0] * size for _ in range(entrants)])


def draw_tables(entrants: int, size: int, tables: int, seed: str, extra_seats: int = 0,
                houses: Sequence[int] = ()) -> list[tuple[int, ...]]:
    """``tables`` layouts of ``size`` distinct entrants each (entrant per position), drawn under ``seed``.

    ``extra_seats`` is how many rotations of a table beyond whole cycles its games play (the deal sets per table
    modulo the rotations without duplicate deals; 0 with them): position p then also plays the seats p, p - 1, ...
    (modulo ``size``) that many times, and the placement balances those seats. ``houses``: each entrant's house
    (any number; empty: every entrant a house of its own); no table seats two entrants of one house."""
    house = list(houses) or list(range(entrants))
    if len(house) != entrants:
        raise ValueError(f"expected a house for each of the {entrants} entrants, got {len(house)}")
    if not 2 <= size <= len(set(house)):
        of_houses = f" ({entrants} entrants in {len(set(house))} houses, one a table)" if houses else ""
        raise ValueError(f"expected a table of 2 to {len(set(house))} entrants, got {size}{of_houses}")
    tally = _Tally.empty(entrants, size)
    keys = _Keys(f"{seed}/balanced/v{VERSION}")
    drawn = []
    for _ in range(tables):
        key = [keys.next() for _ in range(entrants)]
        chosen = _choose(tally, size, key, house)
        layout = _place(tally, chosen, extra_seats, key)
        _count(tally, layout, extra_seats)
        drawn.append(layout)
    return drawn


def _choose(tally: _Tally, size: int, key: list[int], house: list[int]) -> list[int]:
    """The entrants of the next table: every entrant at the fewest tables while there are enough of them (and of
    distinct houses), topped up from the next counts, fewest first; each next pick the allowed entrant that has met
    the already chosen ones least. An entrant whose house is seated is not allowed."""
    fewest = min(tally.tables)
    low = [e for e, count in enumerate(tally.tables) if count == fewest]
    if len(low) <= size and len({house[e] for e in low}) == len(low):
        chosen = low
    else:
        chosen = [min(low, key=lambda e: key[e])]
    seated = {house[e] for e in chosen}
    pool = [e for e in range(len(house)) if e not in chosen and house[e] not in seated]
    cost = {e: sum(tally.meetings[c][e] for c in chosen) for e in pool}
    while len(chosen) < size:
        best = min(pool, key=lambda e: (tally.tables[e], cost[e], key[e]))
        chosen.append(best)
        pool = [e for e in pool if house[e] != house[best]]
        row = tally.meetings[best]
        for e in pool:
            cost[e] += row[e]
    return chosen


def _seats_of(position: int, size: int, extra_seats: int) -> list[int]:
    """The seats position ``position`` plays in a table's rotations beyond whole cycles (rotation r puts the entrant
    of position p in seat p - r, see :meth:`Schedule.rotate`)."""
    return [(position - r) % size for r in range(extra_seats)]


def _place(tally: _Tally, chosen: list[int], extra_seats: int, key: list[int]) -> tuple[int, ...]:
    """The chosen entrants on the table's positions, each (entrant, position) pair taken greedily where the entrant
    has held the position's seats least; in the order chosen when every position plays every seat alike."""
    size = len(chosen)
    if extra_seats == 0:
        return tuple(chosen)
    seats = [_seats_of(p, size, extra_seats) for p in range(size)]
    held = {e: [sum(tally.seats[e][s] for s in seats[p]) for p in range(size)] for e in chosen}
    layout: list[int] = [-1] * size
    free_entrants, free_positions = list(chosen), list(range(size))
    while free_entrants:
        _, _, e, p = min((held[e][p], (key[e] >> p) & 0xFFFF, e, p) for e in free_entrants for p in free_positions)
        layout[p] = e
        free_entrants.remove(e)
        free_positions.remove(p)
    return tuple(layout)


def _count(tally: _Tally, layout: tuple[int, ...], extra_seats: int) -> None:
    """Add a drawn table to the tally."""
    size = len(layout)
    for position, e in enumerate(layout):
        tally.tables[e] += 1
        for other in layout:
            if other != e:
                tally.meetings[e][other] += 1
        for seat in _seats_of(position, size, extra_seats):
            tally.seats[e][seat] += 1
