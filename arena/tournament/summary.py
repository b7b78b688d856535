"""What a tournament run did (:class:`RunSummary`): the games recorded before it and by it, the standings and the
test they make, what went wrong. The driver (:mod:`arena.tournament.runner`) fills it in; the console
(:mod:`arena.tournament.console`), the server and the league read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.records.run_folder import SeedCommitment
from arena.tournament.rounds import Event
from arena.tournament.sequential import MatchupTest
from arena.tournament.standings import Standings


@dataclass
class RunSummary:
    """One run of a tournament, as the driver leaves it: plain data, so that whoever started the run (the command
    line, the server, the league) reads what happened without knowing how the games were played."""

    run: Path
    total: int
    played_now: int = 0
    resumed_from: int = 0
    dropped_bytes: int = 0
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    standings: Standings | None = None
    seed: SeedCommitment | None = None
    skipped_bots: tuple[str, ...] = ()
    first_index: int | None = None
    given_up: list[str] = field(default_factory=list)
    """One line per entrant given up on mid-run (failed to start again and again): its later games are forfeits."""
    sprt: MatchupTest | None = None
    """The file's sequential test, when it has [sprt]: the run ends when it decides."""
    candidates: tuple[str, ...] = ()
    """A gauntlet's candidates (the rows of its pairwise table)."""
    event: Event | None = None
    """A Swiss or knockout event as its recorded games make it (rebuilt after each wave): the run ends with it."""

    @property
    def recorded(self) -> int:
        """Games in the record file: those of earlier runs of this folder, and this run's."""
        return self.resumed_from + self.played_now

    @property
    def finished(self) -> bool:
        """Every game played, or the test decided (the games it left unplayed are not needed); a Swiss or knockout
        event over (a knockout's total is its most)."""
        if self.event is not None:
            return self.event.finished
        return (self.recorded >= self.total
                or (self.sprt is not None and self.sprt.decided))

    def standings_json(self) -> dict[str, Any]:
        """``standings.json``: the standings, with the test when there is one."""
        assert self.standings is not None
        data = self.standings.snapshot(self.sprt.to_json() if self.sprt is not None else None).to_json()
        if self.event is not None:
            data["event"] = self.event.to_json()
        return data


__all__ = ["RunSummary"]
