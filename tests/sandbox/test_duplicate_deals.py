"""Duplicate deals hold against a bot's own processes, tried as an attacker would: tests/bots/sibling_bot.py's
processes tell each other their hands through locks on (``flock``) or watches of (``inotify``) files every sandbox
sees, in a tournament with duplicate deals and 4 games in flight, and at a ladder table. Two protections stand in
the way, each tested alone: the run's phases (arena/tournament/phases.py: no process that saw a deal is alive while
another of its entrant plays it from another seat) and the sandbox's seccomp filter (arena/sandbox/syscalls.py: no
lock, no watch). With both removed the attack learns the opponent's hand, so the tests can fail.

The phases are also checked from outside, for every game: which of each entrant's processes were alive while it was
played (their start and stop on the monotonic clock, written by the bot itself) and what deals each had seen."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

import arena.tournament.phases as phases
from arena.league.rules.lifecycle import DONE
from arena.league.storage.db import AsyncDatabase
from arena.league.play.ladder import Ladder
from arena.league.intake.pipeline import BuiltBots
from arena.records.run_folder import RunFolder
from arena.records.store import iter_records
from arena.tournament.local_backend import LocalBackend
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.ladder import Log, play_until, setup
from support.league import database_url  # noqa: F401 - the fixture, on both databases
from support.siblings import (ENTRANTS, SIBLING, deal_seen_alive, games_of, learned, observe, refusals,
                              tournament_text)

CONTAIN = sys.modules["arena.sandbox.contain"]
"""The module (the package's ``contain`` is its function): its ``SYSCALL_FILTER`` set to None removes the filter."""
PROTECTIONS = ("both", "the phases alone", "the filter alone", "none")


def without_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run as it was before phases: one block, every rotation's lane open at once, no lane ever stopped."""
    monkeypatch.setattr(phases, "MAX_BLOCK", 10 ** 6)
    monkeypatch.setattr(phases.PhasedOrder, "_may_open", lambda self, number: True)

    async def kept(self, lane: int) -> None:
        return None

    monkeypatch.setattr(LocalBackend, "stop_lane", kept)


def protect(monkeypatch: pytest.MonkeyPatch, protection: str) -> None:
    monkeypatch.setattr(phases, "MAX_BLOCK", 4)  # blocks of 4 deal sets: several phases in a short run
    if protection in ("the filter alone", "none"):
        without_phases(monkeypatch)
    if protection in ("the phases alone", "none"):
        monkeypatch.setattr(CONTAIN, "SYSCALL_FILTER", None)


@pytest.mark.parametrize("channel", ["flock", "inotify"])
@pytest.mark.parametrize("protection", PROTECTIONS)
async def test_an_entrants_processes_share_no_deal(
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
async def test_a_bots_ladder_processes_share_no_deal(
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
