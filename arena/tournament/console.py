"""What a tournament run prints: the live progress while games are played (:class:`Progress`) and the summary at
the end (:func:`print_summary`). The driver makes the progress; the command line prints the summary.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as Bar
from rich.table import Table

from arena.display import count_text, safe_markup, safe_name
from arena.records.run_folder import RunFolder
from arena.tournament.matches import Match
from arena.tournament.rounds import Event
from arena.tournament.standings import points_text
from arena.tournament.summary import RunSummary
from arena.tournament.swiss import TIE_BREAKS


class Progress:
    """A live bar on a terminal; plain lines (at most one every few seconds) otherwise.

    Made when the games begin (every bot has answered), so its rate is the games this run played over the time
    since: a resumed run's games recorded before it are not counted, nor is the bots' start-up. The leaders are
    the top three by match points, labelled ``pts``.
    """

    def __init__(self, total: int, done: int, console: Any, live: bool,
                 clock: Callable[[], float] = time.perf_counter, eta: bool = True) -> None:
        """``eta``: show the time left (not for a sequential test, whose total is only its cap)."""
        self.total, self.done, self.console, self.eta = total, done, console, eta
        self.clock = clock
        self.started = clock()
        self.start_done = done
        self.last_line: float | None = None
        self._bar = None
        if live:
            columns = [TextColumn("games"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
                       *([TimeRemainingColumn()] if eta else []), TextColumn("{task.fields[leaders]}")]
            self._bar = Bar(*columns, console=console, transient=False)
            self._task = self._bar.add_task("games", total=total, completed=done, rate="", leaders="")
            self._bar.start()

    def rate(self) -> float:
        """Games per second played by this run so far."""
        elapsed = self.clock() - self.started
        return (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0

    def advance(self, leaders: Sequence[tuple[str, Any]], test: str = "") -> None:
        """One more game recorded; ``leaders`` are (name, match points) best first; ``test`` the SPRT's LLR and
        bounds, when the run has one (shown first: it says when the run ends)."""
        self.done += 1
        rate = self.rate()
        board = "leaders: " + ", ".join(f"{safe_name(name, 40)} {points_text(points)} pts" for name, points in leaders)
        if test:
            board = f"{test}; {board}"
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{rate:.1f} games/s",
                             leaders=escape(board))
            return
        now = self.clock()
        if self.last_line is None or now - self.last_line >= 5 or self.done == self.total:
            self.last_line = now
            left = self.total - self.done
            eta = f", ETA {left / rate:.0f}s" if rate > 0 else ", ETA ?"
            self.console.print(f"games {self.done}/{self.total} ({100 * self.done / max(1, self.total):.0f}%), "
                               f"{rate:.1f} games/s{eta if self.eta else ''}; {board}", highlight=False, markup=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _points(value: float) -> str:
    """Points (halves) as the standings write them: ``3``, ``2.5``."""
    return points_text(Fraction(value))


def _score(match: Match) -> str:
    return "-" if match.score is None else f"{_points(match.score[0])}-{_points(match.score[1])}"


def swiss_table(event: Event, title: str) -> Table:
    """A Swiss event's table: rank, entrant, points, Buchholz, Sonneborn-Berger, W-D-L, byes and opponents."""
    assert event.table is not None
    names = event.names
    table = Table(title=safe_markup(title, 200), caption="order: " + ", then ".join(TIE_BREAKS))
    for header in ("rank", "entrant", "points", "Buchholz", "S-B", "W-D-L", "byes", "opponents"):
        table.add_column(header, justify="left" if header in ("entrant", "opponents") else "right")
    for row in event.table.rows:
        table.add_row(str(row.rank), safe_markup(names[row.entrant], 40), _points(row.points), _points(row.buchholz),
                      _points(row.sonneborn_berger), f"{row.wins}-{row.draws}-{row.losses}", str(row.byes),
                      ", ".join(safe_markup(names[o], 20) for o in row.opponents))
    return table


def matches_table(event: Event, title: str) -> Table:
    """Every match round by round (a Swiss event's pairings, a bracket's matches): its entrants, score, winner and
    how it was decided."""
    names = event.names
    table = Table(title=safe_markup(title, 200),
                  caption="score: each entrant's match points over the match's deal sets; tie-break: a sudden-death "
                          "deal set decided; seed: still tied, the higher seed advanced")
    for header in ("match", "entrants", "score", "winner", "decided by"):
        table.add_column(header, justify="right" if header == "score" else "left")
    for match in event.matches():
        entrants = " v ".join(safe_markup(names[e], 30) for e in match.entrants)
        winner = "-" if match.winner is None else safe_markup(names[match.winner], 30)
        if match.decided and match.winner is None:
            winner = "draw"
        table.add_row(match.id, entrants, _score(match), winner if match.decided else "", match.decided_by)
    return table


def placements_table(event: Event, title: str) -> Table:
    """A knockout's placements, best first (entrants out in the same round share a place)."""
    table = Table(title=safe_markup(title, 200))
    table.add_column("place", justify="right")
    table.add_column("entrants")
    place = 1
    for group in event.ranking():
        last = place + len(group) - 1
        table.add_row(str(place) if last == place else f"{place}-{last}",
                      ", ".join(safe_markup(event.names[e], 40) for e in group))
        place = last + 1
    return table


def print_event(event: Event, console: Any, title: str) -> None:
    """A Swiss event's pairings and table, or a knockout's bracket and placements."""
    if event.table is not None:
        console.print(matches_table(event, f"{title}: pairings"))
        console.print(swiss_table(event, f"{title}: Swiss table"))
    else:
        elimination = event.bracket.elimination if event.bracket is not None else ""
        console.print(matches_table(event, f"{title}: {elimination} elimination bracket"))
        console.print(placements_table(event, f"{title}: placements"))
    if event.stopped:
        console.print(f"the event ended early: {event.stopped}", soft_wrap=True, highlight=False, markup=False)


def print_summary(summary: RunSummary, console: Any, title: str, command: str = "arena") -> None:
    """The standings, the pairwise table, what went wrong, where the records are, and how to replay a game
    (``command`` is how to call the arena again: see :func:`~arena.invocation.arena_command`). A Swiss or knockout
    event shows its own tables instead of the standings and the pairwise table."""
    assert summary.standings is not None
    if summary.event is not None:
        print_event(summary.event, console, title)
    elif summary.candidates:
        console.print(summary.standings.table(title))
        console.print(summary.standings.pairwise_table("gauntlet (W-D-L of each candidate against each entrant)",
                                                       rows=summary.candidates))
    else:
        console.print(summary.standings.table(title))
        console.print(summary.standings.pairwise_table())
    if summary.sprt is not None:
        console.print(summary.sprt.summary(summary.standings.games), soft_wrap=True, highlight=False, markup=False)
    if summary.skipped_bots:
        console.print(f"skipped (not installed): {', '.join(summary.skipped_bots)}", markup=False)
    for number, problem in summary.bad_lines:
        where = f"line {number}" if number > 0 else "resume"
        console.print(f"warning: {RunFolder(summary.run).records} {where}: {problem}", soft_wrap=True, highlight=False,
                      markup=False)
    for line in summary.given_up:
        console.print(f"warning: {line}", soft_wrap=True, highlight=False, markup=False)
    folder = RunFolder(summary.run)
    console.print(f"records: {folder.records} ({count_text(summary.recorded, 'game')}); standings: "
                  f"{folder.standings}", soft_wrap=True, highlight=False, markup=False)
    if summary.seed is not None and folder.revealed_file.exists():
        console.print(f"master seed revealed: {summary.seed.seed} (commitment {summary.seed.commitment[:16]}…)",
                      markup=False)
    console.print(f"replay a game: {command} replay {shlex.quote(str(summary.run))} --game 0 "
                  f"(or --game 0 --html FILE: a page to open in a browser)", soft_wrap=True, highlight=False,
                  markup=False)


__all__ = ["Progress", "print_event", "print_summary"]
