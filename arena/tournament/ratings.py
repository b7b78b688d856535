"""Elo arithmetic, one definition for the standings and the SPRT: a score fraction and its logistic Elo, and a 95%
interval on the score turned into Elo bounds. Pure arithmetic, no I/O.

The logistic Elo difference of a score fraction s (the mean points per result, 1 a win, ½ a draw) is
``-400·log10(1/s − 1)``; the score of an Elo difference is ``1 / (1 + 10^(-elo/400))``. At s = 0 or 1 the Elo is
infinite, and is None here (and in every view: ``+∞`` / ``−∞``). An interval's bounds on the score are clamped into
``[ELO_CLAMP, 1 − ELO_CLAMP]`` (about ±1200 Elo) before they turn into Elo, so a bound is always a number.

The maximum-likelihood fit (:mod:`arena.tournament.likelihood`) works in natural log-odds ("logits"): a logit
difference x is a score of ``1 / (1 + e^-x)``, the same curve as the Elo one with ``elo = x · ELO_PER_LOGIT``.
"""

from __future__ import annotations

import math

Z95 = 1.96
"""The normal quantile of a two-sided 95% interval."""
ELO_CLAMP = 1e-3
"""Interval bounds on the score fraction are clamped into [ELO_CLAMP, 1 - ELO_CLAMP] before turning into Elo."""
ELO_PER_LOGIT = 400.0 / math.log(10.0)
"""Elo points per natural log-odds unit: ``1 / (1 + 10^(-elo/400)) = 1 / (1 + e^-(elo / ELO_PER_LOGIT))``."""


def score_of_elo(elo: float) -> float:
    """The expected score of a player ``elo`` logistic Elo stronger: ``1 / (1 + 10^(-elo/400))``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float | None:
    """The logistic Elo difference of a score fraction, ``-400·log10(1/score - 1)``; None (infinite) at 0 or 1."""
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_interval(mean: float, standard_error: float) -> tuple[float, float]:
    """The 95% interval on a score fraction: ``mean ± Z95·standard_error`` (not clamped)."""
    half = Z95 * standard_error
    return mean - half, mean + half


def elo_bounds(interval: tuple[float, float]) -> tuple[float, float]:
    """The Elo bounds of an interval on the score fraction, each bound clamped into ``[ELO_CLAMP, 1 - ELO_CLAMP]``
    first (so both are finite)."""
    low, high = (elo_of_score(min(max(bound, ELO_CLAMP), 1.0 - ELO_CLAMP)) for bound in interval)
    assert low is not None and high is not None  # clamped strictly inside (0, 1)
    return low, high


def elo_of_logit(logit: float) -> float:
    """The Elo difference of a natural log-odds difference (the fitted models' parameters are log-odds)."""
    return logit * ELO_PER_LOGIT


def logit_of_elo(elo: float) -> float:
    """The natural log-odds difference of an Elo difference (the inverse of :func:`elo_of_logit`)."""
    return elo / ELO_PER_LOGIT
