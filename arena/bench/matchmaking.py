"""The matchmaker on a simulated ladder (``arena bench matchmaking``, and the tests' simulated hour): versions of
known strength, a concurrency of tables that each take a deal set's time, and :func:`~arena.league.rules.matchmaking.choose_tables`
asked for the next tables each time slots are free. Seeded and without a clock (the simulated time is a number), so
the same arguments give the same ladder; only the seconds spent choosing are measured.

The ratings are inputs here as they are to the matchmaker: each version's mu is its true strength (a converged
rating), its sigma shrinks with the deal sets it has played, and its placement is done after ``PLACEMENT_DEAL_SETS``.
"""

from __future__ import annotations

import heapq
import itertools
import random
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from arena.league.rules.matchmaking import MatchmakingRules, Table, VersionState, choose_tables

HOUR = 3600.0
PLACEMENT_DEAL_SETS = 3
FIRST_SIGMA = 25 / 3


@dataclass
class Ladder:
    """A simulated ladder's state and what it has played."""

    strengths: dict[str, float]
    authors: dict[str, str] = field(default_factory=dict)
    """Each version's author (a version missing here is an author's only one)."""
    window: float = HOUR
    total: Counter[str] = field(default_factory=Counter)
    started: deque[tuple[float, Table]] = field(default_factory=deque)
    """(start time, table) of every table started within the window, oldest first."""
    played: list[tuple[float, Table]] = field(default_factory=list)
    choose_seconds: float = 0.0
    calls: int = 0

    def states(self, now: float) -> list[VersionState]:
        """Every version as the matchmaker sees it at ``now`` (tables started within the window count, those still
        playing included)."""
        while self.started and self.started[0][0] <= now - self.window:
            self.started.popleft()
        recent: Counter[str] = Counter()
        met: dict[str, Counter[str]] = {v: Counter() for v in self.strengths}
        for _, table in self.started:
            for v in table.versions:
                recent[v] += 1
                for other in table.versions:
                    if other != v:
                        met[v][other] += 1
        return [VersionState(v, mu, FIRST_SIGMA / (1 + self.total[v]) ** 0.5, recent[v], self.total[v],
                             self.total[v] >= PLACEMENT_DEAL_SETS, met[v], self.authors.get(v))
                for v, mu in self.strengths.items()]

    def choose(self, now: float, free: int, rules: MatchmakingRules) -> list[Table]:
        states = self.states(now)
        started = time.perf_counter()
        plan = choose_tables(states, free, rules)
        self.choose_seconds += time.perf_counter() - started
        self.calls += 1
        for table in plan.tables:
            self.started.append((now, table))
            self.played.append((now, table))
            for v in table.versions:
                self.total[v] += 1
        return list(plan.tables)


def simulate(versions: int, rules: MatchmakingRules, concurrency: int, deal_set_seconds: float,
             seconds: float = HOUR, seed: int = 1, authors: int = 0) -> Ladder:
    """A ladder of ``versions`` (strengths drawn from the seed, ids ``v000``... in no order of strength) playing for
    ``seconds`` of simulated time; each table takes ``deal_set_seconds`` times a seeded factor from 0.5 to 1.5.
    ``authors``: how many authors share the versions (version i is author ``a<i mod authors>``'s); 0: each version
    an author's only one."""
    rng = random.Random(seed)
    ladder = Ladder({f"v{i:03d}": rng.gauss(25.0, 5.0) for i in range(versions)},
                    {f"v{i:03d}": f"a{i % authors}" for i in range(versions)} if authors else {})
    ends: list[tuple[float, int]] = [(0.0, slot) for slot in range(concurrency)]
    while ends and ends[0][0] < seconds:
        now = ends[0][0]
        free = []
        while ends and ends[0][0] == now:
            free.append(heapq.heappop(ends)[1])
        tables = ladder.choose(now, len(free), rules)
        for slot, _ in zip(free, tables, strict=False):  # fewer tables than free slots: the rest wait, below
            heapq.heappush(ends, (now + deal_set_seconds * rng.uniform(0.5, 1.5), slot))
        for slot in free[len(tables):]:  # no table for it now: ask again when the next table ends
            later = ends[0][0] if ends else seconds
            heapq.heappush(ends, (later if later > now else now + deal_set_seconds, slot))
    return ladder


def summary(ladder: Ladder, rules: MatchmakingRules) -> dict[str, Any]:
    """What the ladder played: deal sets per version (fewest, most), how often the two strongest met, the reasons,
    and how often pairings repeated."""
    per_version = Counter({v: 0 for v in ladder.strengths})
    pairs: Counter[tuple[str, ...]] = Counter()
    for _, table in ladder.played:
        per_version.update(table.versions)
        pairs.update(itertools.combinations(sorted(table.versions), 2))
    top = sorted(ladder.strengths, key=ladder.strengths.__getitem__, reverse=True)[:2]
    reasons = Counter(table.reason.split(":")[0] for _, table in ladder.played)
    return {
        "versions": len(ladder.strengths), "sides": rules.sides, "tables": len(ladder.played),
        "deal_sets_per_version": {"min": min(per_version.values()), "max": max(per_version.values())},
        "top_two_met": pairs[tuple(sorted(top))],
        "pairings": {"distinct": len(pairs), "meetings": sum(pairs.values()),
                     "most_of_one_pair": max(pairs.values(), default=0)},
        "reasons": dict(sorted(reasons.items())),
    }


def bench_matchmaking(versions: int = 1000, concurrency: int = 16, deal_set_seconds: float = 60.0,
                      seconds: float = HOUR, sides: tuple[int, ...] = (2, 8), seed: int = 1) -> list[dict[str, Any]]:
    """Decisions (tables chosen) per second of the matchmaker on a simulated ladder of ``versions``, per table size;
    the time counts only :func:`choose_tables`, not the simulation building its input."""
    results = []
    for size in sides:
        rules = MatchmakingRules(sides=size)
        ladder = simulate(versions, rules, concurrency, deal_set_seconds, seconds, seed)
        tables = len(ladder.played)
        results.append({**summary(ladder, rules), "concurrency": concurrency, "simulated_seconds": seconds,
                        "calls": ladder.calls, "choose_seconds": round(ladder.choose_seconds, 3),
                        "decisions_per_second": round(tables / ladder.choose_seconds, 1),
                        "calls_per_second": round(ladder.calls / ladder.choose_seconds, 1)})
    return results
