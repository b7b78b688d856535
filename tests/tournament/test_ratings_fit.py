"""The leaderboard's maximum-likelihood fit (arena/tournament/likelihood.py) against closed forms, an independent
library (choix), a brute-force optimiser over the tie-breaking orders, and seeded simulations with known
strengths. Everything is seeded, so every count asserted here is the same on every run."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import choix
import numpy as np
import pytest
from scipy.optimize import brentq, minimize
from scipy.stats import spearmanr

from arena.errors import ArenaError
from arena.tournament.likelihood import (MAX_TIED, PRIOR_SD_ELO, Fit, FitError, Tally, fit, leaderboard,
                                         places_of_points, ranking_terms)
from arena.tournament.ratings import Z95, elo_of_logit, elo_of_score, logit_of_elo

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

WIN, DRAW, LOSS = (("a",), ("b",)), (("a", "b"),), (("b",), ("a",))


def tally_of(results) -> Tally:
    tally = Tally()
    for places in results:
        tally.add(places)
    return tally


def fitted(results, **options) -> Fit:
    return fit(tally_of(results).evidence(), **options)


def precision_of(prior_sd_elo: float = PRIOR_SD_ELO) -> float:
    return 1.0 / logit_of_elo(prior_sd_elo) ** 2


def simulate_pairs(strengths_elo, deal_sets: int, rng: np.random.Generator) -> list:
    """Two-sided deal sets between random pairs, won with the Bradley-Terry probability of the true strengths."""
    names = [f"e{i}" for i in range(len(strengths_elo))]
    results = []
    for _ in range(deal_sets):
        i, j = rng.choice(len(names), size=2, replace=False)
        p = 1.0 / (1.0 + math.exp(-logit_of_elo(strengths_elo[i] - strengths_elo[j])))
        results.append(((names[i],), (names[j],)) if rng.random() < p else ((names[j],), (names[i],)))
    return results


def simulate_tables(strengths_elo, deal_sets: int, sides: int, rng: np.random.Generator) -> list:
    """k-sided deal sets drawn from the Plackett-Luce model (Gumbel noise on the strengths, sorted)."""
    logits = np.array([logit_of_elo(s) for s in strengths_elo])
    results = []
    for _ in range(deal_sets):
        table = rng.choice(len(logits), size=sides, replace=False)
        order = table[np.argsort(-(logits[table] + rng.gumbel(size=sides)))]
        results.append(tuple((f"e{i}",) for i in order))
    return results


# --- exact small cases ------------------------------------------------------------------------------------------


def test_two_entrants_match_the_closed_form_with_the_prior() -> None:
    """7 wins, 2 draws, 1 loss: a's points are 8 of 10 (a draw is half a win each); at the maximum, with b = −a,
    ``8 − 10·σ(2a) = a·precision``, a one-dimensional root found independently with brentq."""
    result = fitted([WIN] * 7 + [DRAW] * 2 + [LOSS])
    precision = precision_of()
    a = brentq(lambda x: 8.0 - 10.0 / (1.0 + math.exp(-2.0 * x)) - precision * x, -10.0, 10.0, xtol=1e-14)
    assert result.names == ("a", "b")
    assert result.theta[0] == pytest.approx(a, abs=1e-10) and result.theta[1] == pytest.approx(-a, abs=1e-10)
    assert result.difference("a", "b")[0] == pytest.approx(elo_of_logit(2.0 * a), abs=1e-7)
    assert result.deal_sets.tolist() == [10, 10]


def test_two_entrants_without_the_prior_are_their_scores_elo() -> None:
    """A vanishing prior leaves the plain maximum likelihood: the Elo of the score fraction 0.8, and the interval
    of the difference ``± Z95 / √(n·s·(1−s))`` log-odds (the inverse of the information n·p·(1−p))."""
    elo, low, high = fitted([WIN] * 7 + [DRAW] * 2 + [LOSS], prior_sd_elo=1e7).difference("a", "b")
    assert elo == pytest.approx(elo_of_score(0.8), abs=1e-6)
    half = elo_of_logit(Z95 / math.sqrt(10 * 0.8 * 0.2))
    assert (low, high) == (pytest.approx(elo - half, abs=1e-5), pytest.approx(elo + half, abs=1e-5))


def test_a_draw_is_half_a_win_for_each() -> None:
    drawn = tally_of([DRAW, DRAW]).evidence()
    split = tally_of([WIN, LOSS]).evidence()
    assert drawn.linear.tolist() == split.linear.tolist() == [1.0, 1.0]
    assert [w.tolist() for _, w in drawn.sets] == [w.tolist() for _, w in split.sets] == [[2.0]]
    assert fit(drawn).theta.tolist() == fit(split).theta.tolist()


def permutation_log_likelihood(places, theta: dict[str, float]) -> float:
    """The definition of a tied ranking's log-likelihood, spelled out: the mean, over every order that breaks its
    ties, of the plain Plackett-Luce log-likelihood of that order."""
    orders = [sum(choice, ()) for choice in itertools.product(*(itertools.permutations(g) for g in places))]
    total = 0.0
    for order in orders:
        for k in range(len(order)):
            total += theta[order[k]] - math.log(sum(math.exp(theta[name]) for name in order[k:]))
    return total / len(orders)


@pytest.mark.parametrize("places", [
    (("a",), ("b", "c"), ("d",)),
    (("a", "b", "c"),),
    (("a", "b"), ("c", "d", "e")),
    (("c",), ("a",), ("b",)),
    (("a", "b", "c", "d"), ("e",)),
])
def test_the_tie_terms_are_the_mean_over_every_tie_break(places) -> None:
    names = sorted(name for group in places for name in group)
    index = {name: i for i, name in enumerate(names)}
    linear, terms = ranking_terms([[index[n] for n in group] for group in places])
    rng = np.random.default_rng(5)
    for _ in range(5):
        theta = rng.normal(0.0, 1.5, len(names))
        value = sum(c * theta[i] for i, c in linear.items())
        value -= sum(w * math.log(sum(math.exp(theta[i]) for i in members)) for members, w in terms.items())
        assert value == pytest.approx(permutation_log_likelihood(places, dict(zip(names, theta))), abs=1e-12)


def test_plackett_luce_with_ties_matches_brute_force() -> None:
    """Four- and three-sided deal sets with ties: the fit's maximum is the one scipy's BFGS finds on the
    permutation-average log-likelihood plus the normal prior."""
    results = [(("a",), ("b", "c"), ("d",)), (("b",), ("a",), ("d",), ("c",)), (("c", "d"), ("a", "b")),
               (("d",), ("a", "b", "c")), (("a",), ("c",), ("b",)), (("b", "d"), ("c",)),
               (("a", "b", "c", "d"),), (("c",), ("d",), ("a",))]
    result = fitted(results, prior_sd_elo=400.0)
    names = list(result.names)
    precision = precision_of(400.0)

    def negative(x: np.ndarray) -> float:
        theta = dict(zip(names, x))
        return -sum(permutation_log_likelihood(p, theta) for p in results) + 0.5 * precision * float(x @ x)

    reference = minimize(negative, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10}).x
    assert result.theta == pytest.approx(reference - reference.mean(), abs=1e-5)
    assert result.deal_sets.tolist() == [7, 7, 8, 7]  # a, b, c, d: the results each took part in


def test_untied_results_match_choix() -> None:
    """choix's optimisers (Newton-CG, its penalty ``alpha·Σθ²`` is our prior at alpha = precision / 2) fit the
    same untied data to the same maximum: pairwise with 6 entrants, rankings of 3 and 4 sides."""
    rng = np.random.default_rng(11)
    strengths = [-200.0, -80.0, 0.0, 40.0, 150.0, 300.0]
    alpha = precision_of() / 2.0
    pairs = simulate_pairs(strengths, 120, rng)
    ours = fitted(pairs)
    order = [int(name[1:]) for name in ours.names]
    data = [(int(w[0][1:]), int(l[0][1:])) for w, l in pairs]
    theirs = choix.opt_pairwise(6, data, alpha=alpha, tol=1e-12)
    assert ours.theta == pytest.approx(theirs[order] - theirs.mean(), abs=1e-6)
    tables = simulate_tables(strengths, 60, 3, rng) + simulate_tables(strengths, 60, 4, rng)
    ours = fitted(tables)
    order = [int(name[1:]) for name in ours.names]
    theirs = choix.opt_rankings(6, [tuple(int(g[0][1:]) for g in t) for t in tables], alpha=alpha, tol=1e-12)
    assert ours.theta == pytest.approx(theirs[order] - theirs.mean(), abs=1e-6)


# --- simulated strengths ----------------------------------------------------------------------------------------


def recovered(strengths, results) -> float:
    """Spearman's correlation between the true strengths and the fitted ratings."""
    result = fitted(results)
    truth = [strengths[int(name[1:])] for name in result.names]
    return float(spearmanr(truth, result.theta).statistic)


def test_the_fit_recovers_a_known_order_with_two_sides() -> None:
    strengths = list(np.linspace(-400.0, 400.0, 40))
    results = simulate_pairs(strengths, 4000, np.random.default_rng(3))
    assert recovered(strengths, results) > 0.97
    flipped = [(loser, winner) for winner, loser in results]  # a fit that read the results backwards fails it
    assert recovered(strengths, flipped) < -0.97


def test_the_fit_recovers_a_known_order_with_four_sides() -> None:
    strengths = list(np.linspace(-400.0, 400.0, 40))
    results = simulate_tables(strengths, 1500, 4, np.random.default_rng(4))
    assert recovered(strengths, results) > 0.97
    assert recovered(strengths, [tuple(reversed(r)) for r in results]) < -0.97


def test_95_percent_intervals_mostly_cover_the_truth() -> None:
    """100 seeded leagues of 5 entrants and 200 deal sets each: the intervals of every rating (against the field's
    mean) and of the closest pair's difference cover the truth about 95% of the time."""
    strengths = np.array([-150.0, -50.0, 0.0, 60.0, 140.0])
    centred = strengths - strengths.mean()
    ratings_covered = differences_covered = 0
    for seed in range(100):
        result = fitted(simulate_pairs(list(strengths), 200, np.random.default_rng(1000 + seed)))
        for name in result.names:
            _, low, high = result.rating(name)
            ratings_covered += low <= centred[int(name[1:])] <= high
        _, low, high = result.difference("e4", "e3")
        differences_covered += low <= strengths[4] - strengths[3] <= high
    assert ratings_covered >= 450 and differences_covered >= 88  # 480 and 93 with numpy 2.4.6


# --- the edges --------------------------------------------------------------------------------------------------


def test_the_prior_keeps_an_unbeaten_entrant_finite() -> None:
    results = [WIN] * 20
    narrow, wide = fitted(results, prior_sd_elo=400.0), fitted(results, prior_sd_elo=1000.0)
    for result in (narrow, wide):
        elo, low, high = result.rating("a")
        assert all(math.isfinite(x) for x in (elo, low, high)) and low < elo < high
        assert result.rating("b")[0] == pytest.approx(-elo)
    assert 0 < narrow.rating("a")[0] < wide.rating("a")[0] < 1500.0
    assert not wide.told_apart("a", "b") or wide.difference("a", "b")[1] > 0


def test_an_entrant_without_results_sits_at_the_prior() -> None:
    tally = tally_of([WIN, WIN, LOSS])
    tally.entrant("new")
    result = fit(tally.evidence())
    elo, low, high = result.rating("new")
    assert result.deal_sets.tolist() == [3, 3, 0] and result.component_count == 2
    assert elo == pytest.approx(0.0, abs=1e-9)
    assert high - low == pytest.approx(2 * Z95 * PRIOR_SD_ELO * math.sqrt(2 / 3), rel=1e-6)


def test_a_disconnected_graph_never_tells_components_apart() -> None:
    """a beats b 40 to 10, c beats d 40 to 10, and neither pair ever met the other: each component is centred on
    0 by the prior, a is told apart from b (and c from d), and no one from the other component."""
    results = ([(("a",), ("b",))] * 40 + [(("b",), ("a",))] * 10 + [(("c",), ("d",))] * 40
               + [(("d",), ("c",))] * 10)
    result = fitted(results)
    assert result.component_count == 2 and result.components.tolist() == [0, 0, 1, 1]
    assert result.theta[0] == pytest.approx(-result.theta[1]) and result.theta[2] == pytest.approx(-result.theta[3])
    assert result.told_apart("a", "b") and result.told_apart("c", "d")
    assert not any(result.told_apart(x, y) for x in "ab" for y in "cd")
    rows = leaderboard(result)
    assert [(row.entrant, row.rank) for row in rows] == [("a", "1–3"), ("c", "1–3"), ("b", "2–4"), ("d", "2–4")]
    assert [row.tied_with for row in rows] == [("c", "d"), ("a", "b"), ("c", "d"), ("a", "b")]


def test_a_warm_start_gives_the_cold_answer_in_fewer_steps() -> None:
    strengths = list(np.linspace(-300.0, 300.0, 30))
    rng = np.random.default_rng(8)
    first = simulate_pairs(strengths, 2000, rng)
    more = simulate_pairs(strengths, 200, rng) + simulate_tables(strengths, 50, 3, rng)
    tally = tally_of(first)
    before = fit(tally.evidence())
    tally.add((("newcomer",), ("e3",)))
    for places in more:
        tally.add(places)
    evidence = tally.evidence()
    cold, warm = fit(evidence), fit(evidence, previous=before)
    assert warm.names == cold.names and warm.names[-1] == "newcomer"
    assert warm.theta == pytest.approx(cold.theta, abs=1e-9)
    assert warm.covariance == pytest.approx(cold.covariance, abs=1e-9)
    assert warm.iterations < cold.iterations


def test_a_snapshot_stays_as_the_tally_goes_on() -> None:
    tally = tally_of([WIN])
    evidence = tally.evidence()
    tally.add(LOSS)
    tally.add((("a",), ("c",)))
    assert evidence.names == ("a", "b") and evidence.linear.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError):
        evidence.linear[0] = 5.0
    assert tally.results == 3 and tally.evidence().names == ("a", "b", "c")


@pytest.mark.parametrize("places, message", [
    ((("a",), ()), "every group of a result needs at least one entrant"),
    ((("a",), ("a",)), "an entrant appears twice in one result"),
    ((("a",),), "a result needs at least two entrants"),
    ((("a",), ("",)), "entrants are non-empty names"),
    ((tuple(f"e{i}" for i in range(MAX_TIED + 1)),), f"at most {MAX_TIED} entrants can tie in one group, got 13"),
])
def test_a_bad_result_is_refused_and_counts_nothing(places, message) -> None:
    tally = tally_of([WIN])
    with pytest.raises(FitError) as refused:
        tally.add(places)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
    assert tally.results == 1 and tally.evidence().names == ("a", "b")
    assert isinstance(refused.value, ArenaError) and isinstance(refused.value, ValueError)


def test_a_bad_prior_or_an_unknown_entrant_is_refused() -> None:
    evidence = tally_of([WIN]).evidence()
    for bad in (0.0, -5.0, math.inf, math.nan):
        with pytest.raises(FitError, match="the prior's width must be a positive number of Elo"):
            fit(evidence, prior_sd_elo=bad)
    with pytest.raises(FitError, match="no entrant 'zed' in the fit"):
        fit(evidence).rating("zed")


def test_a_twelve_way_tie_is_a_zero_sum_of_even_ratings() -> None:
    names = tuple(f"e{i}" for i in range(MAX_TIED))
    result = fitted([(names,), (names[:1], names[1:])])
    assert result.theta[0] > 0 and result.theta[1:] == pytest.approx(np.full(11, -result.theta[0] / 11))


def test_places_of_points_groups_equal_points_best_first() -> None:
    assert places_of_points({"b": 1.5, "a": 2, "c": 1.5, "d": 0}) == (("a",), ("b", "c"), ("d",))
    assert places_of_points({"x": 1, "y": 1}) == (("x", "y"),)


# --- the leaderboard --------------------------------------------------------------------------------------------


def test_ranks_are_shared_where_intervals_cannot_tell_apart() -> None:
    """top beats everyone, bottom loses to everyone, mid1 and mid2 split their games: ranks 1, 2–3, 2–3, 4."""
    results = []
    for other in ("mid1", "mid2", "bottom"):
        results += [(("top",), (other,))] * 30 + [((other,), ("top",))] * 5
    for other in ("mid1", "mid2"):
        results += [((other,), ("bottom",))] * 30 + [(("bottom",), (other,))] * 5
    results += [(("mid1",), ("mid2",))] * 16 + [(("mid2",), ("mid1",))] * 14 + [(("mid1", "mid2"),)] * 4
    rows = leaderboard(fitted(results))
    assert [(r.rank, r.entrant, r.deal_sets) for r in rows] == [
        ("1", "top", 105), ("2–3", "mid1", 104), ("2–3", "mid2", 104), ("4", "bottom", 105)]
    assert [r.tied_with for r in rows] == [(), ("mid2",), ("mid1",), ()]
    assert [r.apart_from_next for r in rows] == [True, False, True, None]
    assert all(r.low < r.elo < r.high for r in rows) and rows[0].elo > rows[1].elo > rows[2].elo > rows[3].elo
    assert sum(r.elo for r in rows) == pytest.approx(0.0, abs=1e-6)  # anchored at the field's mean


def test_told_apart_means_the_differences_interval_excludes_0() -> None:
    """Two entrants whose difference has a variance of exactly 1 (log-odds): its 95% interval is the difference
    ± 1.96. A difference of 1.96 puts the interval's low end on 0 exactly: not told apart; the next float above
    1.96 is; 1.7 (outside a 90% interval, ± 1.645, but inside the 95% one) is not."""
    def pair(difference: float) -> Fit:
        return Fit(("a", "b"), np.array([difference / 2, -difference / 2]), np.array([[0.25, -0.25], [-0.25, 0.25]]),
                   np.array([10, 10]), np.array([0, 0]), 1, PRIOR_SD_ELO)

    touching, beyond, inside_95 = pair(1.96), pair(math.nextafter(1.96, math.inf)), pair(1.7)
    assert touching.difference("a", "b")[1] == 0.0 and touching.difference("b", "a")[2] == 0.0
    assert [(f.told_apart("a", "b"), f.told_apart("b", "a")) for f in (touching, beyond, inside_95)] == [
        (False, False), (True, True), (False, False)]
    assert [[(r.rank, r.entrant, r.tied_with, r.apart_from_next) for r in leaderboard(f)]
            for f in (touching, beyond, inside_95)] == [
        [("1–2", "a", ("b",), False), ("1–2", "b", ("a",), None)],
        [("1", "a", (), True), ("2", "b", (), None)],
        [("1–2", "a", ("b",), False), ("1–2", "b", ("a",), None)]]


def test_equal_results_list_by_name_however_sums_round() -> None:
    """b and a each beat c once: equal ratings, listed a first, even when the evidence summed in another order
    leaves b a rounding error ahead (as two databases returning the same rows in other orders did)."""
    exact = fitted([(("b",), ("c",)), (("a",), ("c",))])
    theta = exact.theta.copy()
    theta[exact.position("b")] += 1e-12
    result = dataclasses.replace(exact, theta=theta)
    assert [r.entrant for r in leaderboard(result)] == ["a", "b", "c"]
    assert leaderboard(result)[0].tied_with == ("b", "c")


def test_an_empty_tally_fits_and_lists_nothing() -> None:
    result = fit(Tally().evidence())
    assert result.names == () and leaderboard(result) == () and result.component_count == 0


# --- the benchmark ----------------------------------------------------------------------------------------------


def test_bench_ratings_reports_and_refuses_bad_checkpoints(capsys) -> None:
    """A short `arena bench ratings` run: one entry per checkpoint with both fits and the OpenSkill baseline (the
    seeded league makes the counts exact); bad options are refused in one line with exit status 2."""
    from arena import cli

    assert cli.main(["bench", "ratings", "--versions", "60", "--games", "3000,600", "--warm-games", "100"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [c["deal_sets"] for c in report["checkpoints"]] == [600, 3000]
    assert [c["warm_after"]["deal_sets"] for c in report["checkpoints"]] == [700, 3100]
    last = report["checkpoints"][-1]
    assert last["cold"]["spearman"] > 0.9 and last["warm_after"]["spearman"] > 0.9
    assert last["warm_after"]["newton_steps"] < last["cold"]["newton_steps"]
    assert -1 <= last["openskill_ordinal"]["kendall"] <= last["openskill_ordinal"]["spearman"] <= 1
    for bad, message in ((["--games", "10,x"], "--games must be deal-set counts"),
                         (["--sides", "13"], "expected --sides from 2 to 12")):
        assert cli.main(["bench", "ratings", "--versions", "20", *bad]) == 2
        assert message in capsys.readouterr().err
