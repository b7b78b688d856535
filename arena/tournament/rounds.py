"""Swiss and knockout events rebuilt from their recorded games: :func:`event_from_records`, the one reading of a
run's records that resume, ``standings.json``, the console and the league's finals all go by.

An event is played in *waves*: a Swiss round, or in a knockout the matches that can be played now (with the
sudden-death deal sets of tied matches). A wave's games are known only once the waves before it are decided, so the
run plays one wave at a time. Its games get the indices after the previous waves' (a wave's size is fixed once its
matches are known), and each game's seed is derived from the master seed and the match and deal set, never from its
position: ``"<master>/<match id>/<deal set>"`` (its deal key ``"<match id>/<deal set>"``), so ``arena replay
--verify`` checks it as any other.

Rebuilding is deterministic: wave 1 from the entrants alone, wave w + 1 from the results of waves 1..w, each wave
complete once every one of its games is recorded. A resumed run therefore rebuilds exactly the pairings and bracket
the interrupted one played, and plays the games of the first incomplete wave it does not hold. A record that does not
fit its game (seats, seed, deal set or rotation: :func:`~arena.tournament.schedule.schedule_misfit`) is not counted
and its game is played again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from arena.records.jsonform import index_of
from arena.records.schema import Record
from arena.rules import Game
from arena.tournament.knockout import Bracket, build_bracket, match_count, settle
from arena.tournament.matches import SCORE, Match, totals_of, winner_of
from arena.tournament.schedule import (
    SWISS,
    Schedule,
    ScheduledGame,
    schedule_misfit,
    seat_rotations,
)
from arena.tournament.standings import NOT_AN_OUTCOME, GameOutcome, outcome_of
from arena.tournament.swiss import TIE_BREAKS, PairingError, SwissTable, pair_round, swiss_table

if TYPE_CHECKING:
    from arena.tournament.spec import TournamentSpec


@dataclass(frozen=True)
class Unit:
    """One deal set of one match: its games are the deal set under every rotation (one game without duplicate
    deals)."""

    match: str
    layout: tuple[int, ...]
    """The entrant per seat before rotation (a team's entrant holds both seats of its side)."""
    deal_set: int


class WaveSchedule(Schedule):
    """The games of one wave as a :class:`Schedule` the runner plays like any other: the units in order, each under
    every rotation with duplicate deals, its game indices from ``first_index`` on."""

    def __init__(self, entrants: int, game: Game, duplicate: bool, master_seed: str, units: tuple[Unit, ...],
                 first_index: int) -> None:
        super().__init__(entrants, game, 1, duplicate, master_seed)
        self.units = units
        self.first_index = first_index

    def table_count(self) -> int:
        return len(self.units)

    def tables(self) -> Iterator[tuple[int, ...]]:
        return (unit.layout for unit in self.units)

    def game_at(self, index: int) -> ScheduledGame:
        local = index - self.first_index
        if not 0 <= local < self.total():
            raise IndexError(f"expected a game index from {self.first_index} to "
                             f"{self.first_index + self.total() - 1}, got {index}")
        number, within = divmod(local, self.group_size)
        unit = self.units[number]
        rotation = within if self.duplicate else unit.deal_set % self.rotations
        key = f"{unit.match}/{unit.deal_set}"
        return ScheduledGame(index, self.rotate(unit.layout, rotation), f"{self.master_seed}/{key}", key, rotation)

    def __iter__(self) -> Iterator[ScheduledGame]:
        return (self.game_at(i) for i in range(self.first_index, self.first_index + self.total()))

    def indices(self) -> range:
        return range(self.first_index, self.first_index + self.total())


@dataclass(frozen=True)
class Wave:
    """One wave: its number (from 1), the index of its first game, and its units (deal sets) in order."""

    number: int
    first_index: int
    units: tuple[Unit, ...]


@dataclass(frozen=True)
class Event:
    """A Swiss or knockout event as its recorded games make it (see the module docstring)."""

    format: str
    names: tuple[str, ...]
    """The entrants, in seed order."""
    waves: tuple[Wave, ...]
    """Every wave whose games are known: the decided ones, then the one to play (``pending``), if any."""
    rounds: tuple[tuple[Match, ...], ...]
    """Swiss: the pairings round by round (the pending round's undecided); knockout: the bracket's rounds."""
    table: SwissTable | None
    """Swiss: the table of the decided rounds."""
    bracket: Bracket | None
    """Knockout: the bracket as far as its decided matches take it."""
    finished: bool
    pending: Wave | None
    """The wave to play next (some of its games may be recorded already), None when finished."""
    done: frozenset[int]
    """The indices of the recorded games counted (every game of a decided wave, and those of the pending one)."""
    outcomes: tuple[GameOutcome, ...]
    """Their outcomes, in index order."""
    rejected: tuple[tuple[int, str], ...]
    """Records not counted: (game index, why); their games are played again."""
    expected: int
    """The games the whole event plays (Swiss), or at most (knockout)."""
    stopped: str = ""
    """Why a Swiss event ended before its last round ("" when it did not): a round that cannot be paired without
    two entrants meeting again (each round is paired so that the next can be, but over many rounds the pairings can
    still leave no way; the event ends there, rather than leave a run that can never finish)."""

    def ranking(self) -> list[tuple[int, ...]]:
        """Entrant groups best first: the Swiss table's order (one entrant each), or the bracket's placements."""
        if self.bracket is not None:
            return self.bracket.placements()
        assert self.table is not None
        return [(e,) for e in self.table.ranking()]

    def matches(self) -> list[Match]:
        return [m for matches in self.rounds for m in matches]

    def match_of_game(self, index: int) -> Match | None:
        """The match a game index belongs to (a decided match's games; the pending wave's are not listed)."""
        return next((m for m in self.matches() if index in m.games), None)

    def to_json(self) -> dict[str, Any]:
        """The event as ``standings.json`` holds it (under ``"event"``)."""
        names = list(self.names)
        data: dict[str, Any] = {"format": self.format, "finished": self.finished, "expected_games": self.expected,
                                "ranking": [[names[e] for e in group] for group in self.ranking()],
                                "stopped": self.stopped}
        if self.table is not None:
            data["rounds"] = [[m.to_json(names) for m in matches] for matches in self.rounds]
            data["table"] = [row.to_json(names) for row in self.table.rows]
            data["tie_breaks"] = list(TIE_BREAKS)
        if self.bracket is not None:
            data["elimination"] = self.bracket.elimination
            data["bracket"] = [{"round": name, "matches": [m.to_json(names) for m in matches]}
                               for name, matches in self.bracket.rounds()]
        return data


def event_games(tournament_format: str, game: Game, entrants: int, games: int, duplicate: bool, rounds: int,
                elimination: str, tiebreak_games: int) -> int:
    """The games a Swiss event plays, or the most a knockout plays (every match to its last tie-break deal set):
    what :meth:`~arena.tournament.spec.TournamentSpec.expected_games` says and the file's checks hold to."""
    per_deal_set = seat_rotations(game) if duplicate else 1
    if tournament_format == SWISS:
        return rounds * (entrants // 2) * games * per_deal_set
    return match_count(entrants, elimination) * (games + tiebreak_games) * per_deal_set


def wave_schedule(spec: TournamentSpec, master_seed: str, wave: Wave) -> WaveSchedule:
    """The schedule of one wave's games, for the runner."""
    return WaveSchedule(len(spec.bots), spec.game(), spec.duplicate, master_seed, wave.units, wave.first_index)


def event_from_records(spec: TournamentSpec, master_seed: str, records: Iterable[Record]) -> Event:
    """The event the recorded games of a Swiss or knockout run make: every wave they complete, with its results, and
    the wave to play next. ``records`` in any order; a second record of one game index is ignored, as is a record of
    a game beyond the pending wave (no run of this file writes one)."""
    by_index: dict[int, Record] = {}
    for record in records:
        by_index.setdefault(index_of(record), record)
    return _Rebuild(spec, master_seed, by_index).event()


class _Rebuild:
    """Walks the waves from the first, each one's matches from the results of those before."""

    def __init__(self, spec: TournamentSpec, master_seed: str, records: Mapping[int, Record]) -> None:
        self.spec, self.master_seed, self.records = spec, master_seed, records
        self.names = [b.name for b in spec.bots]
        self.game = spec.game()
        self.waves: list[Wave] = []
        self.outcomes: dict[int, GameOutcome] = {}
        self.rejected: list[tuple[int, str]] = []
        self.next_index = 0
        self.stopped = ""

    def event(self) -> Event:
        if self.spec.format == SWISS:
            rounds, pending, table, bracket = self._swiss()
        else:
            rounds, pending, bracket = self._knockout()
            table = None
        return Event(self.spec.format, tuple(self.names), tuple(self.waves), rounds, table, bracket,
                     pending is None, pending, frozenset(self.outcomes),
                     tuple(self.outcomes[i] for i in sorted(self.outcomes)), tuple(self.rejected),
                     self.spec.expected_games(), self.stopped)

    def _layout(self, match: Match) -> tuple[int, ...]:
        a, b = match.entrants
        return (a, b, a, b) if self.game.teams else (a, b)

    def _wave(self, units: list[Unit]) -> tuple[Wave, dict[int, GameOutcome] | None]:
        """A new wave of these units, and its games' outcomes when every one is recorded (None otherwise)."""
        wave = Wave(len(self.waves) + 1, self.next_index, tuple(units))
        self.waves.append(wave)
        schedule = wave_schedule(self.spec, self.master_seed, wave)
        found: dict[int, GameOutcome] = {}
        for scheduled in schedule:
            outcome = self._outcome(scheduled)
            if outcome is not None:
                found[scheduled.index] = outcome
        self.outcomes.update(found)
        if len(found) < schedule.total():
            return wave, None
        self.next_index += schedule.total()
        return wave, found

    def _outcome(self, scheduled: ScheduledGame) -> GameOutcome | None:
        record = self.records.get(scheduled.index)
        if record is None:
            return None
        misfit = schedule_misfit(record, scheduled, self.names)
        if misfit:
            self.rejected.append((scheduled.index, f"game {scheduled.index} does not fit the event ({misfit}); it "
                                                   f"is played again"))
            return None
        try:
            return outcome_of(record)
        except NOT_AN_OUTCOME as error:
            self.rejected.append((scheduled.index, f"game {scheduled.index} is not a complete record ({error}); it "
                                                   f"is played again"))
            return None

    def _per_deal_set(self) -> int:
        return seat_rotations(self.game) if self.spec.duplicate else 1

    def _games_of(self, wave: Wave, match_id: str) -> dict[int, list[int]]:
        """The game indices of each deal set of a match in a wave."""
        per = self._per_deal_set()
        games: dict[int, list[int]] = {}
        for number, unit in enumerate(wave.units):
            if unit.match == match_id:
                start = wave.first_index + number * per
                games.setdefault(unit.deal_set, []).extend(range(start, start + per))
        return games

    def _swiss(self) -> tuple[tuple[tuple[Match, ...], ...], Wave | None, SwissTable, None]:
        entrants = len(self.names)
        rounds: list[tuple[Match, ...]] = []
        for _ in range(self.spec.rounds):
            try:
                pairings = pair_round(entrants, rounds, self.spec.rounds - len(rounds) - 1)
            except PairingError as error:  # ended early: no run of this file could play the round
                self.stopped = str(error)
                break
            units = [Unit(m.id, self._layout(m), g) for m in pairings if not m.bye for g in range(self.spec.games)]
            wave, found = self._wave(units)
            if found is None:
                rounds.append(pairings)
                return tuple(rounds), wave, swiss_table(entrants, rounds[:-1]), None
            rounds.append(tuple(self._decided_pairing(m, wave, found) for m in pairings))
        return tuple(rounds), None, swiss_table(entrants, rounds), None

    def _decided_pairing(self, match: Match, wave: Wave, found: Mapping[int, GameOutcome]) -> Match:
        if match.bye:
            return match
        games = sorted(i for indices in self._games_of(wave, match.id).values() for i in indices)
        score = totals_of((found[i] for i in games), match.entrants, self.names)
        return replace(match, score=score, winner=winner_of(match.entrants, score), games=tuple(games),
                       deal_sets=self.spec.games, decided_by=SCORE)

    def _knockout(self) -> tuple[tuple[tuple[Match, ...], ...], Wave | None, Bracket]:
        entrants = len(self.names)
        decided: dict[str, Match] = {}
        deal_sets: dict[str, list[tuple[int, ...]]] = {}
        """Each match's deal sets played so far, as their game indices."""
        while True:
            bracket = build_bracket(entrants, self.spec.elimination, decided)
            if bracket.finished:
                return self._bracket_rounds(bracket), None, bracket
            playing = bracket.next_matches()
            units = [Unit(m.id, self._layout(m), g) for m in playing
                     for g in self._wanted(len(deal_sets.get(m.id, ())))]
            wave, found = self._wave(units)
            if found is None:
                return self._bracket_rounds(bracket), wave, bracket
            for match in playing:
                sets = deal_sets.setdefault(match.id, [])
                sets.extend(tuple(games) for _, games in sorted(self._games_of(wave, match.id).items()))
                totals = [totals_of((self.outcomes[i] for i in games), match.entrants, self.names) for games in sets]
                result = settle(match.entrants, totals, self.spec.games, self.spec.tiebreak_games)
                if result is not None:
                    score = (sum(t[0] for t in totals), sum(t[1] for t in totals))
                    decided[match.id] = replace(match, score=score, winner=result[0], decided_by=result[1],
                                                games=tuple(i for games in sets for i in games), deal_sets=len(sets))

    def _wanted(self, played: int) -> range:
        """The deal sets a match plays in the next wave: its ``games``, then one sudden-death deal set at a time."""
        return range(self.spec.games) if played == 0 else range(played, played + 1)

    @staticmethod
    def _bracket_rounds(bracket: Bracket) -> tuple[tuple[Match, ...], ...]:
        return tuple(tuple(matches) for _, matches in bracket.rounds())


__all__ = ["Event", "Unit", "Wave", "WaveSchedule", "event_from_records",
           "event_games", "wave_schedule"]
