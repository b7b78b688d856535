"""League files read from disk: the one place the league's configuration touches the file system (the rules that
validate it, :mod:`arena.league.rules.config`, are pure)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from arena.errors import read_named_file
from arena.league.rules.config import LeagueConfig, league_from_text
from arena.league.rules.errors import ConfigError
from arena.sandbox.contain import installed_interpreters


def load_league(path: str | Path) -> LeagueConfig:
    """Read and validate a league file, or raise one :class:`ConfigError` naming the file. Its ``interpreters``, when
    it gives none, are this machine's (:func:`arena.sandbox.contain.installed_interpreters`)."""
    path = Path(path)
    text = read_named_file(path, "league file", ConfigError)
    try:
        return league_from_text(text, installed_interpreters())
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def load_leagues(paths: Iterable[str | Path]) -> tuple[LeagueConfig, ...]:
    """Several league files for one server: each valid, and no two with the same name (it keys the database)."""
    leagues: list[LeagueConfig] = []
    seen: dict[str, Path] = {}
    for path in map(Path, paths):
        league = load_league(path)
        if league.name in seen:
            raise ConfigError(f"{path}: league name {league.name!r} is already the name of {seen[league.name]}")
        seen[league.name] = path
        leagues.append(league)
    return tuple(leagues)
