"""Records: the direct JSON form equals protobuf's JSON mapping for every variant, and verification catches every
kind of tampering while accepting honest records."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from rich.console import Console

from arena.players.faults import Fault, FaultKind
from arena.records.format import full_tiles, game_record_pb, to_json_line
from arena.records.jsonform import action_from, deal_from, game_record_dict
from arena.records.replay import RecordError, find_game, locate, positions, verify_run
from arena.records.store import ReadReport, drop_torn_tail, iter_records, to_message
from arena.records.terminal import show_game
from arena.rules import VARIANTS
from support.records import draw_game, recorded_game, run_of, write_run


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
async def test_the_direct_json_is_protobufs_json_mapping(variant: str) -> None:
    for seed in ("a/0/0", "b/0/1"):
        game, record = await recorded_game(variant, seed)
        kwargs = dict(index=7, tournament="t", deal_key=seed.split("/", 1)[1], rotation=1, side_of=game.side_of)
        direct = game_record_dict(record, **kwargs)
        assert direct == full_tiles(json_format.MessageToDict(game_record_pb(record, **kwargs)))
        assert to_message(direct) == game_record_pb(record, **kwargs)


@pytest.mark.fast
async def test_faults_and_index_zero_map_the_same() -> None:
    game, record = await recorded_game("draw", "f/0/0")
    record.faults.append(Fault(FaultKind.TIMEOUT, 0, 0, "no reply within 250 ms"))
    kwargs = dict(index=0, tournament="t", deal_key="0/0", rotation=0, side_of=game.side_of)
    assert game_record_dict(record, **kwargs) == full_tiles(json_format.MessageToDict(game_record_pb(record, **kwargs)))


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.fast
async def test_honest_records_verify(variant: str, tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", variant, games=3)
    report = verify_run(run)
    assert report.games == 3 and report.moves > 0 and report.seed_checked
    assert [str(m) for m in report.mismatches] == []


def tamper(run: Path, index: int, change) -> None:
    path = run / "games.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(records[index])
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def first_place(record: dict) -> dict:
    return next(m for m in record["rounds"][0]["moves"] if m["action"]["kind"] == "ACTION_KIND_PLACE")


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda r: first_place(r)["action"].update(tile={"low": 6, "high": 6}) if first_place(r)["action"].get(
            "tile") != {"low": 6, "high": 6} else first_place(r)["action"].update(tile={"low": 0, "high": 0}),
         "was not legal"),
        (lambda r: r["rounds"][0]["moves"][1].update(seat=1 - r["rounds"][0]["moves"][1].get("seat", 0)),
         "it was seat"),
        (lambda r: r["rounds"][0]["result"].update(points=["999", "0"]), "the round result differs from the rules"),
        (lambda r: r["result"].update(scores=["1", "2"]), "the match result differs from the rules"),
        (lambda r: r.update(sideOfSeat=[1, 0]), "expected 2 seats on sides [0, 1]"),
        (lambda r: r["rounds"][0]["deal"]["hands"][0]["tiles"].reverse(), "the deal is not the one the rules deal"),
        (lambda r: r.update(seed="other/0/1"), "not derived from the revealed master seed"),
        (lambda r: r["result"].update(winner=1 - r["result"].get("winner", 0)), "the match result differs"),
    ],
)
@pytest.mark.fast
async def test_tampering_is_caught_with_game_round_and_move(change, expected, tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run")
    tamper(run, 2, change)
    report = verify_run(run)
    problems = [str(m) for m in report.mismatches]
    assert any(expected in p for p in problems), problems
    assert all(p.startswith("game 2") for p in problems), problems


@pytest.mark.fast
async def test_a_changed_commitment_is_caught(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run")
    (run / "commitment.txt").write_text("0" * 64 + "\n")
    assert any("do not match the published commitment" in str(m) for m in verify_run(run).mismatches)


@pytest.mark.fast
async def test_corrupt_lines_are_reported_the_rest_verified(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", games=4)
    path = run / "games.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]  # a line cut in the middle, then more games
    lines.insert(2, '{"recordVersion": 99, "index": "9"}')
    path.write_text("\n".join(lines) + "\n" + '{"recordVersion":1,"ind')
    report = verify_run(run)
    problems = [str(m) for m in report.mismatches]
    assert report.games == 3
    assert any("line 2: not JSON" in p for p in problems)
    assert any("line 3: record version 99; this arena reads version 1" in p for p in problems)
    assert any("the last line is cut short" in p for p in problems)
    assert drop_torn_tail(path) == len('{"recordVersion":1,"ind')


@pytest.mark.fast
def test_missing_and_empty_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no such run folder or record file"):
        locate(tmp_path / "nope")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RecordError, match="the record file is empty"):
        locate(tmp_path / "empty.jsonl")
    with pytest.raises(RecordError, match="no games.jsonl in this folder"):
        locate(tmp_path)


@pytest.mark.fast
async def test_a_missing_game_id_is_a_clear_error(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", games=2)
    with pytest.raises(RecordError, match=r"no game 5 \(the file holds 2 readable games\)"):
        find_game(locate(run), 5)


@pytest.mark.fast
async def test_positions_replay_to_the_recorded_result(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", "la_plaza_teams", games=1)
    record = find_game(locate(run), 0)
    last = None
    count = 0
    for position in positions(record):
        last = position
        count += position.move is not None
    assert count == sum(len(r.get("moves", ())) for r in record["rounds"])
    assert last is not None and last.match.is_over()
    assert [str(s) for s in last.match.result().scores] == record["result"]["scores"]


@pytest.mark.fast
def test_actions_and_deals_read_back() -> None:
    assert str(action_from({"kind": "ACTION_KIND_PLACE", "tile": {"low": 3, "high": 4},
                            "target": {"low": 4, "high": 4}, "point": "POINT_LINE_B"})) == "[3|4] on [4|4] line B"
    deal = deal_from({"hands": [{"tiles": [{}]}, {}], "leader": 1})
    assert deal.hands == ((0,), ()) and deal.leader == 1


@pytest.mark.fast
async def test_records_read_tolerates_blank_lines(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", games=2)
    path = run / "games.jsonl"
    path.write_text(path.read_text().replace("\n", "\n\n", 1))
    report = ReadReport()
    assert len(list(iter_records(path, report))) == 2 and report.bad_lines == []


async def test_parallel_verification_matches_serial(tmp_path: Path) -> None:
    run = await write_run(tmp_path / "run", games=8)
    tamper(run, 5, lambda r: r["result"].update(scores=["1", "2"]))
    serial = verify_run(run, jobs=1)
    from arena.records import replay

    parallel = replay._verify_parallel(locate(run), 2)
    assert [str(m) for m in serial.mismatches] == [str(m) for m in parallel.mismatches]
    assert (serial.games, serial.moves) == (parallel.games, parallel.moves)


# --- every field of a tile ------------------------------------------------------------------------------


def zeros_left_out(data: Any) -> Any:
    """A record as older arenas wrote it: a tile's zero halves left out (``[0|0]`` as ``{}``)."""
    if isinstance(data, list):
        return [zeros_left_out(item) for item in data]
    if not isinstance(data, dict):
        return data
    if set(data) == {"low", "high"}:
        return {k: v for k, v in data.items() if v}
    return {k: zeros_left_out(v) for k, v in data.items()}


@pytest.mark.fast
def test_tiles_are_written_whole_and_the_old_form_reads(tmp_path: Path) -> None:
    """Guards: point 11, ``[0|0]`` is written ``{"low":0,"high":0}`` (never ``{}``); records written the old way
    read, replay and verify as before."""
    records = [draw_game(i) for i in range(3)]
    lines = [to_json_line(r) for r in records]
    assert all('{"low":0,"high":0}' in line and '{"high":' not in line for line in lines)
    assert all(json.loads(line) == full_tiles(json.loads(line)) for line in lines)  # no tile field left out
    old = [zeros_left_out(r) for r in records]
    assert "{}" in "".join(to_json_line(r) for r in old)
    run = run_of(tmp_path / "old", old)
    report = verify_run(run)
    assert [str(m) for m in report.mismatches] == [] and report.games == 3
    assert [r for r in iter_records(run / "games.jsonl")] == old
    text = io.StringIO()
    show_game(find_game(locate(run), 1), console=Console(file=text, width=120))
    new_text = io.StringIO()
    show_game(records[1], console=Console(file=new_text, width=120))
    assert text.getvalue() == new_text.getvalue()
