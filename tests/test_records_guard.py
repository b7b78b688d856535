"""Tests that guard the promises of the records where a mutation audit (issue 16) found nothing watching: a record
is fsynced before it counts and before anyone is told of it; a seat's time bank is spent; and ``arena replay
--verify`` (serial and with ``--jobs 2``) reports, with game, round and move, a drawn tile that is not the boneyard's
top, a move recorded as forced when there was a choice, a game recorded twice, a missing round or match result, and a
game whose seed is not derived from the revealed master seed. tests/README.md says which test guards which promise.
"""

from __future__ import annotations

import json
import os
import sys
from itertools import accumulate
from pathlib import Path

import pytest
import trio

from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import FaultKind
from arena.players.process import BotProcess, BotSpec
from arena.records.format import to_json_line
from arena.records.jsonform import game_record_dict, index_of
from arena.records.store import RecordWriter
from arena.referee import TimeControl, play_match
from arena.rules import new_game
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.records import recorded_game, write_run
from support.records import verify_cli

ROOT = Path(__file__).resolve().parents[1]
BAD_BOT = str(ROOT / "tests" / "bots" / "bad_bot.py")
RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")


# --- durability: a game counts, and is announced, only once its line is on disk -----------------------------------


def test_write_fsyncs_the_record_file_after_its_line_is_written(tmp_path: Path, monkeypatch) -> None:
    """Guards: the fsync in RecordWriter.write, on the record file's descriptor, after the line reached the file."""
    path = tmp_path / "games.jsonl"
    synced: list[tuple[int, int, bytes]] = []  # (device, inode) of each descriptor fsynced, and the file's bytes then
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino, path.read_bytes()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writer = RecordWriter(path)
    try:
        identity = (path.stat().st_dev, path.stat().st_ino)
        writer.write({"recordVersion": 1, "index": "1", "seats": ["a", "b"]})
        first = b'{"recordVersion":1,"index":"1","seats":["a","b"]}\n'
        assert synced == [(*identity, first)]  # before write returned, the line already in the file
        writer.write({"recordVersion": 1, "index": "2", "seats": ["é"]})
        second = '{"recordVersion":1,"index":"2","seats":["é"]}\n'.encode()
        assert synced == [(*identity, first), (*identity, first + second)]
    finally:
        writer.close()
    assert path.read_bytes() == first + second


async def test_on_game_sees_its_line_already_fsynced_in_games_jsonl(tmp_path: Path, monkeypatch) -> None:
    """Guards: the runner tells ``on_game`` (standings, watchers, the server) of a game only after its line is
    written and fsynced. A real tournament with real bot processes."""
    run = tmp_path / "run"
    records = run / "games.jsonl"
    synced: list[tuple[int, int, int]] = []  # (device, inode, size) of each file fsynced
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino, info.st_size))

    monkeypatch.setattr(os, "fsync", fsync)
    told: list[tuple[int, int, bool]] = []  # (game, how many lines of the file are its record, fsynced through it)

    def on_game(message: dict) -> None:
        info = records.stat()
        lines = records.read_bytes().splitlines(keepends=True)
        ends = [end for line, end in zip(lines, accumulate(map(len, lines))) if json.loads(line) == message]
        durable = len(ends) == 1 and any((device, inode) == (info.st_dev, info.st_ino) and size >= ends[0]
                                         for device, inode, size in synced)
        told.append((index_of(message), len(ends), durable))

    table = {"name": "durable", "variant": "block", "players": 2, "games": 2, "duplicate": True, "seed": "guard",
             "concurrency": 2, "options": {"target": 1},
             "bots": [{"name": name, "command": [sys.executable, RANDOM_BOT]} for name in ("a", "b")]}
    summary = await run_tournament(spec_from_dict(table), "# test\n", run, on_game=on_game)
    assert summary.played_now == 4
    assert sorted(told) == [(0, 1, True), (1, 1, True), (2, 1, True), (3, 1, True)]


# --- time: a bank is spent by slow decisions, and a timeout follows once it is gone ------------------------------


def told_times(log: Path) -> list[tuple[int, int, int]]:
    """(move_ms, bank_ms, deadline_ms) of every decision request the sleepy bot received, in order."""
    times = []
    for line in log.read_text().splitlines():
        if line.startswith("MARK time "):
            _, _, _, move_ms, _, bank_ms, _, deadline_ms = line.split()
            times.append((int(move_ms), int(bank_ms), int(deadline_ms)))
    return times


async def test_a_bot_sleeping_past_its_move_time_spends_its_bank_then_times_out(tmp_path: Path) -> None:
    """Guards: the referee spends a seat's bank by the time it takes beyond move_ms, tells the bot what is left
    (``time.bank_ms`` of each ActRequest), and gives it only move_ms + bank + grace, the deadline it tells the bot
    (``time.deadline_ms``). Each decision of the bot takes
    600 ms against a move time of 200 ms, so each costs its bank at least 400 ms: 750, then at most 350 (still in
    time: 600 ms < 200 + 350 + 250), then nothing, and it times out at 200 + 0 + 250 = 450 ms."""
    spec = BotSpec(name="sleepy", command=(sys.executable, BAD_BOT, "--mode", "sleepy", "--sleep-ms", "600"))
    process = BotProcess(spec, tmp_path, startup_s=15)
    time_control = TimeControl(move_ms=200, bank_ms=750, grace_ms=250)
    try:
        bot = await process.ensure_running()
        with trio.fail_after(60):
            record = await play_match(new_game("draw", 2, {"target": 1}), [bot, LocalPlayer(RandomPlayer(1))],
                                      seed=5, match_id="bank", time_control=time_control)
    finally:
        await process.stop()
    times = told_times(process.log_path)
    assert [move_ms for move_ms, _, _ in times] == [200] * len(times)
    banks = [bank for _, bank, _ in times]
    # Each request tells the real deadline: the move time, the bank left and the grace (450 for the last).
    assert [deadline for _, _, deadline in times] == [200 + bank + 250 for bank in banks]
    assert len(banks) == 3 and banks[0] == 750 and 0 < banks[1] <= 750 - 400 and banks[2] == 0, banks
    assert [(f.kind, f.seat, f.message) for f in record.faults] == [(FaultKind.TIMEOUT, 0, "no reply within 450 ms")]
    answered = [m for r in record.rounds for m in r.moves if m.seat == 0 and not m.forced]
    assert len(answered) == 2 and all(m.think_ms >= 600 for m in answered)


# --- verification: every tampering reported with game, round and move, serial and parallel -----------------------


def first_move(record: dict, round_index: int, wanted) -> int:
    """The index of the first move of the round for which ``wanted(move)`` holds."""
    return next(m for m, move in enumerate(record["rounds"][round_index]["moves"]) if wanted(move))


def in_game(record: dict, round_index: int, m: int) -> int:
    """The number people see for move ``m`` of a round: moves are numbered through the whole game, from 1."""
    return sum(len(rnd.get("moves", ())) for rnd in record["rounds"][:round_index]) + m + 1


def draw_not_the_top(records: list[dict]) -> list[str]:
    game = records[2]
    m = first_move(game, 1, lambda move: move["action"]["kind"] == "ACTION_KIND_DRAW")
    action = game["rounds"][1]["moves"][m]["action"]
    other = {"low": 6, "high": 6} if action["tile"] in ({"low": 0, "high": 0}, {}) else {"low": 0, "high": 0}
    action["tile"] = other
    name = f"[{other['low']}|{other['high']}]"
    return [f"game 2, round 2, move {in_game(game, 1, m)}: the recorded draw (draw {name}) is not the boneyard's "
            f"top tile"]


def forced_with_a_choice(records: list[dict]) -> list[str]:
    game = records[2]
    # Every move recorded as not forced was a decision: the referee asked because there was more than one action.
    m = first_move(game, 2, lambda move: not move.get("forced", False) and move.get("seat", 0) == 1)
    game["rounds"][2]["moves"][m]["forced"] = True
    return [f"game 2, round 3, move {in_game(game, 2, m)}: recorded as forced, but there was a choice"]


def recorded_twice(records: list[dict]) -> list[str]:
    records.append(json.loads(json.dumps(records[2])))  # the last line: another chunk than game 2 under --jobs 2
    return ["game 2: recorded twice"]


def last_round_result_deleted(records: list[dict]) -> list[str]:
    rounds = records[2]["rounds"]
    del rounds[-1]["result"]
    return [f"game 2, round {len(rounds)}: the round is over but its result is not recorded"]


def first_round_result_deleted(records: list[dict]) -> list[str]:
    del records[2]["rounds"][0]["result"]
    return ["game 2, round 1: the round is over but its result is not recorded"]


def match_result_deleted(records: list[dict]) -> list[str]:
    del records[2]["result"]
    return ["game 2: the match result is not recorded"]


TAMPERING = [draw_not_the_top, forced_with_a_choice, recorded_twice, last_round_result_deleted,
             first_round_result_deleted, match_result_deleted]


def rewrite(run: Path, change) -> list[str]:
    path = run / "games.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    expected = change(records)
    path.write_text("".join(to_json_line(r) + "\n" for r in records))
    return expected


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("change", TAMPERING, ids=lambda change: change.__name__)
async def test_verify_reports_each_tampering_with_game_round_and_move(change, jobs: int, tmp_path: Path, capsys,
                                                                      monkeypatch) -> None:
    """Guards: the boneyard-top check of a draw, the forced check, the recorded-twice check (serial and parallel),
    and that every finished round and the match have a result."""
    run = await write_run(tmp_path / "run", games=6)
    expected = rewrite(run, change)
    status, mismatches, summary, went_parallel = verify_cli(run, jobs, capsys, monkeypatch)
    assert went_parallel == (jobs > 1)
    assert mismatches == [f"MISMATCH {text}" for text in expected]
    assert status == 1
    games = 7 if change is recorded_twice else 6
    assert f"verified {games} games" in summary and "1 mismatches" in summary


@pytest.mark.parametrize("jobs", [1, 2])
async def test_verify_reports_a_consistent_game_from_a_foreign_seed(jobs: int, tmp_path: Path, capsys,
                                                                    monkeypatch) -> None:
    """Guards: the master seed reaches every verification, parallel ones included. Game 2 is replaced by a real,
    self-consistent game dealt from a seed that is not ``<master>/<deal key>``: only the seed check can see it."""
    run = await write_run(tmp_path / "run", games=6)
    game, intruder = await recorded_game("draw", "intruder/0/2", 2)
    foreign = game_record_dict(intruder, index=2, tournament="t", deal_key="0/2", rotation=0, side_of=game.side_of)

    def replace(records: list[dict]) -> list[str]:
        records[2] = foreign
        return ["game 2: seed 'intruder/0/2' is not derived from the revealed master seed and deal '0/2'"]

    expected = rewrite(run, replace)
    status, mismatches, summary, went_parallel = verify_cli(run, jobs, capsys, monkeypatch)
    assert went_parallel == (jobs > 1)
    assert mismatches == [f"MISMATCH {text}" for text in expected]
    assert status == 1
    assert "verified 6 games" in summary and "deals checked against the revealed master seed" in summary


@pytest.mark.parametrize("jobs", [1, 2])
async def test_honest_records_with_a_game_ended_by_a_fault_verify_clean(jobs: int, tmp_path: Path, capsys,
                                                                        monkeypatch) -> None:
    """The results required are those of finished rounds: a round cut short by a fault has none, and is clean."""
    run = await write_run(tmp_path / "run", games=4)
    game = new_game("draw", 2)

    class Crashing:
        name = "crashing"
        decisions = 0

        def __call__(self, observation):
            self.decisions += 1
            if self.decisions > 5:
                raise RuntimeError("the policy blew up")
            return observation.legal_actions[0]

    record = await play_match(game, [LocalPlayer(Crashing()), LocalPlayer(RandomPlayer(1))], seed="master/0/4",
                              match_id="fault")
    assert [f.kind for f in record.faults] == [FaultKind.CRASHED] and record.rounds[-1].result is None
    with open(run / "games.jsonl", "a") as f:
        f.write(to_json_line(game_record_dict(record, index=4, tournament="t", deal_key="0/4", rotation=0,
                                              side_of=game.side_of)) + "\n")
    status, mismatches, summary, went_parallel = verify_cli(run, jobs, capsys, monkeypatch)
    assert (status, mismatches, went_parallel) == (0, [], jobs > 1)
    assert "verified 5 games" in summary and ": OK;" in summary
