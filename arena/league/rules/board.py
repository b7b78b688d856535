"""The leaderboard's rows, pure: every rated version placed by the fit (:func:`board_of`), then the rows the board
shows, one per bot (:func:`bots_board`), and each version's recent form (:class:`Form`).

- **The fit is over every version; the board shows each bot's active version.** A replaced version's results stay
  valid evidence (its opponents' ratings lean on them), so the fit keeps it; but a spectator wants one row per
  bot, the version that plays now. :func:`bots_board` keeps the active versions' rows and recomputes, among them
  only, each row's place, its rank range (1 + the shown rows told apart above it, to the shown field less those
  told apart below it: :data:`~arena.tournament.likelihood.TIE_RULE` over the shown rows) and the rows it cannot
  yet be told apart from. Whether two versions are told apart is the fit's answer for that pair, whoever else is
  in the field, so hiding a row never joins or splits two others.
- **A bot without an active version** (every version retired, suspended, failed or deleted) has no row: it plays no
  more, and its versions' ratings stay on its own page, in its history. A bot whose active version has not yet
  finished a rated table has no row until it has (its older versions' rows would name a bot that plays another
  program).
- **The form** of a version is its score in each of its last :data:`FORM_SHOWN` rated deal sets, oldest first: the
  share of the other sides it placed above (a tie counting half), so 1.0 is a deal set won outright and 0.0 one
  lost to every other side. It comes from the same results the fit reads (:mod:`arena.league.play.leaderboard`
  keeps it beside the tally), so it costs no query and survives a restart.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from arena.league.rules.model import Rating
from arena.tournament.likelihood import Fit, Places, leaderboard

FORM_SHOWN = 10
"""The rated deal sets a row's form covers, the newest."""


@dataclass(frozen=True)
class BoardEntry:
    """One version's row: its place (``position``, 1 first) and rank range, the fit's Elo and 95% interval (None
    while it was rated after the last refit), its deal sets, the versions it cannot be told apart from (board
    order), and its online rating (None for a version the fit has that no longer has one)."""

    version_id: int
    position: int
    best: int
    worst: int
    elo: float | None
    low: float | None
    high: float | None
    deal_sets: int
    tied_with: tuple[int, ...]
    online: Rating | None

    @property
    def fitted(self) -> bool:
        return self.elo is not None

    @property
    def rank(self) -> str:
        """``"3"``, or ``"2-4"`` when the intervals leave it anywhere from second to fourth."""
        return str(self.best) if self.best == self.worst else f"{self.best}-{self.worst}"


def board_of(result: Fit | None, online: Sequence[Rating]) -> list[BoardEntry]:
    """The board of every rated version: the fit's rows by rating (rank ranges by
    :data:`~arena.tournament.likelihood.TIE_RULE`), then the versions rated online that the fit does not hold yet,
    by their online rating (their rank: after the fitted ones)."""
    by_version = {rating.version_id: rating for rating in online}
    rows = leaderboard(result) if result is not None else ()
    entries = [BoardEntry(int(row.entrant), position, row.best, row.worst, row.elo, row.low, row.high, row.deal_sets,
                          tuple(int(name) for name in row.tied_with), by_version.get(int(row.entrant)))
               for position, row in enumerate(rows, 1)]
    fitted = {entry.version_id for entry in entries}
    waiting = [rating for rating in online if rating.version_id not in fitted]
    first, last = len(entries) + 1, len(entries) + len(waiting)
    return entries + [BoardEntry(rating.version_id, position, first, last, None, None, None, rating.games, (), rating)
                      for position, rating in enumerate(waiting, first)]


def bots_board(entries: Sequence[BoardEntry], shown: Collection[int]) -> list[BoardEntry]:
    """The rows of ``entries`` (a whole board, in board order) whose version is in ``shown`` (each bot's active
    version), placed among themselves: positions 1 to n, rank ranges and ties counted over the shown rows only.
    A fitted row's range spans the shown fitted rows (those rated since the last refit follow them, as in
    :func:`board_of`, sharing the places after them)."""
    kept = [entry for entry in entries if entry.version_id in shown]
    fitted = [entry for entry in kept if entry.fitted]
    waiting = [entry for entry in kept if not entry.fitted]
    rows = []
    for index, entry in enumerate(fitted):
        tied = set(entry.tied_with)
        above = sum(1 for other in fitted[:index] if other.version_id not in tied)
        below = sum(1 for other in fitted[index + 1:] if other.version_id not in tied)
        rows.append(_placed(entry, index + 1, 1 + above, len(fitted) - below,
                            tuple(other.version_id for other in fitted if other.version_id in tied)))
    first, last = len(fitted) + 1, len(kept)
    rows += [_placed(entry, position, first, last, ()) for position, entry in enumerate(waiting, first)]
    return rows


def _placed(entry: BoardEntry, position: int, best: int, worst: int, tied_with: tuple[int, ...]) -> BoardEntry:
    return BoardEntry(entry.version_id, position, best, worst, entry.elo, entry.low, entry.high, entry.deal_sets,
                      tied_with, entry.online)


def scores_of(places: Places) -> dict[str, float]:
    """Each side's score in one result: the share of the other sides it placed above, a tie counting half (1.0 won
    outright, 0.0 lost to every other side; two sides tied: 0.5 each)."""
    sides = sum(len(group) for group in places)
    scores, below = {}, sides
    for group in places:
        below -= len(group)
        for name in group:
            scores[name] = (below + (len(group) - 1) / 2) / (sides - 1)
    return scores


class Form:
    """Each entrant's scores (:func:`scores_of`) in its last ``kept`` rated deal sets, oldest first, as results
    are added in rating order (entrants by the fit's names: a version's id as text)."""

    def __init__(self, kept: int = FORM_SHOWN) -> None:
        self.kept = kept
        self._scores: dict[str, deque[float]] = {}

    def add(self, places: Places) -> None:
        for name, score in scores_of(places).items():
            self._scores.setdefault(name, deque(maxlen=self.kept)).append(score)

    def extend(self, results: Iterable[Places]) -> None:
        for places in results:
            self.add(places)

    def of(self, version_id: int) -> tuple[float, ...]:
        """The version's scores, oldest first (none before its first rated deal set)."""
        return tuple(self._scores.get(str(version_id), ()))
