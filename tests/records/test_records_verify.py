"""``arena replay --verify`` (serial and with ``--jobs 2``): every tampering reported with game, round and move (a drawn
tile that is not the boneyard's top, a move recorded as forced when there was a choice, a game recorded twice, a
missing round or match result, a game whose seed is not derived from the revealed master seed), honest records
with a fault verify clean, and a record whose seed is withheld (fetched while its tournament runs) verified for
everything but its shuffle. tests/README.md says which test guards which promise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format

from arena import cli
from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import FaultKind
from arena.records import replay
from arena.records.format import to_json_line
from arena.records.jsonform import game_record_dict
from arena.records.replay import verify_run
from arena.referee import play_match
from arena.rules import new_game
from arena.server.events import record_message

from support.records import MASTER, draw_game, played, recorded_game, verify_cli, write_run


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
async def test_each_tampering_is_reported_by_game_round_and_move(change, jobs: int, tmp_path: Path, capsys,
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
async def test_a_game_of_a_foreign_seed_is_reported(jobs: int, tmp_path: Path, capsys, monkeypatch) -> None:
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
async def test_records_with_a_faulted_game_verify_clean(jobs: int, tmp_path: Path, capsys, monkeypatch) -> None:
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


# --- a record whose seed is withheld ----------------------------------------------------------------------


def fetched_while_running(record: dict) -> dict:
    """What ``arena fetch`` prints for a game of a running tournament: the server's message, seed withheld."""
    return json_format.MessageToDict(record_message(record, withhold_seed=True))


@pytest.mark.fast
def test_a_running_game_verifies_all_but_its_shuffle(tmp_path: Path, capsys) -> None:
    """Guards: point 3, a record without its seed is not "the deal is not the one the rules deal from the game's
    seed": the note says the seed is not revealed yet, and everything else is verified."""
    records = [fetched_while_running(draw_game(i)) for i in range(2)]
    assert all("seed" not in r for r in records)
    path = tmp_path / "fetched.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli.main(["replay", str(path), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "the deal is not the one" not in out and "MISMATCH" not in out
    assert out.startswith("note: 2 games carry no seed: it is not revealed until the tournament ends (a game fetched "
                          "while its tournament runs), so the shuffle of their deals could not be checked; everything "
                          "else was. Fetch them again once the tournament has finished to check the deals too.\n")
    said = " ".join(out.split())  # the console wraps a line with a long path in it
    assert f"verified 2 games, {verify_run(path).moves} moves in {path}: OK" in said


def second_round_leader(record: dict) -> None:
    deal = record["rounds"][1]["deal"]
    deal["leader"] = 1 - deal.get("leader", 0)


def first_move_seat(record: dict) -> None:
    move = record["rounds"][1]["moves"][0]
    move["seat"] = 1 - move.get("seat", 0)


def a_tile_swapped_for_one_of_the_boneyard(record: dict) -> None:
    deal = record["rounds"][0]["deal"]
    deal["hands"][0]["tiles"][0], deal["boneyard"][-1] = deal["boneyard"][-1], deal["hands"][0]["tiles"][0]


@pytest.mark.parametrize("tamper, expected", [
    (second_round_leader, "game 1, round 2: the deal is not one the rules deal: seat {0} leads; the rules give seat "
                          "{1}"),
    (lambda r: r["rounds"][0]["deal"]["hands"][0]["tiles"].pop(),
     "game 1, round 1: the deal is not one the rules deal: the hands hold 6, 7 tiles; the rules deal 7, 7"),
    (first_move_seat, "game 1, round 2, move {2}: seat {3} moved, but it was seat {4}'s turn"),
    (lambda r: r["rounds"][0]["result"].update(points=["999", "0"]), "game 1, round 1: the round result differs"),
])
@pytest.mark.fast
def test_a_seedless_record_is_still_verified(tamper, expected: str, tmp_path: Path) -> None:
    record = fetched_while_running(draw_game(1))
    assert len(record["rounds"]) >= 2
    tamper(record)
    moves_before = len(record["rounds"][0]["moves"])
    leader = record["rounds"][1]["deal"].get("leader", 0)
    seat = record["rounds"][1]["moves"][0].get("seat", 0)
    expected = expected.format(leader, 1 - leader, moves_before + 1, seat, 1 - seat)
    path = tmp_path / "fetched.jsonl"
    path.write_text(json.dumps(record) + "\n")
    report = verify_run(path)
    assert report.unseeded == 1 and len(report.mismatches) == 1
    assert str(report.mismatches[0]).startswith(expected), report.mismatches


def another_tile_leads(record: dict) -> None:
    deal = record["rounds"][0]["deal"]
    hand = deal["hands"][deal.get("leader", 0)]["tiles"]
    deal["leadTile"] = next(tile for tile in hand if tile != {"low": 6, "high": 6})


def no_tile_must_lead(record: dict) -> None:
    del record["rounds"][0]["deal"]["leadTile"]


@pytest.mark.parametrize("tamper", [another_tile_leads, no_tile_must_lead])
@pytest.mark.fast
def test_a_seedless_record_is_checked_for_the_lead_tile(tamper, tmp_path: Path) -> None:
    """La Plaza for teams: whoever holds [6|6] leads it, whatever the seed. A record without its seed whose first
    deal names another tile to lead (one its leader holds, so the deal is still a deal), or none at all (under which
    the recorded lead of [6|6] is legal too), is not what the rules deal."""
    record = fetched_while_running(played("la_plaza_teams", f"{MASTER}/0/3", 3))
    assert "seed" not in record and record["rounds"][0]["deal"]["leadTile"] == {"low": 6, "high": 6}
    tamper(record)
    path = tmp_path / "fetched.jsonl"
    path.write_text(json.dumps(record) + "\n")
    report = verify_run(path)
    assert report.unseeded == 1
    assert [str(m) for m in report.mismatches] == [
        "game 3, round 1: the deal is not one the rules deal: the engine or the tile to lead is not the one the rules "
        "give"]


@pytest.mark.fast
def test_a_swapped_tile_needs_the_seed_to_be_seen() -> None:
    """What a seedless record cannot show (said in the note): a deal that is a deal, but not the seed's."""
    record = fetched_while_running(draw_game(1))
    a_tile_swapped_for_one_of_the_boneyard(record)
    seeded = dict(record, seed=f"{MASTER}/0/1")
    assert any("the deal is not the one the rules deal" in str(m) for m in replay.verify_game(seeded))
