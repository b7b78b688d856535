"""Bad record lines never crash a reader. A record line that is valid JSON with wrong types, nested
thousands deep, or holding numbers no field can take is a bad line: every reader (the store's iterator that
``--resume`` and the server use, ``arena replay --verify`` serial and parallel, every other replay mode, the
server's record index) reports it with its line number and goes on; resume plays its game again; ``--repair``
moves bad lines aside and keeps the rest; and no mutated line, however broken, makes a reader raise (hypothesis)."""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from hypothesis import strategies as st
from hypothesis import HealthCheck, given, settings
from rich.console import Console

from arena import cli
from arena.records import replay, store
from arena.records.dataset import write_dataset
from arena.records.format import to_json_line
from arena.records.html import viewer_data
from arena.records.jsonform import index_of
from arena.records.replay import RecordError, find_game, locate, verify_run
from arena.records.schema import RecordFormatError, parse_record
from arena.records.store import ReadReport, RecordWriter, iter_records, repair, side_file_of
from arena.records.terminal import show_game
from arena.server.events import game_summary, record_message
from arena.server.tournaments import RecordIndex
from arena.tournament.standings import NOT_AN_OUTCOME, Standings, outcome_of

from support.paths import ROOT
from support.records import MASTER, changed, draw_game, played, run_of, verify_cli

RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")


# --- the broken lines, one by one ---------------------------------------------------------------------------------


def raw(old: str, new: str) -> Callable[[dict], str]:
    """The line with ``old`` (JSON text) replaced by ``new``, for what ``json.dumps`` cannot write."""
    def make(record: dict) -> str:
        line = to_json_line(record)
        assert old in line
        return line.replace(old, new, 1)
    return make


BAD = "not a game record: "
ISSUE_LINES = {
    "faults [5]": (changed(lambda r: r.update(faults=[5])), BAD + "faults[0]: expected an object, got 5"),
    "rounds [7]": (changed(lambda r: r.update(rounds=[7])), BAD + "rounds[0]: expected an object, got 7"),
    "rounds null": (changed(lambda r: r.update(rounds=None)), BAD + "rounds: expected a list, got null"),
    "deal null": (changed(lambda r: r["rounds"][0].update(deal=None)),
                  BAD + "rounds[0].deal: expected an object, got null"),
    "moves 'x'": (changed(lambda r: r["rounds"][0].update(moves="x")),
                  BAD + "rounds[0].moves: expected a list, got 'x'"),
    "scores ['a']": (changed(lambda r: r["result"].update(scores=["a"])),
                     BAD + "result.scores[0]: expected an integer from -9223372036854775808 to 9223372036854775807 "
                           "(as a string of digits), got 'a'"),
    "index 1e999": (raw('"index":"1"', '"index":1e999'),
                    BAD + "index: expected an integer from 0 to 18446744073709551615 (as a string of digits), got inf"),
    "nested 100000 deep": (raw('"seats":["bot0","bot1"]', '"seats":' + "[" * 100_000 + "]" * 100_000),
                           BAD + "nested deeper than any record is"),
    "nested 500 deep": (raw('"seats":["bot0","bot1"]', '"seats":[' + "[" * 500 + "]" * 500 + "]"),
                        BAD + "seats[0]: expected a string, got a list"),
    "seat Infinity": (changed(lambda r: r["rounds"][0]["moves"][0].update(seat=float("inf"))),
                      BAD + "rounds[0].moves[0].seat: expected an integer from 0 to 4294967295, got inf"),
    "winner not first": (changed(lambda r: r["result"].update(winner=r["result"]["ranking"][1])),
                         "not a complete game record: expected the winner (side {w}) first in the ranking {ranking}"),
    "move of seat 7": (changed(lambda r: r["rounds"][0]["moves"][0].update(seat=7)),
                       "not a complete game record: round 1 has a move of seat 7, but the game has 2 seats"),
    "cut in the middle": (lambda r: to_json_line(r)[:1000], "not JSON: {json_error}"),
}


def broken_line(name: str) -> tuple[str, str]:
    """Game 1's line broken as ``name`` says, and the problem every reader reports for it."""
    make, expected = ISSUE_LINES[name]
    record = draw_game(1)
    line = make(record)
    if "{w}" in expected:
        expected = expected.format(w=record["result"]["winner"],
                                   ranking="[" + ", ".join(map(str, record["result"]["ranking"])) + "]")
    if "{json_error}" in expected:
        with pytest.raises(ValueError) as error:
            json.loads(line + "\n")  # as the line is read from the file
        expected = expected.format(json_error=error.value)
    return line, expected


def broken_run(folder: Path, name: str) -> tuple[Path, str]:
    line, expected = broken_line(name)
    return run_of(folder, [draw_game(i) for i in range(3)], {2: line}), expected


@pytest.mark.parametrize("name", list(ISSUE_LINES))
@pytest.mark.fast
def test_the_store_numbers_bad_lines_and_reads_the_rest(name: str, tmp_path: Path) -> None:
    """Guards: every field's type checked on read (the store's iterator, which resume and the server use)."""
    run, expected = broken_run(tmp_path / "run", name)
    report = ReadReport()
    games = [index_of(r) for r in iter_records(run / "games.jsonl", report)]
    assert games == [0, 2] and report.games == 2
    assert report.bad_lines == [(2, expected)]
    assert not report.torn_tail


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("name", list(ISSUE_LINES))
def test_verify_reports_each_bad_line_by_number(name: str, jobs: int, tmp_path: Path, capsys, monkeypatch) -> None:
    """Guards: ``arena replay --verify`` (serial and ``--jobs 2``) reports the line and verifies the other games."""
    run, expected = broken_run(tmp_path / "run", name)
    if name in ("winner not first", "move of seat 7"):  # typed: verification itself says what is wrong with it
        line = json.loads(broken_line(name)[0])
        expected_lines = [f"MISMATCH {m}" for m in replay.verify_game(line, MASTER)]
        assert expected_lines and all(m.startswith("MISMATCH game 1") for m in expected_lines)
        games = 3
    else:
        expected_lines, games = [f"MISMATCH line 2: {expected}"], 2
    status, mismatches, summary, went_parallel = verify_cli(run, jobs, capsys, monkeypatch)
    assert went_parallel == (jobs > 1)
    assert (status, mismatches) == (1, expected_lines)
    assert f"verified {games} games" in summary and f"{len(expected_lines)} mismatches" in summary


@pytest.mark.parametrize("name", ["faults [5]", "rounds null", "index 1e999", "nested 100000 deep"])
@pytest.mark.fast
def test_every_replay_mode_skips_the_bad_line(name: str, tmp_path: Path, capsys) -> None:
    """Guards: ``--game`` (terminal, ``--html``) never reads a bad line: the other games replay, the bad one is
    one error naming its line."""
    run, _ = broken_run(tmp_path / "run", name)
    for mode in ([], ["--full"], ["--html", str(tmp_path / "g.html")]):
        assert cli.main(["replay", str(run), "--game", "2", *mode]) == 0
        captured = capsys.readouterr()
        assert captured.err == ""
        status = cli.main(["replay", str(run), "--game", "1", *mode])
        assert status == 2
        assert capsys.readouterr().err == (
            f"error: {run / 'games.jsonl'}: no game 1 (the file holds 2 readable games; line 2 cannot be read: "
            f"arena replay {run} --verify says why, --repair moves it aside)\n")


def test_against_replays_a_good_game_beside_bad_lines(tmp_path: Path, capsys) -> None:
    """Guards: ``--against`` reads through the same checked reader (a real bot process, sandboxed)."""
    run, _ = broken_run(tmp_path / "run", "deal null")
    status = cli.main(["replay", str(run), "--game", "0", "--seat", "0", "--against", "--",
                       sys.executable, RANDOM_BOT])
    out = capsys.readouterr()
    assert status == 0, out.out + out.err
    assert "summary: " in out.out and "Traceback" not in out.err


# --- resume, and the server ---------------------------------------------------------------------------------------


def tournament_file(folder: Path, games: int, tag: str) -> Path:
    path = folder / "t.toml"
    command = json.dumps([sys.executable, RANDOM_BOT, "--tag", tag])
    path.write_text(f'name = "t"\nvariant = "block"\ngames = {games}\nduplicate = true\nconcurrency = 2\n'
                    f'seed = "fixed"\n[options]\ntarget = 1\n'
                    + "".join(f'[[bots]]\nname = "{n}"\ncommand = {command}\n' for n in ("alpha", "beta")))
    return path


RESUMED = ["faults [5]", "rounds [7]", "rounds null", "deal null", "moves 'x'", "scores ['a']", "index 1e999",
           "nested 100000 deep"]


def break_lines(path: Path) -> dict[int, str]:
    """Lines 1 to 8 of a record file broken in each of these ways; the problem expected for each."""
    lines = path.read_text().splitlines()
    expected = {}
    for number, name in enumerate(RESUMED, 1):
        record = json.loads(lines[number - 1])
        make, problem = ISSUE_LINES[name]
        if name == "index 1e999":
            record["index"] = "1"
            make = raw('"index":"1"', '"index":1e999')
        elif name == "nested 100000 deep":
            record["seats"] = ["bot0", "bot1"]
        lines[number - 1] = make(record)
        expected[number] = problem
    path.write_text("".join(line + "\n" for line in lines))
    return expected


def test_resume_reports_and_replays_bad_lines(tmp_path: Path) -> None:
    """Guards: ``arena run --resume`` (the runner reads through the store) reports each bad line with its number,
    plays those games again, and finishes: no traceback."""
    path = tournament_file(tmp_path, 5, uuid.uuid4().hex)
    out = tmp_path / "run"
    first = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)], capture_output=True,
                           text=True, timeout=300, cwd=ROOT)
    assert first.returncode == 0, first.stdout + first.stderr
    expected = break_lines(out / "games.jsonl")
    (out / "seed.json").rename(out / "seed.json.bak")  # unfinished again
    secret = json.loads((out / "seed.json.bak").read_text())
    (out / "seed.secret").write_text(json.dumps({"seed": secret["seed"], "nonce": secret["nonce"]}))
    resumed = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), "--resume"],
                             capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ,
                                                                                          "COLUMNS": "400"})
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stdout + resumed.stderr
    warnings = [line for line in resumed.stdout.splitlines() if line.startswith("warning: ")]
    assert warnings == [f"warning: {out / 'games.jsonl'} line {n}: {problem}" for n, problem in expected.items()]
    report = ReadReport()
    games = sorted(index_of(r) for r in iter_records(out / "games.jsonl", report))
    assert games == list(range(10)) and sorted(report.bad_lines) == sorted(expected.items())


def test_the_server_reads_past_bad_lines(tmp_path: Path) -> None:
    """Guards: a restarted server resumes a tournament whose records hold bad lines (it used to end FAILED with an
    AttributeError), plays their games again, and lists and serves every game."""
    from support.servers import BackgroundWatch, FINISHED, Server, random_pair, submit, tournament, watch
    from arena.protocol import arena_pb2 as apb

    data = tmp_path / "data"
    bots = random_pair(tmp_path, uuid.uuid4().hex)
    server = Server(data, *bots)
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=40, concurrency=2))
        BackgroundWatch(stub, info.id).wait_games(len(RESUMED), 120)
        server.stop()
    finally:
        server.stop(9)
    folder = data / "tournaments" / info.id
    assert len((folder / "games.jsonl").read_text().splitlines()) < 80, "interrupted in the middle"
    break_lines(folder / "games.jsonl")
    again = Server(data, *bots)
    try:
        stub = again.stub()
        events = watch(stub, info.id)
        assert events[-1].finished.tournament.state == FINISHED, events[-1]
        assert events[-1].finished.tournament.error == ""
        listed = stub.ListGames(apb.ListGamesRequest(id=info.id, limit=1000), timeout=30)
        assert sorted(g.index for g in listed.games) == list(range(80))
        for index in range(80):
            assert stub.GetGame(apb.GetGameRequest(id=info.id, index=index), timeout=30).record.index == index
    finally:
        again.stop()


@pytest.mark.fast
def test_the_record_index_finds_the_game_played_again(tmp_path: Path) -> None:
    """Guards: the server's RecordIndex checks a line when it is read; a bad line is dropped with its number and a
    later line of the same game takes its place; a repaired (replaced) file is read again from its start."""
    good = [draw_game(i) for i in range(3)]
    broken, problem = broken_line("faults [5]")
    path = tmp_path / "games.jsonl"
    path.write_text("".join(line + "\n" for line in [to_json_line(good[0]), broken, '{"recordVersion":1,"ind',
                                                      "", "[" * 100_000]))
    index = RecordIndex(path)
    index.refresh()
    assert index.indices() == [0, 1]  # line 3 starts like a record of game 0: checked only if game 0 needs it
    assert index.bad_lines == [(5, "not a game record: nested deeper than any record is")]
    assert index.read(1) is None and index.indices() == [0]
    assert index.bad_lines[1:] == [(2, problem)]
    with open(path, "a") as f:
        f.write("\n" + to_json_line(good[1]) + "\n")
    index.refresh()
    assert index.read(1) == good[1] and index.read(0) == good[0]
    assert repair(path).kept == 2
    index.refresh()
    assert index.indices() == [0, 1] and index.read(1) == good[1] and index.bad_lines == []


# --- repair -------------------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_repair_moves_only_bad_lines_aside(tmp_path: Path, capsys) -> None:
    """Guards: ``arena replay RUN --repair`` moves every unreadable line (and a cut last line) to
    games.rejected.jsonl, appended with its line number and problem, keeps the other lines byte for byte, and
    ``--verify`` passes afterwards."""
    records = [draw_game(i) for i in range(4)]
    broken, problem = broken_line("rounds null")
    run = run_of(tmp_path / "run", records, {2: broken})
    path = run / "games.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3] + [b"\xff\xfe not json, not UTF-8\n"] + lines[3:]) + b'{"recordVersion":1,"in')
    assert cli.main(["replay", str(run), "--repair"]) == 0
    out = capsys.readouterr().out.splitlines()
    side = run / "games.rejected.jsonl"
    assert out == [
        f"moved 3 unreadable lines of {path} to {side} (appended, each with its line number and problem); kept 3 "
        f"records:",
        f"  line 2: {problem}",
        "  line 4: not JSON: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
        "  line 6: cut short (the last line, without its newline: an interrupted write)",
    ]
    assert path.read_bytes() == b"".join([lines[0], lines[2], lines[3]])
    moved = [json.loads(line) for line in side.read_text().splitlines()]
    assert [(m["line"], m["problem"]) for m in moved] == [(2, problem), (4, out[2][10:]), (6, out[3][10:])]
    assert moved[0]["text"] == broken
    assert moved[1]["text"].encode("utf-8", "surrogateescape") == b"\xff\xfe not json, not UTF-8"
    assert moved[2]["text"] == '{"recordVersion":1,"in'
    assert cli.main(["replay", str(run), "--verify"]) == 0
    capsys.readouterr()
    assert cli.main(["replay", str(run), "--repair"]) == 0
    assert capsys.readouterr().out == f"nothing to repair: every line of {path} is a record (3 records)\n"
    with open(path, "a") as f:
        f.write("[7]\n")
    assert cli.main(["replay", str(path), "--repair"]) == 0
    assert [json.loads(line)["line"] for line in side.read_text().splitlines()] == [2, 4, 6, 4]  # appended


@pytest.mark.fast
def test_repair_replaces_the_file_atomically(tmp_path: Path, monkeypatch) -> None:
    """Guards: the side file is fsynced before the record file changes; the kept lines go to a new file, fsynced,
    then renamed over the old one; a failure before the rename leaves the old file whole and no temporary file."""
    broken, _ = broken_line("moves 'x'")
    run = run_of(tmp_path / "run", [draw_game(0), draw_game(1)], {2: broken})
    path = run / "games.jsonl"
    before = path.read_bytes()
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(f"fsync {Path(os.readlink(f'/proc/self/fd/{fd}')).name}")
        real_fsync(fd)

    def failing_replace(src, dst) -> None:
        events.append(f"replace {Path(src).name} {Path(dst).name}")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        repair(path)
    assert events == ["fsync games.rejected.jsonl", "fsync .games.jsonl.repair",
                      "replace .games.jsonl.repair games.jsonl"]
    assert path.read_bytes() == before and sorted(p.name for p in run.iterdir()) == [
        "commitment.txt", "games.jsonl", "games.rejected.jsonl", "seed.json"]
    monkeypatch.setattr(os, "replace", real_replace)
    events.clear()
    report = repair(path)
    assert events == ["fsync games.rejected.jsonl", "fsync .games.jsonl.repair", "fsync run"]
    assert report.kept == 1 and [n for n, _ in report.moved] == [2]
    assert path.read_bytes() == before.splitlines(keepends=True)[0]


@pytest.mark.fast
def test_repair_is_refused_while_a_run_writes(tmp_path: Path, capsys) -> None:
    """Guards: the record writer's lock: a repair never replaces a file a tournament is appending to (its later
    lines would go to the replaced file and be lost)."""
    broken, _ = broken_line("faults [5]")
    run = run_of(tmp_path / "run", [draw_game(0), draw_game(1)], {2: broken})
    writer = RecordWriter(run / "games.jsonl")
    try:
        assert cli.main(["replay", str(run), "--repair"]) == 2
        assert capsys.readouterr().err == (f"error: {run / 'games.jsonl'}: a tournament is writing to this file; stop "
                                           f"it (Ctrl-C), repair, then continue it with --resume\n")
    finally:
        writer.close()
    assert cli.main(["replay", str(run), "--repair"]) == 0


@pytest.mark.fast
def test_a_writer_opened_mid_repair_writes_the_new_file(tmp_path: Path, monkeypatch) -> None:
    """Guards: a writer (a tournament starting) that opened the record file while a repair held it waits for the
    repair, then writes to the file now at the path, never to the replaced one."""
    broken, _ = broken_line("faults [5]")
    run = run_of(tmp_path / "run", [draw_game(0), draw_game(1)], {2: broken})
    path = run / "games.jsonl"
    opened = threading.Event()
    writers: list[RecordWriter] = []
    real_open, real_replace = open, os.replace

    def open_and_tell(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        if mode == "ab":
            opened.set()  # the writer holds the old file and is about to wait for its lock
        return f

    def replace_once_a_writer_holds_the_old_file(src, dst) -> None:
        thread.start()
        assert opened.wait(30)
        real_replace(src, dst)

    thread = threading.Thread(target=lambda: writers.append(RecordWriter(path)))
    monkeypatch.setattr(store, "open", open_and_tell, raising=False)
    monkeypatch.setattr(os, "replace", replace_once_a_writer_holds_the_old_file)
    repair(path)
    thread.join(30)
    writer = writers[0]
    try:
        writer.write(draw_game(1))
    finally:
        writer.close()
    assert [index_of(r) for r in iter_records(path)] == [0, 1]


# --- a tournament file is not a record file -------------------------------------------------------------------


@pytest.mark.fast
def test_repair_refuses_a_non_record_file(tmp_path: Path, capsys) -> None:
    toml = ROOT / "tournaments" / "demo.toml"
    copy = tmp_path / "demo.toml"
    copy.write_bytes(toml.read_bytes())
    assert cli.main(["replay", str(copy), "--repair"]) == 2
    assert capsys.readouterr().err == (f"error: {copy}: not a record file (no line of it is a game record); expected "
                                       f"a run folder or its games.jsonl\n")
    assert copy.read_bytes() == toml.read_bytes() and not side_file_of(copy).exists()


@pytest.mark.parametrize("mode", [["--verify"], ["--game", "0"], ["--game", "0", "--html", "x.html"], ["--repair"]])
@pytest.mark.fast
def test_a_tournament_file_is_not_a_record_file(mode: list[str], capsys) -> None:
    """Guards: point 8, ``arena replay tournaments/demo.toml`` says "not a record file", not "29 unreadable
    lines"."""
    assert cli.main(["replay", "tournaments/demo.toml", *mode]) == 2
    assert capsys.readouterr().err == ("error: tournaments/demo.toml: not a record file (no line of it is a game "
                                       "record); expected a run folder or its games.jsonl\n")


# --- the property: no line crashes a reader ------------------------------------------------------------------------


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                         st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6))
JSON_VALUES = st.one_of(JSON_SCALARS, st.lists(JSON_SCALARS, max_size=3),
                        st.dictionaries(st.sampled_from(["low", "high", "seat", "kind", "x", "tiles"]), JSON_SCALARS,
                                        max_size=3))
TOKENS = {"DEEP": "[" * 5000 + "]" * 5000, "BIG": "1e999", "NEGBIG": "-1e999", "NAN": "NaN",
          "DIGITS": "9" * 5000, "HALFDEEP": "{\"a\":" * 400 + "1" + "}" * 400}


def _pool() -> list[dict]:
    if not _POOL:
        _POOL.extend([
            draw_game(0), draw_game(1),
            played("mexican_train", "pool/0/1", 1, 3, {"rounds": 1}),
            played("la_plaza_teams", "pool/0/2", 2, 4, None, fails_after=2),
            played("all_fives", "pool/0/3", 3, 2, {"target": 20}),
            played("la_plaza", "pool/0/4", 4, 2, {"target": 20}),
        ])
    return [json.loads(json.dumps(r)) for r in _POOL]


_POOL: list[dict] = []


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value, as a tuple of keys and positions (lists are sampled: records are long)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for position in sorted({0, len(value) // 2, len(value) - 1}):
            if 0 <= position < len(value):
                found.extend(paths(value[position], (*prefix, position)))
    return found


def place(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    container = value
    for step in path[:-1]:
        container = container[step]
    container[path[-1]] = new
    return value


@st.composite
def mutated_lines(draw) -> tuple[int, str]:
    """A record of the pool changed in one to three ways; the line (without newline) and the game's index."""
    record = draw(st.sampled_from(_pool()))
    index = index_of(record)
    for _ in range(draw(st.integers(1, 3))):
        spots = paths(record)
        path = draw(st.sampled_from(spots))
        how = draw(st.sampled_from(["value", "delete", "unknown", "token", "wrap", "keep"]))
        if how == "value":
            record = place(record, path, draw(JSON_VALUES))
        elif how == "delete" and path:
            parent = record
            for step in path[:-1]:
                parent = parent[step]
            del parent[path[-1]]
        elif how == "unknown" and isinstance(record, dict):
            record = place(record, path, {"zz": 1}) if path else dict(record, zz=1)
        elif how == "token":
            record = place(record, path, "@@" + draw(st.sampled_from(sorted(TOKENS))) + "@@")
        elif how == "wrap":
            record = place(record, path, [record if not path else _get(record, path)])
        if not isinstance(record, dict):
            break
    line = json.dumps(record, separators=(",", ":"))
    for name, token in TOKENS.items():
        line = line.replace(f'"@@{name}@@"', token)
    cut = draw(st.sampled_from(["none", "none", "truncate", "bytes"]))
    if cut == "truncate":
        line = line[:draw(st.integers(0, max(0, len(line) - 1)))]
    elif cut == "bytes":
        at = draw(st.integers(0, max(0, len(line) - 1)))
        line = line[:at] + draw(st.sampled_from(["\x00", "\ufffd", "\n", "}", "]", '"', "\\"])) + line[at + 1:]
    return index, line


def _get(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def read_with_every_reader(folder: Path) -> None:
    """Every reader of records over the folder's file: each must give a clean answer (records, a report, or a
    RecordError), never raise anything else."""
    path = folder / "games.jsonl"
    report = ReadReport()
    standings = Standings()
    for record in iter_records(path, report):  # resume and the server's standings
        try:
            standings.add(outcome_of(record))
        except NOT_AN_OUTCOME:  # as both count it: a record whose parts do not fit together, its game played again
            pass
        game_summary(record), record_message(record, False)  # the server's ListGames and GetGame
        show = io.StringIO()
        try:
            show_game(record, console=Console(file=show, width=120))
            viewer_data(record)
        except RecordError:
            pass
    verify_run(folder, jobs=1)
    files = locate(folder)
    for index in range(8):
        try:
            find_game(files, index)
        except RecordError:
            pass
    records = RecordIndex(path)
    records.refresh()
    for index in records.indices():
        found = records.read(index)
        assert found is None or isinstance(found, dict)
        if found is not None:
            game_summary(found), record_message(found, True)
    exported = write_dataset([(".", folder)], folder.with_name(folder.name + "-parquet"))  # warnings, never raises
    assert exported.games <= report.games


EXAMPLES = int(os.environ.get("RECORD_FUZZ_EXAMPLES", 4000 if os.environ.get("HYPOTHESIS_PROFILE") == "soak" else 100))
"""Lines per property: 100 in CI; the soak profile's 4,000 (about ten minutes on 2 cores) is where the two bugs
CI's 100 once met by chance turn up every time (a side numbered in the billions, one entrant on every side)."""


@contextmanager
def memory_capped(headroom: int = 3 << 30) -> Iterator[None]:
    """Address space capped at what the process holds plus ``headroom``, while readers read lines a property made:
    a reader that allocates as much as a number in the line says then fails with MemoryError where it allocates, a
    failing test naming the place, instead of the kernel's OOM killer ending the whole test worker (as CI once saw:
    sideOfSeat [0, 4294967295] built a set of four billion sides)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    in_use = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    cap = in_use + headroom if hard == resource.RLIM_INFINITY else min(in_use + headroom, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.fast
def test_a_side_in_the_billions_is_refused_at_once() -> None:
    """The line CI's property found: a side's number from the record is never the size of anything a reader
    builds (there cannot be more sides than seats)."""
    line = changed(lambda r: r.update(sideOfSeat=[0, 4294967295]))(draw_game(1))
    with memory_capped(), pytest.raises(RecordFormatError) as error:
        parse_record(line)
    assert str(error.value) == ("not a complete game record: expected two sides or more, each holding a seat, "
                                "got sideOfSeat [0, 4294967295]")


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(mutated=mutated_lines())
@pytest.mark.fast
def test_no_mutated_line_crashes_a_reader(mutated: tuple[int, str], tmp_path_factory) -> None:
    """The property: a record line changed in any way (types flipped, keys deleted or unknown, nested deep,
    huge numbers, cut short, bytes changed) gives every reader a clean answer, and the good lines around it are
    always read."""
    _, line = mutated
    folder = tmp_path_factory.mktemp("fuzz")
    good = [draw_game(i) for i in range(2)]
    run_of(folder, [good[0], good[0], good[1]], {2: line})
    report = ReadReport()
    read = list(iter_records(folder / "games.jsonl", report))
    assert read[0] == good[0] and read[-1] == good[1]
    assert all(number >= 2 for number, _ in report.bad_lines) and not report.torn_tail
    with memory_capped():
        read_with_every_reader(folder)


ENUM_NAMES = {"kind": ["ACTION_KIND_PLACE", "ACTION_KIND_DRAW", "ACTION_KIND_PASS", "ACTION_KIND_UNSPECIFIED"],
              "point": ["POINT_NONE", "POINT_HIGH_END", "POINT_LOW_END", "POINT_LINE_A", "POINT_LINE_B",
                        "POINT_SIDE_C", "POINT_SIDE_D"],
              "ending": ["ENDING_UNSPECIFIED", "ENDING_DOMINO", "ENDING_BLOCK"]}


@st.composite
def reshaped_lines(draw) -> str:
    """A record of the pool with one to five values changed for others of the same type (small and edge integers,
    other enum names, a list item dropped or doubled): lines that pass the type check and test the readers that
    replay a game through the rules."""
    record = draw(st.sampled_from(_pool()))
    for _ in range(draw(st.integers(1, 5))):
        path = draw(st.sampled_from([p for p in paths(record) if p]))
        value = _get(record, path)
        if isinstance(value, bool):
            place(record, path, not value)
        elif isinstance(value, int):
            place(record, path, draw(st.sampled_from([0, 1, 2, 3, 6, 12, 18, 19, 255, 4294967295])))
        elif isinstance(value, str) and path[-1] in ENUM_NAMES:
            place(record, path, draw(st.sampled_from(ENUM_NAMES[path[-1]])))
        elif isinstance(value, str) and value.lstrip("-").isdigit():
            place(record, path, draw(st.sampled_from(["0", "-1", "7", "1000000000000000000"])))
        elif isinstance(value, list) and value:
            position = draw(st.integers(0, len(value) - 1))
            if draw(st.booleans()):
                del value[position]
            else:
                value.insert(position, json.loads(json.dumps(value[position])))
    return to_json_line(record)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(line=reshaped_lines())
@pytest.mark.fast
def test_no_well_typed_but_wrong_record_crashes_a_reader(line: str, tmp_path_factory) -> None:
    """The property for records of the right shape with wrong contents (a seat, a tile, an enum, a count changed):
    verification reports them, the replays say they do not replay, no reader raises anything else."""
    folder = tmp_path_factory.mktemp("reshaped")
    run_of(folder, [draw_game(0), draw_game(0), draw_game(1)], {2: line})
    with memory_capped():
        read_with_every_reader(folder)
        try:
            record = parse_record(line, complete=False)
        except RecordFormatError:
            return
        for mismatch in replay.verify_game(record, MASTER):
            assert str(mismatch).startswith(f"game {index_of(record)}")
