"""The SPRT of a tournament: which entrant is the candidate and which the opponent, the deal sets being played, and
the test (arena/tournament/sprt.py) they feed; no I/O.

A file with ``[sprt]`` tests one match-up (checked by arena/tournament/spec.py): two bots in a round robin, where the
first ``[[bots]]`` entry is the candidate, or a gauntlet of one candidate against one other bot. The unit of the test
is the duplicate deal set (every rotation of one deal: the pentanomial model for a two-sided game), or the single game
without duplicate deals (the trinomial model); in a game of more sides, every side of the opponent is a meeting (see
:mod:`.sprt`), so a Mexican Train gauntlet with the opponent in three seats counts three meetings a game.

Games finish in any order: a game waits here, by its deal key, until its deal set is complete, then the deal set is one
unit. A deal set left incomplete when the run stops is not counted; a resumed run rebuilds the test from the record
file, so the records stay the one source of truth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.display import safe_name
from arena.tournament.sprt import CONTINUE, Meetings, Sprt, SprtError, outcome_meetings
from arena.tournament.standings import GameOutcome

if TYPE_CHECKING:
    from arena.tournament.schedule import Schedule
    from arena.tournament.spec import TournamentSpec


class MatchupTest:
    """A running SPRT of ``candidate`` against ``opponent``, fed finished games."""

    def __init__(self, test: Sprt, candidate: str, opponent: str, group_size: int) -> None:
        self.test, self.candidate, self.opponent, self.group_size = test, candidate, opponent, group_size
        self.games = 0
        """Games counted in complete units."""
        self._waiting: dict[str, list[Meetings]] = {}

    @classmethod
    def for_tournament(cls, spec: TournamentSpec, schedule: Schedule) -> MatchupTest | None:
        """The test a tournament file asks for, or None without ``[sprt]``."""
        if spec.sprt is None:
            return None
        names = [b.name for b in spec.bots]
        candidate = spec.candidates[0] if spec.candidates else names[0]
        opponent = next(name for name in names if name != candidate)
        table = next(iter(schedule.tables()))
        side_of = spec.game().side_of
        mine = {side_of[seat] for seat, entrant in enumerate(table) if names[entrant] == candidate}
        theirs = {side_of[seat] for seat, entrant in enumerate(table) if names[entrant] == opponent}
        per_game = len(mine) * len(theirs)
        return cls(spec.sprt.new_test(per_game * schedule.group_size), candidate, opponent, schedule.group_size)

    @property
    def decided(self) -> bool:
        return self.test.decided

    def add(self, outcome: GameOutcome) -> None:
        """Count a finished game; its deal set becomes a unit once all its games are in."""
        games = self._waiting.setdefault(outcome.deal_key, [])
        games.append(outcome_meetings(outcome, self.candidate, self.opponent))
        if len(games) == self.group_size:
            del self._waiting[outcome.deal_key]
            self.test.add_games(games)
            self.games += self.group_size

    def unit_name(self) -> str:
        return "games" if self.group_size == 1 else "deal sets"

    def progress_text(self) -> str:
        """For the progress bar: ``LLR 1.23 [-2.94, 2.94]``."""
        return f"LLR {self.test.llr:.2f} [{self.test.lower:.2f}, {self.test.upper:.2f}]"

    def summary(self, recorded: int | None = None) -> str:
        """The verdict line: ``SPRT py-search vs py-greedy: H1 accepted: LLR ..., Elo ..., 24 deal sets (48 games)``.

        ``recorded``: the games the standings count, when they are shown beside this line. The test counts only
        complete deal sets, and its Elo is the deal sets' estimate; a game whose deal set was left unfinished when
        the test decided is in the standings only, so their games and Elo differ, and the line says why."""
        head = f"SPRT {safe_name(self.candidate)} vs {safe_name(self.opponent)}"
        text = self.test.summary(self.unit_name())
        if self.test.state == CONTINUE:
            text = "undecided" + text.removeprefix("running")
        games = f" ({self.games} games)" if self.group_size > 1 else ""
        extra = (recorded or 0) - self.games
        if extra > 0:
            games += (f"; the standings also count {extra} game{'' if extra == 1 else 's'} of "
                      f"{'a deal set' if extra == 1 else 'deal sets'} left unfinished when the test decided (the test counts complete deal sets only), so their games "
                      f"and Elo differ")
        return f"{head}: {text}{games}"

    def to_json(self) -> dict[str, Any]:
        """The test for ``standings.json``: who, the counts, the LLR, the state and the Elo estimate."""
        return {"candidate": self.candidate, "opponent": self.opponent, "unit": self.unit_name(),
                "games": self.games, **self.test.to_json()}

    @classmethod
    def from_json(cls, data: Any, group_size: int) -> MatchupTest:
        """A test back from :meth:`to_json` (a finished tournament's ``standings.json``), to show it as it ended;
        raises :class:`~.sprt.SprtError` naming what is wrong."""
        test = Sprt.from_json(data)
        try:
            matchup = cls(test, str(data["candidate"]), str(data["opponent"]), group_size)
            matchup.games = int(data["games"])
        except (KeyError, TypeError, ValueError) as error:
            raise SprtError(f"expected the candidate, opponent and games of a saved SPRT, got {error}") from None
        return matchup


__all__ = ["MatchupTest"]
