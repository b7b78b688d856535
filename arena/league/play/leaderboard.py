"""The ladder's leaderboard: the maximum-likelihood fit (:mod:`arena.tournament.likelihood`) over every rated deal
set of a league, refitted on a worker thread as tables end, with the online rating shown beside it.

- **One result per done table.** A table is one deal set under every seat rotation; its sides' places are their
  total match points over the rotations (:func:`~arena.league.rules.rating.deal_set_totals`, the same totals the online
  update ranks), more points placing higher and equal totals tying (:func:`places_of_table`). The fit's entrants
  are the versions, named by their id.
- **One result per game of a table rated as single games** (its run had no duplicate deals: a dial-in version at
  it, :mod:`arena.league.rules.rating`): each game placed by its sides' points in it (:func:`table_results`), so such a
  table is as many units of the fit, and as many deal sets in a version's count, as it has games.
- **Rebuilt from the database alone.** :meth:`Leaderboard.rebuild` reads every done table and its recorded games
  (:func:`rated_results`, two queries) into a fresh :class:`~arena.tournament.likelihood.Tally`; nothing of the
  fit is stored, so a restart, a kill -9 included, gives the very same board once its first refit is in. The fit
  does not depend on the order of the results, unlike the online rating.
- **Never blocking the ladder.** :meth:`Leaderboard.run` refits on a worker thread (``trio.to_thread``) from a
  snapshot of the tally, warm-started from the previous fit, and coalesces: at most one refit runs, and one more
  follows it only when results came in meanwhile (however many). The board a caller reads is the last finished
  fit's, with the versions rated since shown after it, unfitted, by their online rating.
- **The online rating** (OpenSkill, :mod:`arena.league.rules.rating`) stays what the matchmaker reads; every row carries
  it beside the fit's Elo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import trio

from arena.league.play.table_run import RECORD
from arena.league.rules.board import BoardEntry, Form, board_of
from arena.league.rules.model import LadderTable, Rating, Seat
from arena.league.rules.rating import deal_set_totals, units_of
from arena.league.storage.db import AsyncDatabase, Database
from arena.tournament.likelihood import Evidence, Fit, FitError, Places, Tally, fit, leaderboard, places_of_points

SYSTEM = "maximum likelihood (Plackett-Luce), Elo against the field's mean"
"""The leaderboard's rating system, as the standings name it."""

Fitter = Callable[[Evidence, "Fit | None"], Fit]
"""How the evidence is fitted, warm-started from the previous fit (:func:`arena.tournament.likelihood.fit`)."""


def places_of_table(versions: Sequence[int], played: Iterable[Sequence[Seat]]) -> Places | None:
    """A done table's result for the fit: its versions placed by their total match points over its games, equal
    totals tied; None for a table of fewer than two distinct versions (nothing to compare)."""
    sides = list(dict.fromkeys(versions))
    if len(sides) < 2:
        return None
    totals = deal_set_totals(played, sides)
    return places_of_points({str(version_id): total for version_id, total in zip(sides, totals, strict=False)})


def table_results(table: LadderTable, played: Sequence[Sequence[Seat]]) -> list[Places]:
    """A done table's results for the fit, one per rated unit (its deal set, or each of its games for a table rated
    as single games: :func:`~arena.league.rules.rating.units_of`); none for a table of fewer than two distinct versions."""
    found = (places_of_table(table.versions, unit) for unit in units_of(played, table.single_games))
    return [places for places in found if places is not None]


def rated_results(database: Database, league_id: int, until: datetime | None = None) -> list[Places]:
    """Every done table's results, in rating order, from the database alone (its tables and recorded games);
    ``until``: only the tables that ended by then (the board as it stood at that moment)."""
    recorded = database.games_by_record(league_id)
    found = []
    for table in database.rated_tables(league_id):
        if until is not None and (table.ended_at is None or table.ended_at > until):
            continue
        found += table_results(table, [seats for _, seats in recorded.get(RECORD.format(id=table.id), [])])
    return found


def rated_tally(database: Database, league_id: int, until: datetime | None = None) -> tuple[Tally, Form]:
    """A tally of every done table's result, and each version's form over them (on the database's thread: a large
    league's are many); ``until``: of the tables that ended by then."""
    tally, form = Tally(), Form()
    for places in rated_results(database, league_id, until):
        tally.add(places)
        form.add(places)
    return tally, form


def board_order(database: Database, league_id: int, versions: Sequence[int], until: datetime) -> list[int]:
    """``versions`` in the order of the leaderboard as it stood at ``until`` (the fit of the tables that ended by
    then, best first); those it did not rank follow in their given order. What seeds a league's finals."""
    tally, _form = rated_tally(database, league_id, until)
    try:
        ranked = [int(row.entrant) for row in leaderboard(fit(tally.evidence()))] if tally.results else []
    except FitError:
        ranked = []
    wanted = set(versions)
    first = [version for version in ranked if version in wanted]
    return first + [version for version in versions if version not in set(first)]


class Leaderboard:
    """One league's leaderboard on the trio loop: :meth:`rebuild` at start, :meth:`add` as tables are rated,
    :meth:`run` (the refits) until cancelled, :meth:`board` at any time."""

    def __init__(self, log: Any, fitter: Fitter = fit) -> None:
        """``fitter``: the fit (a test wraps it to see where it runs)."""
        self.log = log
        self.fitter = fitter
        self.tally = Tally()
        self.form = Form()
        """Each version's scores in its last rated deal sets (:class:`~arena.league.rules.board.Form`)."""
        self.fitted: Fit | None = None
        """The last finished fit (None before the first)."""
        self.fitted_results = 0
        """How many deal sets that fit holds (``tally.results`` is how many there are)."""
        self.refitted = trio.Event()
        """Set (and replaced) each time a refit finishes."""
        self._changed = trio.Event()

    async def rebuild(self, database: AsyncDatabase, league_id: int) -> None:
        """The tally from every done table in the database (what was counted before is dropped), built off the trio
        thread; a refit is due."""
        self.tally, self.form = await database.run(rated_tally, league_id)
        self._changed.set()

    def add(self, places: Places) -> None:
        """One more rated deal set, or single game (on the trio thread, after its table's transaction): a refit is
        due."""
        self.tally.add(places)
        self.form.add(places)
        self._changed.set()

    @property
    def current(self) -> bool:
        """Whether the last fit holds every deal set counted (no refit due or running)."""
        return self.fitted is not None and self.fitted_results == self.tally.results

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Refit whenever results came in, one refit at a time, each on a worker thread."""
        task_status.started()
        while True:
            await self._changed.wait()
            self._changed = trio.Event()
            await self.refit()

    async def refit(self) -> None:
        """One fit of a snapshot of the tally, warm-started, off the trio thread; a fit that fails keeps the
        previous one (logged, in one line). Abandoned, not waited for, when the ladder is cancelled: it is pure."""
        evidence, count = self.tally.evidence(), self.tally.results
        try:
            result = await trio.to_thread.run_sync(self.fitter, evidence, self.fitted, abandon_on_cancel=True)
        except FitError as error:
            self.log.error("leaderboard_refit_failed", deal_sets=count, error=str(error))
            return
        self.fitted, self.fitted_results = result, count
        self.refitted.set()
        self.refitted = trio.Event()

    def board(self, online: Sequence[Rating]) -> list[BoardEntry]:
        """The board now: the last fit's rows, then the versions rated since (``online``: the league's online
        ratings, best first)."""
        return board_of(self.fitted, online)
