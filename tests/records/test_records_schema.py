"""The record schema's checks: every honest record of every variant passes the complete check (a game forfeited
before play too); NaN and infinities, booleans where integers go, a fault at a seat the game does not have are
refused; and values shown in a refusal are brief and never markup."""

from __future__ import annotations

import json
import math
from typing import Any, Callable

import pytest

from arena.players.faults import Fault, FaultKind
from arena.records import schema
from arena.records.format import to_json_line
from arena.records.jsonform import game_record_dict, index_of
from arena.records.schema import RecordFormatError, parse_record
from arena.referee import forfeit_before_start
from arena.rules import new_game
from arena.server.events import game_summary, record_message
from arena.tournament.standings import Standings, outcome_of

from support.records import changed, draw_game, played

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("variant, players, options, fails_after", [
    ("draw", 2, None, None), ("draw", 4, {"target": 30}, 3), ("block", 3, None, None), ("la_plaza", 2, None, 2),
    ("la_plaza_teams", 4, None, None), ("la_plaza_teams", 4, None, 1), ("all_fives", 2, {"target": 60}, None),
    ("mexican_train", 3, {"rounds": 2}, None), ("mexican_train", 5, {"rounds": 1}, 4),
])
def test_honest_records_of_every_variant_pass(variant, players, options, fails_after) -> None:
    record = played(variant, f"honest/0/{variant}", 3, players, options, fails_after)
    assert_complete(record)


def assert_complete(record: dict) -> None:
    """The record passes the reader's complete check, and the server's and the standings' readers take it."""
    assert parse_record(to_json_line(record)) == record
    Standings().add(outcome_of(record))
    assert game_summary(record).index == index_of(record) == record_message(record, True).index


def test_a_game_forfeited_before_play_passes() -> None:
    game = new_game("la_plaza_teams")
    faults = [Fault(FaultKind.START_FAILED, seat, 0, "the bot did not start") for seat in (1, 3)]
    record = forfeit_before_start(game, ("a", "b", "a", "b"), faults, seed="x/0/0", match_id="m")
    assert_complete(game_record_dict(record, index=5, tournament="t", deal_key="0/0", rotation=0,
                                     side_of=game.side_of))
    both = forfeit_before_start(game, ("a", "b", "a", "b"), faults + [Fault(FaultKind.START_FAILED, 0, 0, "x")],
                                seed="x/0/0", match_id="m")
    assert_complete(game_record_dict(both, index=6, tournament="t", deal_key="0/0", rotation=0,
                                     side_of=game.side_of))


def first_thought_move(record: dict) -> int:
    """The index in round 1 of the first move with a think time (a decision, not a forced move)."""
    return next(m for m, move in enumerate(record["rounds"][0]["moves"]) if "thinkMs" in move)


def set_think_ms(value: float) -> Callable[[dict], str]:
    def make(record: dict) -> str:
        record["rounds"][0]["moves"][first_thought_move(record)]["thinkMs"] = value
        return json.dumps(record)  # json writes NaN, Infinity and -Infinity, as a hand-edited line may hold them
    return make


def set_top(key: str, value: Any) -> Callable[[dict], str]:
    def make(record: dict) -> str:
        record[key] = value
        return json.dumps(record)
    return make


def fault_of_seat(seat: int) -> Callable[[dict], str]:
    def make(record: dict) -> str:
        record["faults"] = [{"kind": "timeout", "seat": seat, "moveNumber": 3, "message": "no reply within 2250 ms"}]
        return json.dumps(record)
    return make


UINT64 = "expected an integer from 0 to 18446744073709551615 (as a string of digits)"
INT64 = "expected an integer from -9223372036854775808 to 9223372036854775807 (as a string of digits)"
SCHEMA_REFUSALS = {
    "thinkMs NaN": (set_think_ms(math.nan), "rounds[0].moves[{m}].thinkMs: expected a finite number, got nan"),
    "thinkMs Infinity": (set_think_ms(math.inf), "rounds[0].moves[{m}].thinkMs: expected a finite number, got inf"),
    "durationS -Infinity": (set_top("durationS", -math.inf), "durationS: expected a finite number, got -inf"),
    "startedAt NaN": (set_top("startedAt", math.nan), "startedAt: expected a finite number, got nan"),
    "seat true": (changed(lambda r: r["rounds"][0]["moves"][0].update(seat=True)),
                  "rounds[0].moves[0].seat: expected an integer from 0 to 4294967295, got true"),
    "players false": (set_top("players", False), "players: expected an integer from 0 to 4294967295, got false"),
    "index true": (set_top("index", True), f"index: {UINT64}, got true"),
    "scores [true, 1]": (changed(lambda r: r["result"].update(scores=[True, 1])),
                         f"result.scores[0]: {INT64}, got true"),
}


@pytest.mark.parametrize("name", list(SCHEMA_REFUSALS))
def test_non_finite_and_boolean_numbers_are_refused(name: str) -> None:
    """Python's json reads NaN and Infinity, and True is an int to Python: neither is what any field of a record
    can hold (protobuf's JSON mapping writes neither), and a reader given one would compute with it."""
    make, expected = SCHEMA_REFUSALS[name]
    record = draw_game(1)
    expected = expected.format(m=first_thought_move(record))
    with pytest.raises(RecordFormatError) as refused:
        parse_record(make(record))
    assert str(refused.value) == "not a game record: " + expected


@pytest.mark.parametrize("seat, refused", [(2, True), (1, False)])
def test_a_fault_at_a_missing_seat_is_refused(seat: int, refused: bool) -> None:
    line = fault_of_seat(seat)(draw_game(1))
    if not refused:
        assert parse_record(line)["faults"][0]["seat"] == 1
        return
    with pytest.raises(RecordFormatError) as error:
        parse_record(line)
    assert str(error.value) == "not a complete game record: a fault of seat 2, but the game has 2 seats"
    assert parse_record(line, complete=False)["faults"][0]["seat"] == 2, "verification still reads it, to report it"


def test_shown_values_are_brief_and_never_markup() -> None:
    assert schema.shown("x" * 15_000_000).endswith("…'") and len(schema.shown("x" * 15_000_000)) == 43
    assert schema.shown("[/bold]") == "'\\[/bold]'"
    assert schema.shown("\x1b[2J") == "'\\x1b[2J'"
    with pytest.raises(RecordFormatError, match=r"^not a game record: GameRecord has no field '\\\[/x]'$"):
        parse_record('{"recordVersion":1,"[/x]":1}')
