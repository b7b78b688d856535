"""The ladder's online rating, pure: a played table's games as database rows, its online rating updates (its deal
set, or each of its single games), and a recompute of every online rating from the rated tables.

- **The unit is the deal set.** A table plays one deal set under every seat rotation; its sides are ranked by their
  total match points over the rotations (:func:`arena.tournament.standings.side_points`, the standings' own
  definition: 1 a win, ½ a draw, 0 a loss of two sides), and that one ranking is one OpenSkill (Plackett–Luce)
  update. No seat and no deal favours a side, so a deal set's result is the fairest unit there is.
- **A game of a fresh deal is a unit of its own.** A table whose run had no duplicate deals (a dial-in version at
  it: its author's machine would remember a deal, so every game gets a fresh one) is rated game by game, in the
  order of the games' keys: each game one update (:func:`units_of`), its sides ranked by their points in it. Such
  a game is a deal set of one deal under one rotation; summing games of different deals into one result would
  throw away what each of them says.
- **The online rating** (:data:`~arena.league.rules.model.ONLINE`) is what the matchmaker reads and the live board shows. It
  depends on the order of the updates: the database numbers the done tables (``sequence``) as it rates them, and
  :func:`recompute` follows that order, so a recompute from the records gives the very same numbers.
- **The leaderboard** is the maximum-likelihood fit over the same deal sets (:mod:`.leaderboard`); the online
  rating is shown beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from openskill.models import PlackettLuce

from arena.league.rules.model import ONLINE, LadderTable, Rating, Seat
from arena.records.schema import Record
from arena.tournament.standings import outcome_of, side_points

MODEL = PlackettLuce()
ELO_PER_MU = 400 / (math.log(10) * math.sqrt(2) * MODEL.beta)
"""Elo points per point of OpenSkill's mu: in the Plackett–Luce likelihood the updates follow, two sides whose mu
differ by ``d`` (their sigmas left out) win with the logistic of ``d / (beta * sqrt 2)``, and Elo's logistic is of
``elo * ln 10 / 400``: about 29.5 Elo a point with OpenSkill's beta of 25/6."""
Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


def online_elo(mu: float, sigma: float = 0.0, z: float = 0.0) -> float:
    """An online rating (``mu``, or ``mu + z * sigma``: ``z`` = ±:data:`Z95` for its 95% interval's ends) on the
    Elo scale, 0 being a new version's start (OpenSkill's default mu): what a person reads on the bot page's chart,
    beside the leaderboard's Elo."""
    return (mu + z * sigma - MODEL.mu) * ELO_PER_MU


def seats_of(record: Record, version_of: Mapping[str, int]) -> list[Seat]:
    """One game's rows of ``game_seats``: per seat, its version (by the entrant's name at the table), its side's
    score and its side's match points."""
    outcome = outcome_of(record)
    points = side_points(outcome)
    return [Seat(version_of[name], outcome.scores[side], float(points[side]))
            for name, side in zip(outcome.seats, outcome.side_of, strict=False)]


POINTS_DENOMINATOR = 10_000
"""No seat's match points have a larger denominator: they are halves over 2 (k - 1) for k sides, k at most 12."""


def exact_points(points: float) -> Fraction:
    """A seat's match points as the exact fraction the standings computed (the database holds them as floats:
    ``1/3`` is ``0.333...``)."""
    return Fraction(points).limit_denominator(POINTS_DENOMINATOR)


def deal_set_totals(played: Iterable[Sequence[Seat]], sides: Sequence[int]) -> list[float]:
    """Each side's (version's) total match points over a table's games: per game the mean over the seats it held.
    Added exactly, as the standings add them: with three or more sides a float sum of thirds would tell two equal
    totals apart (``1/3 + 2/3 + 1`` and ``2/3 + 2/3 + 2/3``), and a tied deal set would be rated as a win."""
    totals: dict[int, Fraction] = dict.fromkeys(sides, Fraction(0))
    for seats in played:
        held: dict[int, list[Fraction]] = {}
        for seat in seats:
            held.setdefault(seat.version_id, []).append(exact_points(seat.points))
        for version_id, points in held.items():
            totals[version_id] += sum(points, Fraction(0)) / len(points)
    return [float(totals[version_id]) for version_id in sides]


def units_of(played: Sequence[Sequence[Seat]], single_games: bool) -> list[Sequence[Sequence[Seat]]]:
    """A table's rated units, each its games' seats: the whole table (one deal set under every rotation), or one
    unit per game, in the order given, for a table rated as ``single_games``."""
    return [[seats] for seats in played] if single_games else [played]


def table_updates(played: Sequence[Sequence[Seat]], sides: Sequence[int], single_games: bool) -> list[list[float]]:
    """The sides' totals of each of a table's rated units (:func:`units_of`), in rating order: one online update
    each."""
    return [deal_set_totals(unit, sides) for unit in units_of(played, single_games)]


def rate_deal_set(before: Sequence[Rating | None], totals: Sequence[float]) -> list[tuple[float, float]]:
    """The online update of one deal set: the sides ranked by their totals (equal totals tie), one Plackett–Luce
    step from their ratings before (a new version starts at OpenSkill's 25 and 8.33)."""
    teams = [[MODEL.rating() if old is None else MODEL.rating(mu=old.mu, sigma=old.sigma)] for old in before]
    rated = MODEL.rate(teams, scores=list(totals))
    return [(team[0].mu, team[0].sigma) for team in rated]


def recompute(tables: Sequence[tuple[LadderTable, Sequence[Sequence[Seat]]]]) -> dict[int, tuple[float, float, int]]:
    """Every version's online rating (mu, sigma, deal sets rated) from the done tables in their rating order, each
    with its games' seats in their keys' order: what the database must hold if every result was applied once, and
    in that order (a table rated as single games counts one deal set per game)."""
    state: dict[int, tuple[float, float, int]] = {}
    for table, played in tables:
        for totals in table_updates(played, table.versions, table.single_games):
            before = [None if v not in state else Rating(v, ONLINE, state[v][0], state[v][1], state[v][2])
                      for v in table.versions]
            after = rate_deal_set(before, totals)
            for version_id, (mu, sigma) in zip(table.versions, after, strict=True):
                state[version_id] = (mu, sigma, state.get(version_id, (0, 0, 0))[2] + 1)
    return state
