"""What a league's public pages show beyond the leaderboard and the queue, read from the database on its thread in a
fixed number of queries: a bot's history (each version's online rating after every deal set it played, its results
by opponent and by seat, its recent games) and the finals as a spectator may see them (the seed's commitment
always, the seed itself only once the finals have ended).

The rating history is not stored: it is replayed from the done tables in their rating order with the very update
the ladder applies (:func:`arena.league.rules.rating.rate_deal_set`), so the chart ends exactly at the rating the
database holds. That costs one pass over the league's done tables per view (three queries, whatever their number),
never a query per table or per game.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from arena.league.play.table_run import RECORD, entrant_name, table_spec
from arena.league.rules.errors import NotFound, StateError
from arena.league.rules.lifecycle import DONE
from arena.league.rules.model import ONLINE, Freeze, LadderTable, Rating, Seat
from arena.league.rules.rating import rate_deal_set, table_updates
from arena.league.storage.db import Database
from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records
from arena.tournament.rounds import event_from_records
from arena.tournament.spec import TournamentSpec
from arena.tournament.standings import GameOutcome, outcome_of

RECENT_GAMES = 20
"""The newest games a bot's page lists."""


@dataclass
class RatingPoint:
    """A version's online rating after one of its deal sets: the table, when it ended, mu and sigma; ``sequence``,
    the table's place in the league's rating order (the database's), and ``deal_set``, the bot's own count of its
    rated deal sets up to this one (1, 2, 3... over all its versions): the chart's x, which only grows, whatever
    order the tables were numbered or ended in."""

    table_id: int
    ended_at: float
    mu: float
    sigma: float
    sequence: int = 0
    deal_set: int = 0


@dataclass
class Tally:
    """Results summed over deal sets (by opponent) or games (by seat): count, wins, draws, losses, points."""

    played: int = 0
    won: int = 0
    drawn: int = 0
    lost: int = 0
    points: float = 0.0

    def add(self, mine: float, best_other: float, points: float) -> None:
        self.played += 1
        self.points += points
        if mine > best_other:
            self.won += 1
        elif mine == best_other:
            self.drawn += 1
        else:
            self.lost += 1


@dataclass
class RecentGame:
    """One game of a done table at which the bot sat: the table, the game's key (its index in the table's run),
    the sides by entrant name, and each seat's points."""

    table_id: int
    game_key: str
    ended_at: float
    seats: list[str]
    points: list[float]


@dataclass
class BotHistory:
    """A bot's page beyond its versions: per version (by entrant name) its rating after each deal set; its results
    by opponent (entrant name, deal sets as the unit) and by seat (seat number, games as the unit); its recent
    games, newest first."""

    ratings: dict[str, list[RatingPoint]] = field(default_factory=dict)
    by_opponent: dict[str, Tally] = field(default_factory=dict)
    by_seat: dict[int, Tally] = field(default_factory=dict)
    recent: list[RecentGame] = field(default_factory=list)


def bot_history(database: Database, league_id: int, bot_id: int) -> BotHistory:
    """The bot's history, on the database's thread, in six queries whatever the number of tables: the league's
    bots and versions (two), the bot's versions (one), the done tables in rating order (two), their games (one)."""
    names = _entrant_names(database, league_id)
    mine = {v.id for v in database.versions(bot_id, include_deleted=True)}
    tables = database.rated_tables(league_id)
    games = database.games_by_record(league_id)
    history = BotHistory()
    state: dict[int, Rating] = {}
    rated = 0
    for table in tables:
        played = games.get(RECORD.format(id=table.id), [])
        ended = table.ended_at.timestamp() if table.ended_at else 0.0
        for totals in table_updates([seats for _, seats in played], table.versions, table.single_games):
            after = rate_deal_set([state.get(v) for v in table.versions], totals)
            rated += not mine.isdisjoint(table.versions)
            for version_id, (mu, sigma) in zip(table.versions, after, strict=False):
                old = state.get(version_id)
                state[version_id] = Rating(version_id, ONLINE, mu, sigma, (old.games if old else 0) + 1)
                if version_id in mine:
                    history.ratings.setdefault(names[version_id], []).append(
                        RatingPoint(table.id, ended, mu, sigma, table.sequence or 0, rated))
            _count_opponents(history, table, totals, mine, names)
        if mine.isdisjoint(table.versions):
            continue
        for game_key, seats in played:
            _count_seats(history, seats, mine)
            history.recent.append(RecentGame(table.id, game_key, ended, [names[s.version_id] for s in seats],
                                             [s.points for s in seats]))
    history.recent = sorted(history.recent, key=lambda g: (g.ended_at, g.table_id, int(g.game_key)),
                            reverse=True)[:RECENT_GAMES]
    return history


def _entrant_names(database: Database, league_id: int) -> dict[int, str]:
    """Every version of the league by id to its entrant name (``bot-vN``): two queries."""
    bots = {bot.id: bot.name for bot in database.bots(league_id)}
    versions = database.versions_of_bots(list(bots))
    return {v.id: entrant_name(bots[v.bot_id], v) for v in versions}


def _count_opponents(history: BotHistory, table: LadderTable, totals: Sequence[float], mine: set[int],
                     names: dict[int, str]) -> None:
    """Each of the bot's sides at a table against each other side: one deal set, won on more total points."""
    for side, version_id in enumerate(table.versions):
        if version_id not in mine:
            continue
        for other, opponent in enumerate(table.versions):
            if other != side and opponent not in mine:
                tally = history.by_opponent.setdefault(names[opponent], Tally())
                tally.add(totals[side], totals[other], totals[side])


def _count_seats(history: BotHistory, seats: Sequence[Seat], mine: set[int]) -> None:
    """Each seat the bot held in a game: won when its side's points beat every other side's."""
    for number, seat in enumerate(seats):
        if seat.version_id in mine:
            others = [s.points for s in seats if s.version_id != seat.version_id]
            history.by_seat.setdefault(number, Tally()).add(seat.points, max(others, default=0.0), seat.points)


def finished_table_game(database: Database, ladder_folder: Path, league_id: int, table_id: int,
                        game_key: str) -> dict[str, Any]:
    """One game's record of a done ladder table (the viewer's input): refused for a table of another league, or
    one not done (a deal set being played shows none of its games: its other games' deals are the same)."""
    table = database.table(table_id)
    if table.league_id != league_id:
        raise NotFound(f"no table number {table_id} in this league")
    if table.state != DONE:
        raise StateError(f"table {table_id} is {table.state}: its games are shown once it is done")
    path = RunFolder(ladder_folder / str(table_id)).records
    for record in iter_records(path, ReadReport()):
        if str(index_of(record)) == game_key:
            return record
    raise NotFound(f"table {table_id} has no game {game_key}")


@dataclass
class FinalsPage:
    """The finals as anyone may see them: their state, field, schedule, results so far, the ranking once done,
    the seed's commitment, and the seed only once the finals ended (revealed by their run)."""

    state: str
    field: list[str]
    frozen_at: float
    deal_sets: int = 0
    scheduled: int = 0
    started_at: float = 0.0
    ended_at: float = 0.0
    error: str = ""
    # dataclasses.field by its module: this class has a field named `field`
    ranking: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    results: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    commitment: str = ""
    seed: str = ""
    nonce: str = ""
    results_at: float = 0.0
    """When the ranking and the games' scores are published, while they are withheld (the league's timeline's
    ``results`` not come: :meth:`arena.league.core.LeagueCore.finals_page` empties both); 0.0 when shown."""
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    """How they are played: the ``[finals]`` keys (``format``, ``deal_sets``, ``rounds``, ...) as they started
    with (before: the league file's)."""
    entrants: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """The field in seed order: each version's ``seed``, ``version`` (its entrant name), ``bot``, ``number`` and
    ``team`` (its author)."""
    event: dict[str, Any] | None = None
    """A Swiss's or a knockout's event as its recorded games make it (rounds, Swiss table, bracket, ranking:
    :meth:`arena.tournament.rounds.Event.to_json`); None for a round robin or before the games."""
    games_per_match: int = 0
    """A pairing's or a match's games keys before its tie-breaks (the tournament's ``games``): what "deal set 3 of
    8" counts to."""
    stopped: str = ""
    """Why a Swiss ended before its last round ("" when it did not); then ``scheduled`` is the games it played."""
    stopped_after: int = 0
    """The last round such a Swiss played."""


def finals_page(database: Database, league_id: int, folder: Path | None, league_group: int = 1,
                settings: Mapping[str, Any] = MappingProxyType({})) -> FinalsPage:
    """The league's finals (``folder``: their run folder, None when this server runs none): "not frozen",
    "frozen" (the field is known), then the finals' own state. The seed and nonce are read only when the finals'
    state is done and the run folder is finished (revealed, secret gone): never while a game is to be played. The
    games listed are those of complete deal sets only (``group`` games each: a duplicate deal set's games share
    their deals, so none of one is shown while another of it is still to be played): the finals' own, written when
    they started (1 when a dial-in version made every deal fresh), else ``league_group``, the league's (finals
    started before they wrote it). ``settings``: the league file's ``[finals]``, shown until the finals record
    their own."""
    frozen: Freeze | None = database.frozen(league_id)
    if frozen is None:
        return FinalsPage("not frozen", [], 0.0, settings=dict(settings))
    names = _entrant_names(database, league_id)
    finals = frozen.finals or {}
    page = FinalsPage(finals.get("state", "frozen"), [names[v] for v in frozen.field], frozen.frozen_at.timestamp(),
                      deal_sets=finals.get("deal_sets", 0), scheduled=finals.get("scheduled", 0),
                      started_at=finals.get("started_at", 0.0), ended_at=finals.get("ended_at", 0.0),
                      error=finals.get("error", ""), ranking=list(finals.get("ranking", ())),
                      stopped=finals.get("stopped", ""), stopped_after=finals.get("stopped_after", 0),
                      settings={**settings, **{k: finals[k] for k in settings if k in finals}},
                      entrants=_seeded(database, league_id, finals.get("seeds", frozen.field)))
    if folder is None or frozen.finals is None:
        return page
    run = RunFolder(folder)
    page.commitment = _or_empty(run.commitment)
    page.results = _results(run, int(finals.get("group_size", league_group)))
    spec = _spec_of(run)
    if spec is not None:
        page.games_per_match = spec.games
        page.event = finals_event(run, spec)
    if page.state == "done" and run.is_finished():
        revealed = run.revealed() or {}
        page.seed, page.nonce = str(revealed.get("seed", "")), str(revealed.get("nonce", ""))
    return page


def _seeded(database: Database, league_id: int, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """The field in seed order, each version with its bot, number and team (three queries)."""
    bots = {bot.id: bot for bot in database.bots(league_id)}
    versions = {v.id: v for v in database.versions_of_bots(list(bots))}
    teams = database.authors_by_id({bot.author_id for bot in bots.values()})
    rows = []
    for seed, version_id in enumerate(seeds, 1):
        version = versions[version_id]
        bot = bots[version.bot_id]
        rows.append({"seed": seed, "version": entrant_name(bot.name, version), "version_id": version_id,
                     "bot": bot.name, "number": version.number, "team": teams[bot.author_id].name})
    return rows


def _spec_of(run: RunFolder) -> TournamentSpec | None:
    """The run's tournament, from the copy of its file the run keeps (None before the run wrote it)."""
    try:
        return table_spec(run.spec_copy.read_text())
    except (OSError, ValueError):
        return None


def finals_event(run: RunFolder, spec: TournamentSpec) -> dict[str, Any] | None:
    """A Swiss's or a knockout's event as the run's records make it (None for another format). Its games are
    placed by the master seed (the secret one while the run plays, the revealed one after), which is read here
    and shown nowhere."""
    if not spec.event:
        return None
    try:
        revealed = run.revealed() if run.is_finished() else None
        seed = str(revealed["seed"]) if revealed else run.load_secret().seed
    except (OSError, ValueError, KeyError, TypeError):
        return None
    records = list(iter_records(run.records, ReadReport())) if run.records.exists() else []
    return event_from_records(spec, seed, records).to_json()


def _or_empty(read: Any) -> str:
    try:
        return read() or ""
    except (OSError, ValueError):
        return ""


def _results(run: RunFolder, group: int) -> list[dict[str, Any]]:
    """The finals' recorded games of complete deal sets, in schedule order: index, deal set, seats and each
    side's score (no seed, no deal)."""
    return [{"index": o.index, "deal_set": o.deal_key, "seats": list(o.seats), "scores": list(o.scores)}
            for o in complete_deal_sets(run, group)]


def complete_deal_sets(run: RunFolder, group: int) -> list[GameOutcome]:
    """The outcomes of a run's games whose deal set is complete (``group`` games; 1: every game is its own), in
    schedule order: the only games of a run being played that may be shown (the others' deals are still to be
    played under another rotation)."""
    if not run.records.exists():
        return []
    by_deal_set: dict[str, list[GameOutcome]] = {}
    for record in iter_records(run.records, ReadReport()):
        outcome = outcome_of(record)
        by_deal_set.setdefault(outcome.deal_key or str(outcome.index), []).append(outcome)
    complete = [o for games in by_deal_set.values() if len(games) >= group for o in games]
    return sorted(complete, key=lambda o: o.index)


def finished_finals_game(database: Database, folder: Path, league_id: int, index: int,
                         league_group: int = 1) -> dict[str, Any]:
    """One game's record of the finals (the viewer's input): refused before the finals started, and for a game
    whose deal set is still being played (its other games hold the same deals), as the finals' page lists them
    (``league_group``: :func:`finals_page`'s)."""
    frozen = database.frozen(league_id)
    if frozen is None or frozen.finals is None:
        raise NotFound("the finals have not started: they have no game yet")
    run = RunFolder(folder)
    shown = {o.index for o in complete_deal_sets(run, int(frozen.finals.get("group_size", league_group)))}
    for record in iter_records(run.records, ReadReport()) if run.records.exists() else ():
        if index_of(record) == index:
            if index not in shown:
                raise StateError(f"game {index} of the finals is shown once its deal set is complete")
            return record
    raise NotFound(f"the finals have no game {index}")


def games_written(folder: Path) -> int:
    """The size of a run's record file (0 before it has one): what changes as its games are recorded."""
    try:
        return RunFolder(folder).records.stat().st_size
    except OSError:
        return 0
