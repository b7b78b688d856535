"""Beliefs sent by real bot processes, over real gRPC and over stdio (``tests/bots/belief_bot.py``): an acceptable
belief is recorded exactly, in thousandths, beside its move; every kind of refused belief is a fault of the belief
alone (``beliefFaults``), with its exact message, while the move is played and the game goes on to its end."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import trio
from support.paths import ROOT

from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.client import BotClient
from arena.players.dial_in import DialInBot, DialInConnection
from arena.players.process import BotProcess, BotSpec
from arena.players.relay import ProcessBot, Relay
from arena.records.jsonform import game_record_dict
from arena.records.replay import steps, verify_game
from arena.referee import MatchRecord, TimeControl, play_match
from arena.rules import new_game
from arena.rules.tiles import HIGH, LOW, NAMES, set_size

BELIEF_BOT = str(ROOT / "tests" / "bots" / "belief_bot.py")
PREFIX = "sent a belief the protocol does not allow: "
SUFFIX = "; the move stands"


def belief_bot(mode: str, tmp_path: Path, protocol: str = "grpc") -> BotProcess:
    command = (sys.executable, BELIEF_BOT, "--mode", mode, *(("--stdio",) if protocol == "stdio" else ()))
    return BotProcess(BotSpec(name=f"belief-{mode}", command=command, protocol=protocol), tmp_path, startup_s=15)


async def played(mode: str, tmp_path: Path, protocol: str = "grpc") -> dict:
    """A Draw game of the belief bot (seat 0, in ``mode``) against the built-in random player, as its record."""
    process = belief_bot(mode, tmp_path, protocol)
    try:
        return await game_of(await process.ensure_running(), mode)
    finally:
        await process.stop()


async def game_of(bot: BotClient, mode: str) -> dict:
    """The record of a Draw game of ``bot`` (seat 0) against the built-in random player."""
    game = new_game("draw", 2)
    record: MatchRecord = await play_match(game, [bot, LocalPlayer(RandomPlayer(1))], seed=11,
                                           match_id=f"belief-{mode}", time_control=TimeControl(move_ms=3000))
    return game_record_dict(record, index=0, tournament="beliefs", deal_key="0", rotation=0, side_of=game.side_of)


class Asked(NamedTuple):
    """A move seat 0 was asked for: its number, the move as recorded, and, just before it, what seat 0 could not
    see (seat 1's hand and the boneyard, from the real round, in tile order) and its own hand."""

    number: int
    move: dict
    hidden: list[int]
    hand: tuple[int, ...]


def decisions_of_seat_0(record: dict) -> list[Asked]:
    return [Asked(step.number, step.recorded, sorted([*step.match.round.hand(1), *step.match.round.boneyard]),
                  step.match.round.hand(0))
            for step in steps(record)
            if step.kind == "move" and step.recorded is not None and step.recorded.get("seat", 0) == 0
            and not step.recorded.get("forced", False)]


def assert_played_to_the_end(record: dict) -> None:
    assert "faults" not in record and not record["result"].get("byFault")
    assert not verify_game(record)


async def test_an_acceptable_belief_is_recorded_exactly_beside_its_move(tmp_path: Path) -> None:
    record = await played("valid", tmp_path)
    assert_played_to_the_end(record)
    assert "beliefFaults" not in record
    decisions = decisions_of_seat_0(record)
    assert len(decisions) >= 3
    for asked in decisions:
        assert asked.move["belief"] == {
            "tiles": [{"low": LOW[t], "high": HIGH[t]} for t in asked.hidden],
            "thousandths": [n for t in asked.hidden for n in ((250, 750) if t % 2 == 0 else (500, 500))],
        }
        assert asked.move["comment"] == "valid"
    assert all("belief" not in m for r in record["rounds"] for m in r["moves"] if m.get("seat", 0) == 1)


def expected_problem(mode: str, asked: Asked) -> str:
    """The refusal of the belief ``mode`` sends, worked out from the round it was sent in."""
    first_hidden = NAMES[asked.hidden[0]]
    return {
        "not_distribution": f"{first_hidden}: the probabilities sum to 1.1, not 1 (within 0.01)",
        "too_many": f"it has {set_size(6)} entries; at most {len(asked.hidden)} (one per hidden tile)",
        "visible": f"{NAMES[asked.hand[0]]} is not hidden from seat 0: it is in its own hand",
        "unknown_place": f"{first_hidden} has 3 probabilities; seat 0 of 2 has 2 places (seat 1 and the boneyard)",
        "garbage": "expected a tile with low <= high <= 18, got [5|2]",
    }[mode]


@pytest.mark.parametrize("mode", ["not_distribution", "too_many", "visible", "unknown_place", "garbage"])
async def test_each_refused_belief_is_a_fault_of_the_belief_and_the_move_stands(mode: str, tmp_path: Path) -> None:
    record = await played(mode, tmp_path)
    assert_played_to_the_end(record)
    decisions = decisions_of_seat_0(record)
    assert len(decisions) >= 3
    assert record["beliefFaults"] == [
        {"kind": "malformed_belief", "moveNumber": asked.number, "message": PREFIX + expected_problem(mode, asked)
         + SUFFIX} for asked in decisions]
    assert all("belief" not in asked.move and asked.move["comment"] == mode for asked in decisions)


async def test_a_stdio_belief_that_is_not_a_belief_is_a_fault_of_the_belief(tmp_path: Path) -> None:
    record = await played("not_a_message", tmp_path, protocol="stdio")
    assert_played_to_the_end(record)
    decisions = decisions_of_seat_0(record)
    faults = record["beliefFaults"]
    assert [f["moveNumber"] for f in faults] == [asked.number for asked in decisions]
    assert all(f["message"].startswith(PREFIX + "the belief is not a Belief: ") for f in faults)


class Forward:
    """An outbox that hands each message straight to the other end (the stream between them, in this process)."""

    def __init__(self, to: Callable[[Any], Any]) -> None:
        self.to = to

    def put(self, message: Any) -> None:
        self.to(message)


async def test_a_stdio_belief_relayed_by_arena_connect_is_a_fault_at_the_far_arena(tmp_path: Path) -> None:
    """A stdio bot played through `arena connect`'s relay and the server's end of the dial-in stream (joined here
    without the network): the belief the relay cannot read reaches the far arena as the bot's fault of the belief,
    with the relay's reason, and the moves stand, as when the arena runs the bot itself."""
    process = belief_bot("not_a_message", tmp_path, "stdio")
    local = ProcessBot(process)
    try:
        connection = DialInConnection("believer", "0" * 64, await local.hello())
        async with trio.open_nursery() as streams:
            relay = Relay(local, None, "believer", (), say=lambda text: None)
            relay.outbox = Forward(connection.received)  # type: ignore[assignment]
            connection.outbox = Forward(  # type: ignore[assignment]
                lambda message: relay._take(streams, message, time.perf_counter()))
            record = await game_of(DialInBot(connection, "believer"), "not_a_message")
    finally:
        await process.stop()
    assert_played_to_the_end(record)
    faults = record["beliefFaults"]
    assert [f["moveNumber"] for f in faults] == [asked.number for asked in decisions_of_seat_0(record)]
    assert all(f["kind"] == "malformed_belief" and f["message"].startswith(PREFIX + "the belief is not a Belief: ")
               and f["message"].endswith(SUFFIX) for f in faults)


async def test_a_stdio_belief_is_recorded_as_a_grpc_one(tmp_path: Path) -> None:
    record = await played("valid", tmp_path, protocol="stdio")
    assert_played_to_the_end(record)
    for asked in decisions_of_seat_0(record):
        assert asked.move["belief"]["tiles"] == [{"low": LOW[t], "high": HIGH[t]} for t in asked.hidden]
