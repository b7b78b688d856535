"""``arena simulate``, ``arena bench engine``, ``env``, ``referee-parts`` and ``protocol`` from the command line, as a user
runs them."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from arena.bench.referee_parts import PARTS, bench_referee_parts
from arena.rules import VARIANTS, new_game
from arena.simulate import play_local_match, simulate
from arena.players import builtin_player


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})


def test_simulate_prints_matches_and_a_win_table() -> None:
    out = run_cli("simulate", "--variant", "block", "--players", "3", "--games", "4", "--seed", "7")
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("match ")]
    assert [line.split(":")[0] for line in lines] == [f"match {i} (seed {6 + i})" for i in range(1, 5)]
    rows = {m.group(1): [int(x) for x in m.groups()[1:]]
            for m in re.finditer(r"│ (\w+#\d) +│ +(\d+) │ +(\d+) │ +(\d+) │ +(\d+) │", out.stdout)}
    assert set(rows) == {"greedy#0", "random#1", "greedy#2"}
    for matches, wins, draws, losses in rows.values():
        assert matches == 4 and wins + draws + losses == 4
    assert sum(r[1] for r in rows.values()) + sum(r[2] for r in rows.values()) >= 4


@pytest.mark.fast
def test_simulate_is_reproducible_from_its_seed() -> None:
    game = new_game("draw", 2)
    first = simulate(game, ["greedy", "random"], games=3, seed=11)
    again = simulate(game, ["greedy", "random"], games=3, seed=11)
    assert first == again
    assert [m.seats for m in first.matches] == [("greedy#0", "random#1"), ("random#1", "greedy#0"),
                                                ("greedy#0", "random#1")]


@pytest.mark.fast
def test_greedy_beats_random_at_block() -> None:
    game = new_game("block", 2)
    sim = simulate(game, ["greedy", "random"], games=40, seed=1)
    greedy, rnd = sim.tallies
    assert greedy.wins > rnd.wins


@pytest.mark.fast
def test_a_local_match_keeps_consistent_scores() -> None:
    game = new_game("la_plaza_teams", 4)
    match = play_local_match(game, [builtin_player("random", seed=s) for s in range(4)], seed=5)
    result = match.result()
    assert result.scores == tuple(map(sum, zip(*(r.points for r in match.results))))
    assert max(result.scores) >= 100


def test_bench_engine_prints_json_numbers() -> None:
    out = run_cli("bench", "engine", "--variant", "block", "--players", "2", "--seconds", "0.3")
    assert out.returncode == 0, out.stderr
    numbers = json.loads(out.stdout)
    assert numbers["variant"] == "block" and numbers["players"] == 2
    assert numbers["hands"] > 0 and numbers["moves"] >= numbers["placements"] > numbers["hands"]
    assert numbers["hands_per_s"] > 0 and numbers["moves_per_s"] > 0


def test_bench_env_prints_steps_per_second_against_the_engine() -> None:
    out = run_cli("bench", "env", "--variant", "block", "--players", "3", "--seconds", "0.2")
    assert out.returncode == 0, out.stderr
    numbers = json.loads(out.stdout)
    assert (numbers["variant"], numbers["players"]) == ("block", 3)
    assert list(numbers["frameworks"]) == ["engine", "pettingzoo", "pettingzoo_raw", "openspiel", "openspiel_tensor"]
    for result in numbers["frameworks"].values():
        assert result["matches"] >= 1 and result["steps"] > 0 and result["steps_per_s"] > 0
    assert numbers["frameworks"]["engine"]["of_engine"] == 1.0
    assert numbers["frameworks"]["openspiel"]["chance_per_s"] > 0


def test_bench_env_refuses_an_unknown_framework_in_one_line() -> None:
    out = run_cli("bench", "env", "--frameworks", "engine,rllib")
    assert out.returncode == 2
    assert out.stderr.strip() == ("error: --frameworks: expected some of engine, pettingzoo, pettingzoo_raw, openspiel, "
                                  "openspiel_tensor, got rllib")


def test_bench_protocol_rates_alternating_windows() -> None:
    """Numbers only, no speed asserted (docs/explanation/performance.md quotes real runs): synchronous ping-pong, grpc.aio
    ping-pong and the referee, each with this process's CPU a call; with ``--repeats`` the report keeps every round's
    ratio, and the headline ratios are those of the rates over all the windows."""
    out = subprocess.run([sys.executable, "-m", "arena", "bench", "protocol", "--seconds", "0.3", "--concurrency",
                          "1,3", "--repeats", "2", "--sandbox", "off"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["repeats"] == 2 and report["seconds_each"] == 0.3
    [run] = report["runs"]
    assert run["sandbox"] is False and [r["concurrency"] for r in run["results"]] == [1, 3]
    for row in run["results"]:
        assert sorted(row) == ["aio_ping_pong_calls_per_s", "concurrency", "cpu_ratio_to_aio", "cpu_us_per_aio_call",
                               "cpu_us_per_decision", "cpu_us_per_sync_call", "matches", "ratio_to_aio",
                               "ratio_to_sync", "referee_decisions_per_s", "round_ratios_to_aio",
                               "sync_ping_pong_calls_per_s"]
        assert len(row["round_ratios_to_aio"]) == 2
        assert row["sync_ping_pong_calls_per_s"] > 0 and row["aio_ping_pong_calls_per_s"] > 0
        assert row["cpu_us_per_sync_call"] > 0 and row["cpu_us_per_aio_call"] > 0 and row["cpu_us_per_decision"] > 0
        assert abs(row["ratio_to_aio"] - row["referee_decisions_per_s"] / row["aio_ping_pong_calls_per_s"]) < 0.001
        assert abs(row["ratio_to_sync"] - row["referee_decisions_per_s"] / row["sync_ping_pong_calls_per_s"]) < 0.001
        assert abs(row["cpu_ratio_to_aio"] - row["cpu_us_per_decision"] / row["cpu_us_per_aio_call"]) < 0.01
    refused = run_cli("bench", "protocol", "--repeats", "0")
    assert refused.returncode == 2 and "--repeats: expected an integer >= 1, got 0" in refused.stderr


@pytest.mark.fast
def test_bench_referee_parts_times_the_decisions_the_referee_asks() -> None:
    """Numbers only, no speed asserted: the parts' loop asks exactly the decisions play_match asks of the same matches
    with the same choices, in every variant, and the total is the parts' sum."""
    for variant in VARIANTS:
        result = bench_referee_parts(2, variant)
        assert result["decisions"] == result["play_match_decisions"] > 0, variant
        assert list(result["us_per_decision"]) == list(PARTS)
        assert abs(result["us_per_decision_total"] - sum(result["us_per_decision"].values())) < 0.1
        assert result["cpu_us_per_decision"] >= 0


def test_bench_referee_parts_prints_a_table() -> None:
    out = run_cli("bench", "referee-parts", "--matches", "2", "--variant", "block")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("block, 2 players, ") and lines[1] == "| part | µs per decision |"
    assert [line.split(" | ")[0] for line in lines[3:9]] == [f"| {part}" for part in PARTS]
    assert lines[10].startswith("| the timed loop's CPU (the parts, the timers and the responder) | ")
    refused = run_cli("bench", "referee-parts", "--matches", "0")
    assert refused.returncode == 2 and "--matches: expected an integer >= 1, got 0" in refused.stderr


@pytest.mark.fast
def test_play_and_check_bot_take_a_valid_grace_only(capsys) -> None:
    from arena import cli
    from arena.cli.options import time_control_from

    for command in (["play", "random", "greedy"], ["check-bot", "--", sys.executable, "bot.py"]):
        given = [command[0], "--grace-ms", "20", *command[1:]]
        assert time_control_from(cli.build_parser().parse_args(given)).grace_ms == 20
        assert time_control_from(cli.build_parser().parse_args(command)).grace_ms == 250
        for bad in ("-1", "60001"):
            assert cli.main([*command[:1], "--grace-ms", bad, *command[1:]]) == 2
            assert capsys.readouterr().err == (f"error: --grace-ms must be an integer from 0 to 60000 (milliseconds), "
                                               f"got {bad}\n")
