"""One table of the ladder, played as an ordinary tournament run: its tournament file, its run folder, its results.

A table the matchmaker chose is a round robin of exactly its versions with one deal set (k distinct entrants at a
k-sided table are exactly one table), written as a tournament file (``tournament.toml`` in its run folder,
validated by the tournament files' own checks) and played by :func:`arena.tournament.runner.run_tournament`: the
same runner, pools, referee, sandbox, fault rules, committed seed and records as any tournament, so its records
verify with ``arena replay --verify`` and a run cut short resumes from its folder. Nothing here knows how a
version's bot is started: a :data:`BotOf` callable gives its :class:`~arena.players.process.BotSpec` (today from
the version's source folder; the built folder of a sandboxed build when the pipeline makes one).

When the run ends, :func:`results` reads its records back as the database's rows, and the caller writes them with
the rating update and the table's state in one transaction (:meth:`arena.league.storage.db.Database.finish_table`).
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.league.play.folders import CHALLENGES as CHALLENGES
from arena.league.play.folders import FINALS as FINALS
from arena.league.play.folders import LEAGUES as LEAGUES
from arena.league.play.folders import TABLES as TABLES
from arena.league.play.folders import league_folder as league_folder
from arena.league.play.folders import run_folders as run_folders
from arena.league.rules.config import LeagueConfig
from arena.league.rules.errors import LeagueError
from arena.league.rules.model import LadderTable, Seat, Version
from arena.league.rules.rating import seats_of
from arena.league.storage.db import AsyncDatabase
from arena.players.process import BotSpec
from arena.records.jsonform import index_of
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records
from arena.sandbox import LIMIT_KEYS
from arena.tournament.spec import TournamentSpec, spec_from_dict

BotOf = Callable[[Version], BotSpec]
"""How a ready version's bot is started (its command, folder and protocol); raises LeagueError when it cannot be."""


class LeagueRuns:
    """What every part of a league that plays ordinary tournament runs needs (the ladder, the challenges, the
    finals): the database, the league served, its own folder, how a version's bot starts, the log, and the runner's
    ``backend`` (a Ray backend), ``limiter`` (the server's games-at-once limit) and ``protected`` paths (no bot may
    see them)."""

    def __init__(self, database: AsyncDatabase, served: Any, folder: Path, bot_of: BotOf, log: Any, *,
                 backend: Any = None, limiter: Any = None, protected: Sequence[Path] = ()) -> None:
        self.database = database
        self.served = served
        self.config: LeagueConfig = served.config
        self.folder = folder
        self.bot_of = bot_of
        self.log = log
        self.backend = backend
        self.limiter = limiter
        self.protected = tuple(protected)


TIME_KEYS = ("move_ms", "bank_ms", "startup_ms", "first_move_ms", "grace_ms")
RECORD = TABLES + "/{id}/games.jsonl"
"""A table's record file, relative to the league's folder, as the games' index names it."""


def entrant_name(bot_name: str, version: Version) -> str:
    """A version's name at its table and in its records: its bot's name and its number (``greedy-v3``)."""
    return f"{bot_name}-v{version.number}"


def rotations(config: LeagueConfig) -> int:
    """A table's sides and the rotations of its deal set: two for two players or two teams, k for k players (each
    side one version); also the games a table plays, with duplicate deals or without."""
    return 2 if config.game().teams else config.players


def authors_apart(config: LeagueConfig) -> bool:
    """Whether one author's versions must sit at distinct tables: at tables of three or more sides (two or more
    opponents, against whom a pair of one author's versions could play as partners, sharing what they see), unless
    the league file allows it (``same_author_tables``). Two sides are a head-to-head match, where meeting an older
    version is how a new one is measured."""
    return rotations(config) >= 3 and not config.same_author_tables


def table_file(config: LeagueConfig, table: LadderTable, bots: Sequence[BotSpec], folder: Path) -> str:
    """The table as a tournament file: the league's game, time and limits, one deal set (every rotation with
    duplicate deals; without, as many single games as there are rotations), the bots in side order. A table with a
    dial-in version plays as many games, each with a fresh deal (the tournament file's own rule,
    :func:`arena.tournament.spec.duplicate_off_notice`: its author's machine would remember a deal); the ladder
    rates a duplicate table as one result, its sides' match points summed over its rotations, and a table of fresh
    deals game by game (:func:`results` tells them apart from the run's records)."""
    return league_tournament_file(config, f"{config.name} table {table.id}", bots, folder, deal_sets=1)


def league_tournament_file(config: LeagueConfig, name: str, bots: Sequence[BotSpec], folder: Path, *,
                           deal_sets: int, top: Sequence[str] = (), tables: Mapping[str, Mapping[str, Any]] = {}
                           ) -> str:
    """A tournament of the league's game, time and limits over ``bots`` (in side order): ``deal_sets`` per pairing
    (every rotation each with duplicate deals; without, as many single games as rotations), run in ``folder``.
    ``top``: more top-level lines (``format = ...``); ``tables``: more tables (``[sprt]``), key to value. What the
    ladder's tables, the challenges and the finals all are."""
    games = rotations(config)
    lines = [f"name = {_string(name)}", f"variant = {_string(config.variant)}",
             f"players = {config.players}", f"games = {deal_sets if config.duplicate else deal_sets * games}",
             f"duplicate = {toml_value(config.duplicate)}", f"concurrency = {games}",
             f"output = {_string(str(folder))}", "sandbox = true", *top, "", "[options]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in sorted(config.options.items())]
    lines += ["", "[time]"] + [f"{key} = {getattr(config.time, key)}" for key in TIME_KEYS]
    lines += ["", "[limits]"] + [f"{key} = {toml_value(getattr(config.limits, key))}" for key in LIMIT_KEYS]
    for title, values in tables.items():
        lines += ["", f"[{title}]"] + [f"{key} = {toml_value(value)}" for key, value in values.items()]
    for bot in bots:
        if bot.dial_in:  # its author's machine plays it: a name and its token's SHA-256, nothing to start
            lines += ["", "[[bots]]", f"name = {_string(bot.name)}", "dial_in = true",
                      f"token_sha256 = {_string(bot.token_sha256)}"]
            continue
        lines += ["", "[[bots]]", f"name = {_string(bot.name)}", f"command = {toml_value(list(bot.command))}",
                  f"protocol = {_string(bot.protocol)}", f"transport = {_string(bot.transport)}"]
        if bot.folder:
            lines.append(f"folder = {_string(bot.folder)}")
        if bot.cwd:
            lines.append(f"cwd = {_string(bot.cwd)}")
        if bot.env:
            lines.append("env = { " + ", ".join(f"{_string(k)} = {_string(v)}" for k, v in bot.env.items()) + " }")
    return "\n".join(lines) + "\n"


def table_spec(text: str) -> TournamentSpec:
    """The tournament of a table's file, checked as every tournament file is (a table that a tournament file could
    not describe is refused here with its line, not half-run)."""
    return spec_from_dict(tomllib.loads(text))


def named(bot: BotSpec, name: str) -> BotSpec:
    return dataclasses.replace(bot, name=name)


@dataclasses.dataclass(frozen=True)
class PlayedTable:
    """A table's run read back: its games as (game key, seats) rows in the order of their keys, and whether they
    are rated as single games (:func:`results`)."""

    games: list[tuple[str, list[Seat]]]
    single_games: bool


def results(folder: Path, total: int, version_of: Mapping[str, int]) -> PlayedTable:
    """The table's games as (game key, seats) rows, one per scheduled game (the first complete record of each
    index, as a resumed run counts them); a run that does not hold all ``total`` games is an error, never rated
    half. Rated as single games when the run gave each game a deal of its own (its records' deal keys all
    distinct: a run without duplicate deals), read from the run itself, whatever the league file asked for."""
    found: dict[int, list[Seat]] = {}
    deals: dict[int, str] = {}
    for record in iter_records(RunFolder(folder).records, ReadReport()):
        index = index_of(record)
        if index < total and index not in found:
            found[index] = seats_of(record, version_of)
            deals[index] = str(record.get("dealKey", ""))
    if len(found) != total:
        raise LeagueError(f"{folder}: the run holds {len(found)} of its {total} games; nothing is rated")
    return PlayedTable([(str(index), found[index]) for index in sorted(found)], fresh_deals(list(deals.values())))


def fresh_deals(deal_keys: Sequence[str]) -> bool:
    """Whether games with these deal keys each had a deal of their own (two or more games, no key shared): a run
    without duplicate deals, whose games are rated one by one."""
    return len(deal_keys) > 1 and len(set(deal_keys)) == len(deal_keys)


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL (which JSON leaves) is escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value: Any) -> str:
    """A value as TOML writes it (a text, a number, a boolean, a list of them): what a table's file holds."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise LeagueError(f"cannot write {value!r} in a table's tournament file")
