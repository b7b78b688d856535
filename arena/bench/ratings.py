"""``arena bench ratings``: the leaderboard's maximum-likelihood fit on a simulated league, against the online
OpenSkill rating a live table would show.

A league of ``versions`` entrants with hidden strengths (normal, ``spread_elo`` Elo wide) plays deal sets paired
like a matchmaker does: each table is built around a uniformly drawn version, its opponents mostly (``near``) among
the ``window`` versions nearest to it in true strength, else anyone. Two-sided deal sets are won, drawn or lost by
Davidson's model (Bradley–Terry with a draw share ``DRAW_SHARE``, so the fit's half-a-win reading of draws is not
the model that made them); k-sided ones are ranked by Plackett–Luce (Gumbel noise). At each checkpoint the bench
fits the whole league cold, then adds ``warm_games`` more and refits warm from the checkpoint's fit, and reports
the times, the Newton steps and the rank correlations (Spearman, Kendall) of the fitted ratings and of OpenSkill's
ordinal (updated deal set by deal set) with the true strengths.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from openskill.models import PlackettLuce

from arena.tournament.likelihood import Tally, fit, leaderboard
from arena.tournament.ratings import logit_of_elo

DRAW_SHARE = 0.25
"""Davidson's ν: an even two-sided deal set is drawn with probability ν / (2 + ν), about 11%."""
BATCH = 10_000
"""Deal sets simulated per numpy batch (the draws are vectorised; the tally and OpenSkill take them one by one)."""


def spearman(truth: np.ndarray, estimate: np.ndarray) -> float:
    """Spearman's rank correlation: Pearson's on the ranks (the values here are continuous: no ties to share)."""
    ranks = [np.argsort(np.argsort(values)).astype(float) for values in (truth, estimate)]
    return float(np.corrcoef(ranks[0], ranks[1])[0, 1])


def kendall(truth: np.ndarray, estimate: np.ndarray) -> float:
    """Kendall's tau over every pair (tau-a; a thousand entrants are half a million pairs, one numpy expression)."""
    concordance = np.sign(truth[:, None] - truth[None, :]) * np.sign(estimate[:, None] - estimate[None, :])
    n = len(truth)
    return float(concordance.sum() / (n * (n - 1)))


def draw_tables(rng: np.random.Generator, order: np.ndarray, count: int, sides: int, window: int,
                near: float) -> np.ndarray:
    """``count`` tables of ``sides`` distinct versions (rows of indices): around a random version, each seat
    filled from its ``window`` nearest in true strength with probability ``near``, else from anyone."""
    versions = len(order)
    position = np.empty(versions, dtype=np.int64)
    position[order] = np.arange(versions)
    tables = np.empty((count, sides), dtype=np.int64)
    tables[:, 0] = rng.integers(0, versions, count)
    for seat in range(1, sides):
        offsets = rng.integers(1, window + 1, count) * rng.choice((-1, 1), count)
        nearby = order[np.clip(position[tables[:, 0]] + offsets, 0, versions - 1)]
        anyone = rng.integers(0, versions, count)
        tables[:, seat] = np.where(rng.random(count) < near, nearby, anyone)
    return tables


def play_tables(rng: np.random.Generator, logits: np.ndarray, tables: np.ndarray) -> list[tuple[tuple[int, ...], ...]]:
    """Each table's places (groups of indices, best first); tables with a version twice are dropped (a real
    matchmaker never seats one version twice)."""
    results: list[tuple[tuple[int, ...], ...]] = []
    if tables.shape[1] == 2:
        strength = np.exp(logits[tables])
        draw = DRAW_SHARE * np.sqrt(strength[:, 0] * strength[:, 1])
        total = strength[:, 0] + strength[:, 1] + draw
        roll = rng.random(len(tables)) * total
        for (a, b), r, first, tie in zip(tables.tolist(), roll, strength[:, 0], draw, strict=True):
            if a != b:
                results.append(((a,), (b,)) if r < first else ((a, b),) if r < first + tie else ((b,), (a,)))
        return results
    noisy = logits[tables] + rng.gumbel(size=tables.shape)
    for table, order in zip(tables.tolist(), np.argsort(-noisy, axis=1).tolist(), strict=True):
        if len(set(table)) == len(table):
            results.append(tuple((table[k],) for k in order))
    return results


def rate_online(model: PlackettLuce, skills: list[Any], places: tuple[tuple[int, ...], ...]) -> None:
    """One OpenSkill update, as the live table does it: each side a team of one, tied sides sharing a rank."""
    teams = [[skills[i]] for group in places for i in group]
    ranks = [float(place) for place, group in enumerate(places) for _ in group]
    rated = model.rate(teams, ranks=ranks)
    for (skill,), i in zip(rated, (i for group in places for i in group), strict=True):
        skills[i] = skill


def measure_fit(tally: Tally, truth: np.ndarray, previous: Any = None) -> tuple[Any, dict[str, Any]]:
    """One refit of everything the tally holds (cold, or warm from ``previous``), timed, with the leaderboard."""
    started = time.perf_counter()
    evidence = tally.evidence()
    snapshot = time.perf_counter()
    result = fit(evidence, previous=previous)
    fitted = time.perf_counter()
    rows = leaderboard(result)
    done = time.perf_counter()
    position = {name: i for i, name in enumerate(result.names)}
    theta = np.array([float(result.theta[position[str(i)]]) for i in range(len(truth))])
    widths = [row.high - row.low for row in rows]
    return result, {
        "terms": sum(len(weights) for _, weights in evidence.sets),
        "snapshot_s": round(snapshot - started, 3),
        "fit_s": round(fitted - snapshot, 3),
        "newton_steps": result.iterations,
        "leaderboard_s": round(done - fitted, 3),
        "spearman": round(spearman(truth, theta), 4),
        "kendall": round(kendall(truth, theta), 4),
        "median_interval_elo": round(float(np.median(widths)), 1) if widths else None,
        "adjacent_told_apart": sum(1 for row in rows if row.apart_from_next),
    }


def bench_ratings(versions: int = 1000, checkpoints: Sequence[int] = (10_000, 100_000, 1_000_000), sides: int = 2,
                  seed: int = 1, spread_elo: float = 200.0, window: int = 20, near: float = 0.8,
                  warm_games: int = 1000, keep: dict[str, Any] | None = None) -> dict[str, Any]:
    """The simulated league (see the module's docstring); one entry per checkpoint of deal sets played. ``keep``,
    when given, receives the ``tally`` at the end and the last checkpoint's cold ``fit`` (for a bench that refits
    them another way)."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, spread_elo, versions)
    logits = np.array([logit_of_elo(float(s)) for s in truth])
    order = np.argsort(truth)
    model = PlackettLuce()
    skills = [model.rating() for _ in range(versions)]
    tally = Tally()
    for i in range(versions):
        tally.entrant(str(i))
    report: dict[str, Any] = {"versions": versions, "sides": sides, "seed": seed, "spread_elo": spread_elo,
                              "window": window, "near": near, "warm_games": warm_games, "checkpoints": []}
    feed_s = online_s = 0.0
    played = 0
    for checkpoint in sorted(checkpoints):
        feed_s, online_s, played = play(rng, logits, order, tally, model, skills, checkpoint - played, sides,
                                        window, near, (feed_s, online_s, played))
        previous, cold = measure_fit(tally, truth)
        feed_s, online_s, played = play(rng, logits, order, tally, model, skills, warm_games, sides, window, near,
                                        (feed_s, online_s, played))
        _, warm = measure_fit(tally, truth, previous)
        ordinal = np.array([skill.ordinal() for skill in skills])
        report["checkpoints"].append({
            "deal_sets": checkpoint, "cold": cold,
            "warm_after": {"deal_sets": played, **warm},
            "openskill_ordinal": {"spearman": round(spearman(truth, ordinal), 4),
                                  "kendall": round(kendall(truth, ordinal), 4)},
            "tally_us_per_deal_set": round(feed_s / played * 1e6, 2),
            "openskill_us_per_deal_set": round(online_s / played * 1e6, 2),
        })
        if keep is not None:
            keep.update(tally=tally, fit=previous)
    return report


def play(rng: np.random.Generator, logits: np.ndarray, order: np.ndarray, tally: Tally, model: PlackettLuce,
         skills: list[Any], count: int, sides: int, window: int, near: float,
         totals: tuple[float, float, int]) -> tuple[float, float, int]:
    """Play ``count`` deal sets into the tally and the online ratings; the running (tally s, OpenSkill s, played)."""
    feed_s, online_s, played = totals
    target = played + max(count, 0)
    while played < target:
        tables = draw_tables(rng, order, min(BATCH, target - played), sides, window, near)
        results = play_tables(rng, logits, tables)
        started = time.perf_counter()
        for places in results:
            tally.add(tuple(tuple(str(i) for i in group) for group in places))
        fed = time.perf_counter()
        for places in results:
            rate_online(model, skills, places)
        online_s += time.perf_counter() - fed
        feed_s += fed - started
        played += len(results)
    return feed_s, online_s, played
