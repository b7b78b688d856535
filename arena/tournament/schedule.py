"""The schedule: a lazy iterator of games with a known total, so a 100,000-game tournament starts at once and runs in
flat memory.

Tables of a round robin (``ROUND_ROBIN``): 2-player variants play every pair of entrants; k-player variants every
k-combination (with fewer entrants than seats, one table where the entrants fill the seats in turn); team variants
pair entrants as teams, each entrant holding both seats of its side (seats 0+2 against 1+3), each seat with its own
bot process.

Tables of a gauntlet (``GAUNTLET``, the candidates named): every table has a candidate, and the other entrants never
meet without one. Two-sided variants (2 players, or teams) pair each candidate with every other entrant, candidates
included (each such pair once); k-player variants seat one candidate with every (k-1)-combination of the
non-candidates, or, with fewer non-candidates than k-1, with the non-candidates filling the other seats in turn (a
candidate against one baseline holding the three other seats of a Mexican Train table).

Tables of a balanced schedule (``BALANCED``, a number of tables named): that many tables drawn from the master seed so
that every entrant plays as often as every other (within one table), every pair meets about as often, and every
entrant holds every seat about as often (``balanced.py``); two-sided variants draw pairs of entrants. It needs at least
as many entrants as a table has sides.

Entrants kept apart (``apart``: groups of entrants, each group a *house*): no table of a round robin or a balanced
schedule seats two entrants of one house (a league keeps the versions of one author apart so that they cannot share
what they see). A round robin plays every table with at most one entrant of each house; a balanced schedule draws
only such tables (``balanced.py``). Both need at least as many houses (the groups, and every entrant in none) as a
table has sides; a gauntlet takes no groups.

Seat rotations: with duplicate deals, every deal set is played under every rotation of the table (k rotations for k
seats; the teams swapped for team games), all with the same match seed, so each entrant plays each hand. Without,
each game has its own seed and the rotation cycles from game to game. A game's seed is derived from the master seed
and its table and deal set, never from its position in the order: ``"<master>/<table>/<deal set>"``.

Order (``INTERLEAVED``, every new run): deal set 0 of every table, then deal set 1 of every table, and so on, the
rotations of one deal set next to each other. Every pairing has then played about as many games as every other at any
moment, so the leaders of a run cut short (or of the progress line) mean something. This is the order of the games'
indices; with duplicate deals a run plays them in phases (:mod:`.phases`): a block of these deal sets under one
rotation, then under the next, so that no process that saw a deal is alive while it is played from another seat. ``BY_TABLE`` (every deal set of table 0,
then of table 1, ...) is the order of runs started before, kept so that they resume with their own game indices: the
run folder says which order it was started with (see ``runner.py``, ``entrants.json``).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from arena.records.schema import Record
from arena.rules import Game
from arena.tournament.balanced import draw_tables

INTERLEAVED = "interleaved"
"""Deal set g of every table before deal set g + 1 of any (every run started by this version)."""
BY_TABLE = "by_table"
"""Every deal set of a table before the next table (runs started before the interleaved order existed)."""
ORDERS = (INTERLEAVED, BY_TABLE)
ROUND_ROBIN = "round_robin"
GAUNTLET = "gauntlet"
BALANCED = "balanced"
SCHEDULED_FORMATS = (ROUND_ROBIN, GAUNTLET, BALANCED)
"""The formats whose every game is known before the first is played (:class:`Schedule`)."""
SWISS = "swiss"
KNOCKOUT = "knockout"
EVENT_FORMATS = (SWISS, KNOCKOUT)
"""The formats played in waves, each wave's matches decided by the results before it (:mod:`.rounds`)."""
FORMATS = (*SCHEDULED_FORMATS, *EVENT_FORMATS)


def seat_rotations(game: Game) -> int:
    """The rotations of a table's seats: the two teams swapped, or every seat's turn at each position."""
    return 2 if game.teams else game.players


@dataclass(frozen=True)
class ScheduledGame:
    index: int
    seats: tuple[int, ...]
    """Entrant index per seat."""
    seed: str
    deal_key: str
    """Games with the same deal key play the same deals (a duplicate deal set)."""
    rotation: int
    lane: int = 0
    """Which of each entrant's process lanes plays it: set when the game is handed out (:mod:`.phases`), so that no
    process that saw its deal under another rotation is alive while it is played."""


PROCESS_LANES = 2
"""An entrant's processes per seat with duplicate deals: a block of deal sets under one rotation is played by one
lane while the previous block finishes under another (:mod:`.phases`); one lane without duplicate deals."""


class Schedule:
    """Every game of the tournament, generated on demand."""

    first_index = 0
    """The index of its first game (a wave of a Swiss or knockout event starts after the waves before it)."""

    def __init__(self, entrants: int, game: Game, games: int, duplicate: bool, master_seed: str,
                 order: str = INTERLEAVED, candidates: tuple[int, ...] = (), tables: int = 0,
                 apart: tuple[tuple[int, ...], ...] = ()) -> None:
        """``candidates``: the entrant indices of a gauntlet's candidates; none for a round robin. ``tables``: the
        tables of a balanced schedule; 0 for a round robin or a gauntlet. ``apart``: groups of entrant indices that
        never share a table (not with a gauntlet)."""
        if order not in ORDERS:
            raise ValueError(f"expected a schedule order among {', '.join(ORDERS)}, got {order!r}")
        if any(not 0 <= c < entrants for c in candidates) or len(set(candidates)) != len(candidates):
            raise ValueError(f"expected distinct candidates among entrants 0..{entrants - 1}, got {candidates!r}")
        self.order = order
        self.candidates = tuple(sorted(candidates))
        self.others = tuple(e for e in range(entrants) if e not in self.candidates)
        if self.candidates and not self.others:
            raise ValueError(f"expected a gauntlet with an entrant that is not a candidate, got candidates "
                             f"{candidates!r} of {entrants} entrants")
        self.entrants = entrants
        self.seats = game.players
        self.teams = game.teams
        self._rotations = seat_rotations(game)
        self.balanced_tables = tables
        if tables and (tables < 0 or self.candidates or entrants < self.sides):
            raise ValueError(f"expected a balanced schedule of at least one table, without candidates, and at least "
                             f"{self.sides} entrants, got {tables} tables, candidates {candidates!r} and {entrants} "
                             f"entrants")
        self.games = games
        self.duplicate = duplicate
        self.master_seed = master_seed
        self.apart = tuple(tuple(group) for group in apart)
        self.houses = _houses(entrants, self.apart)
        """Each entrant's house: its group's number, or one of its own."""
        if self.apart and (self.candidates or len(set(self.houses)) < self.sides):
            raise ValueError(f"expected groups kept apart without candidates and at least {self.sides} houses (a "
                             f"table's sides), got candidates {candidates!r} and {len(set(self.houses))} houses")

    @property
    def format(self) -> str:
        if self.balanced_tables:
            return BALANCED
        return GAUNTLET if self.candidates else ROUND_ROBIN

    @property
    def two_sided(self) -> bool:
        """Two sides at a table: two players, or two teams (a table is then a pair of entrants)."""
        return self.teams or self.seats == 2

    @property
    def sides(self) -> int:
        """The sides of a table: two when two-sided (each team one side), else one per seat."""
        return 2 if self.two_sided else self.seats

    def tables(self) -> Iterator[tuple[int, ...]]:
        """The seat layout (entrant per seat) of each table, before rotation."""
        if self.balanced_tables:
            for sides in self._balanced_layouts:
                yield (*sides, *sides) if self.teams else sides
            return
        for pair in self._pairs():
            yield (*pair, *pair) if self.teams else pair
        if self.two_sided:
            return
        if not self.candidates:
            if self.entrants >= self.seats:
                yield from filter(self._houses_apart, itertools.combinations(range(self.entrants), self.seats))
            else:
                yield _filled(range(self.entrants), self.seats)
            return
        for candidate in self.candidates:
            if len(self.others) >= self.seats - 1:
                for rest in itertools.combinations(self.others, self.seats - 1):
                    yield (candidate, *rest)
            else:
                yield (candidate, *_filled(self.others, self.seats - 1))

    def _pairs(self) -> Iterator[tuple[int, int]]:
        """The pairs of entrants that meet, for a two-sided variant (none otherwise): every pair in a round robin,
        every pair with a candidate in a gauntlet."""
        if not self.two_sided:
            return
        for a, b in itertools.combinations(range(self.entrants), 2):
            if (not self.candidates or a in self.candidates or b in self.candidates) and self._houses_apart((a, b)):
                yield (a, b)

    def _houses_apart(self, table: tuple[int, ...]) -> bool:
        """Whether the table's entrants are of distinct houses (always, without groups kept apart)."""
        return not self.apart or len({self.houses[e] for e in table}) == len(table)

    @functools.cached_property
    def _balanced_layouts(self) -> list[tuple[int, ...]]:
        """A balanced schedule's tables (entrant per side), drawn once from the master seed: only the deal sets
        beyond whole cycles of rotations (none with duplicate deals) favour a side, so those are what the drawing
        balances seats over."""
        extra = 0 if self.duplicate else self.games % self.rotations
        return draw_tables(self.entrants, self.sides, self.balanced_tables, self.master_seed, extra,
                           self.houses if self.apart else ())

    def table_count(self) -> int:
        if self.balanced_tables:
            return self.balanced_tables
        n, k = self.entrants, self.seats
        if self.apart:  # a round robin (no gauntlet has groups): a table takes at most one entrant of each house
            return _tables_of_houses([self.houses.count(h) for h in set(self.houses)], self.sides)
        if self.two_sided:
            return math.comb(n, 2) - (math.comb(len(self.others), 2) if self.candidates else 0)
        if not self.candidates:
            return math.comb(n, k) if n >= k else 1
        return len(self.candidates) * (math.comb(len(self.others), k - 1) if len(self.others) >= k - 1 else 1)

    @property
    def rotations(self) -> int:
        return self._rotations

    @property
    def group_size(self) -> int:
        """Games per deal set: every rotation with duplicate deals, else one."""
        return self.rotations if self.duplicate else 1

    def deal_sets(self) -> int:
        """Deal sets in the whole schedule (each ``group_size`` games)."""
        return self.table_count() * self.games

    @property
    def lanes(self) -> int:
        """Process lanes the run's entrants need per seat (:data:`PROCESS_LANES` with duplicate deals, else one)."""
        return PROCESS_LANES if self.group_size > 1 else 1

    def total(self) -> int:
        """Games in the whole schedule (an int of any size; ``len`` needs it to fit a machine word)."""
        return self.table_count() * self.games * self.group_size

    def __len__(self) -> int:
        return self.total()

    def rotate(self, table: tuple[int, ...], rotation: int) -> tuple[int, ...]:
        if self.teams:
            a, b = table[0], table[1]
            return (a, b, a, b) if rotation % 2 == 0 else (b, a, b, a)
        n = len(table)
        return tuple(table[(s + rotation) % n] for s in range(n))

    def __iter__(self) -> Iterator[ScheduledGame]:
        index = 0
        for t, table, g in self._deal_sets():
            rotations = range(self.rotations) if self.duplicate else [g % self.rotations]
            for r in rotations:
                yield self._scheduled(index, t, table, g, r)
                index += 1

    def game_at(self, index: int) -> ScheduledGame:
        """The game at ``index``, without walking the schedule: what resume checks each recorded game against.
        The tables are listed on first use and kept (a few per entrant, never per game)."""
        if not 0 <= index < self.total():
            raise IndexError(f"expected a game index from 0 to {self.total() - 1}, got {index}")
        deal_set, within = divmod(index, self.group_size)
        tables = self._table_list
        if self.order == BY_TABLE:
            t, g = divmod(deal_set, self.games)
        else:
            g, t = divmod(deal_set, len(tables))
        return self._scheduled(index, t, tables[t], g, within if self.duplicate else g % self.rotations)

    @functools.cached_property
    def _table_list(self) -> list[tuple[int, ...]]:
        return list(self.tables())

    def _scheduled(self, index: int, t: int, table: tuple[int, ...], g: int, rotation: int) -> ScheduledGame:
        """Game ``index``: deal set ``g`` of table number ``t`` under ``rotation``."""
        return ScheduledGame(index, self.rotate(table, rotation), f"{self.master_seed}/{t}/{g}", f"{t}/{g}", rotation)

    def _deal_sets(self) -> Iterator[tuple[int, tuple[int, ...], int]]:
        """(table number, seat layout, deal set) in the schedule's order; the tables are generated again for each
        deal set rather than kept, so memory stays flat however many tables there are."""
        if self.order == BY_TABLE:
            for t, table in enumerate(self.tables()):
                for g in range(self.games):
                    yield t, table, g
            return
        for g in range(self.games):
            for t, table in enumerate(self.tables()):
                yield t, table, g

    def balance(self) -> dict[str, dict[str, int]]:
        """How evenly the schedule spreads its tables: the fewest and most tables per entrant, meetings per pair of
        entrants (every pair, those that never meet included) and games per entrant in each seat (per side for team
        variants), each with its spread (most minus fewest). What the balanced schedule is measured by; walks every
        game, so it is for tests and ``arena bench schedule``, not for a run."""
        tables = [0] * self.entrants
        meetings: dict[tuple[int, int], int] = dict.fromkeys(itertools.combinations(range(self.entrants), 2), 0)
        for table in self.tables():
            present = sorted(set(table))
            for entrant in present:
                tables[entrant] += 1
            for pair in itertools.combinations(present, 2):
                meetings[pair] += 1
        sides = 2 if self.teams else self.seats
        seats = [[0] * sides for _ in range(self.entrants)]
        for scheduled in self:
            for seat, entrant in enumerate(scheduled.seats[:sides]):
                seats[entrant][seat] += 1
        return {"tables_per_entrant": _spread(tables), "meetings_per_pair": _spread(list(meetings.values())),
                "games_per_entrant_and_seat": _spread([count for row in seats for count in row])}

    def seats_per_entrant(self) -> int:
        """The most seats one entrant holds at one table (each seat has a bot process of its own)."""
        if self.teams:
            return 2
        if self.two_sided or self.balanced_tables:
            return 1
        if self.candidates:
            return max(1, math.ceil((self.seats - 1) / len(self.others))) if self.others else 1
        if self.entrants >= self.seats:
            return 1
        return math.ceil(self.seats / self.entrants)

    def processes_per_entrant(self) -> int:
        """Bot processes an entrant may run at once: one per seat it holds at a table, in each lane (with duplicate
        deals, a lane's processes are started afresh for every block of deal sets under one rotation, so that no
        process that saw a deal is alive while it is played from another seat: :mod:`.phases`)."""
        return self.seats_per_entrant() * self.lanes

    def process_for(self, scheduled: ScheduledGame, occurrence: int) -> int:
        """Which of an entrant's processes plays its ``occurrence``-th seat in ``scheduled``: those of its lane."""
        return scheduled.lane * self.seats_per_entrant() + occurrence


def schedule_misfit(record: Record, scheduled: ScheduledGame, names: Sequence[str]) -> str | None:
    """How a well-formed record differs from the game the schedule has at its index (its seats, seed, deal set or
    rotation), or None. Such a line was not written by this run for this game (copied in, edited, or from a run of
    another file), so counting it would put another game's result in the standings in place of this one."""
    seats = [names[e] for e in scheduled.seats]
    facts = [("seats", record.get("seats", []), seats), ("seed", record.get("seed", ""), scheduled.seed),
             ("deal set", record.get("dealKey", ""), scheduled.deal_key),
             ("rotation", record.get("rotation", 0), scheduled.rotation)]
    for what, recorded, expected in facts:
        if recorded != expected:
            return f"its {what} {_brief(recorded)}, the schedule's {_brief(expected)}"
    return None


def _brief(value: Any) -> str:
    """A recorded value in a warning: as JSON (control characters escaped), cut at 80 characters."""
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:80] + "…"


def _filled(entrants: Iterable[int], seats: int) -> tuple[int, ...]:
    """``seats`` seats filled by the entrants in turn (0, 1, 2, 0, 1, ...), when there are fewer entrants than seats."""
    pool = tuple(entrants)
    return tuple(pool[s % len(pool)] for s in range(seats))


def _houses(entrants: int, apart: tuple[tuple[int, ...], ...]) -> list[int]:
    """Each entrant's house: the number of its group in ``apart``, or a number of its own; refuses an entrant out of
    range, in two groups or twice in one, and a group of fewer than two."""
    houses = list(range(len(apart), len(apart) + entrants))
    for number, group in enumerate(apart):
        if len(group) < 2 or any(not 0 <= e < entrants or houses[e] < len(apart) for e in group) \
                or len(set(group)) != len(group):
            raise ValueError(f"expected groups of two or more distinct entrants among 0..{entrants - 1}, each "
                             f"entrant in one group at most, got {apart!r}")
        for e in group:
            houses[e] = number
    return houses


def _tables_of_houses(sizes: list[int], sides: int) -> int:
    """The tables of ``sides`` entrants, at most one of each house, of houses of these sizes: the elementary
    symmetric polynomial of degree ``sides`` of the sizes (``comb(n, sides)`` when every house has one entrant)."""
    ways = [1] + [0] * sides  # ways[j]: choices of j entrants from the houses seen so far
    for size in sizes:
        for j in range(sides, 0, -1):
            ways[j] += ways[j - 1] * size
    return ways[sides]


def _spread(counts: list[int]) -> dict[str, int]:
    return {"min": min(counts), "max": max(counts), "spread": max(counts) - min(counts)}
