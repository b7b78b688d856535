"""The compact record file (``games.jsonl.zst``, arena/records/compact.py): exact round trips of every variant, the
size of a Draw game to 100, torn tails dropped, damaged units and unknown dictionaries reported as bad lines (never
a traceback), repair, the folder's choice of file, verification of both formats, the server's index as the file
grows, and real runs, resumes and a real server writing and reading the compact file. tests/conftest.py makes the
other modules' runs write ``games.jsonl``; the tests here that run the arena take that away."""

from __future__ import annotations

import base64
import json
import math
import os
import random
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import zstandard

from arena import cli
from arena.records import compact
from arena.records.export import lines_of_file
from arena.records.jsonform import index_of
from arena.records.replay import RecordError, repair_run, verify_run
from arena.records.run_folder import FORMAT_VARIABLE, RunFolder
from arena.records.schema import RecordFormatError
from arena.records.store import ReadReport, RecordWriter, drop_torn_tail, iter_records, record_line
from arena.rules import VARIANTS
from arena.server.tournaments import RecordIndex
from arena.web.data import RatingHistory

from support.cli import arena
from support.paths import ROOT
from support.processes import bot_processes
from support.records import MASTER, compact_copy, played, verify_cli, write_run
from support.servers import random_bot, registry, submit, tournament
from support.tournaments import arena_run, block_text, write
from support.waiting import wait_for
from support.web import WebServer, get_json, http, wait_state

EVERY_VARIANT = [(name, None) for name in VARIANTS] + [("mexican_train", 4)]


def write_compact(path: Path, records: list[dict]) -> Path:
    writer = RecordWriter(path)
    for record in records:
        writer.write(record)
    writer.close()
    return path


def units_of(path: Path) -> list[bytes]:
    """Each stored unit's bytes (header and frame), in file order."""
    data, units = path.read_bytes(), []
    while data:
        length = compact.HEADER.unpack_from(data)[2] + compact.HEADER.size
        units.append(data[:length])
        data = data[length:]
    return units


@pytest.fixture(scope="module")
def draws() -> list[dict]:
    return [played("draw", f"{MASTER}/0/{i}", i, options={"target": 30}) for i in range(3)]


# --- exact round trips ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant,players", EVERY_VARIANT)
@pytest.mark.fast
def test_every_variant_reads_back_what_was_written(tmp_path: Path, variant: str, players: int | None) -> None:
    records = [played(variant, f"{MASTER}/0/{i}", i, players) for i in range(2)]
    path = write_compact(tmp_path / "games.jsonl.zst", records)
    report = ReadReport()
    assert list(iter_records(path, report)) == records
    assert (report.games, report.torn_tail, report.bad_lines) == (2, False, [])
    lines, exported = lines_of_file(path)
    assert lines == [record_line(r) for r in records], "the readable form, byte for byte"
    assert exported.warnings == []
    # The file is a plain zstd stream too: with the dictionary, zstd decompresses it whole to the packed lines.
    stream = zstandard.ZstdDecompressor(dict_data=compact.dictionary(compact.CURRENT)).stream_reader(
        path.read_bytes(), read_across_frames=True).read()
    assert [compact.unpack(line) for line in stream.splitlines()] == records


@pytest.mark.fast
def test_a_draw_game_to_100_takes_at_most_3000_bytes(tmp_path: Path) -> None:
    """A seeded Draw game to 100 between two players, with think times spread as real bots' are (in-process players
    answer in microseconds): the size is a function of the record, so the bound is exact, not a timing."""
    record = played("draw", "size/0/2", 0)
    chance = random.Random("size")
    moves = [m for rnd in record["rounds"] for m in rnd.get("moves", ())]
    for move in moves:
        if not move.get("forced"):
            move["thinkMs"] = round(math.exp(chance.uniform(math.log(0.5), math.log(100))), 3)
    record["startedAt"], record["durationS"] = 1764660000.123456, 3.2109
    path = write_compact(tmp_path / "games.jsonl.zst", [record])
    readable = len(record_line(record))
    assert readable > 30_000 and len(moves) > 150, "a whole game to 100"
    assert path.stat().st_size <= 3000
    assert readable >= 15 * path.stat().st_size
    assert list(iter_records(path)) == [record]


# --- torn tails, damaged units, unknown dictionaries -----------------------------------------------------------


@pytest.mark.parametrize("cut", [5, compact.HEADER.size + 40])
@pytest.mark.fast
def test_a_torn_tail_is_dropped_and_appending_goes_on(tmp_path: Path, draws: list[dict], cut: int) -> None:
    path = write_compact(tmp_path / "games.jsonl.zst", draws[:2])
    whole = path.stat().st_size
    with open(path, "ab") as f:  # a write cut short by a crash: inside the header, or inside the frame
        f.write(compact.encode(draws[2])[:cut])
    report = ReadReport()
    assert list(iter_records(path, report)) == draws[:2]
    assert report.torn_tail and report.bad_lines == []
    assert drop_torn_tail(path) == cut and path.stat().st_size == whole
    write_compact(path, draws[2:])
    report = ReadReport()
    assert list(iter_records(path, report)) == draws and not report.torn_tail


@pytest.mark.fast
def test_a_damaged_frame_is_one_bad_line(tmp_path: Path, draws: list[dict]) -> None:
    path = write_compact(tmp_path / "games.jsonl.zst", draws)
    units = units_of(path)
    middle = compact.HEADER.size + len(units[1]) // 2
    damaged = bytearray(units[1])
    damaged[middle] ^= 0xFF
    path.write_bytes(units[0] + bytes(damaged) + units[2])
    report = ReadReport()
    assert list(iter_records(path, report)) == [draws[0], draws[2]]
    assert [number for number, _ in report.bad_lines] == [2]
    assert report.bad_lines[0][1].startswith("a damaged frame: ") and "\n" not in report.bad_lines[0][1]
    assert drop_torn_tail(path) == 0, "damage is not a torn tail: resume keeps the games after it"


@pytest.mark.fast
def test_bytes_between_units_are_one_bad_line(tmp_path: Path, draws: list[dict]) -> None:
    path = write_compact(tmp_path / "games.jsonl.zst", draws)
    units = units_of(path)
    path.write_bytes(units[0] + b"garbage!" + units[1] + units[2])
    report = ReadReport()
    assert list(iter_records(path, report)) == draws
    assert report.bad_lines == [(2, "8 bytes that are not a record unit (damaged)")] and not report.torn_tail


@pytest.mark.fast
def test_a_length_overrunning_a_later_unit_is_damage(tmp_path: Path, draws: list[dict]) -> None:
    path = write_compact(tmp_path / "games.jsonl.zst", draws)
    units = units_of(path)
    wrong = compact.HEADER.pack(compact.SKIPPABLE_MAGIC, 4, 1 << 20) + units[1][compact.HEADER.size:]
    path.write_bytes(units[0] + wrong + units[2])
    report = ReadReport()
    assert list(iter_records(path, report)) == [draws[0], draws[2]]
    assert report.bad_lines == [(2, "a unit cut short before the next one (damaged)")] and not report.torn_tail
    assert drop_torn_tail(path) == 0


FRAME_HEADER_DESCRIPTOR, CHECKSUM_FLAG = 4, 1 << 2
"""Where a zstd frame says it ends with a content checksum: bit 2 of its header's first byte after the magic."""


@pytest.mark.fast
def test_a_flipped_bit_is_a_bad_line_never_another_record(tmp_path: Path, draws: list[dict]) -> None:
    """Every frame carries its content's checksum and the reader checks it: each of a frame's bits flipped in turn
    is reported as a bad line, or (the few bits zstd ignores) reads back the very record written, never another.
    Clearing the checksum flag is damage too, as is a frame with bytes after its end (where a cleared flag would
    leave the checksum's own bytes)."""
    path = tmp_path / "games.jsonl.zst"
    unit = units_of(write_compact(path, draws[:1]))[0]
    header, frame = unit[:compact.HEADER.size], unit[compact.HEADER.size:]
    assert zstandard.get_frame_parameters(frame).has_checksum
    same, different, problems = 0, [], set()
    for bit in range(len(frame) * 8):
        flipped = bytearray(frame)
        flipped[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(header + flipped)
        report = ReadReport()
        read = list(iter_records(path, report))
        if read == draws[:1] and report.bad_lines == []:
            same += 1
            continue
        if read:
            different.append(bit)
        assert len(report.bad_lines) == 1 and report.bad_lines[0][0] == 1 and not report.torn_tail, bit
        problems.add(report.bad_lines[0][1].split(":")[0])
    assert different == [], "a flipped bit read as another record"
    assert same < len(frame)  # the bits zstd ignores are a few, not a byte in eight
    assert "a damaged frame" in problems
    cleared = bytearray(frame)
    cleared[FRAME_HEADER_DESCRIPTOR] &= ~CHECKSUM_FLAG
    with pytest.raises(RecordFormatError, match=r"^a frame without its content checksum \(damaged\)$"):
        compact.decode(bytes(cleared))
    with pytest.raises(RecordFormatError, match=r"^a damaged frame: .*unused data"):
        compact.decode(frame + b"\0\0\0\0")


@pytest.mark.fast
def test_a_frame_of_an_unknown_dictionary_is_named(tmp_path: Path, draws: list[dict]) -> None:
    samples = [record_line(played("block", f"d/0/{i}", i)) for i in range(20)]
    other = zstandard.train_dictionary(8192, samples, k=200, d=8, dict_id=40000)
    frame = zstandard.ZstdCompressor(dict_data=other, write_checksum=True).compress(record_line(draws[1]))
    path = write_compact(tmp_path / "games.jsonl.zst", draws[:1])
    with open(path, "ab") as f:
        f.write(compact.HEADER.pack(compact.SKIPPABLE_MAGIC, 4, len(frame)) + frame)
    write_compact(path, draws[2:])
    report = ReadReport()
    assert list(iter_records(path, report)) == [draws[0], draws[2]]
    assert report.bad_lines == [(2, "compressed with dictionary 40000, which this arena does not have (it knows "
                                    "32769; written by a newer arena?)")]


@pytest.mark.fast
def test_repair_moves_a_damaged_unit_aside_whole(tmp_path: Path, draws: list[dict]) -> None:
    run = write_run_folder(tmp_path / "run", draws)
    units = units_of(run / "games.jsonl.zst")
    damaged = units[1][:-1] + bytes([units[1][-1] ^ 0xFF])  # the frame's checksum
    (run / "games.jsonl.zst").write_bytes(units[0] + damaged + units[2])
    report = repair_run(run)
    assert report.kept == 2 and [number for number, _ in report.moved] == [2]
    assert (run / "games.jsonl.zst").read_bytes() == units[0] + units[2]
    entry = json.loads((run / "games.rejected.jsonl").read_text())
    assert (entry["record"], base64.b64decode(entry["base64"])) == (2, damaged)
    assert entry["problem"] == report.moved[0][1]
    read = ReadReport()
    assert list(iter_records(run / "games.jsonl.zst", read)) == [draws[0], draws[2]] and read.bad_lines == []


def write_run_folder(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True)
    write_compact(folder / "games.jsonl.zst", records)
    return folder


@pytest.mark.fast
def test_a_file_not_in_the_compact_format_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl.zst"
    path.write_bytes(b'name = "t"\nvariant = "draw"\n')
    with pytest.raises(RecordError, match=r"not a record file \(no line of it is a game record\); expected a run "
                                          r"folder or its games.jsonl.zst$"):
        verify_run(path)


# --- which file a folder uses -----------------------------------------------------------------------------------


@pytest.mark.fast
def test_new_folders_go_compact_old_ones_keep_theirs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE, raising=False)
    assert RunFolder(tmp_path / "new").records == tmp_path / "new" / "games.jsonl.zst"
    old = tmp_path / "old"
    old.mkdir()
    (old / "games.jsonl").write_text("")
    assert RunFolder(old).records == old / "games.jsonl", "a run of an earlier arena appends to its own file"
    monkeypatch.setenv(FORMAT_VARIABLE, "jsonl")
    assert RunFolder(tmp_path / "new").records == tmp_path / "new" / "games.jsonl"
    compact_folder = write_run_folder(tmp_path / "compact", [])
    assert RunFolder(compact_folder).records == compact_folder / "games.jsonl.zst", "the file it has, whatever is set"


# --- verification of both formats -------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", [1, 2])
async def test_verify_says_the_same_of_both_formats(tmp_path: Path, capsys, monkeypatch, jobs: int) -> None:
    readable = await write_run(tmp_path / "readable", games=4)
    expected = verify_cli(readable, jobs, capsys, monkeypatch)
    assert expected[0] == 0 and expected[1] == []
    packed = await write_run(tmp_path / "packed", games=4)
    compact_copy(packed)
    status, mismatches, summary, parallel = verify_cli(packed, jobs, capsys, monkeypatch)
    untimed = summary.replace(str(packed), str(readable)).rsplit(";", 1)[0]  # the end says how long it took
    assert (status, mismatches, untimed, parallel) == (expected[0], expected[1], expected[2].rsplit(";", 1)[0],
                                                       jobs > 1)
    assert untimed.startswith("verified 4 games, ") and untimed.endswith(": OK; deals checked against the revealed "
                                                                           "master seed")


@pytest.mark.fast
async def test_verify_finds_a_tampered_move(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", games=2)
    records = [json.loads(line) for line in (run / "games.jsonl").read_text().splitlines()]
    move = next(m for m in records[1]["rounds"][0]["moves"] if m["action"]["kind"] == "ACTION_KIND_DRAW")
    move["action"]["tile"] = {"low": 6, "high": 6} if move["action"]["tile"] != {"low": 6, "high": 6} else {
        "low": 0, "high": 0}
    (run / "games.jsonl").unlink()
    write_compact(run / "games.jsonl.zst", records)
    report = verify_run(run)
    assert report.games == 2 and {m.game for m in report.mismatches} == {1}


# --- the server's index ------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_the_server_index_reads_it_as_it_grows(tmp_path: Path, draws: list[dict]) -> None:
    path = write_compact(tmp_path / "games.jsonl.zst", draws[:2])
    unit = compact.encode(draws[2])
    with open(path, "ab") as f:
        f.write(unit[:30])  # being written
    index = RecordIndex(path)
    index.refresh()
    assert index.indices() == [0, 1] and index.read(1) == draws[1] and index.read(2) is None
    with open(path, "ab") as f:
        f.write(unit[30:])
        f.write(b"junk")
    write_compact(path, [{"recordVersion": 1, "index": "3", **draws[0]}])  # game 0's record, as game 3's
    index.refresh()
    assert index.indices() == [0, 1, 2, 3] and index.read(2) == draws[2] and index.read(3)["index"] == "3"
    assert index.bad_lines == [(4, "4 bytes that are not a record unit (damaged)")]


# --- real runs, resume, a real server --------------------------------------------------------------------------


def compact_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != FORMAT_VARIABLE}


def test_a_run_writes_it_and_every_command_reads_it(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    out = tmp_path / "run"
    done = arena_run(write(tmp_path, block_text(tag, 3)), "--out", str(out), env=compact_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert (out / "games.jsonl.zst").exists() and not (out / "games.jsonl").exists()
    assert f"records: {out / 'games.jsonl.zst'} (6 games)" in done.stdout
    records = list(iter_records(out / "games.jsonl.zst"))
    assert sorted(index_of(r) for r in records) == list(range(6))
    verified = arena("replay", str(out), "--verify")
    assert verified.returncode == 0 and "MISMATCH" not in verified.stdout, verified.stdout + verified.stderr
    shown = arena("replay", str(out), "--game", "4")
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    exported = arena("export", str(out), "--jsonl")
    assert exported.returncode == 0 and exported.stderr == ""
    assert [json.loads(line) for line in exported.stdout.splitlines()] == records
    rows = arena("export", str(out), "--csv")
    assert rows.returncode == 0 and len(rows.stdout.splitlines()) == 7


def test_resume_after_kill_9_loses_and_doubles_nothing(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    path = write(tmp_path, block_text(tag, 40, concurrency=3))
    out = tmp_path / "run"
    records_file = out / "games.jsonl.zst"
    process = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--out", str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=compact_env())
    wait_for(lambda: records_file.exists() and sum(1 for _ in iter_records(records_file)) >= 5, 120, "5 games")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    wait_for(lambda: not bot_processes(tag), 20, "the bots to die with the arena")
    before = list(iter_records(records_file))
    assert 5 <= len(before) < 80, "interrupted in the middle"
    with open(records_file, "ab") as f:  # a write cut short by the crash
        f.write(compact.encode(before[0])[:50])
    resumed = arena_run(path, "--out", str(out), "--resume", env=compact_env())
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resume: dropped a torn last record line (50 bytes)" in resumed.stdout
    games = list(iter_records(records_file))
    assert sorted(index_of(g) for g in games) == list(range(80)), "every game exactly once"
    assert games[:len(before)] == before, "kept as they were"
    assert verify_run(out).mismatches == []


def test_a_server_writes_it_and_serves_its_games(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(FORMAT_VARIABLE)
    tag = uuid.uuid4().hex
    server = WebServer(tmp_path / "data", "--concurrency", "2",
                       *registry(tmp_path, random_bot("alpha", tag) + random_bot("beta", tag)))
    try:
        info = submit(server.stub(), tournament(games=2, variant="draw"))
        wait_state(server.web, info.id, lambda d: d["tournament"]["state"] == "finished", 120, "the end")
        folder = server.data / "tournaments" / info.id
        assert not (folder / "games.jsonl").exists()
        stored = {index_of(r): r for r in iter_records(folder / "games.jsonl.zst")}
        assert sorted(stored) == [0, 1, 2, 3]
        lines = http(f"{server.web}/api/t/{info.id}/games.jsonl")[2].decode().splitlines()
        assert {index_of(json.loads(line)): json.loads(line) for line in lines} == stored
        assert get_json(f"{server.web}/api/t/{info.id}/games/2.json") == stored[2]
        fetched = server.cli("fetch", info.id, "3")
        assert fetched.returncode == 0 and json.loads(fetched.stdout) == stored[3], fetched.stderr
    finally:
        server.stop()


@pytest.mark.fast
def test_the_rating_chart_reads_it_as_it_grows(tmp_path: Path, draws: list[dict]) -> None:
    path = write_compact(tmp_path / "games.jsonl.zst", draws[:2])
    unit = compact.encode(draws[2])
    with open(path, "ab") as f:
        f.write(unit[:30])  # being written
    history = RatingHistory(group_size=1, games_total=3)
    history.refresh(path)
    assert history.counted == 2
    with open(path, "ab") as f:
        f.write(unit[30:])
    history.refresh(path)
    assert history.counted == 3 and history.position == path.stat().st_size


@pytest.mark.fast
def test_export_jsonl_hides_a_secret_seed(tmp_path: Path, draws: list[dict], capsys) -> None:
    run = write_run_folder(tmp_path / "run", draws)
    target = tmp_path / "games.jsonl"
    assert cli.main(["export", str(run), "--jsonl", "--out", str(target)]) == 0
    assert target.read_bytes() == b"".join(record_line(r) for r in draws)
    assert capsys.readouterr().err == f"wrote 3 games to {target}\n"
    (run / "seed.secret").write_text("{}")  # a run under way: its master seed is still secret
    assert cli.main(["export", str(run), "--jsonl"]) == 0
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert shown == [{k: v for k, v in r.items() if k != "seed"} for r in draws]
