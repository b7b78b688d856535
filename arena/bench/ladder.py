"""``arena bench ladder``: the ladder's numbers at the scale of a large league, in one JSON, by composing the
benchmarks that measure each part (nothing here simulates or times anything of its own but the leaderboard's own
refit path):

- **matchmaking**: the matchmaker's decisions per second on a simulated ladder of ``versions`` versions
  (:func:`~arena.bench.matchmaking.bench_matchmaking`);
- **ratings**: the maximum-likelihood refit for ``versions`` versions at each checkpoint of deal sets, cold and
  warm, and how well it recovers the true order of the simulated strengths (Spearman, Kendall) against the online
  OpenSkill rating updated deal set by deal set (:func:`~arena.bench.ratings.bench_ratings`);
- **leaderboard**: the same refit as the ladder runs it, :meth:`~arena.league.play.leaderboard.Leaderboard.refit` on
  its worker thread, warm from the previous fit, at the last checkpoint (the tally the ratings bench filled);
- **database**: game results recorded per second, one transaction each (:func:`~arena.bench.league_db.results_write_rate`).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from typing import Any

import trio

from arena.bench.league_db import results_write_rate
from arena.bench.matchmaking import HOUR, bench_matchmaking
from arena.bench.ratings import bench_ratings
from arena.league.play.leaderboard import Leaderboard
from arena.league.storage.db import sqlite_url


class QuietLog:
    """The leaderboard's log, kept (a refit that fails says so in the bench's output)."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, event: str, **values: Any) -> None:
        self.errors.append(f"{event}: {values}")


def ladder_refit(tally: Any, previous: Any) -> dict[str, Any]:
    """One refit through the ladder's :class:`Leaderboard` (snapshot, worker thread, warm start), timed."""
    board = Leaderboard(QuietLog())
    board.tally, board.fitted = tally, previous

    async def refit() -> float:
        started = time.perf_counter()
        await board.refit()
        return time.perf_counter() - started

    seconds = trio.run(refit)
    return {"deal_sets": tally.results, "refit_s": round(seconds, 3),
            "newton_steps": board.fitted.iterations if board.fitted else None, "errors": board.log.errors}


def bench_ladder(versions: int = 1000, checkpoints: Sequence[int] = (10_000, 100_000, 1_000_000),
                 concurrency: int = 16, deal_set_seconds: float = 60.0, hours: float = 1.0, database: str | None = None,
                 games: int = 1000, seed: int = 1) -> dict[str, Any]:
    """Every part's numbers for a ladder of ``versions`` simulated versions (see the module's docstring)."""
    matchmaking = bench_matchmaking(versions, concurrency, deal_set_seconds, hours * HOUR, (2,), seed)[0]
    kept: dict[str, Any] = {}
    ratings = bench_ratings(versions=versions, checkpoints=checkpoints, seed=seed, keep=kept)
    leaderboard = ladder_refit(kept["tally"], kept["fit"])
    if database:
        written = results_write_rate(database, games)
    else:
        with tempfile.TemporaryDirectory(prefix="ladder-bench-") as scratch:
            written = results_write_rate(sqlite_url(scratch), games)
    return {
        "versions": versions,
        "matchmaking": {key: matchmaking[key] for key in ("tables", "calls", "choose_seconds",
                                                           "decisions_per_second", "calls_per_second",
                                                           "deal_sets_per_version", "top_two_met")},
        "refit": [{"deal_sets": c["deal_sets"], "cold_fit_s": c["cold"]["fit_s"],
                   "cold_newton_steps": c["cold"]["newton_steps"], "warm_fit_s": c["warm_after"]["fit_s"],
                   "warm_newton_steps": c["warm_after"]["newton_steps"],
                   "median_interval_elo": c["cold"]["median_interval_elo"]} for c in ratings["checkpoints"]],
        "leaderboard_refit": leaderboard,
        "rank_correlation": [{"deal_sets": c["deal_sets"], "leaderboard_spearman": c["cold"]["spearman"],
                              "leaderboard_kendall": c["cold"]["kendall"],
                              "online_spearman": c["openskill_ordinal"]["spearman"],
                              "online_kendall": c["openskill_ordinal"]["kendall"]} for c in ratings["checkpoints"]],
        "database": written,
    }
