"""The leaderboard rating: a maximum-likelihood fit (with a weak prior) over deal-set results, with intervals.

The unit is a **deal set**: one result per deal set played under every seat rotation, given as its *places*, the
groups of entrants best first, the entrants of a group tied (``(("a",), ("b",))`` a beat b; ``(("a", "b"),)`` a
draw; ``(("a",), ("b", "c"), ("d",))`` four sides, b and c tied for second). The model is **Plackett–Luce**, which
for two sides is **Bradley–Terry**: entrant i has a strength θ_i (natural log-odds); a ranking without ties has the
probability of choosing its first from all, its second from the rest, and so on, each choice with probability
``e^θ_chosen / Σ_remaining e^θ``. With two sides that is ``P(a beats b) = 1 / (1 + e^-(θ_a − θ_b))``, the logistic
Elo curve of :mod:`~arena.tournament.ratings` (``elo = θ · ELO_PER_LOGIT``).

- **Ties** count as every way of breaking them, equally: the log-likelihood of a tied ranking is the mean of the
  log-likelihoods of the rankings that break its ties. With two sides a draw is exactly half a win for each (the
  same ½ the standings' match points and Elo give a draw, so the fitted Elo of two entrants is the Elo of their
  score fraction); no extra tie parameter is fitted (a Davidson tie parameter would say how often draws happen,
  which is not what a leaderboard is for, and it is poorly measured when draws are rare). The mean over the m!
  orders of a group of m tied entrants is computed in closed form from the group's 2^m − 1 subsets
  (:func:`ranking_terms`), so a group is limited to :data:`MAX_TIED` entrants.
- **Prior**: every θ_i is normal with mean 0 and a standard deviation of ``prior_sd_elo`` Elo (default
  :data:`PRIOR_SD_ELO`, 1000). It is weak (it moves a rating by a few Elo once an entrant has tens of deal sets),
  and it keeps every rating finite: an entrant with only wins gets a large finite rating with a wide interval.
  Its penalty is the same for every entrant and the likelihood does not change when all θ move together, so the
  fit's ratings always sum to zero: **the anchor is the field's mean, 0 Elo**.
- **The fit** is Newton's method on the log-posterior (concave, strictly with the prior, so the maximum is unique
  and Newton with a backtracking line search always reaches it), over :class:`Evidence`, the results summed into
  weighted terms (a million deal sets among a thousand entrants are a few hundred thousand terms). A refit starts
  from a previous fit's θ (``previous``: new entrants start at 0) and needs a step or two.
- **Intervals**: the covariance of θ is the inverse of the observed information (minus the Hessian of the
  log-posterior at its maximum), projected onto the sum-to-zero plane (``P C P`` with ``P = I − 11ᵀ/n``, the
  covariance of the ratings relative to the field's mean). An entrant's 95% interval is ``θ_i ± Z95·√C_ii``; two
  entrants **can be told apart** when the 95% interval of their difference, ``θ_i − θ_j ± Z95·√(C_ii + C_jj −
  2C_ij)``, excludes 0 and they are in the same connected component of the comparison graph.
- **A disconnected comparison graph** (groups of entrants that never met one another, even through others) leaves
  the groups' offsets to the prior alone, which centres each group on 0: entrants of different components are
  never told apart, whatever their intervals say (:attr:`Fit.components`).

BLAS runs on one thread unless ``OPENBLAS_NUM_THREADS`` says otherwise (set in :mod:`arena.tournament`, before
numpy is imported). No processes, no I/O, no global state: :func:`fit` and :func:`leaderboard` are pure functions of their arguments,
safe to call from a worker thread while a :class:`Tally` goes on collecting results elsewhere (take
:meth:`Tally.evidence` first: it copies).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from arena.errors import ArenaError
from arena.tournament.ratings import Z95, elo_of_logit, logit_of_elo

Floats = npt.NDArray[np.floating[Any]]
"""Ratings, weights, coefficients and their covariance: float arrays (float64 throughout; numpy's linear algebra is
typed as returning any floating type)."""
Counts = npt.NDArray[np.int64]
"""Entrant indices, deal-set counts and component labels: integer arrays."""
Scalar = TypeVar("Scalar", bound=np.generic)

PRIOR_SD_ELO = 1000.0
"""The prior's standard deviation on every rating, in Elo: wide against a ladder's spread of a few hundred Elo."""
MAX_TIED = 12
"""The most entrants one group of a result may hold (2^m − 1 terms for m tied: 4,095 at 12, Mexican Train's most)."""
TOLERANCE = 1e-9
"""Newton stops when no θ moved by more than this (natural log-odds, about 4e-7 Elo)."""
MAX_ITERATIONS = 200
"""Newton's iterations before the fit gives up (a damped Newton on this concave problem takes far fewer)."""
TIE_RULE = ("rank a–b: a is 1 + the entrants told apart above it, b the field less those told apart below it; "
            "told apart: the 95% interval of the difference excludes 0")
"""The leaderboard's rank column in a line, for a caption under the table."""

Places = Sequence[Sequence[str]]
"""A deal set's result: groups of entrant names, best first; the entrants of one group are tied."""


class FitError(ArenaError, ValueError):
    """A result the fit cannot take (an empty group, an entrant twice, one entrant alone, a tie too large)."""


# --- results into terms -----------------------------------------------------------------------------------------


def places_of_points(points: Mapping[str, float | Fraction]) -> tuple[tuple[str, ...], ...]:
    """A deal set's places from each entrant's points in it (its match points over the rotations, say): more
    points place higher, equal points tie. Names within a group are sorted, so equal inputs give equal places."""
    levels = sorted(set(points.values()), reverse=True)
    return tuple(tuple(sorted(name for name, value in points.items() if value == level)) for level in levels)


def check_places(places: Places) -> None:
    """Refuse a result the model cannot read, before anything is counted."""
    names = [name for group in places for name in group]
    if any(len(group) == 0 for group in places):
        raise FitError(f"every group of a result needs at least one entrant, got {places!r}")
    if any(not isinstance(name, str) or not name for name in names):
        raise FitError(f"entrants are non-empty names, got {places!r}")
    if len(set(names)) != len(names):
        raise FitError(f"an entrant appears twice in one result: {places!r}")
    if len(names) < 2:
        raise FitError(f"a result needs at least two entrants, got {places!r}")
    if max(len(group) for group in places) > MAX_TIED:
        raise FitError(f"at most {MAX_TIED} entrants can tie in one group, got {max(map(len, places))}")


def ranking_terms(groups: Sequence[Sequence[int]]) -> tuple[dict[int, float], dict[tuple[int, ...], float]]:
    """One ranking's log-likelihood as ``Σ linear_i·θ_i − Σ weight_T·log Σ_{j∈T} e^θ_j``: (linear, {T: weight}).

    Every entrant is chosen once, so each gets +1 in ``linear``. A group G of m entrants, B those placed below it,
    is chosen from in m steps; with its ties broken in every order equally, the entrants of G still to choose at
    a step are a uniform random subset S of G, of each size 1..m once, so the group's denominators are
    ``Σ_{∅≠S⊆G} log Σ_{S∪B} e^θ / C(m, |S|)``. A set of one entrant contributes ``−weight·θ`` (folded into
    ``linear``), so an untied ranking keeps its plain Plackett–Luce terms and a two-sided draw is half a win each.
    """
    linear: dict[int, float] = {i: 1.0 for group in groups for i in group}
    terms: dict[tuple[int, ...], float] = {}
    below: tuple[int, ...] = ()
    for group in reversed(groups):
        m = len(group)
        for size in range(1, m + 1):
            weight = 1.0 / math.comb(m, size)
            for chosen in combinations(group, size):
                members = tuple(sorted(chosen + below))
                if len(members) == 1:
                    linear[members[0]] -= weight
                else:
                    terms[members] = terms.get(members, 0.0) + weight
        below = below + tuple(group)
    return linear, terms


@dataclass(frozen=True, eq=False)
class Evidence:
    """Results summed into the fit's terms, in arrays that do not change (a snapshot of a :class:`Tally`).

    ``linear[i]`` is θ_i's coefficient; each term of ``sets`` is ``(members, weights)``: an (m, s) array of entrant
    indices, s ≥ 2 the set's size, and m weights. ``deal_sets[i]`` counts the results entrant i took part in;
    ``components[i]`` labels the connected component of the comparison graph entrant i is in.
    """

    names: tuple[str, ...]
    deal_sets: Counts
    linear: Floats
    sets: tuple[tuple[Counts, Floats], ...]
    components: Counts

    def index(self) -> dict[str, int]:
        """Entrant name to its position in the arrays."""
        return {name: i for i, name in enumerate(self.names)}


def frozen(array: npt.NDArray[Scalar]) -> npt.NDArray[Scalar]:
    """The array made read-only, so an :class:`Evidence` or a :class:`Fit` shared with a thread cannot change."""
    array.setflags(write=False)
    return array


def component_labels(n: int, sets: Iterable[tuple[int, ...]]) -> Counts:
    """Connected components of the graph where the entrants of a term are joined (union-find), labelled 0, 1, ...
    in order of their first entrant."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in sets:
        first = root(members[0])
        for other in members[1:]:
            parent[root(other)] = first
    labels: dict[int, int] = {}
    return np.array([labels.setdefault(root(i), len(labels)) for i in range(n)], dtype=np.int64)


class Tally:
    """Deal-set results summed as they come (identical terms merge), ready for :meth:`evidence` at any time.

    Not thread-safe: one owner adds; a refit on another thread works on the copy :meth:`evidence` returns.
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._deal_sets: list[int] = []
        self._linear: list[float] = []
        self._terms: dict[tuple[int, ...], float] = {}
        self.results = 0

    def entrant(self, name: str) -> int:
        """The entrant's index, adding it (no results yet: the prior's 0 ± its width) when new."""
        if not isinstance(name, str) or not name:
            raise FitError(f"entrants are non-empty names, got {name!r}")
        if name not in self._index:
            self._index[name] = len(self._index)
            self._deal_sets.append(0)
            self._linear.append(0.0)
        return self._index[name]

    def add(self, places: Places) -> None:
        """Count one deal set's result (checked whole first, so a refused result counts nothing)."""
        check_places(places)
        groups = [[self.entrant(name) for name in group] for group in places]
        linear, terms = ranking_terms(groups)
        for i, coefficient in linear.items():
            self._linear[i] += coefficient
            self._deal_sets[i] += 1
        for members, weight in terms.items():
            self._terms[members] = self._terms.get(members, 0.0) + weight
        self.results += 1

    def evidence(self) -> Evidence:
        """A snapshot of everything counted, as arrays grouped by set size."""
        by_size: dict[int, list[tuple[tuple[int, ...], float]]] = {}
        for members, weight in self._terms.items():
            by_size.setdefault(len(members), []).append((members, weight))
        sets = tuple((frozen(np.array([m for m, _ in terms], dtype=np.int64)),
                      frozen(np.array([w for _, w in terms], dtype=np.float64)))
                     for _, terms in sorted(by_size.items()))
        return Evidence(names=tuple(self._index), deal_sets=frozen(np.array(self._deal_sets, dtype=np.int64)),
                        linear=frozen(np.array(self._linear, dtype=np.float64)), sets=sets,
                        components=frozen(component_labels(len(self._index), self._terms)))


# --- the fit ----------------------------------------------------------------------------------------------------


def softmax_rows(theta: Floats, members: Counts) -> tuple[Floats, Floats]:
    """Each term's choice probabilities over its members and its log-sum-exp, computed stably (max subtracted)."""
    values = theta[members]
    top = values.max(axis=1, keepdims=True)
    exp = np.exp(values - top)
    total = exp.sum(axis=1, keepdims=True)
    return exp / total, (top + np.log(total))[:, 0]


def log_posterior(evidence: Evidence, theta: Floats, precision: float) -> float:
    """``Σ linear·θ − Σ weight·logsumexp − precision·|θ|²/2``: the function the fit maximises."""
    value = float(evidence.linear @ theta) - 0.5 * precision * float(theta @ theta)
    for members, weights in evidence.sets:
        value -= float(weights @ softmax_rows(theta, members)[1])
    return value


def gradient_and_information(evidence: Evidence, theta: Floats, precision: float) -> tuple[Floats, Floats]:
    """The log-posterior's gradient and minus its Hessian (the observed information, positive definite).

    A term's gradient is ``−weight·p`` on its members (p its choice probabilities) and its information
    ``weight·(diag p − p pᵀ)``; the prior adds ``−precision·θ`` and ``precision·I``. Summed with ``bincount`` over
    flat indices, which is much faster than ``np.add.at``."""
    n = len(theta)
    gradient = evidence.linear - precision * theta
    packed = np.zeros(n * n)
    for members, weights in evidence.sets:
        probabilities, _ = softmax_rows(theta, members)
        weighted = weights[:, None] * probabilities
        gradient = gradient - np.bincount(members.ravel(), weighted.ravel(), minlength=n)
        outer = weighted[:, :, None] * probabilities[:, None, :]
        flat = members[:, :, None] * n + members[:, None, :]
        packed -= np.bincount(flat.ravel(), outer.ravel(), minlength=n * n)
        packed += np.bincount(members.ravel() * (n + 1), weighted.ravel(), minlength=n * n)
    information = packed.reshape(n, n)
    information[np.diag_indices(n)] += precision
    return gradient, information


def newton_step(gradient: Floats, information: Floats) -> Floats:
    """The Newton step ``information⁻¹·gradient``: one LAPACK solve (numpy has no triangular solve of its own, so a
    Cholesky factor would cost two general solves more)."""
    return np.linalg.solve(information, gradient)


def maximise(evidence: Evidence, start: Floats, precision: float) -> tuple[Floats, Floats, int]:
    """The posterior's maximum by Newton's method with backtracking (halve the step until the log-posterior rises
    by Armijo's rule), from ``start``; (θ, the information there, iterations). The information is the last step's,
    taken where θ was within :data:`TOLERANCE` of the maximum (computing it once more would cost a step for a
    change far below the intervals' rounding). Refuses, in one line, a fit that does not converge."""
    theta = start.copy()
    current = log_posterior(evidence, theta, precision)
    for iteration in range(1, MAX_ITERATIONS + 1):
        gradient, information = gradient_and_information(evidence, theta, precision)
        step = newton_step(gradient, information)
        rise = float(gradient @ step)
        length = 1.0
        while True:
            candidate = theta + length * step
            value = log_posterior(evidence, candidate, precision)
            if value >= current + 1e-4 * length * rise or length < 1e-12:
                break
            length /= 2.0
        moved = float(np.max(np.abs(candidate - theta), initial=0.0))
        theta, current = candidate, value
        if moved < TOLERANCE:
            return theta, information, iteration
    raise FitError(f"the rating fit did not converge in {MAX_ITERATIONS} Newton steps")


def centred_covariance(information: Floats) -> Floats:
    """The inverse of the information projected onto the sum-to-zero plane, ``P C P`` (``P = I − 11ᵀ/n``): the
    covariance of each θ relative to the field's mean (what the ratings, anchored at mean 0, are)."""
    covariance: Floats = np.linalg.inv(information)
    covariance = covariance - covariance.mean(axis=0, keepdims=True)
    covariance = covariance - covariance.mean(axis=1, keepdims=True)
    return (covariance + covariance.T) / 2.0


@dataclass(frozen=True, eq=False)
class Fit:
    """The fitted ratings: θ (natural log-odds, mean 0) and their centred covariance, per entrant of
    ``names``; with the deal sets each played, its component, the Newton iterations and the prior used."""

    names: tuple[str, ...]
    theta: Floats
    covariance: Floats
    deal_sets: Counts
    components: Counts
    iterations: int
    prior_sd_elo: float

    def position(self, name: str) -> int:
        """The entrant's index in the arrays (refused in a line when the fit has no such entrant)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise FitError(f"no entrant {name!r} in the fit") from None

    def rating(self, name: str) -> tuple[float, float, float]:
        """(Elo, low, high): the entrant's rating against the field's mean and its 95% interval."""
        i = self.position(name)
        theta = float(self.theta[i])
        half = Z95 * math.sqrt(max(float(self.covariance[i, i]), 0.0))
        return elo_of_logit(theta), elo_of_logit(theta - half), elo_of_logit(theta + half)

    def difference(self, first: str, second: str) -> tuple[float, float, float]:
        """(Elo, low, high): first's rating minus second's, with the 95% interval from the covariance."""
        difference, low, high = difference_interval(self, self.position(first), self.position(second))
        return elo_of_logit(difference), elo_of_logit(low), elo_of_logit(high)

    def told_apart(self, first: str, second: str) -> bool:
        """Whether the two can be told apart: same component and their difference's interval excludes 0."""
        i, j = self.position(first), self.position(second)
        _, low, high = difference_interval(self, i, j)
        return bool(self.components[i] == self.components[j]) and (low > 0.0 or high < 0.0)

    @property
    def component_count(self) -> int:
        """How many connected components the comparison graph has (1 when everyone is linked by games)."""
        return int(self.components.max(initial=-1)) + 1


def difference_interval(fit: Fit, i: int, j: int) -> tuple[float, float, float]:
    """θ_i − θ_j and its 95% bounds, in log-odds: ``± Z95·√(C_ii + C_jj − 2C_ij)``."""
    c = fit.covariance
    difference = float(fit.theta[i] - fit.theta[j])
    half = Z95 * math.sqrt(max(float(c[i, i] + c[j, j] - 2.0 * c[i, j]), 0.0))
    return difference, difference - half, difference + half


def separable(fit: Fit) -> npt.NDArray[np.bool_]:
    """The n×n matrix of which pairs can be told apart: in one component, and ``|θ_i − θ_j|`` more than
    ``Z95·√Var(θ_i − θ_j)``. Symmetric, False on the diagonal."""
    variance = np.diag(fit.covariance)
    spread = np.sqrt(np.maximum(variance[:, None] + variance[None, :] - 2.0 * fit.covariance, 0.0))
    apart: npt.NDArray[np.bool_] = np.abs(fit.theta[:, None] - fit.theta[None, :]) > Z95 * spread
    linked: npt.NDArray[np.bool_] = fit.components[:, None] == fit.components[None, :]
    return apart & linked


def start_from(evidence: Evidence, previous: Fit | None) -> Floats:
    """The starting θ: a previous fit's for the entrants it had (a warm start), 0 for the others."""
    start = np.zeros(len(evidence.names))
    if previous is not None:
        before = {name: float(value) for name, value in zip(previous.names, previous.theta, strict=True)}
        start = np.array([before.get(name, 0.0) for name in evidence.names])
    return start


def fit(evidence: Evidence, previous: Fit | None = None, prior_sd_elo: float = PRIOR_SD_ELO) -> Fit:
    """The maximum-a-posteriori ratings of the evidence (see the module's docstring for the model and the prior),
    started from ``previous`` when given (same answer, fewer steps). Pure: safe on a worker thread."""
    if not (math.isfinite(prior_sd_elo) and prior_sd_elo > 0):
        raise FitError(f"the prior's width must be a positive number of Elo, got {prior_sd_elo!r}")
    precision = 1.0 / logit_of_elo(prior_sd_elo) ** 2
    if not evidence.names:
        empty = frozen(np.zeros(0))
        return Fit((), empty, frozen(np.zeros((0, 0))), evidence.deal_sets, evidence.components, 0, prior_sd_elo)
    theta, information, iterations = maximise(evidence, start_from(evidence, previous), precision)
    return Fit(names=evidence.names, theta=frozen(theta - theta.mean()),
               covariance=frozen(centred_covariance(information)), deal_sets=evidence.deal_sets,
               components=evidence.components, iterations=iterations, prior_sd_elo=prior_sd_elo)


def place(evidence: Evidence, fixed: Mapping[str, float], name: str,
          prior_sd_elo: float = PRIOR_SD_ELO) -> tuple[float, float]:
    """``name``'s θ with every other entrant of the evidence held at its θ in ``fixed`` (log-odds, a published
    scale's), and its standard error: the log-posterior's maximum along that one coordinate (Newton with
    backtracking, as :func:`maximise`), the error from the information there. The error is the placement's own,
    the scale taken as exact. Refuses, in one line, an entrant of the evidence that is neither ``name`` nor fixed."""
    index = evidence.index()
    if name not in index:
        raise FitError(f"no entrant {name!r} in the results")
    unknown = [other for other in evidence.names if other != name and other not in fixed]
    if unknown:
        raise FitError(f"{unknown[0]!r} is not on the scale")
    precision = 1.0 / logit_of_elo(prior_sd_elo) ** 2
    theta = np.array([0.0 if other == name else float(fixed[other]) for other in evidence.names])
    i = index[name]
    current = log_posterior(evidence, theta, precision)
    for _ in range(MAX_ITERATIONS):
        gradient, information = gradient_and_information(evidence, theta, precision)
        step, length = float(gradient[i] / information[i, i]), 1.0
        while True:
            candidate = theta.copy()
            candidate[i] += length * step
            value = log_posterior(evidence, candidate, precision)
            if value >= current + 1e-4 * length * step * float(gradient[i]) or length < 1e-12:
                break
            length /= 2.0
        moved = abs(float(candidate[i] - theta[i]))
        theta, current = candidate, value
        if moved < TOLERANCE:
            _, information = gradient_and_information(evidence, theta, precision)
            return float(theta[i]), 1.0 / math.sqrt(float(information[i, i]))
    raise FitError(f"the placement did not converge in {MAX_ITERATIONS} Newton steps")


# --- the leaderboard --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One leaderboard line: the rank range, the entrant, its Elo and 95% bounds, its deal sets, the entrants it
    cannot be told apart from (in leaderboard order), and whether it is told apart from the next row (None last)."""

    best: int
    worst: int
    entrant: str
    elo: float
    low: float
    high: float
    deal_sets: int
    tied_with: tuple[str, ...]
    apart_from_next: bool | None

    @property
    def rank(self) -> str:
        """``"3"``, or ``"3–5"`` when the intervals leave it anywhere from third to fifth."""
        return str(self.best) if self.best == self.worst else f"{self.best}–{self.worst}"


ORDER_DIGITS = 3
"""Ratings are ordered to a thousandth of an Elo point: two entrants whose results are the same rate the same in
exact arithmetic, and the order the evidence was summed in must not decide which of them is listed first."""


def leaderboard(result: Fit) -> tuple[Row, ...]:
    """The rows by rating, highest first (name breaks a tie to :data:`ORDER_DIGITS`), with rank ranges
    (:data:`TIE_RULE`).

    An entrant's best rank is 1 + the entrants told apart from it above it, its worst the field less those told
    apart below it. Chaining neighbours that cannot be told apart into one shared rank would, in a dense field of
    a thousand versions, join the top and the bottom into one block; counting those surely above and below keeps
    each range as narrow as the evidence allows, and two entrants that cannot be told apart always share ranks.
    """
    n = len(result.names)
    order = sorted(range(n), key=lambda i: (-round(result.rating(result.names[i])[0], ORDER_DIGITS),
                                            result.names[i]))
    apart = separable(result)
    higher = result.theta[:, None] < result.theta[None, :]
    above = (apart & higher).sum(axis=1)
    below = (apart & higher.T).sum(axis=1)
    rows = []
    for position, i in enumerate(order):
        elo, low, high = result.rating(result.names[i])
        following = order[position + 1] if position + 1 < n else None
        rows.append(Row(best=1 + int(above[i]), worst=n - int(below[i]), entrant=result.names[i], elo=elo,
                        low=low, high=high, deal_sets=int(result.deal_sets[i]),
                        tied_with=tuple(result.names[j] for j in order if j != i and not apart[i, j]),
                        apart_from_next=None if following is None else bool(apart[i, following])))
    return tuple(rows)
