"""``arena replay --verify`` (serial and with ``--jobs 2``): every tampering reported with game, round and move (a drawn
tile that is not the boneyard's top, a move recorded as forced when there was a choice, a game recorded twice, a
missing round or match result, a game whose seed is not derived from the revealed master seed), honest records
with a fault verify clean, and a record whose seed is withheld (fetched while its tournament runs) verified for
everything but its shuffle. tests/README.md says which test guards which promise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import FaultKind
from arena.records.format import to_json_line
from arena.records.jsonform import game_record_dict
from arena.referee import play_match
from arena.rules import new_game

from support.records import recorded_game, verify_cli, write_run


# --- every tampering reported with game, round and move, serial and parallel ---------------------------------


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
