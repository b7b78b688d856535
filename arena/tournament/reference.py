"""The reference scale: a fixed set of built-in players rated once per variant, on which any bot is placed.

A bot's rating in a tournament is against that tournament's field, so two tournaments' numbers do not compare. The
reference scale fixes the field: the **reference players** (:data:`REFERENCE_KINDS`: random, greedy, a mix of the
two, the search player at three playout budgets; built-ins with no clock, so they play the same moves on any machine) are rated by a
large duplicate-deal round robin among themselves, with the maximum-likelihood fit the league's leaderboard uses
(:mod:`arena.tournament.likelihood`), **anchored at random = 0 Elo**: each reference's rating is its difference
from random, its interval that difference's. The result is a :class:`Scale`, kept as JSON under
``arena/tournament/scales/`` (one file per variant and player count) with the command that reproduces it.

A **placement** rates one candidate on a scale: a gauntlet (every table has the candidate, the references never
meet one another) of duplicate deal sets against the references, then the candidate's rating with every reference
held at its published rating (:func:`~arena.tournament.likelihood.place`). Its interval is the placement's own, the
scale taken as exact; a candidate that plays like a reference player lands within that player's interval.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import tomli_w

from arena.errors import ArenaError
from arena.players.builtin import BUILTIN_PLAYERS, builtin_player
from arena.players.process import BUILTIN_PREFIX
from arena.records.run_folder import RunFolder
from arena.records.store import ReadReport, iter_records
from arena.rules import new_game
from arena.tournament.likelihood import Fit, FitError, Tally, place
from arena.tournament.ratings import Z95, elo_of_logit, logit_of_elo
from arena.tournament.reference_players import ANCHOR as ANCHOR
from arena.tournament.reference_players import PLACEMENT_DEAL_SETS as PLACEMENT_DEAL_SETS
from arena.tournament.reference_players import REFERENCE_KINDS as REFERENCE_KINDS
from arena.tournament.reference_players import SCALE_DEAL_SETS as SCALE_DEAL_SETS
from arena.tournament.standings import Standings, outcome_of

SCALES = "scales"
"""The package folder (under ``arena/tournament``) of the published scales."""


class ScaleError(ArenaError, ValueError):
    """A scale that cannot be used: none published for the variant, or a file that is not one."""


@dataclass(frozen=True)
class ScalePoint:
    """One reference player on the scale: Elo above random, the 95% interval of that difference."""

    name: str
    elo: float
    low: float
    high: float
    deal_sets: int


@dataclass(frozen=True)
class Scale:
    """A variant's reference players rated against random, with how the ratings were made."""

    variant: str
    players: int
    options: dict[str, Any]
    points: tuple[ScalePoint, ...]
    deal_sets: int
    """Deal sets per pairing of the run that made the scale (of the added players' run, for a scale extended with
    ``--add``; each player's own count is its point's)."""
    seed: str
    """The round robin's master seed (revealed at its end): the records it made can be replayed and checked."""
    command: str
    """The command that reproduces the scale."""

    def point(self, name: str) -> ScalePoint:
        for point in self.points:
            if point.name == name:
                return point
        raise ScaleError(f"no reference player {name!r} on the {self.variant} scale")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scale:
        try:
            points = tuple(ScalePoint(str(p["name"]), float(p["elo"]), float(p["low"]), float(p["high"]),
                                      int(p["deal_sets"])) for p in data["points"])
            return cls(variant=str(data["variant"]), players=int(data["players"]), options=dict(data["options"]),
                       points=points, deal_sets=int(data["deal_sets"]), seed=str(data["seed"]),
                       command=str(data["command"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ScaleError(f"not a reference scale: {error!r}") from None


@dataclass(frozen=True)
class Placement:
    """A candidate's rating on a scale: Elo above random and its 95% interval, from ``deal_sets`` deal sets."""

    name: str
    elo: float
    low: float
    high: float
    deal_sets: int


def scale_file_name(variant: str, players: int) -> str:
    return f"{variant}-{players}p.json"


def published_scale(variant: str, players: int | None = None) -> Scale:
    """The scale published with the arena for the variant (its usual player count when not given)."""
    count = players if players is not None else new_game(variant).players
    name = scale_file_name(variant, count)
    source = resources.files("arena.tournament").joinpath(SCALES, name)
    if not source.is_file():
        published = [f"{scale.variant} ({scale.players} players)" for scale in published_scales()]
        raise ScaleError(f"no reference scale for {variant} with {count} players is published; published: "
                         f"{', '.join(published) or 'none'} (make one with: arena reference {variant})")
    return read_scale(source.read_text())


def read_scale(text: str) -> Scale:
    try:
        return Scale.from_json(json.loads(text))
    except json.JSONDecodeError as error:
        raise ScaleError(f"not a reference scale: {error}") from None


def read_scale_file(path: Path) -> Scale:
    try:
        return read_scale(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise ScaleError(f"{path}: cannot read the scale: {getattr(error, 'strerror', None) or error}") from None


def write_scale(scale: Scale, path: Path) -> None:
    path.write_text(json.dumps(scale.to_json(), indent=1) + "\n")


def scale_of(fit: Fit, variant: str, players: int, options: Mapping[str, Any], deal_sets: int, seed: str,
             command: str) -> Scale:
    """The scale from the round robin's fit: each reference's difference from :data:`ANCHOR`, with the 95%
    interval of that difference (the anchor's own is 0 wide), weakest first."""
    points = []
    for name in fit.names:
        elo, low, high = fit.difference(name, ANCHOR) if name != ANCHOR else (0.0, 0.0, 0.0)
        points.append(ScalePoint(name, round(elo, 1), round(low, 1), round(high, 1),
                                 int(fit.deal_sets[fit.position(name)])))
    points.sort(key=lambda point: point.elo)
    return Scale(variant, players, dict(options), tuple(points), deal_sets, seed, command)


def placement(results: Tally, scale: Scale, candidate: str) -> Placement:
    """The candidate's rating on the scale from its deal-set results against the references (the scale's ratings
    held fixed)."""
    fixed = {point.name: logit_of_elo(point.elo) for point in scale.points}
    evidence = results.evidence()
    try:
        theta, error = place(evidence, fixed, candidate)
    except FitError as failure:
        raise ScaleError(str(failure)) from None
    half = Z95 * error
    deal_sets = int(evidence.deal_sets[evidence.index()[candidate]])
    return Placement(candidate, elo_of_logit(theta), elo_of_logit(theta - half), elo_of_logit(theta + half),
                     deal_sets)


def unavailable(kinds: Sequence[str]) -> dict[str, str]:
    """The built-in players of ``kinds`` this installation cannot make, each with the one line why (an extra that
    is not installed)."""
    found = {}
    for kind in kinds:
        try:
            builtin_player(kind)
        except ArenaError as error:
            found[kind] = str(error)
    return found


def playable(scale: Scale) -> tuple[Scale, list[str]]:
    """The scale without the reference players this installation cannot make (a placement against the others is
    as sound: each reference is held at its own rating), and the names left out."""
    missing = unavailable([point.name for point in scale.points])
    if ANCHOR in missing:
        raise ScaleError(f"the anchor {ANCHOR!r} cannot be played: {missing[ANCHOR]}")
    kept = tuple(point for point in scale.points if point.name not in missing)
    return replace(scale, points=kept), sorted(missing)


def within(placement: Placement, point: ScalePoint) -> bool:
    """Whether the two ratings agree: the candidate's interval and the reference's overlap."""
    return placement.low <= point.high and point.low <= placement.high


def round_robin_file(variant: str, players: int, options: Mapping[str, Any], deal_sets: int, output: str,
                     seed: str | None = None, kinds: Sequence[str] = REFERENCE_KINDS) -> str:
    """The tournament file of the round robin that rates the references."""
    return tomli_w.dumps(_tournament(f"reference scale of {variant}", variant, players, options, deal_sets, output,
                                     seed, [_builtin_entry(kind) for kind in kinds]))


def extension_file(variant: str, players: int, options: Mapping[str, Any], rated: Sequence[str],
                   added: Sequence[str], deal_sets: int, output: str, seed: str | None = None) -> str:
    """The tournament file that adds reference players to a round robin already played: a gauntlet whose candidates
    are the added players, each paired with every rated one and with one another, so that the two runs together
    hold every pairing of a round robin of them all."""
    clash = sorted(set(rated) & set(added))
    if clash:
        raise ScaleError(f"{clash[0]!r} is rated already")
    data = _tournament(f"reference scale of {variant}, extended", variant, players, options, deal_sets, output, seed,
                       [_builtin_entry(kind) for kind in (*rated, *added)])
    data["format"] = "gauntlet"
    data["candidates"] = list(added)
    return tomli_w.dumps(data)


def standings_of_runs(folders: Sequence[Path], group_size: int) -> Standings:
    """One tournament's standings over the records of several run folders, each run's deal sets its own (a deal
    key is unique within a run only)."""
    standings = Standings(group_size=group_size)
    for number, folder in enumerate(folders):
        for record in iter_records(RunFolder(folder).records, ReadReport()):
            outcome = outcome_of(record)
            standings.add(replace(outcome, deal_key=f"{number}/{outcome.deal_key}"))
    return standings


def gauntlet_file(scale: Scale, candidate: str, command: Sequence[str], deal_sets: int, output: str,
                  seed: str | None = None) -> str:
    """The tournament file of a placement: the candidate (a bot command, sandboxed) against every reference."""
    if any(point.name == candidate for point in scale.points):
        raise ScaleError(f"the candidate's name {candidate!r} is a reference player's; give it another (--name)")
    data = _tournament(f"{candidate} on the {scale.variant} reference scale", scale.variant, scale.players,
                       scale.options, deal_sets, output, seed,
                       [*(_builtin_entry(point.name) for point in scale.points),
                        {"name": candidate, "command": list(command)}])
    data["format"] = "gauntlet"
    data["candidates"] = [candidate]
    return tomli_w.dumps(data)


def _builtin_entry(kind: str) -> dict[str, Any]:
    if kind not in BUILTIN_PLAYERS:
        raise ScaleError(f"unknown built-in player {kind!r}; valid players: {', '.join(BUILTIN_PLAYERS)}")
    return {"name": kind, "command": f"{BUILTIN_PREFIX}{kind}"}


def _tournament(name: str, variant: str, players: int, options: Mapping[str, Any], deal_sets: int, output: str,
                seed: str | None, bots: list[dict[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "variant": variant, "players": players, "games": deal_sets,
                            "duplicate": True, "output": output}
    if seed is not None:
        data["seed"] = seed
    if options:
        data["options"] = dict(options)
    data["bots"] = bots
    return data


def scale_markdown(scale: Scale) -> str:
    """The scale as the docs publish it: a heading line, the command, and one table row per reference player."""
    rows = [f"| `{point.name}` | {point.elo:+.0f} | {interval_text(point.low, point.high)} | {point.deal_sets:,} |"
            for point in scale.points]
    return "\n".join([f"**{scale.variant}**, {scale.players} players, made by:", "",
                      "```sh", scale.command, "```", "",
                      "| player | Elo above random | 95% interval | deal sets |", "|---|---:|---|---:|", *rows])


def published_scales() -> list[Scale]:
    """Every scale the arena ships, by file name."""
    folder = resources.files("arena.tournament").joinpath(SCALES)
    if not folder.is_dir():
        return []
    return [read_scale(entry.read_text()) for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".json")]


def interval_text(low: float, high: float) -> str:
    return f"[{low:+.0f}, {high:+.0f}]" if math.isfinite(low) and math.isfinite(high) else "[?, ?]"
