"""``arena bench referee-parts``: the referee's own work per decision, part by part, with no transport and no bot
process.

It plays whole matches the way :func:`arena.referee.play_match` does, with the real code of each part, and a
responder that answers at once with a random legal index (its ``ActReply`` bytes made before the clock starts), so
the time measured is the arena's only: the legal moves, the seat's observation (the request made from the round,
whose :class:`~arena.rules.Observation` is built only when read, which the path to a bot over gRPC never does), the
request's encoding to protobuf bytes, the reply's check (parsing the reply, choosing the action, checking it is legal) and the move's record.
Forced moves (one legal action, applied without asking) are timed as a part of their own, and the process's CPU
time over the timed matches is given a decision too (on a shared machine the wall clock of each part also counts
what other processes ran meanwhile; the CPU time counts less of it). A second pass plays the
same matches through :func:`~arena.referee.play_match` itself, with an in-process player that encodes every request
and checks every reply, to show what the loop and trio add around the parts.
"""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable
from typing import Any

import trio

from arena.players.base import Decision, DecisionRequest
from arena.players.client import chosen_action
from arena.players.faults import BotFailure, FaultKind
from arena.protocol import bot_pb2
from arena.protocol.wire import act_request_bytes
from arena.referee import RoundRecord, TimeControl, _apply, play_match
from arena.rules import new_game
from arena.rules.results import MatchResult, RoundResult

PARTS = ("legal moves", "observation", "request encoding", "reply check", "move record", "forced moves")
MOST_LEGAL = 64
"""More legal actions than any variant offers at once: the responder's replies, encoded before the clock starts."""
_REPLIES = tuple(bot_pb2.ActReply(index=i).SerializeToString() for i in range(MOST_LEGAL))


def _timed_match(game: Any, seed: str, match_id: str, rand: Callable[[], float], spent: dict[str, int]) -> int:
    """One match, each part's nanoseconds added to ``spent``; the number of decisions asked."""
    clock = time.perf_counter_ns
    time_control = TimeControl()
    match = game.new_match(seed)
    decisions = move_number = 0
    while True:
        state = match.round
        current = RoundRecord(state.deal)
        while not state.is_over():
            seat = state.turn
            t0 = clock()
            legal = state.legal_actions()
            t1 = clock()
            if len(legal) == 1:
                _apply(match, state, seat, legal[0], 0.0, current, forced=True)
                spent["forced moves"] += clock() - t0
                move_number += 1
                continue
            request = DecisionRequest.of_round(match_id, game, state, move_number, time_control.move_ms,
                                               time_control.bank_ms, time_control.deadline_ms(time_control.bank_ms))
            t2 = clock()
            act_request_bytes(request)
            t3 = clock()
            reply_bytes = _REPLIES[int(rand() * len(legal))]
            t4 = clock()
            action = chosen_action(bot_pb2.ActReply.FromString(reply_bytes), request)
            if action not in legal:
                raise BotFailure(FaultKind.ILLEGAL_ACTION, choice=str(action))
            t5 = clock()
            _apply(match, state, seat, action, 0.0, current)
            t6 = clock()
            spent["legal moves"] += t1 - t0
            spent["observation"] += t2 - t1
            spent["request encoding"] += t3 - t2
            spent["reply check"] += t5 - t4
            spent["move record"] += t6 - t5
            decisions += 1
            move_number += 1
        if match.is_over():
            return decisions
        match.next_round()


class _InstantPlayer:
    """A seat answered in-process at once, through the real encoding and check: the referee's work, no transport."""

    def __init__(self, rand: Callable[[], float]) -> None:
        self.name = "instant"
        self.rand = rand
        self.decisions = 0

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        act_request_bytes(request)
        legal = request.legal_actions
        reply = bot_pb2.ActReply.FromString(_REPLIES[int(self.rand() * len(legal))])
        self.decisions += 1
        return Decision(chosen_action(reply, request), 0.0, reply.comment)

    async def round_ended(self, match_id: str, seat: int, index: int, result: RoundResult,
                          scores: tuple[int, ...]) -> None:
        pass

    async def match_ended(self, match_id: str, seat: int, result: MatchResult, by_fault: bool) -> None:
        pass


async def _whole_referee(game: Any, matches: int, seed: str, rand: Callable[[], float]) -> tuple[int, float]:
    """Decisions and seconds of ``matches`` played through :func:`play_match` itself, one at a time."""
    players = [_InstantPlayer(rand) for _ in range(game.players)]
    started = time.perf_counter()
    for index in range(matches):
        await play_match(game, players, seed=f"{seed}-{index}", match_id=f"bench-{index}")
    return sum(p.decisions for p in players), time.perf_counter() - started


def bench_referee_parts(matches: int = 400, variant: str = "draw", players: int | None = None,
                        seed: str = "parts") -> dict[str, Any]:
    """µs per decision of each part of the referee's own work, warm (a first pass of a tenth of the matches is not
    counted), and of the same matches, with the same choices, through :func:`play_match` with an in-process
    player (which asks the same decisions: ``play_match_decisions``)."""
    game = new_game(variant, players)
    warm = {part: 0 for part in PARTS}
    warm_rand = random.Random(f"{seed}-warm").random
    for index in range(max(1, matches // 10)):
        _timed_match(game, f"warm-{index}", f"warm-{index}", warm_rand, warm)
    spent = {part: 0 for part in PARTS}
    rand = random.Random(seed).random
    cpu_before = _cpu_seconds()
    decisions = sum(_timed_match(game, f"{seed}-{index}", f"parts-{index}", rand, spent) for index in range(matches))
    cpu_us = (_cpu_seconds() - cpu_before) / decisions * 1e6
    per_decision = {part: round(ns / decisions / 1000, 2) for part, ns in spent.items()}
    # The same matches and choices again (the same seeds, a fresh stream): the referee must ask the same decisions.
    whole_decisions, whole_seconds = trio.run(_whole_referee, game, matches, seed, random.Random(seed).random)
    return {
        "variant": variant,
        "players": game.players,
        "matches": matches,
        "decisions": decisions,
        "us_per_decision": per_decision,
        "us_per_decision_total": round(sum(spent.values()) / decisions / 1000, 2),
        "cpu_us_per_decision": round(cpu_us, 2),
        "play_match_decisions": whole_decisions,
        "play_match_us_per_decision": round(whole_seconds / whole_decisions * 1e6, 2),
    }


def _cpu_seconds() -> float:
    """The process's CPU time: on a busy machine the wall clock also counts the time other processes ran, the CPU
    time does not."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def parts_table(result: dict[str, Any]) -> str:
    """The result as a Markdown table: µs per decision of each part, and the total."""
    rows = [f"| {part} | {us:.2f} |" for part, us in result["us_per_decision"].items()]
    return "\n".join([f"{result['variant']}, {result['players']} players, {result['decisions']} decisions",
                      "| part | µs per decision |", "|---|---:|", *rows,
                      f"| **the parts' total** | **{result['us_per_decision_total']:.2f}** |",
                      f"| the timed loop's CPU (the parts, the timers and the responder) | "
                      f"{result['cpu_us_per_decision']:.2f} |",
                      f"| whole matches through play_match, in-process bot | "
                      f"{result['play_match_us_per_decision']:.2f} |"])
