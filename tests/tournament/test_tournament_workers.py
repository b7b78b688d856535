"""``arena run --workers N``: a run's games on N referee processes, its records written once by the parent.

The records of a two-worker run are those of a one-process run game for game (timing fields aside); a worker killed
with kill -9 mid-run loses no game and doubles none (its games in flight are played again elsewhere); Ctrl-C stops
every worker and its bots and a resume finishes the run; a worker count the run cannot use is one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from arena.records.replay import verify_run
from arena.records.run_folder import RunFolder
from arena.records.store import iter_records
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from arena.tournament.workers import WORKER_CODE, workers_factory
from support.paths import ROOT
from support.processes import bot_processes
from support.tournaments import RANDOM_BOT
from support.waiting import wait_for

import tomllib

TIMING = ("matchId", "startedAt", "durationS", "thinkMs")
"""What differs between two plays of the same game: the match's id, its clock, and how long each bot thought."""


def builtin_text(games: int) -> str:
    """Seeded built-in players only: every move follows from the game's seed, so two runs can be compared."""
    return f'''name = "w"
variant = "draw"
games = {games}
duplicate = true
seed = "workers"
concurrency = 4
[[bots]]
name = "random"
command = "builtin:random"
[[bots]]
name = "greedy"
command = "builtin:greedy"
'''


def bots_text(tag: str, games: int) -> str:
    """Two sandboxed random Python bots tagged ``tag``, Draw to 100 (a game lasts long enough to be in flight)."""
    bot = json.dumps([sys.executable, str(RANDOM_BOT), "--tag", tag])
    return f'''name = "w"
variant = "draw"
games = {games}
seed = "workers"
concurrency = 4
[[bots]]
name = "alpha"
command = {bot}
[[bots]]
name = "beta"
command = {bot}
'''


def assert_verifies(run: Path, games: int) -> None:
    report = verify_run(run, jobs=1)
    assert (report.games, report.mismatches, report.seed_checked) == (games, [], True)


def without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: without_timing(v) for key, v in value.items() if key not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def without_order(standings: dict) -> dict:
    """Standings without what depends on timing (think times) or on the order games finished in (OpenSkill's
    sequential updates): that order differs between any two runs of more than one game at a time."""
    return {**standings, "entrants": [{key: value for key, value in entrant.items()
                                       if key not in ("think_ms", "think_ms_per_decision", "openskill")}
                                      for entrant in standings["entrants"]]}


def records_by_index(run: Path) -> dict[int, dict]:
    found: dict[int, dict] = {}
    for record in iter_records(RunFolder(run).records):
        index = int(record.get("index", 0))
        assert index not in found, f"game {index} recorded twice"
        found[index] = record
    return found


def finished_games(run: Path) -> int:
    log = RunFolder(run).log
    return log.read_text().count('"game_finished"') if log.exists() else 0


def worker_pids(parent: int) -> list[int]:
    """The worker processes of the arena process ``parent``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and WORKER_CODE.encode() in cmdline:
            pids.append(int(entry.name))
    return pids


def start_run(path: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)


async def test_two_workers_record_what_one_process_does(tmp_path: Path) -> None:
    text = builtin_text(12)
    spec = spec_from_dict(tomllib.loads(text))
    one = await run_tournament(spec, text, tmp_path / "one")
    told: list[dict] = []
    two = await run_tournament(spec, text, tmp_path / "two", backend=workers_factory(2), on_game=told.append)
    assert (one.played_now, two.played_now) == (24, 24)
    alone, shared = records_by_index(tmp_path / "one"), records_by_index(tmp_path / "two")
    assert sorted(shared) == list(range(24))
    for index in range(24):
        assert without_timing(shared[index]) == without_timing(alone[index]), f"game {index} differs"
    assert {int(record.get("index", 0)): record for record in told} == shared, "on_game is told each whole record"
    assert two.standings is not None and one.standings is not None
    assert without_order(two.standings.to_json()) == without_order(one.standings.to_json())
    assert sorted((tmp_path / "two" / "logs").iterdir()) == [tmp_path / "two" / "logs" / "worker-0",
                                                             tmp_path / "two" / "logs" / "worker-1"]


def test_a_worker_killed_mid_run_loses_and_doubles_nothing(tmp_path: Path) -> None:
    tag = f"workers-kill-{uuid.uuid4().hex[:8]}"
    path, out = tmp_path / "t.toml", tmp_path / "run"
    path.write_text(bots_text(tag, 12))
    process = start_run(path, out, "--workers", "2")
    try:
        wait_for(lambda: finished_games(out) >= 3, 120, "three games")
        victims = worker_pids(process.pid)
        assert len(victims) == 2
        os.kill(victims[0], signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 0, stdout + stderr
    assert sorted(records_by_index(out)) == list(range(24)), "every game exactly once"
    assert_verifies(out, 24)
    events = [json.loads(line) for line in RunFolder(out).log.read_text().splitlines()]
    assert [e["event"] for e in events].count("game_finished") == 24
    assert any(e["event"] == "game_replayed" for e in events), "the killed worker had games in flight"
    wait_for(lambda: not bot_processes(tag), 30, "the killed worker's bots to die with it")


def test_ctrl_c_stops_all_workers_and_resume_finishes(tmp_path: Path) -> None:
    tag = f"workers-int-{uuid.uuid4().hex[:8]}"
    path, out = tmp_path / "t.toml", tmp_path / "run"
    path.write_text(bots_text(tag, 12))
    process = start_run(path, out, "--workers", "2")
    try:
        wait_for(lambda: finished_games(out) >= 2, 120, "two games")
        workers = worker_pids(process.pid)
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stdout + stderr
    assert "interrupted: every finished game is recorded" in stdout
    assert f"--workers 2" in stdout
    assert "Traceback" not in stderr
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()
                and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]]
    wait_for(lambda: not bot_processes(tag), 30, "the bots to stop")
    recorded = len(records_by_index(out))
    assert 2 <= recorded < 24
    resumed = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), "--resume",
                              "--workers", "2"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{recorded} games were already recorded" in resumed.stdout
    assert sorted(records_by_index(out)) == list(range(24))
    assert_verifies(out, 24)


@pytest.mark.parametrize(("extra", "error"), [
    (("--workers", "0"), "error: --workers must be at least 1, got 0"),
    (("--workers", "-1"), "error: --workers must be at least 1, got -1"),
    (("--workers", "100000"), "error: --workers must be at most 64 (each worker starts every entrant's bots), got "
                              "100000"),
    (("--workers", "8"), "error: --workers 8 is more than the games in flight (4, --concurrency or the file's "
                         "'concurrency'): each worker needs a game at a time"),
    # With --backend ray the count is actors on every node: the same refusals, before Ray is joined or started.
    (("--workers", "0", "--backend", "ray"), "error: --workers must be at least 1, got 0"),
    (("--workers", "65", "--backend", "ray"), "error: --workers must be at most 64 (each worker starts every "
                                              "entrant's bots), got 65"),
    (("--workers", "5", "--backend", "ray"), "error: --workers 5 is more than the games in flight (4, --concurrency "
                                             "or the file's 'concurrency'): each worker needs a game at a time"),
    (("--workers", "2", "--address", "127.0.0.1:1"), "error: --address is for --backend ray, got --backend local"),
])
def test_an_unusable_worker_count_is_one_line(tmp_path: Path, extra: tuple[str, ...], error: str) -> None:
    path, out = tmp_path / "t.toml", tmp_path / "run"
    path.write_text(builtin_text(2))
    result = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), *extra],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == error
    assert not out.exists(), "nothing is written for a run that cannot start"


def test_an_unstartable_bot_is_named_once(tmp_path: Path) -> None:
    path, out = tmp_path / "t.toml", tmp_path / "run"
    path.write_text(builtin_text(2).replace('command = "builtin:greedy"', 'command = ["/bin/false"]'))
    result = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), "--workers", "2"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bot 'greedy' cannot play: the bot did not start: the "
                                                   "process exited with status 1 before the handshake"), lines
    assert lines[0].endswith(f"(log: {out}/logs/worker-0/greedy.0.log); no game was played")
    assert not RunFolder(out).records.exists() or not list(iter_records(RunFolder(out).records))


@pytest.mark.parametrize(("extra", "error"), [
    (("--workers", "0"), "error: --workers must be worker counts from 1 to 64, comma-separated, got '0'"),
    (("--workers", "1,x"), "error: --workers must be worker counts from 1 to 64, comma-separated, got '1,x'"),
    (("--workers", "1,65"), "error: --workers must be worker counts from 1 to 64, comma-separated, got '1,65'"),
    (("--workers", "1,8", "--concurrency", "4"), "error: --workers 8 is more than --concurrency 4: each worker "
                                                 "needs a game at a time"),
    (("--bot", "no-such-bot-program"), "error: the bot's program 'no-such-bot-program' is not found (the Go kit's "
                                       "is built by scripts/setup.sh)"),
])
def test_bench_workers_refuses_the_unmeasurable(extra: tuple[str, ...], error: str) -> None:
    result = subprocess.run([sys.executable, "-m", "arena", "bench", "workers", *extra], capture_output=True,
                            text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == error
    assert result.stdout == ""
