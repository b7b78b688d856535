"""The SPRT arithmetic (arena/tournament/sprt.py): the LLR against values computed here independently and against
values fishtest published, the bounds, the Elo estimate, the outcome buckets, the state of a test, and seeded
simulations in which a clearly stronger player is accepted and equal players are rejected."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics

import pytest

from arena.tournament.ratings import elo_of_score, score_of_elo
from arena.tournament.sprt import (
    CONTINUE, DRAW, H0, H1, LOSS, WIN, Meetings, Sprt, SprtError, bounds, bucket, llr, meetings, outcome_meetings,
    pentanomial_bucket, trinomial_bucket,
)
from arena.tournament.standings import GameOutcome

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

# --- independent references ---------------------------------------------------------------------------------------
# Written from the definition (the largest log-likelihood sum n_i log p_i among the outcome distributions that
# satisfy the hypothesis; zero counts replaced by 1e-3 as fishtest does), by methods other than the module's
# secular equation: a closed form for the trinomial, coordinate ascent in the distribution itself for more outcomes,
# a one-dimensional search along the constraint curve for the normalized trinomial.


def regularized(counts: list[int]) -> list[float]:
    return [float(c) if c > 0 else 1e-3 for c in counts]


def expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def trinomial_profile(counts: list[int], s: float) -> float:
    """The trinomial with mean s is (1 - 2s + w, 2(s - w), w) for its win probability w; setting the derivative of
    the log-likelihood to 0 gives N w^2 - B w - C = 0, with one root between max(0, 2s - 1) and s."""
    n0, n1, n2 = regularized(counts)
    total = n0 + n1 + n2
    b = n0 * s - n1 * (1 - 2 * s) + n2 * (3 * s - 1)
    c = n2 * s * (1 - 2 * s)
    root = math.sqrt(b * b + 4 * total * c)
    (w,) = [w for w in ((b + root) / (2 * total), (b - root) / (2 * total)) if max(0.0, 2 * s - 1) < w < s]
    return n0 * math.log(1 - 2 * s + w) + n1 * math.log(2 * (s - w)) + n2 * math.log(w)


def primal_profile(counts: list[int], s: float) -> float:
    """Coordinate ascent over the distributions with mean s: for every three outcomes i < j < k the direction
    (a_k - a_j, a_i - a_k, a_j - a_i) keeps both the total and the mean; each step is an exact line search (bisection
    on the falling derivative). These directions span every move that keeps the constraints, and the objective is
    strictly concave, so the sweeps reach the maximum."""
    n = regularized(counts)
    k = len(n)
    a = [i / (k - 1) for i in range(k)]
    mix = abs(s - 0.5) / 0.5  # a start with mean s: the uniform distribution mixed with the best or worst outcome
    p = [(1 - mix) / k] * k
    p[-1 if s > 0.5 else 0] += mix
    best = sum(c * math.log(q) for c, q in zip(n, p))
    for _ in range(1000):
        for idx in itertools.combinations(range(k), 3):
            i, j, l = idx
            d = (a[l] - a[j], a[i] - a[l], a[j] - a[i])
            low = max(-p[m] / dm for m, dm in zip(idx, d) if dm > 0)
            high = min(-p[m] / dm for m, dm in zip(idx, d) if dm < 0)
            for _ in range(200):
                mid = (low + high) / 2
                if mid in (low, high):
                    break
                if sum(n[m] * dm / (p[m] + mid * dm) for m, dm in zip(idx, d)) > 0:
                    low = mid
                else:
                    high = mid
            for m, dm in zip(idx, d):
                p[m] += (low + high) / 2 * dm
        value = sum(c * math.log(q) for c, q in zip(n, p))
        if value - best <= 1e-14 * max(1.0, abs(value)):
            return max(value, best)
        best = value
    raise AssertionError("coordinate ascent did not settle")


def normalized_trinomial_profile(counts: list[int], t: float) -> float:
    """The trinomials with t-value (mu - 1/2) / sigma = t form a curve: with u = mu - 1/2 and draw probability d,
    sigma^2 = 1/4 - u^2 - d/4 and u = t sigma give u^2 (1 + 1/t^2) = (1 - d) / 4, so d alone fixes the trinomial.
    Searched on a grid of log d (down to 1e-40, the maximum can sit at a tiny d), refined by golden section."""
    if t == 0:
        return trinomial_profile(counts, 0.5)
    n = regularized(counts)

    def value(log_d: float) -> float:
        d = math.exp(log_d)
        u = math.copysign(math.sqrt((1 - d) / (4 * (1 + 1 / (t * t)))), t)
        win = 0.5 + u - d / 2
        loss = 1 - d - win
        if min(loss, d, win) <= 0:
            return -math.inf
        return n[0] * math.log(loss) + n[1] * math.log(d) + n[2] * math.log(win)

    grid = [-k / 100 for k in range(4000)]
    top = max(range(len(grid)), key=lambda i: value(grid[i]))
    low, high = grid[min(top + 1, len(grid) - 1)], grid[max(top - 1, 0)]
    found = value(grid[top])
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        c, e = high - golden * (high - low), low + golden * (high - low)
        vc, ve = value(c), value(e)
        found = max(found, vc, ve)
        if vc >= ve:
            high = e
        else:
            low = c
    return found


NELO_PER_T = 800 / math.log(10)


def reference_llr(counts: list[int], elo0: float, elo1: float, model: str = "logistic") -> float:
    if model == "logistic":
        profile = trinomial_profile if len(counts) == 3 else primal_profile
        return profile(counts, expected_score(elo1)) - profile(counts, expected_score(elo0))
    assert len(counts) == 3
    return (normalized_trinomial_profile(counts, elo1 / NELO_PER_T)
            - normalized_trinomial_profile(counts, elo0 / NELO_PER_T))


TRINOMIALS = [[100, 300, 250], [0, 7, 3], [0, 0, 10], [5, 0, 0], [0, 1000, 0], [3, 1, 0], [120, 50, 130],
              [1000, 2000, 1100], [1, 0, 1]]
PENTANOMIALS = [[10, 100, 300, 250, 30], [0, 0, 0, 2, 267], [1, 0, 10, 15, 318], [406, 8728, 41933, 8848, 493],
                [0, 0, 7, 0, 0], [3, 0, 0, 0, 1], [1, 2, 3, 4, 5]]
HYPOTHESES = [(0, 10), (-5, 5), (-2, 0), (-40, 25)]


@pytest.mark.parametrize("counts", TRINOMIALS)
@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_trinomial_llr_matches_an_independent_maximisation(counts: list[int], model: str) -> None:
    for elo0, elo1 in HYPOTHESES:
        expected = reference_llr(counts, elo0, elo1, model)
        assert llr(counts, elo0, elo1, model) == pytest.approx(expected, rel=1e-9, abs=1e-9), (elo0, elo1)


@pytest.mark.parametrize("counts", PENTANOMIALS)
def test_pentanomial_llr_matches_coordinate_ascent(counts: list[int]) -> None:
    for elo0, elo1 in HYPOTHESES:
        expected = reference_llr(counts, elo0, elo1)
        assert llr(counts, elo0, elo1) == pytest.approx(expected, rel=1e-9, abs=1e-9), (elo0, elo1)


def test_the_two_references_agree_and_more_outcomes_work() -> None:
    """The closed form and coordinate ascent agree on trinomials; and a unit of 3 meetings (7 outcomes) follows the
    same definition."""
    for counts in TRINOMIALS:
        assert primal_profile(counts, 0.53) == pytest.approx(trinomial_profile(counts, 0.53), rel=1e-11, abs=1e-11)
    for counts in ([1, 0, 4, 9, 4, 0, 2], [0, 0, 0, 12, 0, 0, 0], [3, 5, 8, 13, 21, 34, 55]):
        assert llr(counts, -10, 20) == pytest.approx(reference_llr(counts, -10, 20), rel=1e-9, abs=1e-9)


# Published by fishtest and quoted in Stockfish commit messages ("LLR: 2.94 (-2.94,2.94) {-0.20,1.10}", then
# "Ptnml(0-2): ..."): pentanomial counts, {logistic} or <normalized> Elo bounds, and the LLR to two decimals.
# Checked once, outside these tests, against all 2957 such quotes in the Stockfish history (560 logistic, 2397
# normalized): 2951 agree to the printed digit, 4 are 0.01 off (rounding at the last digit) and 2 quote counts that
# do not add up to their own game total.
PUBLISHED = [
    # (counts, elo0, elo1, model, LLR, Stockfish commit: fishtest test)
    ([406, 8728, 41933, 8848, 493], -0.20, 1.10, "logistic", 2.94, "6ad4f485d: tests/view/60735b3a8141753378960534"),
    ([23, 1079, 15473, 1255, 14], 0.20, 0.90, "logistic", 2.94, "6ad4f485d: tests/view/6073ffbc814175337896057f"),
    ([13, 1176, 17184, 1178, 21], 0.25, 1.25, "logistic", -3.00, "508906165: tests/view/605128702433018de7a38ca1"),
    ([577, 11681, 56451, 11586, 605], -1.00, 0.20, "logistic", 2.94, "79bb28281: tests/view/606532732b2df919fd5f026d"),
    ([87, 6272, 81610, 6175, 108], -0.70, 0.20, "logistic", 2.98, "79bb28281: tests/view/6065b0772b2df919fd5f02ae"),
    ([1, 0, 10, 15, 318], 0.00, 2.00, "normalized", 2.70, "3c04b5c42: tests/view/69ae4bea1d849c824c6b00b0"),
    ([0, 0, 0, 2, 267], -1.75, 0.25, "normalized", 2.19, "3c04b5c42: tests/live_elo/69ae6c031d849c824c6b00dc"),
    ([336, 8437, 18332, 8798, 209], 0.00, 2.00, "normalized", -0.01, "9fcd47a71: tests/view/6a3ae7913036e45021aeb4a0"),
    ([92, 8735, 20515, 8690, 84], -1.75, 0.25, "normalized", 0.23, "a10791095"),
    ([24, 3579, 10585, 3502, 22], 0.50, 2.50, "normalized", -1.91, "c1fff7165"),
    ([124, 4209, 8504, 3868, 143], -1.75, 0.25, "normalized", -2.93, "ab8f901d2"),
]


@pytest.mark.parametrize("counts, elo0, elo1, model, published, source", PUBLISHED)
def test_llr_matches_values_fishtest_published(counts: list[int], elo0: float, elo1: float, model: str,
                                               published: float, source: str) -> None:
    assert abs(llr(counts, elo0, elo1, model) - published) <= 0.005 + 1e-9, source


def test_llr_mirrors_when_the_players_swap() -> None:
    """Swapping the players reverses the outcomes and negates the Elos: H1 and H0 trade places."""
    for counts in TRINOMIALS + PENTANOMIALS:
        for model in ("logistic", "normalized"):
            assert llr(counts[::-1], -10, 0, model) == pytest.approx(-llr(counts, 0, 10, model), rel=1e-9, abs=1e-9)


# --- bounds, Elo ----------------------------------------------------------------------------------------------------


def test_bounds() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert (lower, upper) == (pytest.approx(-2.944439, abs=1e-6), pytest.approx(2.944439, abs=1e-6))
    assert (lower, upper) == (pytest.approx(-math.log(19)), pytest.approx(math.log(19)))
    lower, upper = bounds(0.05, 0.10)
    assert (lower, upper) == (pytest.approx(math.log(0.10 / 0.95)), pytest.approx(math.log(0.90 / 0.05)))
    assert (round(lower, 3), round(upper, 3)) == (-2.251, 2.890)
    for alpha, beta in ((0, 0.05), (0.05, 0.5), (-1, 0.1), (True, 0.1)):
        with pytest.raises(SprtError):
            bounds(alpha, beta)  # type: ignore[arg-type]


def test_elo_and_score() -> None:
    assert score_of_elo(0) == 0.5
    assert score_of_elo(400) == pytest.approx(10 / 11)
    for elo in (-300.0, -10.0, 0.0, 35.5, 800.0):
        assert elo_of_score(score_of_elo(elo)) == pytest.approx(elo, abs=1e-9)
    assert elo_of_score(0.0) is None and elo_of_score(1.0) is None


def fishtest_interval(samples: list[float]) -> tuple[float, float, float, float]:
    """Elo, interval and LOS by hand from the unit scores: mean, population variance (fishtest divides by N), mean
    ± 1.96·sqrt(var / N). Fishtest works per game (pair total over 2, variance 2·var_pair over 2N games), which is
    the same interval."""
    mu = statistics.fmean(samples)
    error = math.sqrt(statistics.pvariance(samples) / len(samples))

    def to_elo(x: float) -> float:
        return -400 * math.log10(1 / x - 1)

    los = 0.5 * (1 + math.erf((mu - 0.5) / error / math.sqrt(2)))
    return to_elo(mu), to_elo(mu - 1.96 * error), to_elo(mu + 1.96 * error), los


def test_elo_estimate_pentanomial_and_trinomial() -> None:
    test = Sprt(0, 10, kind="pentanomial")
    counts = [1, 2, 3, 4, 5]
    for outcome, count in enumerate(counts):
        for _ in range(count):
            test.add(outcome)
    samples = [outcome / 4 for outcome, count in enumerate(counts) for _ in range(count)]
    estimate = test.elo_estimate()
    elo, low, high, los = fishtest_interval(samples)
    assert (estimate.units, estimate.score) == (15, pytest.approx(2 / 3))
    assert (estimate.elo, estimate.low, estimate.high, estimate.los) == (
        pytest.approx(elo), pytest.approx(low), pytest.approx(high), pytest.approx(los))
    sigma_per_game = math.sqrt(2 * statistics.pvariance(samples))  # normalized Elo: per game, so sqrt(2) per pair
    assert estimate.nelo == pytest.approx((2 / 3 - 0.5) / sigma_per_game * 800 / math.log(10))
    data = estimate.to_json()
    assert data["elo_interval"] == [pytest.approx(low), pytest.approx(high)]

    test = Sprt(0, 10)
    for outcome in [2, 2, 2, 1, 0, 2, 1, 2, 0, 2]:
        test.add(outcome)
    elo, low, high, los = fishtest_interval([1, 1, 1, 0.5, 0, 1, 0.5, 1, 0, 1])
    estimate = test.elo_estimate()
    assert (estimate.elo, estimate.low, estimate.high, estimate.los) == (
        pytest.approx(elo), pytest.approx(low), pytest.approx(high), pytest.approx(los))


# --- edge cases -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model, elo1", [("logistic", 10), ("normalized", 20)])
@pytest.mark.parametrize("kind", ["trinomial", "pentanomial"])
def test_edge_cases_never_raise(model: str, elo1: float, kind: str) -> None:
    top = 2 if kind == "trinomial" else 4
    test = Sprt(0, elo1, kind=kind, model=model)
    assert (test.llr, test.state, test.units, test.decided_at) == (0.0, CONTINUE, 0, None)
    estimate = test.elo_estimate()
    assert (estimate.units, estimate.score, estimate.elo, estimate.interval, estimate.los) == (0, None, None, None,
                                                                                             None)
    assert "running: LLR 0.00 [-2.94, 2.94], Elo -," in test.summary()
    assert llr([0] * (top + 1), 0, elo1, model) == 0.0

    draws = Sprt(0, elo1, kind=kind, model=model)  # all draws: evidence for elo0 = 0 over elo1
    previous = 0.0
    while not draws.decided:
        draws.add(top // 2)
        assert math.isfinite(draws.llr) and draws.llr < previous
        assert draws.units <= 1000
        previous = draws.llr
    assert draws.state == H0
    assert (draws.elo_estimate().elo, draws.elo_estimate().interval) == (0.0, (0.0, 0.0))

    wins = Sprt(0, elo1, kind=kind, model=model)  # only wins: H1 before long, an infinite Elo reported as None
    while not wins.decided:
        wins.add(top)
        assert wins.units <= 200
    assert wins.state == H1
    assert (wins.elo_estimate().score, wins.elo_estimate().elo, wins.elo_estimate().los) == (1.0, None, 1.0)
    assert "H1 accepted" in wins.summary() and "Elo +∞" in wins.summary()

    losses = Sprt(0, elo1, kind=kind, model=model)
    while not losses.decided:
        losses.add(0)
        assert losses.units <= 200
    assert losses.state == H0 and "Elo −∞" in losses.summary()
    for counts in ([0] * top + [1], [1] + [0] * top, [10**6] * (top + 1), [0] * (top // 2) + [10**7] + [0] * (top // 2),
                   [10**7] + [0] * (top - 1) + [1]):
        for elo0, elo1 in ((-200, 200), (0, 0.01), (-1, 0)):
            assert math.isfinite(llr(counts, elo0, elo1, model))


def test_the_decision_stays_and_later_units_still_count() -> None:
    """Games in flight when a bound is crossed finish and are recorded: they count, the decision does not change."""
    test = Sprt(0, 10)
    while test.add(2) == CONTINUE:
        pass
    decided_at = test.units
    assert (test.state, test.decided_at) == (H1, decided_at) and test.llr > test.upper
    for _ in range(10):
        test.add(0)
    assert (test.state, test.decided_at, test.units) == (H1, decided_at, decided_at + 10)
    assert test.llr < test.upper and test.counts == [10, 0, decided_at]


@pytest.mark.parametrize("bound", ["lower", "upper"])
def test_an_llr_on_a_bound_goes_on(bound: str, monkeypatch) -> None:
    """fishtest's comparisons: H0 only below the lower bound, H1 only above the upper one; an LLR equal to a bound
    continues. The LLR is set to the bound exactly (no counts give a float exactly on it), then a hair beyond it."""
    from arena.tournament import sprt

    test = Sprt(0, 10)
    edge = getattr(test, bound)
    assert test.verdict(edge) == CONTINUE
    monkeypatch.setattr(sprt, "llr", lambda *args: edge)
    assert test.add(1) == CONTINUE and test.llr == edge and (test.decided, test.decided_at) == (False, None)
    beyond = math.nextafter(edge, -math.inf if bound == "lower" else math.inf)
    monkeypatch.setattr(sprt, "llr", lambda *args: beyond)
    assert test.add(1) == (H0 if bound == "lower" else H1) and test.decided_at == 2


def test_parameters_are_checked() -> None:
    for args, kwargs in [((10, 0), {}), ((0, 0), {}), ((0, 10, 0.5), {}), ((0, 10), {"kind": "hexanomial"}),
                         ((0, 10), {"kind": 0}), ((0, 10), {"model": "bayeselo"}), ((math.nan, 10), {}),
                         ((0, 5000), {}), ((0, 250), {"model": "normalized"})]:
        with pytest.raises(SprtError):
            Sprt(*args, **kwargs)
    test = Sprt(0, 10, kind="pentanomial")
    for outcome in (-1, 5, 2.0, True, "2"):
        with pytest.raises(SprtError):
            test.add(outcome)  # type: ignore[arg-type]
    with pytest.raises(SprtError):
        test.add_games([WIN])  # one game is not a deal set
    with pytest.raises(SprtError):
        llr([1, 2], 0, 10)
    with pytest.raises(SprtError):
        llr([1, -2, 3], 0, 10)
    assert test.units == 0


# --- outcomes -------------------------------------------------------------------------------------------------------


def test_buckets() -> None:
    assert [trinomial_bucket(game) for game in (LOSS, DRAW, WIN)] == [0, 1, 2]
    pairs = {(LOSS, LOSS): 0, (LOSS, DRAW): 1, (DRAW, LOSS): 1, (LOSS, WIN): 2, (WIN, LOSS): 2, (DRAW, DRAW): 2,
             (DRAW, WIN): 3, (WIN, DRAW): 3, (WIN, WIN): 4}
    for (first, second), expected in pairs.items():
        assert pentanomial_bucket(first, second) == expected
    with pytest.raises(SprtError):
        trinomial_bucket(Meetings(1, 1, 1))
    with pytest.raises(SprtError):
        pentanomial_bucket(WIN, Meetings(2, 0, 0))
    assert bucket([Meetings(2, 0, 1), Meetings(0, 3, 0), Meetings(1, 1, 1)]) == 4 + 3 + 3
    test = Sprt(0, 10, kind=9)  # a 3-rotation deal set of a 4-player game, the opponent on three sides
    assert (test.kind, len(test.counts)) == ("19-nomial", 19)
    assert test.add_games([Meetings(2, 0, 1), Meetings(0, 3, 0), Meetings(1, 1, 1)]) == CONTINUE
    assert test.counts[10] == 1


def outcome(seats: str, scores: tuple[int, ...], ranking: tuple[int, ...], winner: int | None,
            side_of: tuple[int, ...] | None = None, faults: tuple[int, ...] = ()) -> GameOutcome:
    names = tuple(seats.split())
    return GameOutcome(index=0, deal_key="0/0", seats=names,
                       side_of=side_of if side_of is not None else tuple(range(len(names))), scores=scores,
                       ranking=ranking, winner=winner, fault_seats=faults)


def test_meetings_from_game_outcomes() -> None:
    two = outcome("A B", (100, 60), (0, 1), 0)
    assert (outcome_meetings(two, "A", "B"), outcome_meetings(two, "B", "A")) == (WIN, LOSS)
    drawn = outcome("A B", (80, 80), (0, 1), None)
    assert outcome_meetings(drawn, "A", "B") == DRAW
    teams = outcome("A B A B", (50, 100), (1, 0), 1, side_of=(0, 1, 0, 1))
    assert outcome_meetings(teams, "A", "B") == LOSS  # two seats, one side: one meeting
    # Mexican Train (lowest pips win), the candidate against one entrant on the three other sides: it placed second,
    # above two of them.
    train = outcome("C G G G", (40, 55, 10, 70), (2, 0, 1, 3), 2)
    assert outcome_meetings(train, "C", "G") == Meetings(2, 0, 1)
    assert outcome_meetings(train, "C") == Meetings(2, 0, 1)
    # A tie for second between the candidate and one opponent side.
    tied = outcome("C G G G", (40, 40, 10, 70), (2, 0, 1, 3), 2)
    assert outcome_meetings(tied, "C", "G") == Meetings(1, 1, 1)
    # Fewer entrants than seats: A holds sides 0 and 2, B sides 1 and 3, four meetings.
    shared = outcome("A B A B", (10, 20, 30, 40), (0, 1, 2, 3), 0)
    assert outcome_meetings(shared, "A", "B") == Meetings(3, 0, 1)
    # A faulting side is placed below every clean side, whatever its score.
    faulted = outcome("A B", (100, 60), (1, 0), 1, faults=(0,))
    assert outcome_meetings(faulted, "A", "B") == LOSS
    assert meetings([0, 1, 1], [0], [1, 2]) == Meetings(2, 0, 0)
    with pytest.raises(SprtError):
        outcome_meetings(two, "A", "Z")
    with pytest.raises(SprtError):
        outcome_meetings(two, "Z", "A")


# --- saving and resuming --------------------------------------------------------------------------------------------


def test_json_round_trip() -> None:
    test = Sprt(-5, 15, alpha=0.05, beta=0.1, kind="pentanomial", model="normalized")
    for outcome_index in [4, 3, 2, 2, 1, 4, 3, 3, 0, 4, 2]:
        test.add(outcome_index)
    data = json.loads(json.dumps(test.to_json()))
    assert data["kind"] == "pentanomial" and data["meetings"] == 2 and data["counts"] == [1, 1, 3, 3, 3]
    assert data["bounds"] == [pytest.approx(math.log(0.1 / 0.95)), pytest.approx(math.log(0.9 / 0.05))]
    back = Sprt.from_json(data)
    assert back.to_json() == test.to_json()
    back.add(4)
    test.add(4)
    assert back.llr == test.llr

    decided = Sprt(0, 10)
    while decided.add(2) == CONTINUE:
        pass
    decided.add(0)
    back = Sprt.from_json(json.loads(json.dumps(decided.to_json())))
    assert (back.state, back.decided_at, back.counts) == (H1, decided.decided_at, decided.counts)

    good = Sprt(0, 10).to_json()
    for change in ({"counts": [1, 2]}, {"counts": [1, -1, 0]}, {"state": "H2"}, {"state": "H1"},
                   {"decided_at": 3}, {"elo0": "zero"}, {"meetings": 0}):
        with pytest.raises(SprtError):
            Sprt.from_json({**good, **change})
    bad = dict(good)
    del bad["counts"]
    for data in (bad, [], None):
        with pytest.raises(SprtError):
            Sprt.from_json(data)


# --- seeded simulations ---------------------------------------------------------------------------------------------


def play(rng: random.Random, win: float, draw: float) -> Meetings:
    r = rng.random()
    return WIN if r < win else DRAW if r < win + draw else LOSS


def simulate(test: Sprt, seed: int, elo: float, draw: float = 0.2, most: int = 100_000) -> tuple[str, int]:
    """Play units until the test decides: single games, or deal sets of two games whose deal favours one seat (the
    candidate's chance to win rises by a random amount in one rotation and falls by as much in the other, so the two
    games of a deal set are negatively correlated, as duplicate deals make them)."""
    rng = random.Random(seed)
    win = expected_score(elo) - draw / 2
    loss = 1 - draw - win
    while not test.decided and test.units < most:
        if test.meetings == 1:
            test.add_games([play(rng, win, draw)])
        else:
            luck = rng.uniform(0, min(win, loss))
            test.add_games([play(rng, win + luck, draw), play(rng, win - luck, draw)])
    return test.state, test.units


# (model, elo0, elo1, kind, most units for the stronger player, most units for equal players). Expected lengths
# (Wald): about 500 games / 250 deal sets for the stronger player, 5,000 games / 2,000 deal sets for equal ones with
# logistic [0, 10]; normalized [0, 20] is wider and quicker.
SIMULATIONS = [
    ("logistic", 0, 10, "trinomial", 2_000, 40_000),
    ("logistic", 0, 10, "pentanomial", 1_000, 20_000),
    ("normalized", 0, 20, "trinomial", 2_000, 20_000),
    ("normalized", 0, 20, "pentanomial", 1_000, 10_000),
]


@pytest.mark.parametrize("model, elo0, elo1, kind, most_stronger, most_equal", SIMULATIONS)
def test_a_stronger_player_is_accepted_equal_ones_rejected(
        model: str, elo0: float, elo1: float, kind: str, most_stronger: int, most_equal: int) -> None:
    for seed in range(3):
        state, units = simulate(Sprt(elo0, elo1, kind=kind, model=model), seed, elo=60)
        assert state == H1 and units <= most_stronger, (seed, state, units)
    # Equal players: H0 is accepted, but by design with a 5% chance (alpha) the test accepts H1 instead, so one run
    # in a few may; every run decides within the bound.
    results = [simulate(Sprt(elo0, elo1, kind=kind, model=model), seed, elo=0) for seed in range(4)]
    assert all(state != CONTINUE and units <= most_equal for state, units in results), results
    assert sum(state == H0 for state, _ in results) >= 3, results
