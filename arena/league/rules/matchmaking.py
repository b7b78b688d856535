"""The league's matchmaker, pure: the ready versions' state in, the next tables out, each with the one-line reason
the visible queue shows. No database, no processes, no clock: the caller counts the deal sets (a table plays one
deal set under every seat rotation) and passes what it counted.

The rules, in order:

1. **Placement first**: a version whose placement is not done anchors a table before any placed version does (its
   opponents are those closest to the middle of the placed field, where a first result says the most).
2. **Coverage**: the next anchor is the version with the fewest deal sets in the recent window (the last hour),
   counting the tables this call already gave it; ties go to the widest uncertainty (sigma), then to the id. So the
   versions below the coverage target play first, the top ones included, and with too little concurrency for the
   target every version gets an even share of what there is.
3. **Opponents close in rating, not the same ones again, not the busiest**: an anchor's opponents are the versions
   that minimise ``|mu - anchor's mu| + pairing_penalty x (recent meetings with the anchor and the opponents already
   chosen) + load_penalty x (recent deal sets beyond the anchor's)``.
4. **An even share within a call**: no version takes more than its share of the call's seats
   (``ceil(tables x sides / versions)``, at least one table), so a call never gives one version all the free slots.

A table seats distinct versions: with fewer ready versions than a table has sides there is no table (the plan says
it is waiting for versions). Two-sided variants (two players, or two teams with one version per team) have two
sides; a k-player variant has k.

**One author, one seat** (``authors_apart``, the league's unless its file sets ``same_author_tables = true``): at a
table of three or more sides two versions of one author could play as partners against the others, so no table
seats two versions of one author: an anchor's opponents are of other authors than its own and than each other's.
With fewer authors than a table has sides there is no table (the plan says it is waiting for authors). Two-sided
tables are not concerned (the caller sets ``authors_apart`` only for three or more sides): there one author's
versions meet head to head, which is how a new version is measured against an old one.
"""

from __future__ import annotations

import bisect
import heapq
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

PLACEMENT = "placement"


@dataclass(frozen=True)
class VersionState:
    """What the matchmaker knows of one active ready version."""

    id: str
    mu: float
    """Its online rating (OpenSkill's mu), as the caller has it."""
    sigma: float
    """Its rating's uncertainty."""
    recent: int = 0
    """Deal sets it played (or is playing) in the recent window."""
    total: int = 0
    """Deal sets it played in all."""
    placed: bool = True
    """Whether its placement games are done."""
    recent_opponents: Mapping[str, int] = field(default_factory=dict)
    """Deal sets against each other version (by id) in the recent window."""
    author: str | None = None
    """Its author (None: an author of its own), so that one author's versions can be kept apart."""


@dataclass(frozen=True)
class Table:
    """One table to play: the versions per side (the anchor first) and why it was chosen."""

    versions: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Plan:
    """The tables chosen, in the order to start them, and a note when fewer than asked could be made."""

    tables: tuple[Table, ...]
    note: str = ""


@dataclass(frozen=True)
class MatchmakingRules:
    """The league's matchmaking settings."""

    sides: int = 2
    """Versions per table: 2 for two players or two teams, k for a k-player variant."""
    coverage: int = 4
    """The deal sets per hour every version should play (the reason says when a table is for this)."""
    pairing_penalty: float = 3.0
    """Rating points one recent meeting costs a pairing (OpenSkill's scale: a new version's sigma is 8.3)."""
    load_penalty: float = 1.0
    """Rating points an opponent costs per recent deal set it has played beyond the anchor's (so the versions in
    the crowded middle of the ratings are not everyone's opponent)."""
    authors_apart: bool = False
    """Whether a table seats at most one version of each author (set for three or more sides, unless the league
    allows one author's versions at one table)."""

    def __post_init__(self) -> None:
        if self.sides < 2 or self.coverage < 0 or min(self.pairing_penalty, self.load_penalty) < 0:
            raise ValueError(f"expected at least 2 sides, a coverage of 0 or more and penalties of 0 or more, got "
                             f"{self.sides}, {self.coverage}, {self.pairing_penalty} and {self.load_penalty}")


def choose_tables(versions: Sequence[VersionState], free: int, rules: MatchmakingRules = MatchmakingRules()
                  ) -> Plan:
    """The next ``free`` tables (fewer when the versions cannot fill them) for the ``versions`` (active and ready,
    each id once)."""
    if len({v.id for v in versions}) != len(versions):
        raise ValueError("expected each version once")
    if free <= 0:
        return Plan(())
    if len(versions) < rules.sides:
        return Plan((), f"waiting for versions: {len(versions)} ready, a table seats {rules.sides}")
    authors = len({author_of(v) for v in versions}) if rules.authors_apart else len(versions)
    if authors < rules.sides:
        return Plan((), f"waiting for authors: {len(versions)} versions ready of {authors} authors, and a table "
                        f"seats {rules.sides} versions of {rules.sides} different authors")
    return _Round(versions, free, rules).plan()


def author_of(version: VersionState) -> str:
    """The version's author, or (none given) a name of its own that no author's can equal."""
    return version.author if version.author is not None else f"\0{version.id}"


class _Round:
    """One call's bookkeeping: the versions by rating, what this call has given each, and the anchors' queue."""

    def __init__(self, versions: Sequence[VersionState], free: int, rules: MatchmakingRules) -> None:
        self.rules, self.free = rules, free
        self.versions = {v.id: v for v in versions}
        self.by_mu = sorted(versions, key=operator.attrgetter("mu", "id"))
        self.mus = [v.mu for v in self.by_mu]
        self.cap = max(1, math.ceil(free * rules.sides / len(versions)))
        self.given: dict[str, int] = dict.fromkeys(self.versions, 0)
        self.met: dict[tuple[str, str], int] = {}
        placed = [v.mu for v in self.by_mu if v.placed]
        self.middle = placed[len(placed) // 2] if placed else self.mus[len(self.mus) // 2]
        self.queue = [((v.placed, v.recent, -v.sigma, v.id), v.id) for v in versions]  # _key, nothing given yet
        heapq.heapify(self.queue)

    def _key(self, v: VersionState) -> tuple[bool, int, float, str]:
        return (v.placed, self._played(v), -v.sigma, v.id)

    def plan(self) -> Plan:
        tables: list[Table] = []
        while len(tables) < self.free and self.queue:
            key, vid = heapq.heappop(self.queue)
            anchor = self.versions[vid]
            if self.given[vid] >= self.cap:
                continue
            if key != self._key(anchor):  # its count changed since it was queued: queue it again as it is now
                heapq.heappush(self.queue, (self._key(anchor), vid))
                continue
            opponents = self._opponents(anchor)
            if opponents is None:
                continue  # too few versions with seats left near it: it waits for the next call
            tables.append(Table((vid, *opponents), self._reason(anchor)))
            self._seat((vid, *opponents))
            if self.given[vid] < self.cap:
                heapq.heappush(self.queue, (self._key(anchor), vid))
        apart = " (one author's versions never share a table)" if self.rules.authors_apart else ""
        note = "" if len(tables) == self.free else (f"{len(tables)} of {self.free} tables: every version has its "
                                                    f"share of this round's seats{apart}")
        return Plan(tuple(tables), note)

    def _reason(self, anchor: VersionState) -> str:
        played = self._played(anchor)
        if not anchor.placed:
            return PLACEMENT
        if played < self.rules.coverage:
            return f"coverage: {played} of {self.rules.coverage} deal sets in the last hour"
        return f"needs games: {played} in the last hour, sigma {anchor.sigma:.2f}"

    def _meetings(self, a: VersionState, b: str) -> int:
        return a.recent_opponents.get(b, 0) + self.met.get((a.id, b), 0)

    def _opponents(self, anchor: VersionState) -> tuple[str, ...] | None:
        """The anchor's opponents: the nearest in rating to its own (or, for placement, to the field's middle) with
        seats left, fewest recent meetings weighing as ``pairing_penalty`` rating points each; with authors apart,
        none of an author already at the table."""
        target = anchor.mu if anchor.placed else self.middle
        wanted = self.rules.sides - 1
        candidates = self._near(target, anchor.id, wanted)
        chosen: list[VersionState] = []
        while len(chosen) < wanted and candidates:
            best = min(candidates, key=lambda v: (*self._with_chosen(anchor, v, target, chosen), v.id))
            chosen.append(best)
            candidates = [v for v in candidates if v is not best and not self._same_author(v, best)]
        return tuple(v.id for v in chosen) if len(chosen) == wanted else None

    def _near(self, target: float, anchor: str, wanted: int) -> list[VersionState]:
        """The cheapest ``4 x wanted`` versions with seats left by their cost against the anchor alone, walking
        outwards in rating from ``target`` until no farther one could beat the ``wanted``-th cheapest so far (a cost
        is never less than ``(0, distance)``; exact for two sides, where the cost is the anchor's alone). With authors
        apart, none of the anchor's author and only the cheapest of each other author (two of one author never sit
        together, so a second one would only crowd a third author out)."""
        anchor_state = self.versions[anchor]
        right = bisect.bisect_left(self.mus, target)
        left = right - 1
        kept: list[tuple[tuple[int, float], str]] = []  # (cost, id), cheapest first
        cheapest: dict[str, tuple[tuple[int, float], str]] = {}  # with authors apart: each author's cheapest
        seen = 0
        while left >= 0 or right < len(self.by_mu):
            if right >= len(self.by_mu) or (left >= 0 and target - self.mus[left] <= self.mus[right] - target):
                v, left = self.by_mu[left], left - 1
            else:
                v, right = self.by_mu[right], right + 1
            if seen >= 2 * wanted and len(kept) >= wanted and kept[wanted - 1][0] < (0, abs(v.mu - target)):
                break
            if v.id == anchor or self.given[v.id] >= self.cap or self._same_author(v, anchor_state):
                continue
            seen += 1
            entry = (self._cost(anchor_state, v, target), v.id)
            if self.rules.authors_apart:
                rival = cheapest.get(author_of(v))
                if rival is not None and rival <= entry:
                    continue
                if rival in kept:
                    kept.remove(rival)
                cheapest[author_of(v)] = entry
            bisect.insort(kept, entry)
            del kept[4 * wanted:]
        return [self.versions[vid] for _, vid in kept]

    def _same_author(self, a: VersionState, b: VersionState) -> bool:
        """Whether two versions may not share a table for their author: one author's, with authors apart."""
        return self.rules.authors_apart and author_of(a) == author_of(b)

    def _played(self, v: VersionState) -> int:
        return v.recent + self.given[v.id]

    def _cost(self, anchor: VersionState, v: VersionState, target: float) -> tuple[int, float]:
        """What seating ``v`` against ``anchor`` costs: first, while the anchor is below the coverage target, the
        deal sets ``v`` played beyond the anchor's (so scarce seats go to the versions with the fewest, and every
        version gets its even share); then its distance in rating from ``target``, its recent meetings with the
        anchor and (softly) its deal sets beyond the anchor's. Never less than ``(0, distance)``."""
        excess = max(0, self._played(v) - self._played(anchor))
        tier = excess if self._played(anchor) < self.rules.coverage else 0
        return tier, (abs(v.mu - target) + self.rules.pairing_penalty * self._meetings(anchor, v.id)
                      + self.rules.load_penalty * excess)

    def _with_chosen(self, anchor: VersionState, v: VersionState, target: float, chosen: list[VersionState]
                     ) -> tuple[int, float]:
        """:meth:`_cost`, plus ``v``'s recent meetings with the opponents already chosen for the table."""
        tier, cost = self._cost(anchor, v, target)
        return tier, cost + self.rules.pairing_penalty * sum(self._meetings(c, v.id) for c in chosen)

    def _seat(self, table: tuple[str, ...]) -> None:
        for vid in table:
            self.given[vid] += 1
            for other in table:
                if other != vid:
                    self.met[(vid, other)] = self.met.get((vid, other), 0) + 1
