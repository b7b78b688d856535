"""The sequential probability ratio test (SPRT) of a two-sided match-up, as fishtest computes it: pure arithmetic,
no I/O.

A test asks whether a candidate is stronger than its opponent. H0: its Elo against the opponent is ``elo0``; H1: it
is ``elo1`` (``elo0 < elo1``). After every *unit* (a single game, or a duplicate deal set) the log-likelihood ratio
(LLR) of H1 against H0 is compared with two bounds: below ``log(beta / (1 - alpha))`` H0 is accepted, above
``log((1 - beta) / alpha)`` H1 is accepted, in between the test goes on. ``alpha`` is the chance of accepting H1 when
H0 holds (a false positive), ``beta`` the chance of accepting H0 when H1 holds (a false negative); 0.05 and 0.05 give
the bounds ±2.944.

Units and outcomes:

- A **meeting** is one side of the candidate against one side of the opponent in one game: a win when the
  candidate's side is placed above the opponent's, a draw when they share a place, a loss otherwise (places as the
  standings define them, see :func:`arena.tournament.standings.places`: a faulting side is placed below every clean
  side). In a two-sided game (two players, or two teams) a game is one meeting and this is the plain win, draw or
  loss. In a game with more sides every pair of a candidate side and an opponent side is a meeting, so with the
  candidate on one side and the opponent on the three others a game is three meetings (the standings' pairwise
  cells count the same way); "win" is "placed above that opponent side", so two equal players score ½ per meeting
  whatever the table size.
- **Trinomial** (no duplicate deals): the unit is a game of one meeting, with score 0, ½ or 1 (loss, draw, win).
- **Pentanomial** (duplicate deals, two rotations): the unit is the deal set, both rotations of one deal; its score is
  the candidate's half points over the two games, 0, ½, 1, 1½ or 2 (LL, LD, LW or DD, DW, WW), divided by 2 as
  fishtest does: 0, ¼, ½, ¾, 1. The games of one deal set are not independent (the same hands, seats swapped), so
  the deal set is the sample.
- In general a unit of ``m`` meetings has ``2m + 1`` outcomes, its half points 0..2m, and its score is the half
  points over ``2m`` (fishtest's ``stats`` takes "an array of length 2n+1 for n games"); e.g. a 4-rotation deal set of
  a 4-player game with the opponent on the three other sides is 12 meetings, 25 outcomes.

The LLR (fishtest's ``LLR_logistic`` / ``LLR_normalized``, ``server/fishtest/stats/LLRcalc.py``, and the notes of
M. Van den Bergh, https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf and normalized_elo_practical.pdf) is
the *generalised* log-likelihood ratio: the outcome distribution is not assumed (no draw model), each hypothesis is
represented by the maximum-likelihood distribution among those that satisfy it.

- Counts ``n_i`` of the outcomes with scores ``a_i = i / (K - 1)`` (K outcomes); an outcome never seen counts
  ``REGULARIZE`` (1e-3) instead of 0, so every outcome keeps a positive probability; ``N = sum n_i`` and the
  empirical distribution is ``p_i = n_i / N``.
- **Logistic** Elo: H_j says the expected score of a unit is ``s_j = 1 / (1 + 10^(-elo_j / 400))``. The distribution
  of largest likelihood with expected score s is ``q_i = p_i / (1 + x·(a_i - s))``, x the root of the secular equation
  ``sum p_i (a_i - s) / (1 + x (a_i - s)) = 0`` on the interval where every ``1 + x (a_i - s) > 0`` (one root: the
  sum falls from +inf to -inf there). Then ``LLR = sum n_i log(q1_i / q0_i)``
  ``= sum n_i [log(1 + x0 (a_i - s0)) - log(1 + x1 (a_i - s1))]``.
- **Normalized** Elo: H_j says the t-value ``(mu - 1/2) / sigma`` of a unit's score is ``t_j``, with
  ``t_j = nelo_j / (800 / ln 10) · sqrt(m)`` (m meetings per unit: ``nelo / 347.4`` per game, times sqrt(2) for a
  pair, as fishtest). Its maximum-likelihood distribution is found by fishtest's fixed point: from the uniform
  distribution, repeatedly solve the secular equation with ``a_i - 1/2 - t sigma (1 + ((mu - a_i) / sigma)^2) / 2``
  in place of ``a_i - s`` (mu, sigma of the current distribution), until it no longer moves. Normalized Elo is
  ``(score - 1/2) / sigma_per_game · 800 / ln 10`` and so does not depend on the draw rate.

Fishtest's stopping rule also moves the bounds by an estimate of the overshoot of its batched updates; here the LLR
is compared with the plain bounds after every unit, the Wald rule.

The Elo estimate (:meth:`Sprt.elo_estimate`) is fishtest's ``get_elo``: the mean unit score ``mu`` and the variance
of the unit scores over the units (``sum n_i (a_i - mu)^2 / N``, the denominator N as fishtest), the 95% interval
``mu ± 1.96·sqrt(var / N)``, each turned into Elo with ``-400·log10(1/x - 1)`` after clamping into
``[ELO_CLAMP, 1 - ELO_CLAMP]``; the likelihood of superiority ``Phi((mu - 1/2) / sqrt(var / N))``. Unlike fishtest the
counts are not regularized for the estimate: a score of 0 or 1 is an infinite Elo, reported as None (as the
standings do). It is the naive estimate: it does not correct for the bias of a test that stopped early.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from arena.errors import ArenaError
from arena.tournament.ratings import Z95, elo_bounds, elo_of_score, score_interval, score_of_elo
from arena.tournament.standings import GameOutcome, places, sides_held

LOGISTIC = "logistic"
NORMALIZED = "normalized"
MODELS = (LOGISTIC, NORMALIZED)
"""The Elo models of ``elo0`` and ``elo1``: logistic (the expected score, as the standings' Elo) or normalized (the
t-value of the score, independent of the draw rate)."""
ELO_LIMITS = {LOGISTIC: 4000.0, NORMALIZED: 200.0}
"""The largest ``elo0`` or ``elo1`` either way, in each model's Elo: beyond them the expected score is 0 or 1 to
within rounding (logistic), or the fixed point of the LLR fails (normalized)."""
ERROR_RATE_BOUNDS = (0.0, 0.5)
"""``alpha`` and ``beta`` lie strictly between these: a rate of 0 needs endless games, one of 0.5 or more decides
by coin toss."""
TRINOMIAL = "trinomial"
PENTANOMIAL = "pentanomial"
KINDS = {TRINOMIAL: 1, PENTANOMIAL: 2}
"""Meetings per unit of each named kind: a single game (3 outcomes), a deal set of two games (5 outcomes)."""
CONTINUE = "continue"
H0 = "H0"
H1 = "H1"
STATES = (CONTINUE, H0, H1)
"""The test goes on, or H0 / H1 was accepted (at the first unit after which the LLR crossed a bound)."""
REGULARIZE = 1e-3
"""The count an outcome never seen gets in the LLR (fishtest's ``regularize``)."""
NELO_PER_T = 800.0 / math.log(10.0)
"""Normalized Elo per unit of t-value per game (347.44, fishtest's ``nelo_divided_by_nt``)."""
_FIXED_POINT_ROUNDS = 200
_FIXED_POINT_TOLERANCE = 1e-12


class SprtError(ArenaError, ValueError):
    """Parameters or saved data of a test that do not fit (the counts of a running test never raise)."""


class _NoRoot(ArithmeticError):
    """The secular equation has no root: its shifts do not change sign."""


# --- the bounds ---------------------------------------------------------------------------------------------------


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the LLR: ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``; ±2.944 for 0.05 and 0.05."""
    _check_error_rate("alpha", alpha)
    _check_error_rate("beta", beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


# --- the LLR ------------------------------------------------------------------------------------------------------


def llr(counts: Sequence[float], elo0: float, elo1: float, model: str = LOGISTIC) -> float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for the outcome counts, worst
    outcome first: ``[losses, draws, wins]`` (trinomial), ``[LL, LD, LW+DD, DW, WW]`` (pentanomial), or any odd
    number ``2m + 1`` of counts of a unit of m meetings. Fishtest's ``LLR_logistic`` / ``LLR_normalized`` (see the
    module docstring); 0.0 before any unit."""
    values = _check_counts(counts)
    _check_model(model)
    _check_elo("elo0", elo0, model)
    _check_elo("elo1", elo1, model)
    if sum(counts) == 0:
        return 0.0
    if elo0 == elo1:
        return 0.0
    n = [float(c) if c > 0 else REGULARIZE for c in counts]
    total = sum(n)
    p = [c / total for c in n]
    if model == LOGISTIC:
        log_q0 = _mean_mle(values, p, score_of_elo(elo0))
        log_q1 = _mean_mle(values, p, score_of_elo(elo1))
    else:
        meetings = (len(counts) - 1) // 2
        scale = math.sqrt(meetings) / NELO_PER_T
        try:
            log_q0 = _t_value_mle(values, p, 0.5, elo0 * scale)
            log_q1 = _t_value_mle(values, p, 0.5, elo1 * scale)
        except _NoRoot:  # the fixed point can fail for hypotheses beyond about ±200 normalized Elo (a t-value of
            # 0.6 per game), which the checks refuse: fishtest's closed-form approximation (its section 4.2) then
            return _normalized_approximation(values, p, total, meetings, elo0, elo1)
    return sum(c * (l1 - l0) for c, l0, l1 in zip(n, log_q0, log_q1, strict=True))


def _tilt(p: Sequence[float], shifts: Sequence[float], start: float = 0.0) -> tuple[list[float], float]:
    """The root x of ``f(x) = sum p_i b_i / (1 + x b_i) = 0`` with every ``1 + x b_i > 0`` (b = ``shifts``), and
    the denominators ``d_i = 1 + x b_i`` there (the most likely distribution is ``p_i / d_i``). f falls strictly from
    +inf to -inf on that interval, so the root is unique. Needs some b_i < 0 < some b_j (and every p_i > 0).

    The root lies between 0 and the pole of the outcome with the extreme shift on the side f(0) points to (the
    smallest b when f(0) > 0, the largest when f(0) < 0); it can lie very close to that pole, when the hypothesis
    needs that outcome far more often than it was seen. So the unknown is ``e = 1 + x b_pole`` in (0, 1), in which
    every ``d_i = 1 - r_i + e r_i`` (r_i = b_i / b_pole) keeps its relative precision, and Newton's method (from
    ``start``, else e = 1/2; a step that leaves the bracket replaced by bisection) is run on ``H(e) = e·f``, which has
    the same root but no pole."""
    low_b, high_b = min(shifts), max(shifts)
    if not low_b < 0.0 < high_b:
        raise _NoRoot(f"shifts {list(shifts)} do not change sign")
    at_zero = sum(pi * b for pi, b in zip(p, shifts, strict=True))
    if at_zero == 0.0:
        return [1.0] * len(shifts), 0.0
    pole_b = low_b if at_zero > 0.0 else high_b
    sign = 1.0 if at_zero > 0.0 else -1.0  # sign·H rises from < 0 at e = 0 to > 0 at e = 1
    ratios = [b / pole_b for b in shifts]
    constant = sum(pi * b for pi, b, r in zip(p, shifts, ratios, strict=True) if r == 1.0)  # H(0): the pole's own term
    low, high = 0.0, 1.0
    e = 1.0 + start * pole_b
    if not low < e < high:
        e = 0.5
    for _ in range(200):
        h = constant
        slope = 0.0
        for pi, b, r in zip(p, shifts, ratios, strict=True):
            if r != 1.0:
                d = 1.0 - r + e * r
                h += e * pi * b / d
                slope += pi * b * (1.0 - r) / (d * d)
        if sign * h < 0.0:
            low = e
        elif sign * h > 0.0:
            high = e
        else:
            break
        step = e - h / slope if slope != 0.0 else math.nan
        if abs(step - e) <= 4e-16 * e:  # as close as floats get
            if low <= step <= high:
                e = step
            break
        following = step if low < step < high else low + (high - low) / 2.0
        if following in (low, high):
            break
        e = following
    return [e if r == 1.0 else 1.0 - r + e * r for r in ratios], (e - 1.0) / pole_b


def _mean_mle(values: Sequence[float], p: Sequence[float], s: float) -> list[float]:
    """The logs of ``q_i / p_i``, q the most likely distribution with expected score s (fishtest's
    ``MLE_expected``): ``q_i = p_i / (1 + x (a_i - s))``."""
    denominators, _ = _tilt(p, [a - s for a in values])
    return [-math.log(d) for d in denominators]


def _t_value_mle(values: Sequence[float], p: Sequence[float], ref: float, t: float) -> list[float]:
    """The logs of ``q_i / p_i``, q the most likely distribution with t-value ``(mu - ref) / sigma = t`` (fishtest's
    ``MLE_t_value``, its fixed point from the uniform distribution)."""
    q = [1.0 / len(values)] * len(values)
    logs: list[float] = [0.0] * len(values)
    x = 0.0
    for _ in range(_FIXED_POINT_ROUNDS):
        mu = sum(qi * a for qi, a in zip(q, values, strict=True))
        sigma = math.sqrt(max(sum(qi * (a - mu) ** 2 for qi, a in zip(q, values, strict=True)), 1e-300))
        shifts = [a - ref - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0 for a in values]
        denominators, x = _tilt(p, shifts, x)
        logs = [-math.log(d) for d in denominators]
        following = [pi / d for pi, d in zip(p, denominators, strict=True)]
        moved = max(abs(a - b) for a, b in zip(q, following, strict=True))
        q = following
        if moved < _FIXED_POINT_TOLERANCE:
            break
    return logs


def _normalized_approximation(values: Sequence[float], p: Sequence[float], total: float, meetings: int,
                              nelo0: float, nelo1: float) -> float:
    """Fishtest's ``LLR_normalized_alt``: ``games / 2 · log((1 + (t - t0)^2) / (1 + (t - t1)^2))`` per game."""
    mu = sum(pi * a for pi, a in zip(p, values, strict=True))
    variance = sum(pi * (a - mu) ** 2 for pi, a in zip(p, values, strict=True))
    sigma_per_game = math.sqrt(meetings * variance)
    if sigma_per_game == 0.0:
        return 0.0
    t = (mu - 0.5) / sigma_per_game
    t0, t1 = nelo0 / NELO_PER_T, nelo1 / NELO_PER_T
    return total * meetings / 2.0 * math.log((1.0 + (t - t0) ** 2) / (1.0 + (t - t1) ** 2))


# --- outcomes -----------------------------------------------------------------------------------------------------


class Meetings(NamedTuple):
    """The candidate's results in one game against the opponent, one per meeting (see the module docstring)."""

    wins: int
    draws: int
    losses: int

    @property
    def total(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def half_points(self) -> int:
        """2 per win, 1 per draw."""
        return 2 * self.wins + self.draws


WIN = Meetings(1, 0, 0)
DRAW = Meetings(0, 1, 0)
LOSS = Meetings(0, 0, 1)
"""The result of a two-sided game, from the candidate's point of view."""


def meetings(places: Sequence[int], candidate_sides: Iterable[int], opponent_sides: Iterable[int]) -> Meetings:
    """The candidate's meetings in one game: every candidate side against every opponent side (a side held by both
    is skipped), a win when the candidate's side has the better (smaller) place, a draw when the places are equal.
    ``places`` is the place of each side, 0 first (as :func:`arena.tournament.standings.places` gives it)."""
    wins = draws = losses = 0
    opponent = sorted(set(opponent_sides))
    for mine in sorted(set(candidate_sides)):
        for theirs in opponent:
            if mine == theirs:
                continue
            if places[mine] < places[theirs]:
                wins += 1
            elif places[mine] == places[theirs]:
                draws += 1
            else:
                losses += 1
    return Meetings(wins, draws, losses)


def outcome_meetings(outcome: GameOutcome, candidate: str, opponent: str | None = None) -> Meetings:
    """The candidate's meetings in a finished game against ``opponent`` (an entrant name; None: every other entrant
    at the table), with the standings' places (faults placed last)."""
    held = sides_held(outcome)
    if candidate not in held:
        raise SprtError(f"expected {candidate!r} at the table, got seats {outcome.seats!r}")
    if opponent is None:
        theirs = [side for name, sides in held.items() if name != candidate for side in sides]
    elif opponent in held:
        theirs = held[opponent]
    else:
        raise SprtError(f"expected {opponent!r} at the table, got seats {outcome.seats!r}")
    return meetings(places(outcome), held[candidate], theirs)


def bucket(games: Iterable[Meetings]) -> int:
    """The outcome index of a unit (one game, or every game of a deal set): its half points, 0..2m for m meetings."""
    return sum(game.half_points for game in games)


def trinomial_bucket(game: Meetings) -> int:
    """0, 1, 2 for a loss, draw, win of a single two-sided game."""
    if game.total != 1:
        raise SprtError(f"expected one meeting in a trinomial game, got {game}")
    return game.half_points


def pentanomial_bucket(first: Meetings, second: Meetings) -> int:
    """0..4 for the two games of a duplicate deal set of a two-sided game: LL 0, LD 1, LW or DD 2, DW 3, WW 4 (the
    order of the two games does not matter)."""
    if first.total != 1 or second.total != 1:
        raise SprtError(f"expected one meeting in each game of a pentanomial pair, got {first} and {second}")
    return first.half_points + second.half_points


# --- the test -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SprtEstimate:
    """The candidate's Elo against the opponent from the counts of a test (see the module docstring)."""

    units: int
    """Games (trinomial) or deal sets (pentanomial) counted."""
    score: float | None
    """The mean unit score, 0..1 (None before any unit)."""
    elo: float | None
    """Logistic Elo of the score; None when infinite (a score of 0 or 1) or unknown."""
    low: float | None
    high: float | None
    """The 95% interval in logistic Elo; None with fewer than 2 units or an infinite Elo."""
    nelo: float | None
    nelo_low: float | None
    nelo_high: float | None
    """Normalized Elo and its 95% interval; None when the unit scores have no spread (or as above)."""
    los: float | None
    """The likelihood of superiority, ``Phi((mu - 1/2) / sqrt(var / N))``; None before any unit."""

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if self.low is None or self.high is None else (self.low, self.high)

    def to_json(self) -> dict[str, Any]:
        return {
            "units": self.units, "score": self.score, "elo": self.elo,
            "elo_interval": list(self.interval) if self.interval else None,
            "nelo": self.nelo,
            "nelo_interval": None if self.nelo_low is None or self.nelo_high is None
            else [self.nelo_low, self.nelo_high],
            "los": self.los,
        }


class Sprt:
    """One running test: its parameters, the outcome counts, the LLR and the decision.

    ``add`` one unit's outcome index at a time (see :func:`bucket`). The state is decided by the first unit after
    which the LLR is outside the bounds, and stays: units added after it (games that were in flight when the test
    stopped) still count in the counts, the LLR and the estimate, and ``decided_at`` keeps the unit count at the
    decision."""

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05, kind: str | int = TRINOMIAL,
                 model: str = LOGISTIC) -> None:
        """``kind``: "trinomial" (single games), "pentanomial" (deal sets of two games), or the number of meetings
        per unit (1 and 2 are those two)."""
        _check_model(model)
        _check_elo("elo0", elo0, model)
        _check_elo("elo1", elo1, model)
        if not elo0 < elo1:
            raise SprtError(f"expected elo0 < elo1, got elo0 = {elo0} and elo1 = {elo1}")
        self.lower, self.upper = bounds(alpha, beta)
        self.elo0, self.elo1, self.alpha, self.beta, self.model = float(elo0), float(elo1), alpha, beta, model
        self.meetings = _meetings_of(kind)
        self.counts = [0] * (2 * self.meetings + 1)
        self.state = CONTINUE
        self.decided_at: int | None = None
        self._llr = 0.0

    @property
    def kind(self) -> str:
        """"trinomial", "pentanomial", or "<K>-nomial" for K outcomes."""
        for name, meetings in KINDS.items():
            if meetings == self.meetings:
                return name
        return f"{2 * self.meetings + 1}-nomial"

    @property
    def units(self) -> int:
        return sum(self.counts)

    @property
    def llr(self) -> float:
        return self._llr

    @property
    def decided(self) -> bool:
        return self.state != CONTINUE

    def add(self, outcome: int) -> str:
        """Count one unit with outcome index ``outcome`` (0..2m, worst first); returns the state."""
        if isinstance(outcome, bool) or not isinstance(outcome, int) or not 0 <= outcome < len(self.counts):
            raise SprtError(f"expected an outcome index 0..{len(self.counts) - 1} for a {self.kind} test, "
                            f"got {outcome!r}")
        self.counts[outcome] += 1
        self._update()
        return self.state

    def add_games(self, games: Iterable[Meetings]) -> str:
        """Count one unit from its games' meetings (one game, or every game of a deal set)."""
        games = list(games)
        total = sum(game.total for game in games)
        if total != self.meetings:
            raise SprtError(f"expected {self.meetings} meetings per unit in a {self.kind} test, got {total} "
                            f"in {games}")
        return self.add(bucket(games))

    def _update(self) -> None:
        self._llr = llr(self.counts, self.elo0, self.elo1, self.model)
        if self.state == CONTINUE:
            self.state = self.verdict(self._llr)
            if self.state != CONTINUE:
                self.decided_at = self.units

    def verdict(self, value: float) -> str:
        """What an LLR says: H0 below the lower bound, H1 above the upper one, else continue (fishtest's strict
        comparisons)."""
        if value < self.lower:
            return H0
        if value > self.upper:
            return H1
        return CONTINUE

    def elo_estimate(self) -> SprtEstimate:
        """The Elo of the candidate against the opponent, with its 95% interval (see the module docstring)."""
        units = self.units
        if units == 0:
            return SprtEstimate(0, None, None, None, None, None, None, None, None)
        top = len(self.counts) - 1
        mu = sum(c * i for i, c in enumerate(self.counts)) / top / units
        variance = max(0.0, sum(c * (i / top - mu) ** 2 for i, c in enumerate(self.counts)) / units)
        error = math.sqrt(variance / units)
        elo = elo_of_score(mu)
        low = high = None
        if units >= 2 and elo is not None:
            low, high = elo_bounds(score_interval(mu, error))
        nelo = nelo_low = nelo_high = None
        if variance > 0.0:
            per_game = math.sqrt(self.meetings * variance)
            nelo = (mu - 0.5) / per_game * NELO_PER_T
            if units >= 2:
                half = Z95 * error / per_game * NELO_PER_T
                nelo_low, nelo_high = nelo - half, nelo + half
        if error > 0.0:
            los = 0.5 * (1.0 + math.erf((mu - 0.5) / error / math.sqrt(2.0)))
        else:
            los = 1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5
        return SprtEstimate(units, mu, elo, low, high, nelo, nelo_low, nelo_high, los)

    def summary(self, unit: str | None = None) -> str:
        """One line: ``H1 accepted: LLR 2.97 [-2.94, 2.94], Elo +35.2 [+12.0, +58.9] (95%), 240 deal sets``
        (``running`` while undecided; ``unit``: what a unit is called, by default games for a trinomial test and
        deal sets otherwise)."""
        estimate = self.elo_estimate()
        head = {CONTINUE: "running", H0: "H0 accepted", H1: "H1 accepted"}[self.state]
        if estimate.score is None:
            elo = "Elo -"
        elif estimate.elo is None:
            elo = "Elo +∞" if estimate.score >= 1.0 else "Elo −∞"
        else:
            elo = f"Elo {_signed(estimate.elo)}"
            if estimate.interval:
                elo += f" [{_signed(estimate.interval[0])}, {_signed(estimate.interval[1])}] (95%)"
        unit = unit if unit is not None else "games" if self.meetings == 1 else "deal sets"
        return f"{head}: LLR {self._llr:.2f} [{self.lower:.2f}, {self.upper:.2f}], {elo}, {self.units} {unit}"

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``standings.json``; :meth:`from_json` takes it back (for ``--resume``)."""
        return {
            "kind": self.kind, "meetings": self.meetings, "model": self.model,
            "elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
            "bounds": [self.lower, self.upper], "counts": list(self.counts), "units": self.units,
            "llr": self._llr, "state": self.state, "decided_at": self.decided_at,
            "estimate": self.elo_estimate().to_json(),
        }

    @classmethod
    def from_json(cls, data: Any) -> Sprt:
        """A test back from :meth:`to_json`: parameters, counts, state and decision (the LLR computed again)."""
        if not isinstance(data, dict):
            raise SprtError(f"expected an object for an SPRT, got {type(data).__name__}")
        try:
            test = cls(data["elo0"], data["elo1"], data["alpha"], data["beta"], data["meetings"], data["model"])
            counts, state, decided_at = data["counts"], data["state"], data["decided_at"]
        except KeyError as missing:
            raise SprtError(f"expected key {missing} in a saved SPRT") from None
        except TypeError as wrong:
            raise SprtError(f"expected numbers in a saved SPRT: {wrong}") from None
        if (not isinstance(counts, list) or len(counts) != len(test.counts)
                or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts)):
            raise SprtError(f"expected {len(test.counts)} counts >= 0 in a saved {test.kind} SPRT, got {counts!r}")
        if state not in STATES:
            raise SprtError(f"expected a state among {', '.join(STATES)}, got {state!r}")
        if (state == CONTINUE) != (decided_at is None) or (
                decided_at is not None and (not isinstance(decided_at, int) or not 0 < decided_at <= sum(counts))):
            raise SprtError(f"expected decided_at between 1 and the units when decided, else null; got {decided_at!r} "
                            f"with state {state!r}")
        test.counts = list(counts)
        test._llr = llr(test.counts, test.elo0, test.elo1, test.model)
        test.state, test.decided_at = state, decided_at
        return test


def _signed(elo: float) -> str:
    return f"{elo:+.1f}"


def _meetings_of(kind: str | int) -> int:
    if isinstance(kind, str):
        if kind not in KINDS:
            raise SprtError(f"expected a kind among {', '.join(KINDS)} or a number of meetings, got {kind!r}")
        return KINDS[kind]
    if isinstance(kind, bool) or not isinstance(kind, int) or kind < 1:
        raise SprtError(f"expected a number of meetings per unit >= 1, got {kind!r}")
    return kind


def _check_counts(counts: Sequence[float]) -> list[float]:
    """The scores of the outcomes, 0..1 in equal steps, after checking the counts."""
    if len(counts) < 3 or len(counts) % 2 == 0:
        raise SprtError(f"expected an odd number >= 3 of outcome counts, got {len(counts)}")
    if any(not isinstance(c, (int, float)) or isinstance(c, bool) or not math.isfinite(c) or c < 0 for c in counts):
        raise SprtError(f"expected counts >= 0, got {list(counts)!r}")
    top = len(counts) - 1
    return [i / top for i in range(len(counts))]


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise SprtError(f"expected an Elo model among {', '.join(MODELS)}, got {model!r}")


def _check_elo(name: str, elo: float, model: str) -> None:
    if isinstance(elo, bool) or not isinstance(elo, (int, float)) or not math.isfinite(elo):
        raise SprtError(f"expected a number for {name}, got {elo!r}")
    if abs(elo) > ELO_LIMITS[model]:
        raise SprtError(f"expected {name} within ±{ELO_LIMITS[model]:g} {model} Elo, got {elo}")


def _check_error_rate(name: str, value: float) -> None:
    low, high = ERROR_RATE_BOUNDS
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value < high:
        raise SprtError(f"expected {name} between {low:g} and {high:g} (exclusive), got {value!r}")
