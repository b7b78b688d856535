"""Tournaments under bad conditions: a bot that cannot start is named before the first game, a bot that
dies for good mid-run is given up and reported in the exit status, a failed write (a full disk, a file size limit)
says how many games are safe and how to resume, and resume then loses nothing and plays again a record that does
not fit the schedule."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from arena.errors import ArenaError
from arena.records import compact
from arena.records.run_folder import COMPACT_RECORDS, FORMAT_VARIABLE, RECORDS, RunFolder
from arena.sandbox.syscalls import refusal_line
from arena.tournament import local_backend, runner
from arena.tournament.errors import EntrantsCannotPlay, RecordsNotWritten
from arena.tournament.runner import run_tournament
from arena.tournament.spec import load_spec, spec_from_dict

from support.paths import ROOT
from support.processes import bot_processes
from support.tournaments import ARENA, PYTHON, RANDOM_BOT, arena_run, block_text, fail_on_write, indices, write
from support.waiting import wait_for

BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


# --- every entrant is checked before the first game -----------------------------------------------------


def test_unstartable_bots_stop_the_run_before_any_game(tmp_path: Path) -> None:
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
                         f"ends: --- start 1: {PYTHON} {BAD_BOT} --mode block_only | {refusal_line()} "
                         f"(log: {out}/logs/blocky.0.log)")
    assert not (out / "games.jsonl").exists() or (out / "games.jsonl").read_text() == ""
    assert json.loads((out / "standings.json").read_text())["games"] == 0


async def test_the_server_marks_an_arena_error_failed_with_its_line(tmp_path: Path) -> None:
    """run_tournament raises EntrantsCannotPlay, an ArenaError: the server's FAILED state carries its text as is."""
    from arena.server.core import _describe

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


async def test_three_failed_starts_in_a_row_give_an_entrant_up(tmp_path: Path) -> None:
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


def test_a_bot_given_up_mid_run_is_named_at_the_end_status_1(tmp_path: Path) -> None:
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
async def test_a_full_disk_says_what_is_safe_and_resume_finishes(
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
async def test_resume_replays_a_record_that_misfits_the_schedule(
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
    assert [int(r.get("index", 0)) for r in records] == [0, 2, 1]  # both deal sets' first rotation, then one's second
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


async def test_unwritable_final_standings_keep_the_run_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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


def whole_records(kept: bytes, form: str) -> tuple[int, bytes]:
    """How many whole records a record file's bytes hold, and those records' bytes (the rest is a torn tail)."""
    if form == "jsonl":
        return kept.count(b"\n"), kept[:kept.rfind(b"\n") + 1]
    units, used = compact.split(kept, 0, final=True)
    assert all(not unit.problem for unit in units), [unit.problem for unit in units]
    return len(units), kept[:used]


@pytest.mark.parametrize(("form", "limit"), [("jsonl", 30_000), ("compact", 6_000)])
def test_a_real_file_size_limit_mid_record_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       form: str, limit: int) -> None:
    """The kernel refuses the write (RLIMIT_FSIZE: EFBIG, the record file cut mid-record), as a full disk would,
    without filling the machine's disk: one `error:` line with the resume command, exit 1; then the resume (no
    limit) drops the torn record and finishes with every game exactly once. In both record files: the readable
    one and the compact one new runs write (a compact unit is cut mid-frame)."""
    if form == "compact":
        monkeypatch.delenv(FORMAT_VARIABLE)  # the default; the suite writes games.jsonl
    tag = uuid.uuid4().hex
    path = write(tmp_path, block_text(tag, 20))
    out = tmp_path / "run"

    # prlimit sets the limit and execs the run (Python ignores SIGXFSZ: writes get EFBIG); not a preexec_fn, which
    # would fork this multi-threaded test process, whose gRPC threads may then write to the run's stderr
    result = subprocess.run(["prlimit", f"--fsize={limit}:{limit}", "--", PYTHON, "-m", "arena", "run", str(path),
                             "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 1, result.stdout + result.stderr
    records = RunFolder(out).records
    assert records.name == (RECORDS if form == "jsonl" else COMPACT_RECORDS)
    kept = records.read_bytes()
    safe, complete = whole_records(kept, form)
    assert 0 < safe < 40 and len(kept) == limit
    assert result.stderr == (
        f"error: cannot write {records}: File too large; {safe} of 40 games are recorded and safe in {out} "
        f"(standings.json holds their standings); raise the file size limit (ulimit -f), then continue with: "
        f"{ARENA} run {path} --out {out} --resume\n")
    assert json.loads((out / "standings.json").read_text())["games"] == safe
    wait_for(lambda: not bot_processes(tag), 20, "the bots to be stopped")

    resumed = arena_run(path, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    if len(complete) < len(kept):
        assert f"resume: dropped a torn last record line ({len(kept) - len(complete)} bytes)" in resumed.stdout
    assert f"resume: {safe} games were already recorded" in resumed.stdout
    assert indices(out) == list(range(40))
    assert records.read_bytes().startswith(complete)


async def test_a_write_error_after_a_give_up_still_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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
    real_check = local_backend.check_entrants

    async def check_then_delete(pools: list, log: Any) -> list:
        problems = await real_check(pools, log)
        (folder / "bad_bot.py").unlink()  # started once for the check; every later start fails
        return problems

    monkeypatch.setattr(local_backend, "check_entrants", check_then_delete)
    fail_on_write(monkeypatch, after=30)
    with pytest.raises(RecordsNotWritten) as caught:
        await run_tournament(spec, "# t\n", tmp_path / "run")
    assert len(caught.value.given_up) == 1
    assert caught.value.given_up[0].startswith("bot 'alpha' failed to start 3 times in a row and was given up")
    assert not bot_processes(tag)
