"""Standings and ratings of a round-robin tournament, from game outcomes, in flat memory.

A :class:`Standings` takes one :class:`GameOutcome` at a time (``add``) and keeps only aggregates: per-entrant
running sums, a pairwise cell per ordered pair of entrants, one OpenSkill rating per entrant, and the duplicate deal
sets still being played. Nothing grows with the number of games, so a tournament of 100,000 games costs what a
tournament of ten does. A record (a played game as the record file keeps it) becomes an outcome through
:func:`outcome_of`, the one reading of a record that the run's resume, the server, the league's ratings and pages
all count by.

Definitions (one *result* is an entrant's result in one game):

- **Places.** The sides are walked in ``ranking`` order; a side shares the place of the side before it when both
  have the same score and both faulted or both did not (a faulting side ranks below every clean side, whatever its
  score). The winner, when there is one, is always alone in first place. A drawn match (``winner`` None) is a tie
  for first place.
- **One result per entrant per game**, however many seats it holds: a team (both seats of a side), or several sides
  when there are fewer entrants than seats (3 entrants at a 4-seat table). So ``games`` counts the games it played
  and ``games == wins + draws + losses`` always.
- **Win**: one of its sides is the winner. **Draw**: a drawn match and one of its sides is among those tied for first
  (with 3 or more sides the others get a loss). **Loss**: otherwise.
- **Match points** of a side: (sides placed strictly below + 0.5 × other sides sharing its place) / (sides − 1);
  1, 0.5 or 0 in a two-sided game. An entrant's match points in a game are the mean over the sides it holds (one
  side but for fewer entrants than seats), so a game is worth at most 1 to anyone. Kept as exact fractions, so
  entrants level on points are exactly level.
- **Scored**: the mean score of its sides (its side's score, with one side). **Conceded**: the mean score of the
  sides it does not hold (the other side's score in a two-sided game), so scored and conceded stay on one scale.
  Both are whole numbers in two-sided games; with 3 or more sides they are means over several sides, which can be
  fractions (three sides: halves, four: thirds). They are kept exact (no float error can make a whole number look
  fractional) and printed whole when whole (``702``), else with up to two decimals (``702.5``, ``700.33``).
- **Faults**: the seats it held that faulted (one per faulting seat per game).
- **Think ms**: its total think time over its total decisions (ms per decision); None before its first decision.
- **Pairwise**: for every ordered pair of different entrants and every pair of different sides they held in one
  game (a *meeting*; one per game unless one of them held several sides), A beats B when A's side is placed above
  B's side, draws when they share a place (equal scores, same fault status), loses otherwise.
- **Order** (:meth:`Standings.order`, the rank column): more match points; entrants level on points are ordered by
  their head-to-head score among themselves (pairwise wins + ½ draws against the others level with them), then
  more wins, then fewer games (same points in fewer games, while a run is under way), then name. ``TIE_RULE`` says
  it in a line, printed under the table.
- **Elo** (the rating shown for two-sided games): s is the entrant's mean match points per result, its Elo
  difference against the field is ``-400·log10(1/s − 1)``; the 95% interval is ``s ± 1.96·sd/√n`` (sd the sample
  standard deviation, n − 1 denominator, so at least 2 samples), each bound clamped into
  ``[ELO_CLAMP, 1 − ELO_CLAMP]`` (about ±1200 Elo) and converted the same way. When s is 0 or 1 the Elo is
  infinite: the Elo and both bounds are None. The *by-deal* interval uses the duplicate deal sets as the unit: the
  entrant's match points are averaged over each ``deal_key`` group first and the group means are the samples
  (without duplicate deals every game is its own deal set, and the two intervals are the same). The games of one
  deal set are not independent (the same hands, seats rotated), so the table shows the by-deal interval, always,
  as its two bounds (the interval is not symmetric around the Elo): ``+35 [-13, +84]``; ``standings.json`` has both.
- **Calibration** (shown when some entrant's bot sent beliefs about the hidden tiles): over every belief it sent
  that the referee accepted, scored against where the tiles really were (:mod:`arena.rules.beliefs`): the mean
  Brier score per tile named (0 best, 2 worst) and the mean log loss per tile (nats, the truth's probability floored
  at 1/1000), with the number of beliefs: ``0.372 · 0.57 (116)``.
- **OpenSkill** (the rating shown with 3 or more sides, computed for every game): a Plackett-Luce update after each
  game, each side's team being the distinct entrants on it and its rank its place (ties share a rank); the ordinal
  is mu − 3σ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from openskill.models import PlackettLuce
from rich.table import Table

from arena.display import safe_markup
from arena.errors import ArenaError
from arena.records.beliefs import calibration_by_seat
from arena.records.jsonform import FormatError, index_of
from arena.records.replay import RecordError
from arena.records.schema import Record
from arena.rules.beliefs import Calibration
from arena.tournament.likelihood import Fit, Tally, fit, places_of_points
from arena.tournament.ratings import elo_bounds, elo_of_score, score_interval

ELO = "elo"
OPENSKILL = "openskill"
Exact = int | Fraction
"""Points kept exactly: sums of means over 2 or 3 sides are fractions, and ties must be exact ties."""
ELO_HEADER = "Elo [95% by deal set]"
"""The rating column of two-sided standings: the Elo and its by-deal 95% interval, as two bounds."""
SKILL_HEADER = "ordinal (μ, σ)"
"""The rating column with three or more sides: the OpenSkill ordinal, then mu and sigma (:func:`skill_cell`)."""
TIE_RULE = "ties in points: head-to-head among the tied entrants, then more wins, then fewer games, then name"
"""How :meth:`Standings.order` breaks ties in match points, as the table's caption says it."""


class OutcomeError(ArenaError, ValueError):
    """A game outcome whose parts do not fit together (lengths, sides, ranking, winner)."""


@dataclass(frozen=True)
class GameOutcome:
    """What the standings need from one finished game (plain data, no reference to the record)."""

    index: int
    """The position of the game in the schedule."""
    deal_key: str
    """Games with the same deal_key are one duplicate deal set (the same deals, seats rotated)."""
    seats: tuple[str, ...]
    """The entrant name per seat; an entrant may hold several seats (teams, or fewer entrants than seats)."""
    side_of: tuple[int, ...]
    """The side per seat (teams: seats 0 and 2 are side 0, seats 1 and 3 side 1; otherwise side == seat)."""
    scores: tuple[int, ...]
    """The final match score per side."""
    ranking: tuple[int, ...]
    """The sides from best to worst (lowest-wins variants and forfeits already accounted for)."""
    winner: int | None
    """The winning side, None for a drawn match."""
    fault_seats: tuple[int, ...] = ()
    """The seats that faulted (their side forfeited)."""
    think_ms: tuple[float, ...] = ()
    """Total think time per seat in this game (empty: none recorded)."""
    decisions: tuple[int, ...] = ()
    """Decisions asked per seat in this game (empty: none recorded)."""
    calibration: tuple[tuple[int, Calibration], ...] = ()
    """The seats that sent beliefs, each with its beliefs scored against the truth."""


NOT_AN_OUTCOME = (OutcomeError, ValueError, KeyError, TypeError, IndexError, AttributeError)
"""What counting a record read from a file may raise: a record of the right shape whose parts do not fit together
(one entrant on every side, say) is refused by the standings, not by the store. Whoever counts such a record
(resume, a restarted server) takes its game as not played."""


def outcome_of(record: Record) -> GameOutcome:
    """What standings need from a record (a dict in protobuf's JSON mapping)."""
    seats = record.get("seats", [])
    think = [0.0] * len(seats)
    decisions = [0] * len(seats)
    for rnd in record.get("rounds", ()):
        for move in rnd.get("moves", ()):
            if not move.get("forced", False):
                seat = move.get("seat", 0)
                think[seat] += move.get("thinkMs", 0.0)
                decisions[seat] += 1
    result = record.get("result", {})
    try:
        calibration = tuple(sorted(calibration_by_seat(record).items()))
    except (RecordError, FormatError):  # a game the rules cannot replay still counts; its beliefs cannot be scored
        calibration = ()
    return GameOutcome(
        index=index_of(record), deal_key=record.get("dealKey", ""), seats=tuple(seats),
        side_of=tuple(record.get("sideOfSeat", [0] * len(seats))),
        scores=tuple(int(v) for v in result.get("scores", ())), ranking=tuple(result.get("ranking", ())),
        winner=result.get("winner"), fault_seats=tuple(sorted({f.get("seat", 0) for f in record.get("faults", ())})),
        think_ms=tuple(think), decisions=tuple(decisions), calibration=calibration,
    )


@dataclass(frozen=True)
class EloEstimate:
    """One entrant's Elo difference against the field, with its 95% intervals (None: infinite or unknown)."""

    score: float | None
    """The mean match points per result (None before any result)."""
    elo: float | None
    """``-400·log10(1/score − 1)``; None when the score is 0 or 1 (infinite) or unknown."""
    low: float | None
    high: float | None
    """The per-game 95% interval (None with fewer than 2 games, or an infinite Elo)."""
    low_by_deal: float | None
    high_by_deal: float | None
    """The 95% interval with duplicate deal sets as the samples (None with fewer than 2 sets, or infinite Elo)."""
    games: int
    """The number of results (the per-game samples)."""
    deal_sets: int
    """The number of deal sets the entrant played in (the by-deal samples, unfinished sets included)."""

    @property
    def elo_interval(self) -> tuple[float, float] | None:
        return None if self.low is None or self.high is None else (self.low, self.high)

    @property
    def elo_interval_by_deal(self) -> tuple[float, float] | None:
        return None if self.low_by_deal is None or self.high_by_deal is None else (self.low_by_deal, self.high_by_deal)

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "elo": self.elo,
            "elo_interval": list(self.elo_interval) if self.elo_interval else None,
            "elo_interval_by_deal": list(self.elo_interval_by_deal) if self.elo_interval_by_deal else None,
            "games": self.games,
            "deal_sets": self.deal_sets,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EloEstimate:
        """The estimate :meth:`to_json` wrote (missing parts unknown: None, or 0 samples)."""
        interval = data.get("elo_interval") or (None, None)
        by_deal = data.get("elo_interval_by_deal") or (None, None)
        return cls(score=data.get("score"), elo=data.get("elo"), low=interval[0], high=interval[1],
                   low_by_deal=by_deal[0], high_by_deal=by_deal[1], games=int(data.get("games", 0)),
                   deal_sets=int(data.get("deal_sets", 0)))


@dataclass(frozen=True)
class SkillRating:
    """One entrant's OpenSkill Plackett-Luce rating."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative estimate mu − 3σ."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class PairRecord:
    """Wins, draws and losses of one entrant against another (see the module docstring's pairwise)."""

    wins: int
    draws: int
    losses: int

    def to_json(self) -> dict[str, int]:
        return {"wins": self.wins, "draws": self.draws, "losses": self.losses}

    @classmethod
    def from_json(cls, data: Mapping[str, int]) -> PairRecord:
        return cls(wins=data["wins"], draws=data["draws"], losses=data["losses"])


@dataclass(frozen=True)
class EntrantStanding:
    """One entrant's line of the standings (see the module docstring for the definitions): what every view of the
    standings reads, from the standings themselves (:meth:`Standings.standing`), from ``standings.json``
    (:meth:`from_json`) or from the server's message (:func:`arena.server.events.entrant_standing`)."""

    name: str
    games: int
    wins: int
    draws: int
    losses: int
    match_points: float
    scored: int | float
    """Whole when whole (:func:`plain_number`)."""
    conceded: int | float
    faults: int
    decisions: int
    think_ms: float
    """Total think time over all its decisions."""
    think_ms_per_decision: float | None
    elo: EloEstimate
    openskill_mu: float
    openskill_sigma: float
    openskill_ordinal: float
    calibration: Calibration = Calibration()
    """Its beliefs scored against the truth (none: no belief sent)."""

    def to_json(self) -> dict[str, Any]:
        """The entrant as ``standings.json`` holds it (``calibration`` only when it sent beliefs)."""
        data: dict[str, Any] = {
            "name": self.name, "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "match_points": self.match_points, "scored": self.scored, "conceded": self.conceded,
            "faults": self.faults, "decisions": self.decisions, "think_ms": self.think_ms,
            "think_ms_per_decision": self.think_ms_per_decision, "elo": self.elo.to_json(),
            "openskill": {"mu": self.openskill_mu, "sigma": self.openskill_sigma, "ordinal": self.openskill_ordinal},
        }
        if self.calibration.beliefs:
            data["calibration"] = calibration_json(self.calibration)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EntrantStanding:
        """The entrant :meth:`to_json` wrote (the ratings and think times, when missing, unknown)."""
        skill = data.get("openskill") or {}
        return cls(
            name=str(data["name"]), games=data["games"], wins=data["wins"], draws=data["draws"],
            losses=data["losses"], match_points=data["match_points"], scored=data["scored"],
            conceded=data["conceded"], faults=data["faults"], decisions=data.get("decisions", 0),
            think_ms=data.get("think_ms", 0.0), think_ms_per_decision=data.get("think_ms_per_decision"),
            elo=EloEstimate.from_json(data.get("elo") or {}), openskill_mu=skill.get("mu", 0.0),
            openskill_sigma=skill.get("sigma", 0.0), openskill_ordinal=skill.get("ordinal", 0.0),
            calibration=calibration_from_json(data.get("calibration") or {}))


def calibration_json(calibration: Calibration) -> dict[str, Any]:
    """An entrant's calibration as ``standings.json`` holds it (and the server's message, from it): the beliefs,
    the tiles they named, and the mean Brier score and log loss per tile (None before any tile)."""
    return {"beliefs": calibration.beliefs, "tiles": calibration.tiles, "brier": calibration.brier,
            "log_loss": calibration.log_loss}


def calibration_from_json(data: Mapping[str, Any]) -> Calibration:
    """The calibration :func:`calibration_json` wrote: its means times its tiles give back the totals."""
    tiles = int(data.get("tiles", 0))
    return Calibration(int(data.get("beliefs", 0)), tiles, (data.get("brier") or 0.0) * tiles,
                       (data.get("log_loss") or 0.0) * tiles)


@dataclass(frozen=True)
class StandingsTable:
    """The standings at one moment, best first, as every edge shows them: ``standings.json`` (:meth:`to_json`, also
    the web's download), the server's message (:func:`arena.server.events.standings_pb`), the tables of ``arena
    run``, ``arena status`` and the web (:func:`row_cells`)."""

    games: int
    group_size: int
    rating: str
    """``elo`` or ``openskill`` (:attr:`Standings.rating_kind`)."""
    entrants: tuple[EntrantStanding, ...]
    """In standings order (:meth:`Standings.order`)."""
    pairwise: Mapping[str, Mapping[str, PairRecord]]
    """Entrant, then opponent (both in standings order), for the pairs that met on different sides."""
    sprt: Mapping[str, Any] | None = None
    """The sequential test beside the standings, as :meth:`arena.tournament.sequential.MatchupTest.to_json` gives
    it (None without one)."""

    def entrant(self, name: str) -> EntrantStanding | None:
        return next((e for e in self.entrants if e.name == name), None)

    def against(self, name: str) -> Mapping[str, PairRecord]:
        """``name``'s records against each opponent it met (empty when none)."""
        return self.pairwise.get(name, {})

    def to_json(self) -> dict[str, Any]:
        """The ``standings.json`` file, byte for byte as the runner writes it (``sprt`` last, when there is one)."""
        data: dict[str, Any] = {
            "games": self.games, "group_size": self.group_size, "rating": self.rating,
            "entrants": [e.to_json() for e in self.entrants],
            "pairwise": {a: {b: cell.to_json() for b, cell in row.items()} for a, row in self.pairwise.items()},
        }
        if self.sprt is not None:
            data["sprt"] = self.sprt
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StandingsTable:
        """The table :meth:`to_json` wrote (a ``standings.json`` file)."""
        return cls(games=int(data.get("games", 0)), group_size=int(data.get("group_size", 1)),
                   rating=str(data.get("rating", "")),
                   entrants=tuple(EntrantStanding.from_json(e) for e in data.get("entrants", ())),
                   pairwise={a: {b: PairRecord.from_json(cell) for b, cell in row.items()}
                             for a, row in (data.get("pairwise") or {}).items()},
                   sprt=data.get("sprt"))


class _Moments:
    """Running count, sum and sum of squares of samples."""

    __slots__ = ("n", "total", "squares")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.squares += value * value

    def with_samples(self, values: list[float]) -> _Moments:
        """A copy with more samples added (for the unfinished deal sets at read-out time)."""
        copy = _Moments()
        copy.n, copy.total, copy.squares = self.n, self.total, self.squares
        for value in values:
            copy.add(value)
        return copy

    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    def interval(self) -> tuple[float, float] | None:
        """``mean ± 1.96·sd/√n`` on the score fraction; None with fewer than 2 samples."""
        if self.n < 2:
            return None
        mean = self.total / self.n
        variance = max(0.0, (self.squares - self.n * mean * mean) / (self.n - 1))
        return score_interval(mean, math.sqrt(variance) / math.sqrt(self.n))


class _Entrant:
    """One entrant's running totals."""

    __slots__ = ("name", "games", "wins", "draws", "losses", "match_points", "scored", "conceded", "faults",
                 "think_ms", "decisions", "per_game", "per_deal", "calibration")

    def __init__(self, name: str) -> None:
        self.name = name
        self.games = self.wins = self.draws = self.losses = self.faults = self.decisions = 0
        self.match_points: Exact = 0
        self.scored: Exact = 0
        self.conceded: Exact = 0
        self.think_ms = 0.0
        self.per_game = _Moments()
        self.per_deal = _Moments()
        self.calibration = Calibration()

    def think_per_decision(self) -> float | None:
        return self.think_ms / self.decisions if self.decisions else None


class _DealSet:
    """An unfinished duplicate deal set: its games so far and each entrant's match points (exact sum, count)."""

    __slots__ = ("games", "points")

    def __init__(self) -> None:
        self.games = 0
        self.points: dict[str, list[Exact]] = {}

    def means(self) -> dict[str, float]:
        return {name: float(mean) for name, mean in self.exact_means().items()}

    def exact_means(self) -> dict[str, Exact]:
        """Each entrant's mean match points over the set's games, exactly: two entrants with equal means tie (a
        float sum of thirds would tell ``1/3 + 2/3 + 1`` from ``2/3 + 2/3 + 2/3``)."""
        return {name: Fraction(total) / count for name, (total, count) in self.points.items()}


def _elo_bounds(interval: tuple[float, float] | None, score: float | None) -> tuple[float | None, float | None]:
    """The Elo bounds of a score interval; none when there is no interval or the Elo itself is infinite."""
    if interval is None or score is None or elo_of_score(score) is None:
        return None, None
    return elo_bounds(interval)


def places(outcome: GameOutcome) -> tuple[int, ...]:
    """The place of each side (0 is first; sides sharing a place get the same number, the next place skips)."""
    faulted = {outcome.side_of[seat] for seat in outcome.fault_seats}
    place = [0] * len(outcome.scores)
    previous: tuple[int, bool] | None = None
    for position, side in enumerate(outcome.ranking):
        key = (outcome.scores[side], side in faulted)
        alone = position == 1 and outcome.winner is not None  # the winner never shares first place
        if position > 0 and (key != previous or alone):
            place[side] = position
        elif position > 0:
            place[side] = place[outcome.ranking[position - 1]]
        previous = key
    return tuple(place)


def side_halves(place: tuple[int, ...]) -> list[int]:
    """Each side's match points in units of 1 / (2·(sides − 1)), from its place (:func:`places`), so they stay whole
    numbers."""
    return [2 * sum(1 for other in place if other > mine) + place.count(mine) - 1 for mine in place]


def side_points(outcome: GameOutcome) -> list[Exact]:
    """Each side's match points in one game (1 a win, ½ a draw, 0 a loss of two sides): the one definition the
    standings and the league's ladder count results by."""
    check_outcome(outcome)
    sides = len(outcome.scores)
    return [exact_mean(half, 2 * (sides - 1)) for half in side_halves(places(outcome))]


def sides_held(outcome: GameOutcome) -> dict[str, list[int]]:
    """The sides each entrant holds in a game, in seat order (two seats of one side are one side)."""
    held: dict[str, list[int]] = {}
    for seat, name in enumerate(outcome.seats):
        their_sides = held.setdefault(name, [])
        if outcome.side_of[seat] not in their_sides:
            their_sides.append(outcome.side_of[seat])
    return held


def check_outcome(outcome: GameOutcome) -> None:
    """Raise :class:`OutcomeError` unless the parts of the outcome fit together."""
    seats, sides = len(outcome.seats), len(outcome.scores)
    if seats == 0 or len(outcome.side_of) != seats:
        raise OutcomeError(f"expected one side per seat for {seats} seats, got side_of {outcome.side_of!r}")
    if sides < 2 or set(outcome.side_of) != set(range(sides)):
        raise OutcomeError(f"expected every side 0..{sides - 1} to hold a seat, got side_of {outcome.side_of!r}")
    if sorted(outcome.ranking) != list(range(sides)):
        raise OutcomeError(f"expected a ranking of the sides 0..{sides - 1}, got {outcome.ranking!r}")
    for name, values in (("think_ms", outcome.think_ms), ("decisions", outcome.decisions)):
        if values and len(values) != seats:
            raise OutcomeError(f"expected {name} for {seats} seats, got {values!r}")
    if any(not 0 <= seat < seats for seat in outcome.fault_seats):
        raise OutcomeError(f"expected fault seats among 0..{seats - 1}, got {outcome.fault_seats!r}")
    if outcome.winner is not None and outcome.winner != outcome.ranking[0]:
        raise OutcomeError(f"expected the winner first in the ranking, got winner {outcome.winner} "
                           f"and ranking {outcome.ranking!r}")
    if outcome.winner is None and places(outcome).count(0) < 2:
        raise OutcomeError(f"expected a tie for first in a drawn match, got scores {outcome.scores!r} "
                           f"and ranking {outcome.ranking!r}")
    if any(len(their_sides) == sides for their_sides in sides_held(outcome).values()):
        raise OutcomeError(f"expected entrants on at least two different sides, got seats {outcome.seats!r}")


def exact_mean(total: int, count: int) -> Exact:
    """``total / count`` exactly: an int when it divides (every two-sided game, so sums stay plain ints and fast),
    else a Fraction."""
    return total // count if total % count == 0 else Fraction(total, count)


def points_text(value: Exact) -> str:
    """A number of points as the table prints it: whole when whole (``702``, never ``702.0``), else with up to two
    decimals (``702.5``, ``3.33``). Fractions come only from means (see the module docstring)."""
    if isinstance(value, int) or value.denominator == 1:
        return str(int(value))
    return f"{float(value):.2f}".rstrip("0").rstrip(".")


def plain_number(value: Exact) -> int | float:
    """A whole number as an int, anything else as a float, for JSON (``702`` rather than ``702.0``)."""
    return int(value) if isinstance(value, int) or value.denominator == 1 else float(value)


def elo_cell(elo: float | None, score: float | None, interval: tuple[float, float] | None) -> str:
    """The Elo column's text: ``+35 [-13, +84]`` (the Elo and its 95% bounds), ``+35`` with fewer than two samples,
    ``+∞`` / ``−∞`` for a perfect or a null score, ``-`` before any game. For every view of the standings."""
    if score is None:
        return "-"
    if elo is None:
        return "+∞" if score >= 1.0 else "−∞"
    text = _signed(elo)
    return text if interval is None else f"{text} [{_signed(interval[0])}, {_signed(interval[1])}]"


def skill_cell(ordinal: float, mu: float, sigma: float) -> str:
    """The OpenSkill column's text: ``21.3 (27.1, 1.9)`` (ordinal, mu, sigma). For every view of the standings."""
    return f"{ordinal:.1f} ({mu:.1f}, {sigma:.1f})"


@dataclass(frozen=True)
class RowCells:
    """One entrant's row of the standings as every view writes it (``arena run``, ``arena status``, the web): the
    text of each cell. The name is as it is: each view escapes it its own way (rich markup, HTML)."""

    rank: str
    name: str
    games: str
    wins: str
    draws: str
    losses: str
    points: str
    scored: str
    conceded: str
    faults: str
    think: str
    rating: str
    calibration: str = "-"
    """:func:`calibration_cell`; a column of its own only where some entrant sent beliefs."""

    def table_row(self, calibration: bool = False) -> tuple[str, ...]:
        """The cells in the columns of :func:`table_frame` (with ``calibration``, its column last), the name made
        safe for rich markup."""
        cells = (self.rank, safe_markup(self.name), self.games, self.wins, self.draws, self.losses, self.points,
                 self.scored, self.conceded, self.faults, self.think, self.rating)
        return (*cells, self.calibration) if calibration else cells


CALIBRATION_HEADER = "beliefs: Brier · log loss (n)"
"""The calibration column: the mean Brier score and log loss per tile named, and how many beliefs."""


def calibration_cell(calibration: Calibration) -> str:
    """``0.372 · 0.57 (116)``: the mean Brier score and log loss per tile, and the number of beliefs; ``-``
    without any."""
    if not calibration.tiles or calibration.brier is None or calibration.log_loss is None:
        return "-"
    return f"{calibration.brier:.3f} · {calibration.log_loss:.2f} ({calibration.beliefs})"


def shows_calibration(entrants: Sequence[EntrantStanding]) -> bool:
    """Whether the standings have a calibration column: some entrant sent beliefs."""
    return any(e.calibration.beliefs for e in entrants)


def row_cells(rank: int, entrant: EntrantStanding, rating_kind: str) -> RowCells:
    """The cells of one entrant's row, the rating's cell by ``rating_kind`` (``elo`` or ``openskill``). The one
    rendering of a standings row."""
    think = entrant.think_ms_per_decision
    if rating_kind == OPENSKILL:
        rating = skill_cell(entrant.openskill_ordinal, entrant.openskill_mu, entrant.openskill_sigma)
    else:
        rating = elo_cell(entrant.elo.elo, entrant.elo.score, entrant.elo.elo_interval_by_deal)
    return RowCells(
        rank=str(rank), name=entrant.name, games=str(entrant.games), wins=str(entrant.wins),
        draws=str(entrant.draws), losses=str(entrant.losses), points=_points_cell(entrant.match_points),
        scored=_points_cell(entrant.scored), conceded=_points_cell(entrant.conceded),
        faults=str(entrant.faults), think="-" if think is None else f"{think:.1f}", rating=rating,
        calibration=calibration_cell(entrant.calibration))


def _points_cell(value: Exact | float) -> str:
    """Points as :func:`points_text` writes them, from an exact value or a float of JSON (whose fractions, means
    over at most a few sides, have small denominators: they come back exactly)."""
    exact = value if isinstance(value, (int, Fraction)) else Fraction(value).limit_denominator(1000)
    return points_text(exact)


def table_frame(title: str, rating_kind: str, calibration: bool = False) -> Table:
    """The standings table without its rows: the columns (the rating's by ``rating_kind``, ``elo`` or ``openskill``;
    with ``calibration``, the beliefs' column last) and the caption saying how ties in points are broken. For every
    view of the standings (``arena run``, ``arena status``), so they read the same."""
    table = Table(title=safe_markup(title, 200), caption=TIE_RULE)
    headers = ["rank", "entrant", "games", "W", "D", "L", "points", "scored", "conceded", "faults", "think ms",
               ELO_HEADER if rating_kind == ELO else SKILL_HEADER]
    for header in headers + ([CALIBRATION_HEADER] if calibration else []):
        table.add_column(header, justify="left" if header == "entrant" else "right")
    return table


def _signed(value: float) -> str:
    return f"{round(value) + 0:+d}"  # + 0 turns -0 into 0


class Standings:
    """Standings and ratings of one tournament, fed one outcome at a time, in flat memory.

    ``group_size`` is the number of games in one duplicate deal set (the seat rotations of one deal; 1 without
    duplicate). A deal set is folded into the running by-deal sums, and forgotten, as soon as it has
    ``group_size`` games, so only the sets being played are kept, however long the tournament. A set left
    unfinished (a tournament cut short) still counts as one by-deal sample with the games it has.
    """

    def __init__(self, group_size: int = 1, model: PlackettLuce | None = None) -> None:
        if group_size < 1:
            raise OutcomeError(f"expected a group size of at least 1, got {group_size}")
        self.group_size = group_size
        self.games = 0
        self.max_sides = 0
        self._model = model if model is not None else PlackettLuce()
        self._entrants: dict[str, _Entrant] = {}
        self._pairwise: dict[tuple[str, str], list[int]] = {}
        self._skill: dict[str, SkillRating] = {}
        self._deal_sets: dict[str, _DealSet] = {}
        self.deal_set_results = Tally()
        """Each finished deal set's result, summed for the maximum-likelihood fit (:meth:`fit`)."""

    # --- feeding -------------------------------------------------------------------------------------------------

    def add(self, outcome: GameOutcome) -> None:
        """Count one finished game: one result for each entrant in it, however many seats it held."""
        check_outcome(outcome)
        sides = len(outcome.scores)
        place = places(outcome)
        halves = side_halves(place)
        held = sides_held(outcome)
        self.games += 1
        self.max_sides = max(self.max_sides, sides)
        deal_set = self._deal_sets.setdefault(outcome.deal_key, _DealSet())
        for name, their_sides in held.items():
            entrant = self._entrant(name)
            result = exact_mean(sum(halves[side] for side in their_sides), 2 * (sides - 1) * len(their_sides))
            self._count_result(entrant, outcome, their_sides, place, result)
            cell = deal_set.points.setdefault(name, [0, 0])
            cell[0] += result
            cell[1] += 1
        for seat, name in enumerate(outcome.seats):
            entrant = self._entrants[name]
            if outcome.think_ms:
                entrant.think_ms += outcome.think_ms[seat]
            if outcome.decisions:
                entrant.decisions += outcome.decisions[seat]
        for seat in outcome.fault_seats:
            self._entrants[outcome.seats[seat]].faults += 1
        for seat, calibration in outcome.calibration:
            entrant = self._entrants[outcome.seats[seat]]
            entrant.calibration = entrant.calibration + calibration
        self._count_pairs(held, place)
        deal_set.games += 1
        if deal_set.games >= self.group_size:
            self._fold(outcome.deal_key)
        self._rate(held, place, sides)

    def _entrant(self, name: str) -> _Entrant:
        if name not in self._entrants:
            self._entrants[name] = _Entrant(name)
            rating = self._model.rating()
            self._skill[name] = SkillRating(rating.mu, rating.sigma)
        return self._entrants[name]

    @staticmethod
    def _count_result(entrant: _Entrant, outcome: GameOutcome, sides: list[int], place: tuple[int, ...],
                      points: Exact) -> None:
        """One game's result for an entrant holding ``sides`` (one, but for fewer entrants than seats)."""
        entrant.games += 1
        if outcome.winner in sides:
            entrant.wins += 1
        elif outcome.winner is None and any(place[side] == 0 for side in sides):
            entrant.draws += 1
        else:
            entrant.losses += 1
        entrant.match_points += points
        entrant.per_game.add(float(points))
        others = [score for other, score in enumerate(outcome.scores) if other not in sides]
        entrant.scored += exact_mean(sum(outcome.scores[side] for side in sides), len(sides))
        entrant.conceded += exact_mean(sum(others), len(others))

    def _count_pairs(self, held: dict[str, list[int]], place: tuple[int, ...]) -> None:
        for a, a_sides in held.items():
            for b, b_sides in held.items():
                if a == b:
                    continue
                for a_side in a_sides:
                    for b_side in b_sides:
                        if a_side == b_side:
                            continue
                        cell = self._pairwise.setdefault((a, b), [0, 0, 0])
                        if place[a_side] < place[b_side]:
                            cell[0] += 1
                        elif place[a_side] == place[b_side]:
                            cell[1] += 1
                        else:
                            cell[2] += 1

    def _fold(self, deal_key: str) -> None:
        """Turn a finished deal set into one by-deal sample per entrant and, when it held two entrants or more, one
        result of the maximum-likelihood fit (its entrants placed by their mean match points); then forget it."""
        means = self._deal_sets.pop(deal_key).exact_means()
        for name, mean in means.items():
            self._entrants[name].per_deal.add(float(mean))
        if len(means) > 1:
            self.deal_set_results.add(places_of_points(means))

    def fit(self, also: Iterable[str] = ()) -> Fit:
        """The maximum-likelihood fit over the finished deal sets (:mod:`arena.tournament.likelihood`), every
        entrant in it (and those of ``also``: a field's entrants that played no game), those without a finished deal
        set at the prior's 0."""
        for name in (*self._entrants, *also):
            self.deal_set_results.entrant(name)
        return fit(self.deal_set_results.evidence())

    def _rate(self, held: dict[str, list[int]], place: tuple[int, ...], sides: int) -> None:
        """One Plackett-Luce update. An entrant on several sides gets the sum of its mu changes and the smallest
        of its new sigmas."""
        teams: list[list[Any]] = [[] for _ in range(sides)]
        members: list[list[str]] = [[] for _ in range(sides)]
        for name, their_sides in held.items():
            before = self._skill[name]
            for side in their_sides:
                teams[side].append(self._model.rating(mu=before.mu, sigma=before.sigma))
                members[side].append(name)
        rated = self._model.rate(teams, ranks=[float(p) for p in place])
        change: dict[str, float] = {}
        sigma: dict[str, float] = {}
        for side in range(sides):
            for name, rating in zip(members[side], rated[side], strict=True):
                change[name] = change.get(name, 0.0) + rating.mu - self._skill[name].mu
                sigma[name] = min(sigma.get(name, math.inf), rating.sigma)
        for name in change:
            self._skill[name] = SkillRating(self._skill[name].mu + change[name], sigma[name])

    # --- read-outs -----------------------------------------------------------------------------------------------

    @property
    def rating_kind(self) -> str:
        """``"elo"`` while every game had two sides, ``"openskill"`` once a game had three or more."""
        return OPENSKILL if self.max_sides > 2 else ELO

    @property
    def pending_deal_sets(self) -> int:
        """The deal sets started and not yet folded (bounded by the games in flight, not by the tournament)."""
        return len(self._deal_sets)

    def standing(self, name: str, elo: EloEstimate | None = None) -> EntrantStanding:
        """One entrant's line (see the module docstring for the definitions)."""
        e = self._entrants[name]
        skill = self._skill[name]
        return EntrantStanding(
            name=name, games=e.games, wins=e.wins, draws=e.draws, losses=e.losses,
            match_points=float(e.match_points), scored=plain_number(e.scored), conceded=plain_number(e.conceded),
            faults=e.faults, decisions=e.decisions, think_ms=e.think_ms,
            think_ms_per_decision=e.think_per_decision(), elo=elo if elo is not None else self.elo()[name],
            openskill_mu=skill.mu, openskill_sigma=skill.sigma, openskill_ordinal=skill.ordinal,
            calibration=e.calibration)

    def entrant(self, name: str, elo: EloEstimate | None = None) -> dict[str, Any]:
        """One entrant's numbers as ``standings.json`` holds them."""
        return self.standing(name, elo).to_json()

    def elo(self) -> dict[str, EloEstimate]:
        """Every entrant's Elo against the field, with per-game and by-deal 95% intervals."""
        unfinished: dict[str, list[float]] = {}
        for deal_set in self._deal_sets.values():
            for name, mean in deal_set.means().items():
                unfinished.setdefault(name, []).append(mean)
        estimates = {}
        for name, e in self._entrants.items():
            score = e.per_game.mean()
            by_deal = e.per_deal.with_samples(unfinished.get(name, []))
            low, high = _elo_bounds(e.per_game.interval(), score)
            low_by_deal, high_by_deal = _elo_bounds(by_deal.interval(), by_deal.mean())
            estimates[name] = EloEstimate(score, None if score is None else elo_of_score(score), low, high,
                                          low_by_deal, high_by_deal, e.per_game.n, by_deal.n)
        return estimates

    def ratings(self) -> dict[str, SkillRating]:
        """Every entrant's OpenSkill Plackett-Luce rating."""
        return dict(self._skill)

    def pairwise(self, a: str, b: str) -> tuple[int, int, int]:
        """Wins, draws and losses of ``a`` against ``b`` (zeros when they never met on different sides)."""
        wins, draws, losses = self._pairwise.get((a, b), (0, 0, 0))
        return wins, draws, losses

    def order(self) -> list[str]:
        """Entrant names, best first: by match points, ties broken as ``TIE_RULE`` says (see the module docstring).

        Not by rating: the Elo is a function of points per game, so it could not tell apart entrants level on points
        after the same number of games, which is every tie at the end of a round robin."""
        level: dict[Exact, list[str]] = {}
        for name, e in self._entrants.items():
            level.setdefault(e.match_points, []).append(name)
        ordered: list[str] = []
        for points in sorted(level, reverse=True):
            ordered.extend(sorted(level[points], key=self._tie_key(level[points])))
        return ordered

    def _tie_key(self, tied: list[str]) -> Callable[[str], tuple[int, int, int, str]]:
        """The sort key among entrants level on points: head-to-head (counted in half points: 2 per pairwise win, 1
        per draw, against the others of ``tied``), wins, fewer games, name."""
        def key(name: str) -> tuple[int, int, int, str]:
            head_to_head = 0
            for other in tied:
                if other != name:
                    wins, draws, _ = self.pairwise(name, other)
                    head_to_head += 2 * wins + draws
            e = self._entrants[name]
            return (-head_to_head, -e.wins, e.games, name)

        return key

    def leaders(self, k: int = 3) -> list[tuple[str, Exact]]:
        """The top ``k`` entrants with their match points (exact: print them with :func:`points_text`), for a
        progress line."""
        return [(name, self._entrants[name].match_points) for name in self.order()[:k]]

    def snapshot(self, sprt: Mapping[str, Any] | None = None) -> StandingsTable:
        """The standings as they are now: the entrants in standings order, the pairwise cells, the ratings, and
        the sequential test ``sprt`` beside them when there is one."""
        order = self.order()
        elo = self.elo()
        return StandingsTable(
            games=self.games, group_size=self.group_size, rating=self.rating_kind,
            entrants=tuple(self.standing(name, elo[name]) for name in order),
            pairwise={a: {b: PairRecord(*self.pairwise(a, b)) for b in order if (a, b) in self._pairwise}
                      for a in order},
            sprt=sprt)

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``standings.json`` (:meth:`StandingsTable.to_json` of :meth:`snapshot`)."""
        return self.snapshot().to_json()

    def rating_text(self, name: str) -> str:
        """The rating cell: ``+35 [-13, +84]`` (Elo with its by-deal 95% interval, see :func:`elo_cell`) or
        ``21.3 (27.1, 1.9)`` (ordinal, mu, sigma)."""
        return row_cells(0, self.standing(name), self.rating_kind).rating

    def table(self, title: str = "standings") -> Table:
        """The standings as a rich table, best first; the caption says how ties in points are broken."""
        entrants = self.snapshot().entrants
        calibration = shows_calibration(entrants)
        table = table_frame(title, self.rating_kind, calibration)
        for rank, entrant in enumerate(entrants, start=1):
            table.add_row(*row_cells(rank, entrant, self.rating_kind).table_row(calibration))
        return table

    def pairwise_table(self, title: str = "pairwise (W-D-L of the row against the column)",
                       rows: Sequence[str] = ()) -> Table:
        """Rows A, columns B, cells ``W-D-L`` of A against B; empty when they never met. ``rows``: only these
        entrants as rows (a gauntlet's candidates, each against every opponent) and the others as columns (no
        column of a candidate against itself), in standings order."""
        order = self.order()
        columns = [name for name in order if name not in rows]
        table = Table(title=title, min_width=len(title))  # a title on one line, however few the columns
        table.add_column("")
        for name in columns:
            table.add_column(safe_markup(name), justify="center")
        for a in order:
            if rows and a not in rows:
                continue
            cells = ["·" if a == b else ("-".join(map(str, self.pairwise(a, b))) if (a, b) in self._pairwise
                                         else "") for b in columns]
            table.add_row(safe_markup(a), *cells)
        return table
