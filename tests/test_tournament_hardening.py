"""Tournaments under bad conditions (issue 12): a bot that cannot start is named before the first game, a bot that dies
for good mid-run is reported in the exit status, a failed write (a full disk) says how many games are safe and how
to resume, and resume then loses nothing; the interleaved schedule (and old runs that keep their own order); the
final hints; and a property test that feeds mutated tournament files to the parser."""

from __future__ import annotations

import copy
import datetime
import errno
import json
import re
import os
import resource
import shutil
import subprocess
import tomllib
import uuid
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.rules import new_game
from arena.tournament import runner
from arena.tournament.runner import (EntrantsCannotPlay, Progress, RecordsNotWritten, arena_command, prepare_run,
                                     run_tournament)
from arena.tournament.schedule import BY_TABLE, INTERLEAVED, Schedule
from arena.tournament.spec import SpecError, TournamentSpec, load_spec, spec_from_dict
from support.processes import bot_processes
from support.waiting import wait_for
from support.tournaments import ARENA, PYTHON, RANDOM_BOT, arena_run, block_text, fail_on_write, indices, write

ROOT = Path(__file__).resolve().parents[1]
BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


# --- point 1: every entrant is checked before the first game -----------------------------------------------------


def test_bots_that_cannot_start_stop_the_run_before_the_first_game_with_one_line(tmp_path: Path) -> None:
    """A script path with a typo, a program that is not installed, a bot that does not play the variant: each
    named, with why and its log's last lines, in one `error:` line, exit status 2, and no game played."""
    typo = tmp_path / "gredy_bot.py"
    extra = f'''
[[bots]]
name = "noprog"
command = "pythn {RANDOM_BOT}"

[[bots]]
name = "blocky"
command = {json.dumps([PYTHON, str(BAD_BOT), "--mode", "block_only"])}
'''
    text = block_text(uuid.uuid4().hex, 2, extra_bots=extra, first=[PYTHON, str(typo)]).replace(
        'variant = "block"', 'variant = "draw"')
    out = tmp_path / "run"
    result = arena_run(write(tmp_path, text), "--out", str(out))
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    line = lines[0]
    assert line.startswith("error: 3 bots cannot play (no game was played): bot 'alpha': the bot did not start: "
                           "the process exited with status 2 before the handshake; its log ends: --- start 1: "
                           f"{PYTHON} {typo} | ")
    assert f"can't open file '{typo}': [Errno 2] No such file or directory (log: {out}/logs/alpha.0.log); " in line
    assert line.endswith("; bot 'noprog': the bot did not start: cannot run 'pythn': it is not on the PATH; "
                         "bot 'blocky': the handshake failed: the bot does not play 'draw' (it plays block); its log "
                         f"ends: --- start 1: {PYTHON} {BAD_BOT} --mode block_only (log: {out}/logs/blocky.0.log)")
    assert not (out / "games.jsonl").exists() or (out / "games.jsonl").read_text() == ""
    assert json.loads((out / "standings.json").read_text())["games"] == 0


async def test_the_server_gets_an_arena_error_it_marks_failed_with_the_same_line(tmp_path: Path) -> None:
    """run_tournament raises EntrantsCannotPlay, an ArenaError: the server's FAILED state carries its text as is."""
    from arena.server.service import _describe

    table = {"name": "t", "variant": "block", "games": 1, "options": {"target": 1}, "bots": [
        {"name": "ok", "command": [PYTHON, str(RANDOM_BOT)]},
        {"name": "gone", "command": [PYTHON, str(tmp_path / "missing.py")]}]}
    with pytest.raises(EntrantsCannotPlay) as caught:
        await run_tournament(spec_from_dict(table), "# test\n", tmp_path / "run")
    assert isinstance(caught.value, ArenaError) and not isinstance(caught.value, ValueError)
    assert [name for name, _ in caught.value.problems] == ["gone"]
    assert _describe(caught.value) == str(caught.value)
    assert str(caught.value).startswith("bot 'gone' cannot play: the bot did not start: the process exited with "
                                        "status 2 before the handshake; its log ends: --- start 1: ")
    assert str(caught.value).endswith(f"(log: {tmp_path}/run/logs/gone.0.log); no game was played")


async def test_an_entrant_is_given_up_after_three_failed_starts_in_a_row_not_three_in_all(tmp_path: Path) -> None:
    """A real bot whose program is there or not: fail, fail, a good start, fail, fail is not given up (the good
    start ends the row); a third failure in a row is, and the next game is a forfeit without another start."""
    from arena.players.faults import BotFailure
    from arena.players.process import BotSpec
    from arena.tournament.pools import GIVE_UP_AFTER, EntrantPool

    folder = tmp_path / "flaky"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "bots" / "testbot.py", folder / "testbot.py")
    program = folder / "bad_bot.py"
    spec = BotSpec("flaky", command=(PYTHON, str(program), "--mode", "good"), folder=str(folder))
    pool = EntrantPool(spec, 1, tmp_path / "logs", startup_s=15, variant="block")

    async def start_fails() -> str:
        with pytest.raises(BotFailure) as caught:
            await pool.client(0)
        return str(caught.value)

    try:
        for _ in range(2):
            assert "before the handshake" in await start_fails()
        shutil.copy(BAD_BOT, program)
        await pool.client(0)
        pool.release(0)
        await pool.processes[0].stop()  # the next game needs a new start
        program.unlink()
        for _ in range(2):
            assert "before the handshake" in await start_fails()
        assert GIVE_UP_AFTER == 3 and (pool.failed_starts, pool.given_up) == (2, False)
        assert pool.processes[0].starts == 5
        await start_fails()
        assert pool.given_up and pool.processes[0].starts == 6
        assert (await start_fails()).startswith("the bot did not start: gave up after 3 failed starts; last: ")
        assert pool.processes[0].starts == 6, "given up: no other start"
    finally:
        await pool.stop()


def test_a_bot_given_up_mid_run_is_named_at_the_end_and_the_exit_status_is_1(tmp_path: Path) -> None:
    """The bot starts (it passes the check), crashes every few decisions, and its program is deleted after the
    first game: its restarts fail until the pool gives up on it. The run finishes (forfeits), names it, exits 1."""
    folder = tmp_path / "dying"
    folder.mkdir()
    for name in ("bad_bot.py", "testbot.py"):
        shutil.copy(ROOT / "tests" / "bots" / name, folder / name)
    tag = uuid.uuid4().hex
    text = block_text(tag, 20, concurrency=1,
                      first=[PYTHON, str(folder / "bad_bot.py"), "--mode", "exit_mid", "--tag", tag])
    out = tmp_path / "run"
    process = subprocess.Popen([PYTHON, "-m", "arena", "run", str(write(tmp_path, text)), "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    records = out / "games.jsonl"
    wait_for(lambda: records.exists() and records.read_bytes().count(b"\n") >= 1, 120, "the first game")
    (folder / "bad_bot.py").unlink()
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr
    warnings = [line for line in stdout.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1
    assert warnings[0].startswith("warning: bot 'alpha' failed to start 3 times in a row and was given up: its later "
                                  "games were forfeits; last failure: the bot did not start: ")
    assert indices(out) == list(range(40)), "the run still plays (forfeits) every game"
    alpha = json.loads((out / "bots.json").read_text())[0]
    assert alpha["given_up"] is True
    assert not bot_processes(tag)


# --- a failed write: one line, the games that are safe, the resume command -------------------------------------


def fail_standings_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing standings.json raises ENOSPC, as on a full disk; other JSON files are written."""
    real_write_json = runner.write_json

    def write_json(path: Path, data: Any) -> None:
        if path.name == "standings.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write_json(path, data)

    monkeypatch.setattr(runner, "write_json", write_json)


@pytest.mark.parametrize("standings_too", [False, True], ids=["records", "records-and-standings"])
async def test_a_full_disk_says_what_is_safe_and_resume_finishes_with_nothing_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, standings_too: bool) -> None:
    tag = uuid.uuid4().hex
    spec = load_spec(write(tmp_path, block_text(tag, 4)))
    run = tmp_path / "run"
    fail_on_write(monkeypatch, after=3)
    if standings_too:
        fail_standings_write(monkeypatch)
    with pytest.raises(RecordsNotWritten) as caught:
        await run_tournament(spec, "# t\n", run)
    standings = ("standings.json could not be written either: No space left on device" if standings_too
                 else "standings.json holds their standings")
    assert str(caught.value) == (f"cannot write {run}/games.jsonl: No space left on device; 3 of 8 games are "
                                 f"recorded and safe in {run} ({standings})")
    assert caught.value.remedy == "free some space"
    assert not bot_processes(tag)
    before = (run / "games.jsonl").read_bytes()
    assert before.count(b"\n") == 3
    if not standings_too:
        assert json.loads((run / "standings.json").read_text())["games"] == 3

    monkeypatch.undo()
    summary = await run_tournament(spec, "# t\n", run, resume=True)
    assert (summary.resumed_from, summary.played_now) == (3, 5)
    assert indices(run) == list(range(8))
    assert (run / "games.jsonl").read_bytes().startswith(before), "the safe games are kept as they were"
    assert json.loads((run / "standings.json").read_text())["games"] == 8


def with_seats_swapped(record: dict) -> None:
    record["seats"].reverse()


def with_the_seed_of_another_deal_set(record: dict) -> None:
    record["seed"] = record["seed"].rsplit("/", 1)[0] + "/7"


@pytest.mark.parametrize("change, misfit", [
    (with_seats_swapped, 'its seats ["beta", "alpha"], the schedule\'s ["alpha", "beta"]'),
    (with_the_seed_of_another_deal_set, 'its seed "hardening/0/7", the schedule\'s "hardening/0/0"'),
])
async def test_resume_plays_again_a_well_formed_record_that_does_not_fit_the_schedule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change, misfit: str) -> None:
    """Game 0's line is a complete, well-formed record, but not of the game the schedule has at index 0 (its seats
    or its seed changed): resume says so and plays game 0 again; it never counts as done, nor in the standings."""
    spec = load_spec(write(tmp_path, block_text(uuid.uuid4().hex, 2, concurrency=1)))
    run = tmp_path / "run"
    fail_on_write(monkeypatch, after=3)
    with pytest.raises(RecordsNotWritten):
        await run_tournament(spec, "# t\n", run)
    monkeypatch.undo()
    lines = (run / "games.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [int(r.get("index", 0)) for r in records] == [0, 1, 2]
    change(records[0])
    (run / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = await run_tournament(spec, "# t\n", run, resume=True)
    assert (summary.resumed_from, summary.played_now) == (2, 2)
    assert summary.bad_lines == [(-1, f"game 0 does not fit the schedule ({misfit}); it is played again")]
    assert json.loads((run / "standings.json").read_text())["games"] == 4
    replayed = [json.loads(line) for line in (run / "games.jsonl").read_text().splitlines()[3:]]
    assert sorted(int(r.get("index", 0)) for r in replayed) == [0, 3]
    again = next(r for r in replayed if int(r.get("index", 0)) == 0)
    assert again["seats"] == ["alpha", "beta"] and again["seed"] == "hardening/0/0"


async def test_standings_that_cannot_be_written_at_the_end_keep_the_run_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game recorded, then standings.json fails: the seed is not revealed (the run is not finished), and the
    resume writes the standings and finishes it without playing again."""
    spec = load_spec(write(tmp_path, block_text(uuid.uuid4().hex, 1)))
    run = tmp_path / "run"
    fail_standings_write(monkeypatch)
    with pytest.raises(RecordsNotWritten) as caught:
        await run_tournament(spec, "# t\n", run)
    assert str(caught.value) == (f"cannot write {run}/standings.json: No space left on device; 2 of 2 games are "
                                 f"recorded and safe in {run}")
    assert not (run / "seed.json").exists() and (run / "seed.secret").exists()
    monkeypatch.undo()
    summary = await run_tournament(spec, "# t\n", run, resume=True)
    assert (summary.resumed_from, summary.played_now) == (2, 0)
    assert (run / "seed.json").exists() and json.loads((run / "standings.json").read_text())["games"] == 2


def test_a_file_size_limit_hit_mid_line_for_real_then_resume(tmp_path: Path) -> None:
    """The kernel refuses the write (RLIMIT_FSIZE: EFBIG, the record file cut mid-line), as a full disk would, without
    filling the machine's disk: one `error:` line with the resume command, exit 1; then the resume (no limit)
    drops the torn line and finishes with every game exactly once."""
    tag = uuid.uuid4().hex
    path = write(tmp_path, block_text(tag, 20))
    out = tmp_path / "run"

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (30_000, 30_000))  # Python ignores SIGXFSZ: writes get EFBIG

    result = arena_run(path, "--out", str(out), preexec_fn=limit_file_size)
    assert result.returncode == 1, result.stdout + result.stderr
    kept = (out / "games.jsonl").read_bytes()
    safe = kept.count(b"\n")
    assert 0 < safe < 40 and len(kept) == 30_000
    assert result.stderr == (
        f"error: cannot write {out}/games.jsonl: File too large; {safe} of 40 games are recorded and safe in {out} "
        f"(standings.json holds their standings); raise the file size limit (ulimit -f), then continue with: "
        f"{ARENA} run {path} --out {out} --resume\n")
    assert json.loads((out / "standings.json").read_text())["games"] == safe
    wait_for(lambda: not bot_processes(tag), 20, "the bots to be stopped")

    resumed = arena_run(path, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    complete = kept[:kept.rfind(b"\n") + 1]
    if len(complete) < len(kept):
        assert f"resume: dropped a torn last record line ({len(kept) - len(complete)} bytes)" in resumed.stdout
    assert f"resume: {safe} games were already recorded" in resumed.stdout
    assert indices(out) == list(range(40))
    assert (out / "games.jsonl").read_bytes().startswith(complete)


# --- the schedule: interleaved for new runs, an old run keeps its own order -------------------------------------


def test_deal_sets_are_interleaved_across_tables_and_seeds_do_not_move() -> None:
    game = new_game("draw", 2)
    new = list(Schedule(4, game, games=3, duplicate=True, master_seed="m"))
    old = list(Schedule(4, game, games=3, duplicate=True, master_seed="m", order=BY_TABLE))
    tables = 6
    # After one deal set per table, every pairing has played the same number of games.
    first_round = new[:tables * 2]
    assert sorted({g.deal_key for g in first_round}) == [f"{t}/0" for t in range(tables)]
    assert [g.index for g in new] == list(range(len(new)))
    # The same games with the same seeds: only the indices differ.
    strip = lambda g: (g.seats, g.seed, g.deal_key, g.rotation)  # noqa: E731
    assert sorted(map(strip, new)) == sorted(map(strip, old))
    assert [strip(g) for g in old[:4]] == [((0, 1), "m/0/0", "0/0", 0), ((1, 0), "m/0/0", "0/0", 1),
                                          ((0, 1), "m/0/1", "0/1", 0), ((1, 0), "m/0/1", "0/1", 1)]
    assert Schedule(4, game, 3, True, "m").order == INTERLEAVED


async def test_a_run_started_before_the_interleaved_order_resumes_in_its_own_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """entrants.json was a bare list of names: such a run keeps the table-by-table order, so its recorded indices
    still mean the games they meant. Stopped by a failed write after 4 games, then resumed."""
    table = {"name": "old", "variant": "block", "games": 2, "seed": "old-run", "concurrency": 1,
             "options": {"target": 1},
             "bots": [{"name": n, "command": [PYTHON, str(RANDOM_BOT)]} for n in ("a", "b", "c")]}
    spec = spec_from_dict(table)
    run = tmp_path / "run"
    prepare_run(spec, "# t\n", run, resume=False)
    (run / "entrants.json").write_text('["a", "b", "c"]\n')  # as the arena before issue 12 wrote it
    fail_on_write(monkeypatch, after=4)
    with pytest.raises(RecordsNotWritten):
        await run_tournament(spec, "# t\n", run, resume=True)
    monkeypatch.undo()
    await run_tournament(spec, "# t\n", run, resume=True)
    by_table = {g.index: g for g in Schedule(3, spec.game(), 2, True, "old-run", order=BY_TABLE)}
    interleaved = {g.index: g for g in Schedule(3, spec.game(), 2, True, "old-run")}
    records = [json.loads(line) for line in (run / "games.jsonl").read_text().splitlines()]
    assert sorted(int(r.get("index", 0)) for r in records) == list(range(12))
    names = ("a", "b", "c")
    for record in records:
        expected = by_table[int(record.get("index", 0))]
        assert (record["seed"], record["seats"]) == (expected.seed, [names[e] for e in expected.seats])
    assert any(by_table[i].seed != interleaved[i].seed for i in by_table), "the two orders differ on this run"


async def test_a_new_run_records_its_order(tmp_path: Path) -> None:
    spec = spec_from_dict({"variant": "block", "bots": [{"name": n, "command": [PYTHON, str(RANDOM_BOT)]}
                                                       for n in ("a", "b")]})
    prepare_run(spec, "# t\n", tmp_path / "run", resume=False)
    assert json.loads((tmp_path / "run" / "entrants.json").read_text()) == {"entrants": ["a", "b"],
                                                                            "schedule": "interleaved"}


# --- progress, title, hints ---------------------------------------------------------------------------------------


class Lines:
    """A console stand-in that keeps what is printed."""

    is_terminal = False

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, text: str, **_: Any) -> None:
        self.lines.append(text)


def test_the_first_rate_after_resume_counts_only_this_run_and_the_leaders_are_labelled() -> None:
    """A run resumed with 120 of 200 games recorded plays one game in 4 s: 0.25 games/s, not 121 over 4 s."""
    now = [130.0]
    console = Lines()
    progress = Progress(200, 120, console, live=False, clock=lambda: now[0])
    now[0] = 134.0
    progress.advance([("alpha", 25), ("beta", Fraction(25, 2))])
    assert console.lines == ["games 121/200 (60%), 0.2 games/s, ETA 316s; leaders: alpha 25 pts, beta 12.5 pts"]


def test_one_game_is_one_game_in_the_title_and_in_the_standings(tmp_path: Path) -> None:
    """Mexican Train for 4 with 3 entrants: one of them holds two seats; the only game counts once for each."""
    tag = uuid.uuid4().hex
    text = f'''name = "trio"
variant = "mexican_train"
players = 4
games = 1
duplicate = false
[options]
set = 9
rounds = 1
''' + "".join(f'[[bots]]\nname = "{n}"\ncommand = {json.dumps([PYTHON, str(RANDOM_BOT), "--tag", tag])}\n'
              for n in ("x", "y", "z"))
    out = tmp_path / "run"
    result = arena_run(write(tmp_path, text), "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "trio: mexican_train, 1 game " in result.stdout
    assert not re.search(r"\b1 games\b(?!/s)", result.stdout)  # "1 games" nowhere ("5.1 games/s" is a rate)
    assert f"records: {out}/games.jsonl (1 game); standings: {out}/standings.json" in result.stdout
    standings = json.loads((out / "standings.json").read_text())
    assert standings["games"] == 1
    assert {e["name"]: e["games"] for e in standings["entrants"]} == {"x": 1, "y": 1, "z": 1}
    seats = json.loads((out / "games.jsonl").read_text())["seats"]
    assert sorted(seats) == ["x", "x", "y", "z"], "one entrant held two seats"


def test_the_arena_command_in_hints_is_the_one_that_was_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    program = venv / "arena"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert arena_command(".venv/bin/arena") == ".venv/bin/arena"  # set-up puts nothing on the PATH
    assert arena_command(str(program)) == str(program)
    monkeypatch.setenv("PATH", f"{venv}:/usr/bin:/bin")
    assert arena_command(".venv/bin/arena") == "arena"  # the same program is on the PATH
    assert arena_command("arena") == "arena"
    assert arena_command(str(ROOT / "arena" / "__main__.py")) == f"{PYTHON} -m arena"
    assert arena_command("/opt/with space/arena") == "'/opt/with space/arena'"


def test_rerunning_a_finished_or_unfinished_run_says_which_and_where_the_new_run_goes(tmp_path: Path) -> None:
    first = tmp_path / "runs" / "t"
    path = write(tmp_path, block_text(uuid.uuid4().hex, 1, output=first))
    assert arena_run(path).returncode == 0
    again = arena_run(path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.splitlines()[0] == f"note: {first} holds a finished run; this run goes to {first}-2"
    assert "--resume" not in again.stdout
    # Pretend the first one was interrupted: the next run says how to continue it, by its real command.
    secret = json.loads((first / "seed.json").read_text())
    (first / "seed.json").unlink()
    (first / "seed.secret").write_text(json.dumps({"seed": secret["seed"], "nonce": secret["nonce"]}))
    third = arena_run(path)
    assert third.returncode == 0, third.stdout + third.stderr
    assert third.stdout.splitlines()[0] == (f"note: {first} holds an unfinished run (continue that one with: "
                                            f"{ARENA} run {path} --resume); this run goes to {first}-3")


# --- mutated tournament files: a clean SpecError or a valid spec, never another exception -------------------------

BASE = f'''name = "fuzz"
variant = "draw"
players = 2
games = 3
duplicate = true
seed = "s"
concurrency = 2
output = "runs/fuzz"
fault_policy = "forfeit"
sandbox = true

[options]
target = 50

[time]
move_ms = 1000
bank_ms = 0
startup_ms = 5000
first_move_ms = 0

[limits]
memory_mb = 512
pids = 64
cpus = 1.0

[[bots]]
name = "a"
command = "python bots/python/random_bot.py"
env = {{ KEY = "v" }}
cwd = "."
folder = "bots/python"
limits = {{ memory_mb = 256 }}
transport = "unix"
protocol = "grpc"

[[bots]]
name = "b"
command = ["python", "bots/python/greedy_bot.py"]
skip_if_missing = true

[[bots]]
name = "c"
address = "127.0.0.1:50051"
'''
BASE_DATA = tomllib.loads(BASE)
EXAMPLES = 3000 if os.environ.get("HYPOTHESIS_PROFILE") == "soak" else 300

NASTY = st.sampled_from(["", "\x00", "python\x00", "A=B", "\x1b[2J", "draw", "x" * 300, "unix:/x\x00",
                         "127.0.0.1:1", "python -c 'pass'", "'unclosed", "-1"])
"""Texts that have broken a parser or a system call somewhere."""
KEYS = st.sampled_from(["", "A=B", "K\x00", "KEY", "target", "memory_mb", "name"]) | st.text(max_size=8)
scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats()
           | st.text(max_size=12) | st.dates() | st.datetimes() | st.times())
toml_values = st.one_of(NASTY, scalars, st.recursive(
    scalars | NASTY, lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12))
"""Anything a TOML file or the control API's message could put where a value goes (None stands for a key
removed), nasty texts often."""


def paths_of(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in the parsed file: keys of tables, items of lists."""
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths_of(value, prefix + (key,))
    elif isinstance(data, list):
        for number, value in enumerate(data):
            found += paths_of(value, prefix + (number,))
    return found


PATHS = paths_of(BASE_DATA) + [("bots", 0, "skip_if_missing"), ("players",), ("extra",), ("bots", 3),
                               ("bots", 0, "env", "A=B"), ("bots", 0, "env", ""), ("bots", 0, "env", "K\x00")]


def flipped(data: dict, path: tuple, value: Any) -> dict:
    """``data`` with the value at ``path`` replaced (removed when ``value`` is None; appended past a list's end)."""
    data = copy.deepcopy(data)
    parent: Any = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if isinstance(parent, list):
        if value is None:
            parent.pop(last) if last < len(parent) else None
        elif last < len(parent):
            parent[last] = value
        else:
            parent.append(value)
    elif value is None:
        parent.pop(last, None)
    else:
        parent[last] = value
    return data


def clean(outcome: Any) -> None:
    """What load_spec / spec_from_dict may do: give a spec the arena can run, or raise a SpecError."""
    assert isinstance(outcome, (TournamentSpec, SpecError)), f"{type(outcome).__name__}: {outcome}"
    if isinstance(outcome, SpecError):
        assert str(outcome) and "Traceback" not in str(outcome)
        return
    runnable(outcome)


def runnable(spec: TournamentSpec) -> None:
    """A spec that passed holds nothing the system calls of a run would refuse with an exception (exec's NUL and
    '=' in an environment name, a path with a NUL): those are SpecErrors at the edge, not tracebacks mid-run."""
    assert spec.game().players == spec.players and Schedule(len(spec.bots), spec.game(), spec.games,
                                                            spec.duplicate, "").total() >= 1
    assert "\0" not in spec.output  # a name may hold one: names are only printed (made safe first) and logged
    for bot in spec.bots:
        assert bool(bot.command) != bool(bot.address)
        assert all(isinstance(part, str) and "\0" not in part for part in bot.command)
        assert all(key and "=" not in key and "\0" not in key + value for key, value in bot.env.items())
        assert all(path is None or "\0" not in path for path in (bot.cwd, bot.folder, bot.address))


def attempt(call: Any) -> Any:
    try:
        return call()
    except SpecError as error:
        return error


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), toml_values), min_size=1, max_size=3))
def test_type_flips_in_a_tournament_give_a_spec_error_or_a_valid_spec(flips: list[tuple[tuple, Any]]) -> None:
    data = BASE_DATA
    for path, value in flips:
        try:
            data = flipped(data, path, value)
        except (KeyError, IndexError, TypeError, AttributeError):
            continue  # a path through a value an earlier flip removed or replaced
    clean(attempt(lambda: spec_from_dict(data)))


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    """BASE with a few edits: a slice deleted, text inserted, a line repeated, a character replaced."""
    text = BASE
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "repeat", "replace"]))
        at = draw(st.integers(0, len(text)))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif kind == "insert":
            piece = draw(st.sampled_from(["\n", "=", "[", "]", "[[bots]]\n", '"', "0", "-1", "true", "{", "}", ",",
                                          "\\u0000", "1e999", "nan", "inf", "1979-05-27", "'''", "#"])
                         | st.text(max_size=6))
            text = text[:at] + piece + text[at:]
        elif kind == "repeat":
            lines = text.splitlines(keepends=True)
            line = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:line + 1] + [lines[line]] + lines[line + 1:])
        else:
            text = text[:at] + draw(st.characters()) + text[at + 1:]
    return text


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_text())
def test_mutated_tournament_files_give_a_spec_error_or_a_valid_spec(text: str) -> None:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"arena-fuzz-{os.getpid()}.toml"
    try:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        outcome = attempt(lambda: load_spec(path))
    finally:
        path.unlink(missing_ok=True)
    clean(outcome)
    if isinstance(outcome, SpecError):
        assert str(outcome).startswith(f"{path}: ")


def test_the_fuzz_base_is_valid() -> None:
    spec = spec_from_dict(BASE_DATA)
    assert [b.name for b in spec.bots][0] == "a" and spec.time.move_ms == 1000
    assert datetime  # the value strategy includes TOML's dates and times


async def test_a_write_error_after_an_entrant_was_given_up_still_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot passes the check, then its program is gone: every start fails and the pool gives up on it (forfeits)
    long before the disk fills at the 30th record; the failure still carries the line naming it."""
    folder = tmp_path / "dying"
    folder.mkdir()
    for name in ("bad_bot.py", "testbot.py"):
        shutil.copy(ROOT / "tests" / "bots" / name, folder / name)
    tag = uuid.uuid4().hex
    spec = load_spec(write(tmp_path, block_text(tag, 20, concurrency=1,
                                                first=[PYTHON, str(folder / "bad_bot.py"), "--mode", "exit_mid",
                                                       "--tag", tag])))
    real_check = runner.check_entrants

    async def check_then_delete(pools: list, log: Any) -> list:
        problems = await real_check(pools, log)
        (folder / "bad_bot.py").unlink()  # started once for the check; every later start fails
        return problems

    monkeypatch.setattr(runner, "check_entrants", check_then_delete)
    fail_on_write(monkeypatch, after=30)
    with pytest.raises(RecordsNotWritten) as caught:
        await run_tournament(spec, "# t\n", tmp_path / "run")
    assert len(caught.value.given_up) == 1
    assert caught.value.given_up[0].startswith("bot 'alpha' failed to start 3 times in a row and was given up")
    assert not bot_processes(tag)
