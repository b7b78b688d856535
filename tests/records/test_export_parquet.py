"""`arena export RUN --parquet DIR` and `arena export DATA --league NAME --parquet DIR`: the games
and every decision as typed Parquet tables, read back with pyarrow and checked against the records themselves (hands
worked out here from the recorded deals and moves, not by the exporter's re-simulation); every variant; a league's
runs; bad input refused in one line."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import trio

from arena.records import dataset
from arena.records.dataset import ParquetUnavailable, write_dataset

from support.beliefs import BELIEF, LOG_LOSS, bottom_tiles, played_record
from support.cli import arena
from support.paths import ROOT
from support.random_matches import CONFIGS, IDS
from support.records import played, run_of
from support.tournaments import PYTHON, RANDOM_BOT

GREEDY_BOT = ROOT / "bots" / "python" / "greedy_bot.py"


def tile_id(tile: dict) -> int:
    """The documented encoding: high * (high + 1) / 2 + low."""
    low, high = tile.get("low", 0), tile.get("high", 0)
    return high * (high + 1) // 2 + low


def read(folder: Path, name: str) -> list[dict]:
    return pq.read_table(folder / name).to_pylist()


def records_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def expected_hands(record: dict) -> list[list[int]]:
    """The hand of the seat to move before each recorded move: the deal's hand, less every tile it placed, plus
    every tile it drew."""
    hands_before = []
    for rnd in record.get("rounds", []):
        hands = [sorted(tile_id(t) for t in hand.get("tiles", [])) for hand in rnd["deal"]["hands"]]
        for move in rnd.get("moves", []):
            seat, action = move.get("seat", 0), move["action"]
            hands_before.append(list(hands[seat]))
            if action["kind"] == "ACTION_KIND_PLACE":
                hands[seat].remove(tile_id(action["tile"]))
            elif action["kind"] == "ACTION_KIND_DRAW":
                hands[seat] = sorted(hands[seat] + [tile_id(action["tile"])])
    return hands_before


def index(record: dict) -> int:
    """A record's game index (int64: a string in protobuf's JSON mapping; left out at 0)."""
    return int(record.get("index", 0))


def moves_of(record: dict) -> list[tuple[int, dict]]:
    return [(r, move) for r, rnd in enumerate(record.get("rounds", [])) for move in rnd.get("moves", [])]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of real bot processes: 2 games (one duplicate deal) of Block to 50 between a random and a
    greedy Python bot."""
    folder = tmp_path_factory.mktemp("parquet")
    spec = folder / "t.toml"
    spec.write_text(f'''name = "t"
variant = "block"
games = 1
duplicate = true
concurrency = 2
[options]
target = 50
[[bots]]
name = "random"
command = {json.dumps([PYTHON, str(RANDOM_BOT)])}
[[bots]]
name = "greedy"
command = {json.dumps([PYTHON, str(GREEDY_BOT)])}
''')
    out = folder / "run"
    done = arena("run", str(spec), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    return out


@pytest.fixture(scope="module")
def exported(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("exported") / "data"
    done = arena("export", str(run), "--parquet", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    moves = sum(len(moves_of(r)) for r in records_of(run / "games.jsonl"))
    assert done.stderr == (f"wrote 2 games and {moves} decisions to {out} "
                           f"(games.parquet, decisions.parquet, beliefs.parquet, tiles.parquet)\n")
    return out


def test_the_tables_have_the_documented_types(exported: Path) -> None:
    games, decisions, beliefs, tiles = dataset.schemas()
    assert pq.read_schema(exported / "games.parquet").remove_metadata() == games
    assert pq.read_schema(exported / "decisions.parquet").remove_metadata() == decisions
    assert pq.read_schema(exported / "beliefs.parquet").remove_metadata() == beliefs
    assert read(exported, "beliefs.parquet") == []  # the bots of this run send no belief
    assert pq.read_schema(exported / "tiles.parquet").remove_metadata() == tiles
    types = {f.name: f.type for f in decisions}
    assert types["hand"] == pa.list_(pa.int16()) and types["think_ms"] == pa.float64()
    assert types["game"] == pa.int64() and types["seat"] == pa.int8() and types["forced"] == pa.bool_()
    documented = dataset.__doc__ or ""
    assert [f.name for f in (*games, *decisions, *beliefs) if f.name not in documented] == []  # the docstring's column tables


def test_one_decision_row_per_move_with_hand_and_time(run: Path, exported: Path) -> None:
    stored = sorted(records_of(run / "games.jsonl"), key=index)
    rows = read(exported, "decisions.parquet")
    assert len(rows) == sum(len(moves_of(r)) for r in stored) > 20
    at = 0
    for record in stored:
        hands = expected_hands(record)
        for number, (r, move) in enumerate(moves_of(record)):
            row = rows[at]
            at += 1
            assert (row["run"], row["game"], row["round"], row["move"]) == (".", index(record), r, number)
            assert row["seat"] == move.get("seat", 0)
            assert row["entrant"] == record["seats"][row["seat"]]
            assert row["hand"] == hands[number]
            assert row["hand_counts"][row["seat"]] == len(hands[number])
            assert row["think_ms"] == move.get("thinkMs", 0.0)
            assert row["forced"] == move.get("forced", False)
    assert at == len(rows)
    assert {row["entrant"] for row in rows} == {"random", "greedy"}
    assert any(row["think_ms"] > 0 for row in rows)  # real bots' times, not zeros


def test_the_chosen_action_is_recorded_and_legal(run: Path, exported: Path) -> None:
    stored = sorted(records_of(run / "games.jsonl"), key=index)
    recorded = [move for record in stored for _, move in moves_of(record)]
    rows = read(exported, "decisions.parquet")
    kinds = {"ACTION_KIND_PLACE": "place", "ACTION_KIND_DRAW": "draw", "ACTION_KIND_PASS": "pass"}
    for row, move in zip(rows, recorded, strict=True):
        action = move["action"]
        chosen = row["legal"][row["choice"]]
        assert chosen == {"kind": row["action_kind"], "tile": row["action_tile"], "target": row["action_target"],
                          "point": row["action_point"], "train": row["action_train"]}
        assert row["action_kind"] == kinds[action["kind"]]
        assert row["legal"].count(chosen) == 1
        if action["kind"] == "ACTION_KIND_PLACE":
            assert row["action_tile"] == tile_id(action["tile"])
            assert row["action_tile"] in row["hand"]
            assert row["action_target"] == (tile_id(action["target"]) if "target" in action else None)
            if "target" in action:  # it joins an open end that accepts one of its values
                end = {"tile": row["action_target"], "point": row["action_point"]}
                matching = [e for e in row["open_ends"] if {"tile": e["tile"], "point": e["point"]} == end]
                assert len(matching) == 1
                low, high = action["tile"].get("low", 0), action["tile"].get("high", 0)
                assert matching[0]["value"] in (low, high)
            else:
                assert row["open_ends"] == [] and row["open_values"] == []
            assert row["drawn"] is None
        if action["kind"] == "ACTION_KIND_DRAW":
            assert row["drawn"] == tile_id(action["tile"]) and row["action_tile"] is None
        assert row["open_values"] == [e["value"] for e in row["open_ends"]]
        assert all(t in row["hand"] for t in [a["tile"] for a in row["legal"] if a["kind"] == "place"])
    assert {row["action_kind"] for row in rows} >= {"place", "pass"}


def test_each_decision_carries_its_sides_results(run: Path, exported: Path) -> None:
    stored = {index(r): r for r in records_of(run / "games.jsonl")}
    for row in read(exported, "decisions.parquet"):
        record = stored[row["game"]]
        side = record.get("sideOfSeat", [0, 1])[row["seat"]]
        assert row["side"] == side
        result = record["rounds"][row["round"]]["result"]
        assert row["round_points"] == int(result.get("points", ["0", "0"])[side])
        assert row["round_won"] == (result.get("winner") == side)
        assert row["round_ending"] == result["ending"].removeprefix("ENDING_").lower()
        assert row["game_points"] == int(record["result"]["scores"][side])
        assert row["game_won"] == (record["result"].get("winner") == side)
        assert row["game_rank"] == record["result"]["ranking"].index(side) + 1


def test_one_game_row_per_game_with_its_facts(run: Path, exported: Path) -> None:
    stored = sorted(records_of(run / "games.jsonl"), key=index)
    games = read(exported, "games.parquet")
    decisions = read(exported, "decisions.parquet")
    assert [g["game"] for g in games] == [0, 1]
    for game, record in zip(games, stored, strict=True):
        first = record["rounds"][0]["moves"][0]
        assert game == {
            "run": ".", "game": index(record), "deal_key": record["dealKey"],
            "rotation": record.get("rotation", 0), "variant": "block", "players": 2, "seats": record["seats"],
            "side_of_seat": [0, 1], "seed": record["seed"], "scores": [int(s) for s in record["result"]["scores"]],
            "winner": record["result"].get("winner"),
            "winner_names": record["seats"][record["result"]["winner"]] if "winner" in record["result"] else "",
            "ranking": record["result"]["ranking"], "rounds": len(record["rounds"]),
            "moves": len(moves_of(record)), "by_fault": False, "faults": [], "duration_s": record["durationS"],
            "opening_tile": tile_id(first["action"]["tile"]), "opening_seat": first.get("seat", 0),
        }
        assert game["moves"] == sum(1 for d in decisions if d["game"] == game["game"])
    assert {tuple(g["seats"]) for g in games} == {("random", "greedy"), ("greedy", "random")}


def test_the_tiles_table_is_the_documented_encoding(exported: Path) -> None:
    tiles = read(exported, "tiles.parquet")
    assert len(tiles) == 190  # the double-18 set; every smaller set is a prefix of it
    for tile in tiles:
        assert tile["id"] == tile_id(tile)
        assert tile["name"] == f"[{tile['low']}|{tile['high']}]"
        assert tile["pips"] == tile["low"] + tile["high"] and tile["double"] == (tile["low"] == tile["high"])
    assert [t["name"] for t in tiles[:4]] == ["[0|0]", "[0|1]", "[1|1]", "[0|2]"] and tiles[27]["name"] == "[6|6]"


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS, ids=IDS)
@pytest.mark.fast
def test_every_variant_exports(tmp_path: Path, variant: str, players: int, options: dict) -> None:
    records = [played(variant, f"hardening/0/{i}", i, players, options) for i in range(2)]
    report = write_dataset([("v", run_of(tmp_path / "run", records))], tmp_path / "out")
    assert report.warnings == []
    rows = read(tmp_path / "out", "decisions.parquet")
    assert report.games == 2 and report.decisions == len(rows) == sum(len(moves_of(r)) for r in records)
    hands = [hand for record in records for hand in expected_hands(record)]
    recorded = [move for record in records for _, move in moves_of(record)]
    for row, hand, move in zip(rows, hands, recorded, strict=True):
        assert row["hand"] == hand
        assert row["legal"][row["choice"]]["kind"] == move["action"]["kind"].removeprefix("ACTION_KIND_").lower()
        assert row["think_ms"] == move.get("thinkMs", 0.0)
        assert row["game_won"] is not None and row["game_rank"] >= 1
    games = read(tmp_path / "out", "games.parquet")
    assert [(g["variant"], g["players"]) for g in games] == [(variant, players)] * 2
    if variant == "mexican_train":  # the hub's ends name their trains: each seat's and the Mexican train (-2)
        assert sorted(e["train"] for e in rows[0]["open_ends"]) == [-2, *range(players)]


@pytest.mark.fast
def test_a_faulted_game_has_no_cut_round_result(tmp_path: Path) -> None:
    record = played("draw", "hardening/0/0", 0, fails_after=3)
    write_dataset([(".", run_of(tmp_path / "run", [record]))], tmp_path / "out")
    [game] = read(tmp_path / "out", "games.parquet")
    assert game["by_fault"] is True and game["faults"] == [{"kind": record["faults"][0]["kind"], "seat": 1}]
    rows = read(tmp_path / "out", "decisions.parquet")
    last = len(record["rounds"]) - 1
    cut = [row for row in rows if row["round"] == last]
    assert cut and all(row["round_points"] is None and row["round_won"] is None for row in cut)
    assert all(row["game_won"] == (row["side"] == record["result"]["winner"]) for row in rows)


@pytest.mark.fast
def test_each_tile_of_a_belief_is_a_row_beside_the_truth(tmp_path: Path) -> None:
    """The believer's one belief (two tiles, both in the boneyard) is two rows of beliefs.parquet, joined to its
    decision by (run, game, move), each with the recorded probabilities, the truth and the standings' scores."""
    record = trio.run(played_record)
    report = write_dataset([(".", run_of(tmp_path / "run", [record]))], tmp_path / "out")
    assert report.beliefs == 2
    rows = read(tmp_path / "out", "beliefs.parquet")
    first, second = bottom_tiles()
    move = next(n for n, (_, m) in enumerate(moves_of(record)) if "belief" in m)
    assert [{k: v for k, v in row.items() if k not in ("brier", "log_loss")} for row in rows] == [
        {"run": ".", "game": 0, "move": move, "round": 0, "seat": 0, "entrant": "believer", "tile": tile,
         "places": [1, -1], "probabilities": list(p), "truth": -1, "p_truth": p[1]}
        for tile, p in ((first, BELIEF[0]), (second, BELIEF[1]))]
    assert [row["brier"] for row in rows] == pytest.approx([0.125, 2.0])
    assert sum(row["log_loss"] for row in rows) / 2 == pytest.approx(LOG_LOSS)
    decision = read(tmp_path / "out", "decisions.parquet")[move]
    assert (decision["seat"], decision["move"], decision["forced"]) == (0, move, False)


def test_no_seed_is_exported_while_secret(run: Path, tmp_path: Path) -> None:
    running = tmp_path / "running"
    shutil.copytree(run, running)
    (running / "seed.json").unlink()
    (running / "seed.secret").write_text("{}")
    done = arena("export", str(running), "--parquet", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert [g["seed"] for g in read(tmp_path / "out", "games.parquet")] == ["", ""]


def test_a_leagues_runs_export_together(tmp_path: Path) -> None:
    league = tmp_path / "data" / "leagues" / "main"
    draws = [played("draw", f"hardening/0/{i}", i) for i in range(3)]
    run_of(league / "tables" / "10", [draws[0]])
    run_of(league / "tables" / "9", [draws[1]])
    (league / "tables" / "11").mkdir()  # a table chosen but not played yet: nothing to export
    run_of(league / "challenges" / "1", [draws[2]])
    run_of(league / "finals", [draws[0], draws[1]])
    out = tmp_path / "out"
    done = arena("export", str(tmp_path / "data"), "--league", "main", "--parquet", str(out))
    assert done.returncode == 0, done.stderr
    games = read(out, "games.parquet")
    assert [(g["run"], g["game"]) for g in games] == [("tables/9", 1), ("tables/10", 0), ("challenges/1", 2),
                                                      ("finals", 0), ("finals", 1)]
    rows = read(out, "decisions.parquet")
    assert len(rows) == sum(g["moves"] for g in games) == sum(len(moves_of(r)) for r in draws + draws[:2])
    refused = arena("export", str(tmp_path / "data"), "--league", "other", "--parquet", str(tmp_path / "o2"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith(f"error: {tmp_path / 'data' / 'leagues' / 'other'}: no such folder")
    (tmp_path / "data" / "leagues" / "new" / "tables" / "1").mkdir(parents=True)
    refused = arena("export", str(tmp_path / "data"), "--league", "new", "--parquet", str(tmp_path / "o3"))
    assert refused.returncode == 2 and not (tmp_path / "o3").exists()
    assert refused.stderr == f"error: {tmp_path / 'data' / 'leagues' / 'new'}: the league has no recorded games yet\n"


def test_a_corrupt_record_is_skipped_with_a_warning(tmp_path: Path) -> None:
    draws = [played("draw", f"hardening/0/{i}", i) for i in range(3)]
    unplayable = json.loads(json.dumps(draws[2]))
    unplayable["rounds"][0]["moves"][0]["seat"] = 1 - unplayable["rounds"][0]["moves"][0].get("seat", 0)
    folder = run_of(tmp_path / "run", [draws[0], draws[1], unplayable], lines={2: '{"index": 1, "seats": 7}'})
    out = tmp_path / "out"
    done = arena("export", str(folder), "--parquet", str(out))
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert len(lines) == 3 and "Traceback" not in done.stderr
    assert lines[0].startswith(f"warning: {folder / 'games.jsonl'}: game 2: ") and "it was seat" in lines[0]
    assert lines[0].endswith("; skipped")
    assert lines[1].startswith(f"warning: {folder / 'games.jsonl'} line 2: ") and lines[1].endswith("; skipped")
    assert lines[2] == f"wrote 1 games and {len(moves_of(draws[0]))} decisions to {out} " \
                       f"(games.parquet, decisions.parquet, beliefs.parquet, tiles.parquet)"
    assert [g["game"] for g in read(out, "games.parquet")] == [0]


@pytest.mark.parametrize("case", ["missing", "not records", "empty file", "dir not empty", "dir is a file",
                                  "csv and parquet", "league with csv", "out with parquet"])
def test_bad_input_is_one_error_line(run: Path, tmp_path: Path, case: str) -> None:
    out = tmp_path / "out"
    args = [str(run), "--parquet", str(out)]
    if case == "missing":
        args[0] = str(tmp_path / "nowhere")
    elif case == "not records":
        args[0] = str(ROOT / "tournaments" / "demo.toml")
    elif case == "empty file":
        (tmp_path / "empty.jsonl").write_text("")
        args[0] = str(tmp_path / "empty.jsonl")
    elif case == "dir not empty":
        out.mkdir()
        (out / "mine.txt").write_text("keep me")
    elif case == "dir is a file":
        out.write_text("keep me")
    elif case == "csv and parquet":
        args.append("--csv")
    elif case == "league with csv":
        args = [str(run), "--csv", "--league", "main"]
    elif case == "out with parquet":
        args += ["--out", str(tmp_path / "x.csv")]
    done = arena("export", *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 or case == "csv and parquet", done.stderr
    assert "Traceback" not in done.stderr and "error: " in done.stderr
    if case in ("dir not empty", "dir is a file"):
        assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == (["mine.txt"] if case == "dir not "
                                                                                "empty" else ["out"])
    elif case not in ("csv and parquet", "league with csv", "out with parquet"):
        assert not out.exists()


def test_without_pyarrow_it_says_how_to_install_it(run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # an import of it raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ParquetUnavailable, match=r"pyarrow is not installed: run scripts/setup.sh"):
        write_dataset([(".", run)], tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.fast
def test_row_groups_hold_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [played("draw", f"hardening/0/{i}", i) for i in range(3)]
    folder = run_of(tmp_path / "run", records)
    write_dataset([(".", folder)], tmp_path / "whole")
    monkeypatch.setattr(dataset, "BATCH_ROWS", 50)
    write_dataset([(".", folder)], tmp_path / "batched")
    assert pq.ParquetFile(tmp_path / "batched" / "decisions.parquet").metadata.num_row_groups > 1
    assert pq.ParquetFile(tmp_path / "whole" / "decisions.parquet").metadata.num_row_groups == 1
    for name in ("games.parquet", "decisions.parquet"):
        assert read(tmp_path / "batched", name) == read(tmp_path / "whole", name)


def test_bench_export_prints_its_numbers_as_json() -> None:
    done = arena("bench", "export", "--games", "3", "--variant", "block")
    assert done.returncode == 0, done.stderr
    numbers = json.loads(done.stdout)
    assert numbers["variant"] == "block" and numbers["games"] == 3 and numbers["decisions"] > 0
    assert numbers["decisions_per_s"] > 0 and numbers["decisions_per_cpu_s"] > 0
    assert numbers["parquet_bytes"] == sum(numbers["parquet_bytes_by_file"].values()) > 0


@pytest.mark.fast
def test_a_huge_index_fits_and_an_overflow_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = played("draw", "hardening/0/0", 0)
    record["index"] = "1000000000000000000"  # int64 in GameRecord: the column is int64 too
    folder = run_of(tmp_path / "run", [record], revealed=False)
    write_dataset([(".", folder)], tmp_path / "out")
    assert [g["game"] for g in read(tmp_path / "out", "games.parquet")] == [10 ** 18]
    real = dataset.schemas

    def narrow() -> tuple:  # as if the game column were int8: the value cannot be written
        games, decisions, beliefs, tiles = real()
        return games.set(games.get_field_index("game"), pa.field("game", pa.int8())), decisions, beliefs, tiles

    monkeypatch.setattr(dataset, "schemas", narrow)
    with pytest.raises(dataset.ExportError, match=r"^cannot write .*: a value does not fit its column: "):
        write_dataset([(".", folder)], tmp_path / "narrow")
    assert not (tmp_path / "narrow").exists()
