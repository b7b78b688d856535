"""Duplicate deals hold against a bot's own processes, tried as an attacker would: tests/bots/sibling_bot.py's
processes tell each other their hands through locks on (``flock``) or watches of (``inotify``) files every sandbox
sees, in a tournament with duplicate deals and 4 games in flight, and at a ladder table. Two protections stand in
the way, each tested alone: the run's phases (arena/tournament/phases.py: no process that saw a deal is alive while
another of its entrant plays it from another seat) and the sandbox's seccomp filter (arena/sandbox/syscalls.py: no
lock, no watch). With both removed the attack learns the opponent's hand, so the tests can fail.

The phases are also checked from outside, for every game: which of each entrant's processes were alive while it was
played (their start and stop on the monotonic clock, written by the bot itself) and what deals each had seen."""

from __future__ import annotations

import json
import math
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import arena.tournament.phases as phases
from arena.league.db import DONE, AsyncDatabase
from arena.league.ladder import Ladder
from arena.league.pipeline import BuiltBots
from arena.records.jsonform import deal_from
from arena.records.run_folder import RunFolder
from arena.records.store import iter_records
from arena.tournament.pools import entrant_logs
from arena.tournament.runner import LocalBackend, run_tournament
from arena.tournament.spec import spec_from_dict
from support.ladder import Log, play_until, setup
from support.league import database_url  # noqa: F401 - the fixture, on both databases
from support.paths import ROOT

SIBLING = ROOT / "tests" / "bots" / "sibling_bot.py"
CONTAIN = sys.modules["arena.sandbox.contain"]
"""The module (the package's ``contain`` is its function): its ``SYSCALL_FILTER`` set to None removes the filter."""
ENTRANTS = ("a", "b")
PROTECTIONS = ("both", "the phases alone", "the filter alone", "none")


def without_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run as it was before phases: one block, every rotation's lane open at once, no lane ever stopped."""
    monkeypatch.setattr(phases, "MIN_BLOCK", 10 ** 6)
    monkeypatch.setattr(phases.PhasedOrder, "_may_open", lambda self, number: True)

    async def kept(self, lane: int) -> None:
        return None

    monkeypatch.setattr(LocalBackend, "stop_lane", kept)


def protect(monkeypatch: pytest.MonkeyPatch, protection: str) -> None:
    monkeypatch.setattr(phases, "MIN_BLOCK", 4)  # blocks of 4 deal sets: several phases in a short run
    monkeypatch.setattr(phases, "BLOCK_GAMES_PER_WORKER", 1)
    if protection in ("the filter alone", "none"):
        without_phases(monkeypatch)
    if protection in ("the phases alone", "none"):
        monkeypatch.setattr(CONTAIN, "SYSCALL_FILTER", None)


def tournament_text(channel: str, out: Path) -> str:
    bots = "".join(f'''
[[bots]]
name = "{name}"
command = {json.dumps([sys.executable, str(SIBLING), "--name", name, "--channel", channel])}
''' for name in ENTRANTS)
    return f'''name = "siblings"
variant = "block"
games = 12
duplicate = true
seed = "siblings"
concurrency = 4
output = "{out}"

[options]
target = 1
{bots}'''


@dataclass
class Instance:
    """One start of a bot process, as its log tells it."""

    entrant: str
    start: float
    stop: float = math.inf
    matches: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class Observed:
    instances: dict[str, Instance]
    heard: list[tuple[str, str, frozenset[int]]]
    """(instance, match id, the hand it heard from a sibling)."""
    acts: dict[str, list[float]]
    """match id -> the times of every request of the game, at any seat."""


def observe(logs: Path, entrants: tuple[str, ...]) -> Observed:
    seen = Observed({}, [], defaultdict(list))
    for entrant in entrants:
        for path in entrant_logs(logs, entrant):
            for line in path.read_text(errors="replace").splitlines():
                if not line.startswith("{"):
                    continue  # the arena's own lines
                event = json.loads(line)
                kind, instance = event["event"], event["instance"]
                if kind == "start":
                    seen.instances[instance] = Instance(entrant, event["t"])
                elif kind == "stop":
                    seen.instances[instance].stop = event["t"]
                elif kind == "act":
                    seen.instances[instance].matches.append(event["match"])
                    seen.acts[event["match"]].append(event["t"])
                elif kind == "heard":
                    seen.heard.append((instance, event["match"], frozenset(event["hand"])))
                elif kind == "refused":
                    seen.instances[instance].refused.append(event["call"])
    return seen


def games_of(records: list[dict]) -> dict[str, dict]:
    return {record["matchId"]: record for record in records}


def learned(seen: Observed, games: dict[str, dict]) -> list[str]:
    """Every hand heard that was the opponent's hand in the game it was heard in."""
    found = []
    for instance, match, hand in seen.heard:
        hands = [frozenset(h) for h in deal_from(games[match]["rounds"][0]["deal"]).hands]
        if hand in hands:
            found.append(f"{seen.instances[instance].entrant} heard its opponent's hand {sorted(hand)} in game "
                         f"{games[match].get('index', 0)}")
    return found


def deal_seen_alive(seen: Observed, games: dict[str, dict]) -> list[str]:
    """The fair-play invariant from outside: for every game, every process of a seated entrant alive while it was
    played (between the game's first and last request) must not have seen its deal under another rotation."""
    violations = []
    for match, times in seen.acts.items():
        game = games[match]
        first, last = min(times), max(times)
        for name, instance in seen.instances.items():
            if instance.entrant not in game["seats"] or instance.stop < first or instance.start > last:
                continue
            for other in instance.matches:
                if other != match and games[other].get("dealKey") == game.get("dealKey") \
                        and games[other].get("rotation", 0) != game.get("rotation", 0):
                    violations.append(f"{instance.entrant}'s process {name} saw deal {game.get('dealKey')} under "
                                      f"rotation {games[other].get('rotation', 0)} and was alive while game "
                                      f"{game.get('index', 0)} played it under rotation {game.get('rotation', 0)}")
                    break
    return violations


def refusals(seen: Observed) -> set[str]:
    return {call for instance in seen.instances.values() for call in instance.refused}


@pytest.mark.parametrize("channel", ["flock", "inotify"])
@pytest.mark.parametrize("protection", PROTECTIONS)
async def test_an_entrants_processes_learn_nothing_of_a_duplicate_deal_from_each_other(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, channel: str, protection: str) -> None:
    protect(monkeypatch, protection)
    run = tmp_path / "run"
    text = tournament_text(channel, run)
    summary = await run_tournament(spec_from_dict(tomllib.loads(text)), text, run)
    assert summary.recorded == 12 * 2  # one table: 12 deal sets under both rotations
    records = list(iter_records(RunFolder(run).records))
    assert all(not record.get("faults") for record in records)
    seen = observe(RunFolder(run).bot_logs, ENTRANTS)
    games = games_of(records)
    assert set(seen.acts) == set(games)
    filtered = protection in ("both", "the filter alone")
    expected_refusals = {"flock": {"flock"}, "inotify": {"inotify_init1"}}[channel]
    assert refusals(seen) == (expected_refusals if filtered else set())
    overlaps = deal_seen_alive(seen, games)
    heard = learned(seen, games)
    if protection == "none":
        assert overlaps, "without phases, a process that saw a deal lives on while its sibling plays it"
        assert heard, "without either protection the attack learns the opponent's hand: the test can fail"
        return
    assert heard == []
    if protection != "the filter alone":
        assert overlaps == []


@pytest.mark.parametrize("channel", ["flock", "inotify"])
async def test_at_a_ladder_table_a_bots_processes_learn_nothing_of_the_deal_from_each_other(
        database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, channel: str) -> None:
    """Two versions of the sibling bot at ladder tables (a table is one deal set under both rotations, played at
    once before phases): the filter is taken away, so the phases alone stand between the attack and the hands."""
    monkeypatch.setattr(CONTAIN, "SYSCALL_FILTER", None)
    header = "import sys\nsys.argv += ['--name', '{name}', '--channel', '{channel}']\n"
    bots = {name: header.format(name=name, channel=channel) + SIBLING.read_text() for name in ENTRANTS}
    sync, served, work, ids = setup(database_url, tmp_path, bots, concurrency=1, coverage=2, placement=1)
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    await play_until(ladder, database, lambda db: len(db.tables_in(served.league_id, [DONE])) >= 2)
    tables = sync.tables_in(served.league_id, [DONE])
    for table in tables:
        folder = tmp_path / "league" / "tables" / str(table.id)
        records = list(iter_records(RunFolder(folder).records))
        assert len(records) == 2
        entrants = tuple(sorted({seat for record in records for seat in record["seats"]}))
        seen = observe(RunFolder(folder).bot_logs, entrants)
        games = games_of(records)
        assert learned(seen, games) == [] and deal_seen_alive(seen, games) == []
        assert len(seen.instances) == 4  # each version: a fresh process for each rotation
    await database.close()
