"""The freeze and the finals: the operator (or the league's timeline, :mod:`.timeline`) freezes a league at its
deadline, then plays a final tournament over the frozen field and ranks it by the maximum-likelihood fit.

- **Freeze** (:func:`freeze_league`, the timeline's :func:`freeze_now`): the moment and the field, each bot's active version then, go into the
  database (``freezes``); from then on the ladder chooses no table and no challenge starts (the ones being played
  finish), and no challenge is taken. A freeze is once: the field never changes.
- **Finals** (:class:`Finals`): an ordinary tournament run in its own folder, ``<league folder>/finals/``, over the
  field: the league's game, time and limits, a fresh seed committed before the first game and revealed at the end
  (the runner's, as every run: ``arena replay FOLDER --verify`` checks the records against it), duplicate deals
  (fresh deals for every game, as many games, each its own result, when a version of the field dials in), and
  ``deal_sets`` deal sets per table: a round robin for two sides (every pair meets), a **balanced schedule** of
  ``tables`` tables for k-player tables (default: enough tables that every pair meets about once, at least one per
  version; :func:`default_tables`). Unless the league file allows it (``same_author_tables``), a k-player table
  of the finals seats at most one version of each author, as the ladder's do: the tournament file keeps each
  author's versions apart (``apart``), and a field of fewer authors than a table has sides cannot be played (the
  finals refuse to start, saying so; started by the timeline, they are recorded as failed with that line). A server
  stopped mid-finals resumes the run at its next start, with the tournament file it started with
  (:func:`started_file`: a league file edited meanwhile changes nothing of the finals; a run folder that cannot be
  resumed fails the finals with why, and the server goes on).
- **Formats** (``[finals] format``): for two sides, a round robin (the default), a Swiss or a knockout
  (:func:`format_lines`: the tournament file's own ``format = "swiss"``/``"knockout"``, played wave by wave by the
  runner). The field is seeded by the leaderboard as it stood at the freeze (:meth:`Finals.seeds`, the fit of the
  tables that had ended by then); the seeds go into the finals' state, so a resumed run lists the entrants, and
  therefore pairs and brackets them, as the first did.
- **Ranking** of a Swiss or a knockout (:func:`event_ranking`): the event's own order, rebuilt from the records
  (:func:`arena.tournament.rounds.event_from_records`): the Swiss table (points, Buchholz, Sonneborn-Berger,
  seed), the bracket's placements (versions out in the same round tied).
- **Ranking** of a round robin (:func:`finals_ranking`): each deal set's places (its entrants by their mean match
  points over its rotations, added exactly, equal points tied), as a tournament's standings keep them
  (:meth:`~arena.tournament.standings.Standings.fit`); the fit
  (:func:`~arena.tournament.likelihood.fit`, Bradley–Terry for two sides, Plackett–Luce for more) and its
  :func:`~arena.tournament.likelihood.leaderboard` give each version's rating, 95% interval, rank range and the
  versions it cannot be told apart from: a tie is declared exactly where the intervals say so.

The finals' state lives in the freeze's ``finals`` JSON: ``{"state": "playing" | "done" | "failed", "format",
"deal_sets", "tables", "rounds", "elimination", "tiebreak_deal_sets" (the ``[finals]`` they play), "seeds" (the
field's version ids, seed 1 first), "scheduled" (a knockout's: at most), "group_size" (games a result: a deal set's
rotations, or 1), "started_at", ...}``, with ``ranking`` once done and ``error`` once failed. A Swiss that ended
before its last round (a round that could not be paired: :attr:`arena.tournament.rounds.Event.stopped`) is done
with ``stopped`` (why), ``stopped_after`` (its last round played) and ``scheduled`` the games it played
(:func:`ended_early`). Finals started before it recorded a format or seeds are a round robin over the field in its
frozen order.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from arena.league.clock import utc_now
from arena.league.play.leaderboard import board_order
from arena.league.play.pages import finals_event
from arena.league.play.table_run import (
    FINALS,
    LeagueRuns,
    authors_apart,
    entrant_name,
    league_tournament_file,
    named,
    rotations,
    table_spec,
    toml_value,
)
from arena.league.rules.config import (
    KNOCKOUT,
    MAX_DEAL_SETS,
    ROUND_ROBIN,
    SWISS,
    FinalsSettings,
    LeagueConfig,
    shown_moment,
)
from arena.league.rules.errors import LeagueError, StateError
from arena.league.rules.model import Freeze
from arena.league.rules.permissions import Caller, require_operator
from arena.league.rules.timeline import FINALS_STEP, require_manual
from arena.league.storage.db import Database
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records
from arena.tournament.errors import EntrantsCannotPlay, RunError
from arena.tournament.likelihood import leaderboard
from arena.tournament.runner import run_tournament
from arena.tournament.spec import SpecError, TournamentSpec
from arena.tournament.standings import Standings, outcome_of

PLAYING, DONE, FAILED = "playing", "done", "failed"
ROUND_ROBIN_FINALS = FinalsSettings()
IDLE_S = 5.0
"""How often the finals' task looks whether the operator started them."""


def freeze_league(database: Database, caller: Caller, league_id: int) -> Freeze:
    """The operator's freeze: the field is each bot's active version now (refused once frozen, or with no field)."""
    require_operator(caller, "freeze a league")
    field = [version.id for _bot, version in database.active_versions(league_id)]
    if not field:
        raise StateError("the league has no active version: there is no field to freeze")
    return database.freeze(league_id, field)


def freeze_now(database: Database, league_id: int) -> Freeze | None:
    """The timeline's freeze: the field is each bot's active version now (none at all: an empty field, whose finals
    fail saying so); None when the league was frozen already (by the operator, or before a restart)."""
    if database.frozen(league_id) is not None:
        return None
    field = [version.id for _bot, version in database.active_versions(league_id)]
    try:
        return database.freeze(league_id, field)
    except StateError:  # frozen meanwhile: the step is done
        return None


def default_tables(field: int, sides: int) -> int:
    """A balanced schedule's tables when the operator gives none: every pair meets about once (a table holds
    sides·(sides−1)/2 of the field's field·(field−1)/2 pairs), and at least one table per version."""
    return max(field, math.ceil(field * (field - 1) / (sides * (sides - 1))))


def swiss_rounds(field: int) -> int:
    """A Swiss's rounds when the league file gives none: ceil(log2(field)), the fewest after which one version
    can stand alone on top (at least one)."""
    return max(1, math.ceil(math.log2(field))) if field > 1 else 1


def format_lines(config: LeagueConfig, finals: FinalsSettings, field: int) -> list[str]:
    """A two-sided finals' format in the tournament file: nothing for a round robin (the tournament's default);
    a Swiss's rounds; a knockout's elimination and its tie-break, in the tournament's games (a deal set is one
    game of the file with duplicate deals, as many as there are rotations without)."""
    if finals.format == SWISS:
        return [f"format = {toml_value(SWISS)}", f"rounds = {finals.rounds or swiss_rounds(field)}"]
    if finals.format == KNOCKOUT:
        per_deal_set = 1 if config.duplicate else rotations(config)
        return [f"format = {toml_value(KNOCKOUT)}", f"elimination = {toml_value(finals.elimination)}",
                f"tiebreak_games = {finals.tiebreak_deal_sets * per_deal_set}"]
    return []


def schedule_lines(config: LeagueConfig, names: Sequence[str], authors: Sequence[int], tables: int,
                   finals: FinalsSettings = ROUND_ROBIN_FINALS) -> list[str]:
    """The tournament file's schedule for the field (its entrants' ``names``, in seed order, and each one's
    author): for two sides a round robin, a Swiss or a knockout as ``finals`` says, a balanced schedule for more,
    with each author's versions kept apart unless the league allows them at one table."""
    sides, field = rotations(config), len(names)
    if field < sides:
        raise LeagueError(f"the field has {field} versions and a table seats {sides}: no finals can be played")
    if sides == 2:
        if tables:
            raise LeagueError("the finals of two sides seat two a table (a round robin, a Swiss or a knockout): "
                              "--tables is for k-player tables")
        return format_lines(config, finals, field)
    if finals.format != ROUND_ROBIN:
        raise LeagueError(f"the finals of {sides} sides are a round robin (a balanced schedule): a {finals.format} "
                          f"pairs two sides")
    lines = ['format = "balanced"', f"tables = {tables or default_tables(field, sides)}"]
    if not authors_apart(config):
        return lines
    if len(set(authors)) < sides:
        raise LeagueError(f"the field has {field} versions of {len(set(authors))} authors and a table seats "
                          f"{sides} versions of {sides} different authors (same_author_tables = false): no finals "
                          f"can be played")
    groups = author_groups(names, authors)
    return lines + [f"apart = {toml_value(groups)}"] if groups else lines


def author_groups(names: Sequence[str], authors: Sequence[int]) -> list[list[str]]:
    """The entrants' names grouped by author, for each author with two or more (what the tournament keeps
    apart), in the field's order."""
    by_author: dict[int, list[str]] = defaultdict(list)
    for name, author in zip(names, authors, strict=True):
        by_author[author].append(name)
    return [group for group in by_author.values() if len(group) > 1]


def finals_ranking(folder: Path, version_of: Mapping[str, int], group_size: int) -> list[dict[str, Any]]:
    """The finals' ranking from their records: one result per complete deal set (its places by match points), the
    maximum-likelihood fit over them, its leaderboard rows (best first) as JSON."""
    standings = Standings(group_size=group_size)
    for record in iter_records(RunFolder(folder).records, ReadReport()):
        standings.add(outcome_of(record))
    rows = leaderboard(standings.fit(also=version_of))
    return [{"rank": row.rank, "best": row.best, "worst": row.worst, "version": row.entrant,
             "version_id": version_of[row.entrant], "rating": row.elo, "low": row.low, "high": row.high,
             "deal_sets": row.deal_sets, "tied_with": list(row.tied_with)} for row in rows]


def scheduled_games(spec: TournamentSpec) -> int:
    """The finals' games: a round robin's and a Swiss's all (every pairing of a Swiss plays its deal sets), a
    knockout's most (every tie-break played and, double elimination, the grand final's second match)."""
    return spec.expected_games()


def settings_json(settings: FinalsSettings) -> dict[str, Any]:
    """The finals' settings as their JSON state keeps them (what a resumed run plays again)."""
    return dataclasses.asdict(settings)


def settings_of(finals: Mapping[str, Any]) -> FinalsSettings:
    """The settings the finals' JSON state recorded when they started (finals started before it recorded a
    format: a round robin)."""
    defaults = FinalsSettings()
    return FinalsSettings(**{key: finals.get(key, getattr(defaults, key))
                             for key in (f.name for f in dataclasses.fields(FinalsSettings))})


def event_matches(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every match of a Swiss's rounds or a knockout's bracket, in order."""
    if "bracket" in event:
        return [match for column in event["bracket"] for match in column["matches"]]
    return [match for matches in event.get("rounds", ()) for match in matches]


def event_ranking(event: Mapping[str, Any], version_of: Mapping[str, int]) -> list[dict[str, Any]]:
    """A Swiss's or a knockout's ranking as the finals' JSON keeps it, best first: the event's order (the Swiss
    table's, with its points and tie-breaks; the bracket's placements, versions placed equal tied and sharing a
    rank range "5–8"), each version with its deal sets played."""
    table = {row["entrant"]: row for row in event.get("table", ())}
    played: dict[str, int] = defaultdict(int)
    for match in event_matches(event):
        for name in match["entrants"]:
            played[name] += match["deal_sets"]
    rows: list[dict[str, Any]] = []
    best = 1
    for group in event["ranking"]:
        worst = best + len(group) - 1
        for name in group:
            row = {"rank": str(best) if best == worst else f"{best}–{worst}", "best": best, "worst": worst,
                   "version": name, "version_id": version_of[name], "deal_sets": played[name],
                   "tied_with": [other for other in group if other != name]}
            swiss = table.get(name)
            if swiss is not None:
                row.update({key: swiss[key] for key in ("points", "buchholz", "sonneborn_berger", "wins", "draws",
                                                         "losses", "byes")})
            rows.append(row)
        best = worst + 1
    return rows


def ended_early(event: Mapping[str, Any]) -> dict[str, Any]:
    """What the finals' state says of a Swiss that ended before its last round (nothing of another event): why,
    after which round, and its games, those played (the schedule's count was of rounds never paired)."""
    if not event.get("stopped"):
        return {}
    return {"stopped": event["stopped"], "stopped_after": len(event.get("rounds", ())),
            "scheduled": sum(len(match["games"]) for match in event_matches(event))}


def games_recorded(folder: Path) -> int:
    """The finals' games recorded so far (0 before the run wrote any)."""
    path = RunFolder(folder).records
    if not path.exists():
        return 0
    return sum(1 for _ in iter_records(path, ReadReport()))


def started_file(run: RunFolder, names: Sequence[str]) -> tuple[TournamentSpec, str]:
    """The tournament file a finals' run stopped before its end started with (its folder's copy), to resume it:
    the same game, time and limits whatever the league file says since (the runner resumes only the file a run
    started with, and a server would otherwise stop at every start). Refused (:class:`SpecError`) when it cannot
    be read, or seats other entrants than the field in seed order (``names``)."""
    try:
        text = run.spec_copy.read_text()
    except OSError as error:
        raise SpecError(f"{run.path}: cannot read the tournament file the finals started with: {error}") from None
    spec = table_spec(text)
    if [bot.name for bot in spec.bots] != list(names):
        raise SpecError(f"{run.spec_copy}: the finals' run seats {', '.join(bot.name for bot in spec.bots)}, not "
                        f"the field in seed order ({', '.join(names)})")
    return spec, text


class Finals(LeagueRuns):
    """One league's finals on the trio loop: :meth:`run` until cancelled; :meth:`begin` when the operator starts
    them. They run in ``finals/`` of the league's folder (:attr:`run_folder`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.run_folder = self.folder / FINALS
        self.changes = 0
        """Times the finals' state was written since the server started (the web's pages redraw when it moves)."""
        self._wake = trio.Event()

    async def begin(self, caller: Caller, deal_sets: int, tables: int) -> Freeze:
        """The operator starts the finals: checked (not owned by the league's timeline, frozen, not started, a
        tournament file the runner accepts), recorded as playing, and the finals' task woken. ``deal_sets`` and
        ``tables`` 0: the league file's ``[finals]`` (whose format is always the league file's)."""
        require_operator(caller, "start the finals")
        require_manual(self.config, FINALS_STEP)
        frozen = await self.database.run(Database.frozen, self.served.league_id)
        if frozen is None:
            raise StateError("the league is not frozen: freeze it first (arena league freeze)")
        if frozen.finals is not None:
            raise StateError(f"the finals were started already ({frozen.finals['state']}): see arena league finals")
        deal_sets = deal_sets or self.config.finals.deal_sets
        if not 1 <= deal_sets <= MAX_DEAL_SETS:
            raise LeagueError(f"the finals play 1 to {MAX_DEAL_SETS} deal sets per table, got {deal_sets}")
        settings = dataclasses.replace(self.config.finals, deal_sets=deal_sets,
                                       tables=tables or self.config.finals.tables)
        seeds = await self.seeds(frozen)
        spec, _text, _names = await self.tournament(frozen, settings, seeds)
        return await self._started(spec, settings, seeds, "the operator")

    async def start_by_timeline(self) -> Freeze | None:
        """The timeline starts the finals of the frozen league with its ``[finals]``: recorded as playing, or, when
        they cannot be played (a field too small, one author's versions that must be kept apart), as failed with
        why; nothing when they were started already (before a restart) or the league is not frozen."""
        frozen = await self.database.run(Database.frozen, self.served.league_id)
        if frozen is None or frozen.finals is not None:
            return None
        settings = self.config.finals
        try:
            seeds = await self.seeds(frozen)
            spec, _text, _names = await self.tournament(frozen, settings, seeds)
        except LeagueError as error:
            finals = {"state": FAILED, **settings_json(settings), "scheduled": 0,
                      "started_at": utc_now().timestamp(), "ended_at": utc_now().timestamp(), "error": str(error)}
            frozen = await self.database.run(Database.set_finals, self.served.league_id, finals)
            self.changes += 1
            self.log.warning("finals_cannot_start", league=self.config.name, by="the timeline", error=str(error))
            return frozen
        return await self._started(spec, settings, seeds, "the timeline")

    async def seeds(self, frozen: Freeze) -> list[int]:
        """The field in the order of the leaderboard at the freeze (the fit of the tables that ended by then): the
        first is seed 1. Recorded with the finals, so a resumed run seeds (and pairs) them as the first did."""
        return await self.database.run(board_order, self.served.league_id, list(frozen.field), frozen.frozen_at)

    async def _started(self, spec: TournamentSpec, settings: FinalsSettings, seeds: list[int], by: str) -> Freeze:
        """The finals recorded as playing, with their settings and seeds, and their task woken."""
        if settings.format == SWISS and not settings.rounds:  # recorded as played
            settings = dataclasses.replace(settings, rounds=swiss_rounds(len(seeds)))
        finals = {"state": PLAYING, **settings_json(settings), "seeds": seeds, "scheduled": scheduled_games(spec),
                  "group_size": spec.schedule().group_size, "started_at": utc_now().timestamp()}
        frozen = await self.database.run(Database.set_finals, self.served.league_id, finals)
        self.changes += 1
        self.log.info("finals_started", league=self.config.name, format=settings.format,
                      deal_sets=settings.deal_sets, games=finals["scheduled"], by=by)
        self._wake.set()
        return frozen

    def withheld_until(self) -> str | None:
        """When the timeline publishes the finals' ranking, if that is still to come (None: it is public when the
        finals end)."""
        results = self.config.timeline.results
        return shown_moment(results) if results is not None and utc_now() < results else None

    async def tournament(self, frozen: Freeze, settings: FinalsSettings, seeds: Sequence[int]
                         ) -> tuple[TournamentSpec, str, dict[str, int]]:
        """The finals' tournament file over the field in seed order, its spec, and each entrant's version by
        name."""
        versions = [await self.database.run(Database.version, v) for v in seeds]
        bot_names = {bot.id: bot.name for bot in await self.database.run(Database.bots, self.served.league_id)}
        names = [entrant_name(bot_names[v.bot_id], v) for v in versions]
        bots = [named(self.bot_of(version), name) for version, name in zip(versions, names, strict=True)]
        top = schedule_lines(self.config, names, [v.author_id for v in versions], settings.tables, settings)
        text = league_tournament_file(self.config, f"{self.config.name} finals", bots, self.run_folder,
                                      deal_sets=settings.deal_sets, top=top)
        try:
            spec = table_spec(text)
        except SpecError as error:
            raise LeagueError(f"the finals cannot be played: {error}") from None
        return spec, text, dict(zip(names, seeds, strict=True))

    async def run(self, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Wait for the finals to be started (or find them playing after a restart), play them, rank them."""
        task_status.started()
        while True:
            self._wake = trio.Event()
            frozen = await self.database.run(Database.frozen, self.served.league_id)
            if frozen is not None and frozen.finals is not None and frozen.finals["state"] == PLAYING:
                await self.play(frozen)
                continue
            with trio.move_on_after(IDLE_S):
                await self._wake.wait()

    async def play(self, frozen: Freeze) -> None:
        """Play (or resume) the finals' run, then write their ranking, or why they failed."""
        finals = dict(frozen.finals)
        run = RunFolder(self.run_folder)
        try:
            spec, text, version_of = await self.tournament(frozen, settings_of(finals),
                                                           finals.get("seeds", frozen.field))
            if run.keeps_secret():
                spec, text = started_file(run, list(version_of))
            if not run.is_finished():
                self.run_folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                await run_tournament(spec, text, self.run_folder, resume=run.keeps_secret(),
                                     limiter=self.limiter, protected=self.protected, backend=self.backend)
            if spec.event:
                event = await trio.to_thread.run_sync(finals_event, RunFolder(self.run_folder), spec)
                if event is None or not event["finished"]:
                    raise LeagueError("the finals' run ended before its event was decided")
                ranking = event_ranking(event, version_of)
                finals.update(ended_early(event))
            else:
                group = spec.schedule().group_size  # 1 when a dial-in version made every deal fresh
                ranking = await trio.to_thread.run_sync(finals_ranking, self.run_folder, version_of, group)
            finals.update(state=DONE, ranking=ranking, ended_at=utc_now().timestamp())
        except EntrantsCannotPlay as error:
            finals.update(state=FAILED, error="; ".join(f"{n} cannot play: {why}" for n, why in error.problems))
        except (LeagueError, RunError, SpecError, OSError) as error:  # SpecError: a folder that cannot be resumed
            finals.update(state=FAILED, error=str(error))
        await self.database.run(Database.set_finals, self.served.league_id, finals, self.withheld_until())
        self.changes += 1
        self.log.info("finals_ended", league=self.config.name, state=finals["state"], error=finals.get("error", ""))
