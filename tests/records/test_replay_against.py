"""``arena replay --against``: a recorded game replayed to real bot processes, decision by decision, with the
recorded actions carried forward; agreement with the same policy, divergences from a random one, faults that do not
stop the replay, and a bot that cannot start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio
from rich.console import Console

from arena.players import GreedyPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import FaultKind
from arena.records.against import print_against, replay_against, same_choice
from arena.records.format import to_json_line
from arena.records.jsonform import action_from, game_record_dict
from arena.referee import play_match
from arena.rules import DRAW, Kind, new_game
from arena.rules.actions import Action
from support.paths import ROOT

GREEDY = [sys.executable, str(ROOT / "bots/python/greedy_bot.py")]
RANDOM = [sys.executable, str(ROOT / "bots/python/random_bot.py")]
BAD = [sys.executable, str(ROOT / "tests/bots/bad_bot.py")]


def greedy_record(variant: str = "draw", seed: str = "s1", **options) -> dict:
    """A short two-player line game between built-in greedy players, as a record dict."""
    game = new_game(variant, 2, options or {"target": 20})

    async def play():
        return await play_match(game, [LocalPlayer(GreedyPlayer()) for _ in range(game.players)], seed=seed,
                                match_id="m-against")

    record = trio.run(play)
    return game_record_dict(record, index=0, tournament="t", deal_key="0/0", rotation=0, side_of=game.side_of)


def decisions_of(record: dict, seat: int | None = None) -> list[tuple[int, int, dict]]:
    """(move number as the bot is sent it, seat, move) of every asked decision."""
    found, number = [], 0
    for rnd in record["rounds"]:
        for move in rnd.get("moves", ()):
            if not move.get("forced") and (seat is None or move.get("seat", 0) == seat):
                found.append((number, move.get("seat", 0), move))
            number += 1
    return found


def printed(report) -> str:
    console = Console(width=200, record=True, file=open("/dev/null", "w"))
    print_against(report, console)
    return console.export_text()


def test_the_greedy_bot_agrees_with_the_builtin_greedy(tmp_path: Path) -> None:
    record = greedy_record()
    expected = decisions_of(record)
    assert {seat for _, seat, _ in expected} == {0, 1} and any(m.get("forced") for r in record["rounds"]
                                                               for m in r.get("moves", ()))
    report = replay_against(record, GREEDY, startup_s=20, move_ms=5000, log_dir=tmp_path)
    assert report.error is None and report.ok
    assert report.seats == (0, 1)  # default: every seat that made decisions
    assert report.decisions == len(expected)  # forced moves are not asked
    assert report.agreements == report.decisions and report.agreement_rate == 1.0
    assert report.divergences == [] and report.first_divergence is None
    assert {s: t.decisions for s, t in report.by_seat.items()} == {
        s: sum(1 for _, seat, _ in expected if seat == s) for s in (0, 1)}
    assert sorted(p.name for p in tmp_path.glob("*.log")) == ["seat0.log", "seat1.log"]  # one process per seat
    text = printed(report)
    assert "100.0%" in text and "no divergence" in text


def test_each_divergence_of_the_random_bot_is_reported(tmp_path: Path) -> None:
    record = greedy_record()
    asked = {number: (seat, move) for number, seat, move in decisions_of(record, seat=1)}
    report = replay_against(record, RANDOM, seat=1, startup_s=20, move_ms=5000, log_dir=tmp_path)
    assert report.ok and report.seats == (1,)
    assert report.decisions == len(asked) and report.agreements < report.decisions
    assert len(report.divergences) == report.decisions - report.agreements and report.faults == 0
    for divergence in report.divergences:
        seat, move = asked[divergence.move_number]  # a real decision of seat 1, with its recorded action
        assert divergence.seat == seat == 1
        assert divergence.recorded == action_from(move["action"])
        assert divergence.chosen is not None and not same_choice(divergence.chosen, divergence.recorded)
    first = report.first_divergence
    assert first is report.divergences[0] and first.move_number == min(d.move_number for d in report.divergences)
    text = printed(report)
    # shown from 1, as every view numbers moves; the report keeps the number the bot was sent (from 0)
    assert f"first divergence at move {first.move_number + 1} (round {first.round + 1}, seat 1)" in text
    assert f"DIVERGENCE move {first.move_number + 1} (round {first.round + 1}), seat 1: recorded " in text
    assert text.count("DIVERGENCE move ") == len(report.divergences)
    assert f"recorded {first.recorded}, bot chose {first.chosen}" in text


def test_a_hanging_bot_times_out_and_the_replay_ends(tmp_path: Path) -> None:
    record = greedy_record()
    expected = decisions_of(record, seat=0)
    report = replay_against(record, [*BAD, "--mode", "hang"], seat=0, startup_s=20, move_ms=50, log_dir=tmp_path)
    assert report.error is None and not report.ok  # it started, but faulted
    assert report.decisions == len(expected) and report.agreements == 0
    assert [d.fault for d in report.divergences] == [FaultKind.TIMEOUT] * len(expected)
    assert [d.move_number for d in report.divergences] == [number for number, _, _ in expected]
    assert all("no reply within 300 ms" in d.message for d in report.divergences)
    text = printed(report)
    assert text.count("FAULT move ") == len(expected) and "timeout: no reply within 300 ms" in text


def test_a_crashing_bot_is_restarted_mid_replay(tmp_path: Path) -> None:
    record = greedy_record()
    expected = decisions_of(record, seat=0)
    report = replay_against(record, [*BAD, "--mode", "exit_mid"], seat=0, startup_s=20, move_ms=5000,
                            log_dir=tmp_path)
    assert report.error is None and not report.ok
    assert report.decisions == len(expected) and report.restarts >= 1
    assert report.faults >= 1 and all(d.fault is FaultKind.CRASHED for d in report.divergences if d.fault)
    assert report.agreements > 0  # the restarted bot answers again ("good" play: the first legal action)


@pytest.mark.fast
def test_draws_are_compared_by_kind() -> None:
    recorded_draw = Action(Kind.DRAW, 5)
    assert same_choice(DRAW, recorded_draw) and not same_choice(Action(Kind.PASS), recorded_draw)


def arena(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def write_games(path: Path) -> Path:
    path.write_text(to_json_line(greedy_record()) + "\n")
    return path


def test_the_cli_replays_against_a_bot_and_exits_0(tmp_path: Path) -> None:
    games = write_games(tmp_path / "games.jsonl")
    out = arena("replay", str(games), "--game", "0", "--seat", "0", "--against", *GREEDY)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "agreements (100.0%)" in out.stdout and "no divergence" in out.stdout


def test_the_cli_exits_1_if_the_bot_cannot_start(tmp_path: Path) -> None:
    games = write_games(tmp_path / "games.jsonl")
    out = arena("replay", str(games), "--game", "0", "--against", "/nonexistent")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "error: the bot did not start: cannot run '/nonexistent'" in out.stdout
    assert "Traceback" not in out.stderr


def test_the_cli_takes_the_bot_after_a_double_dash(tmp_path: Path) -> None:
    games = write_games(tmp_path / "games.jsonl")
    out = arena("replay", str(games), "--game", "0", "--against", "--", "/nonexistent")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "error: the bot did not start: cannot run '/nonexistent'" in out.stdout
