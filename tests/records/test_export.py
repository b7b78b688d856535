"""`arena export RUN --csv` and `arena games ID --csv`: one row per game, read back with
Python's csv module and checked against the records themselves; seeds only once revealed; bad lines skipped with a
warning; the same rows through a real server."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from arena.records.export import COLUMNS, ExportError, GameRow, row_from_record
from support.paths import ROOT

RANDOM_BOT = ROOT / "bots" / "python" / "random_bot.py"
GREEDY_BOT = ROOT / "bots" / "python" / "greedy_bot.py"
ODD_NAME = 'alpha, the "first"'
"""A name with a comma and quotes: the csv module must keep it one cell."""


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def table(text: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames or ()) == COLUMNS
    return list(reader)


def expected_row(record: dict, seed_shown: bool) -> dict[str, str]:
    """A record's row, worked out here from the record's JSON (not by the exporter's code)."""
    result = record["result"]
    seats = record["seats"]
    sides = record.get("sideOfSeat", list(range(len(seats))))
    winner = result.get("winner")
    return {
        "index": str(int(record.get("index", 0))), "deal_key": record.get("dealKey", ""),
        "rotation": str(record.get("rotation", 0)), "seats": ";".join(seats),
        "seed": record["seed"] if seed_shown else "", "scores": ";".join(result["scores"]),
        "winner": "" if winner is None else "+".join(dict.fromkeys(
            name for name, side in zip(seats, sides) if side == winner)),
        "ranking": ";".join(str(s) for s in result.get("ranking", [])),
        "faults": ";".join(f"{f['kind']} (seat {f.get('seat', 0)})" for f in record.get("faults", [])),
        "duration_s": f"{record.get('durationS', 0.0):.3f}",
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run: 4 games of Block to 1 point between a random and a greedy Python bot."""
    folder = tmp_path_factory.mktemp("export")
    spec = folder / "t.toml"
    spec.write_text(f'''name = "t"
variant = "block"
games = 2
duplicate = true
concurrency = 2
[options]
target = 1
[[bots]]
name = {json.dumps(ODD_NAME)}
command = {json.dumps([sys.executable, str(RANDOM_BOT)])}
[[bots]]
name = "beta"
command = {json.dumps([sys.executable, str(GREEDY_BOT)])}
''')
    out = folder / "run"
    done = arena("run", str(spec), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]


def test_one_row_per_game_with_the_records_facts(run: Path) -> None:
    out = arena("export", str(run), "--csv")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    rows = table(out.stdout)
    stored = sorted(records(run), key=lambda r: int(r.get("index", 0)))
    assert rows == [expected_row(r, seed_shown=True) for r in stored]
    assert [row["index"] for row in rows] == ["0", "1", "2", "3"]
    assert {row["seats"] for row in rows} == {f"{ODD_NAME};beta", f"beta;{ODD_NAME}"}
    assert all(row["seed"].endswith(("/0/0", "/0/1")) for row in rows)


def test_export_to_a_file_and_to_an_unwritable_one(run: Path, tmp_path: Path) -> None:
    target = tmp_path / "games.csv"
    out = arena("export", str(run / "games.jsonl"), "--csv", "--out", str(target))
    assert out.returncode == 0 and out.stdout == "", out.stderr
    assert out.stderr == f"wrote 4 games to {target}\n"
    assert target.read_text() == arena("export", str(run), "--csv").stdout
    bad = tmp_path / "no-such-folder" / "games.csv"
    refused = arena("export", str(run), "--csv", "--out", str(bad))
    assert refused.returncode == 2
    assert refused.stderr == f"error: cannot write {bad}: No such file or directory\n"
    assert not bad.parent.exists()


def test_export_of_nothing_is_one_error_line(tmp_path: Path) -> None:
    out = arena("export", str(tmp_path / "nowhere"), "--csv")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_a_non_record_file_is_one_error_line() -> None:
    out = arena("export", str(ROOT / "tournaments" / "demo.toml"), "--csv")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1
    assert "not a record file" in out.stderr


def test_no_seed_is_exported_while_secret(run: Path, tmp_path: Path) -> None:
    running = tmp_path / "running"
    shutil.copytree(run, running)
    (running / "seed.json").rename(running / "seed.secret")  # as a run folder is before its last game
    rows = table(arena("export", str(running), "--csv").stdout)
    assert len(rows) == 4 and {row["seed"] for row in rows} == {""}
    alone = tmp_path / "alone.jsonl"  # a record file outside any run folder shows what it holds
    shutil.copy(run / "games.jsonl", alone)
    assert [row["seed"] for row in table(arena("export", str(alone), "--csv").stdout)] == [
        r["seed"] for r in sorted(records(run), key=lambda r: int(r.get("index", 0)))]


def test_bad_lines_are_skipped_with_a_warning(run: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(run, damaged)
    lines = (damaged / "games.jsonl").read_text().splitlines(keepends=True)
    wrong_types = dict(json.loads(lines[0]), index="7", faults=[5])
    text = "".join(lines[:2]) + "this is not JSON\n" + json.dumps(wrong_types) + "\n" + "".join(lines[2:]) + '{"rec'
    (damaged / "games.jsonl").write_text(text)
    out = arena("export", str(damaged), "--csv")
    assert out.returncode == 0, out.stderr
    assert [row["index"] for row in table(out.stdout)] == ["0", "1", "2", "3"]
    warnings = out.stderr.splitlines()
    assert len(warnings) == 3 and all(w.startswith("warning: ") for w in warnings), warnings
    records_file = damaged / "games.jsonl"
    assert any(w.startswith(f"warning: {records_file} line 3: ") and w.endswith("; skipped") for w in warnings)
    assert any(f"line 4: " in w or "game 7: " in w for w in warnings), warnings
    assert warnings[-1] == (f"warning: {records_file}: the last line is cut short (a game being written, or a "
                            f"crash); skipped")


@pytest.mark.parametrize("change, message", [
    ({"faults": [5]}, "a fault is not an object: 5"),
    ({"faults": "x"}, "faults is not a list: 'x'"),
    ({"result": {"scores": ["a"]}}, "a score is not an integer: 'a'"),
    ({"result": None}, "result is not an object: None"),
    ({"index": 1e999}, "index is not an integer: inf"),
    ({"seats": [7]}, "a seat is not a string: 7"),
    ({"durationS": "slow"}, "durationS is not a number: 'slow'"),
])
def test_a_record_of_wrong_types_is_an_export_error(run: Path, change: dict, message: str) -> None:
    record = dict(records(run)[0], **change)
    with pytest.raises(ExportError) as error:
        row_from_record(record, show_seed=True)
    assert str(error.value) == message


def test_faults_are_listed_by_kind_and_seat(run: Path) -> None:
    faults = [{"kind": "timeout", "seat": 1, "moveNumber": 4, "message": "no reply"}, {"kind": "crashed"}]
    row = row_from_record(dict(records(run)[0], faults=faults), show_seed=False)
    assert row.cells()[COLUMNS.index("faults")] == "timeout (seat 1);crashed (seat 0)"
    assert row.cells()[COLUMNS.index("seed")] == ""


@pytest.mark.fast
def test_a_team_wins_under_its_entrants_names() -> None:
    row = GameRow(index=3, deal_key="0/1", rotation=1, seats=("a", "b", "a", "c"), side_of_seat=(0, 1, 0, 1),
                  seed="", scores=(70, 150), winner=1, ranking=(1, 0), faults=(("timeout", 2),), duration_s=1.23456)
    assert row.cells() == [3, "0/1", 1, "a;b;a;c", "", "70;150", "b+c", "1;0", "timeout (seat 2)", "1.235"]
    assert GameRow(**{**row.__dict__, "winner": None}).winner_names() == ""


# --- through the server -------------------------------------------------------------------------------------------


def test_server_export_is_the_same_and_hides_the_seed(tmp_path: Path) -> None:
    from support.servers import (BackgroundWatch, Server, bot_entry, gated_bot, named, open_gate, registry, submit,
                                 tournament)

    from arena.protocol import arena_pb2 as apb

    tag = uuid.uuid4().hex
    watched = str(ROOT / "tests" / "bots" / "watched_bot.py")
    bots = (bot_entry("slow", watched, "--mode", "slow", "--delay", "0.2", "--tag", tag)
            + bot_entry("quick", str(RANDOM_BOT), "--tag", tag)
            + gated_bot(tmp_path / "gated", tag, "--gate-unit", "seat"))
    server = Server(tmp_path / "data", *registry(tmp_path, bots))
    try:
        stub = server.stub()
        finished = submit(stub, tournament(games=2, name="finished", bots=named("slow", "quick")))
        BackgroundWatch(stub, finished.id).join(120)
        folder = server.data / "tournaments" / finished.id
        listed = server.cli("games", finished.id, "--csv")
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout == arena("export", str(folder), "--csv").stdout
        assert all(row["seed"] for row in table(listed.stdout))

        # The gated bot answers in seat 0 only: game 0 is recorded and game 1 (seats swapped) waits, however slow
        # the machine, until the cancel.
        open_gate(tmp_path / "gated" / "gate", "0")
        cut = submit(stub, tournament(games=3, concurrency=1, name="cut", bots=named("gated", "quick"),
                                      extra="[time]\nmove_ms = 600000\n"))
        live = BackgroundWatch(stub, cut.id)
        live.wait_games(1, 60)
        assert server.cli("cancel", cut.id).returncode == 0
        live.join(60)
        target = tmp_path / "cut.csv"
        saved = server.cli("games", cut.id, "--csv", "--out", str(target))
        assert saved.returncode == 0 and saved.stderr.startswith("wrote "), saved.stderr
        rows = table(target.read_text())
        stored = records(server.data / "tournaments" / cut.id)
        assert rows and len(rows) == len(stored) and all(r["seed"] for r in stored)
        assert {row["seed"] for row in rows} == {""}, "a cancelled tournament's master seed is never revealed"
        assert rows == [expected_row(r, seed_shown=False) for r in sorted(stored, key=lambda r: int(r.get("index", 0)))]
        summaries = stub.ListGames(apb.ListGamesRequest(id=cut.id), timeout=10).games
        assert summaries and {g.seed for g in summaries} == {""}
        refused = server.cli("games", cut.id, "--out", str(target))
        assert refused.returncode == 2 and refused.stderr == "error: --out goes with --csv (the table is printed)\n"
    finally:
        server.stop()
