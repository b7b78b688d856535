"""One abstraction for talking to a seat's player, in-process or remote (python-chess's ``Protocol`` habit).

The referee builds a :class:`DecisionRequest`, awaits ``player.act(request)`` under a deadline computed outside the
player, and gets a :class:`Decision` (the action, the think time) or a :class:`BotFailure` that it records as a
fault. Legality is the referee's to check, never the player's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from arena.rules import Action, Game, Observation, RoundResult
from arena.rules.results import MatchResult


class DecisionRequest(NamedTuple):
    """What a seat is asked: everything it may know, and how long it has."""

    match_id: str
    game: Game
    seat: int
    observation: Observation
    move_number: int
    move_ms: int
    bank_ms: int
    deadline_ms: int
    """The hard deadline, in ms from when the request is sent: move time + bank left + the referee's grace (the
    referee computes it and waits exactly this long; the bot is told it)."""


class Decision(NamedTuple):
    action: Action
    think_s: float
    comment: str = ""


class SeatPlayer(Protocol):
    """The arena's side of a seat."""

    name: str

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        """Choose an action within ``timeout_s``; raise :class:`~arena.players.faults.BotFailure` if it cannot."""
        ...

    async def round_ended(self, match_id: str, seat: int, index: int, result: RoundResult,
                          scores: tuple[int, ...]) -> None: ...

    async def match_ended(self, match_id: str, seat: int, result: MatchResult, by_fault: bool) -> None: ...


class LocalPlayer:
    """An in-process player: any callable from an Observation to an Action (built-in players, tests)."""

    def __init__(self, policy: Callable[[Observation], Action], name: str | None = None) -> None:
        self.policy = policy
        self.name: str = name if name else getattr(policy, "name", type(policy).__name__)

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        started = time.perf_counter()
        action = self.policy(request.observation)
        return Decision(action, time.perf_counter() - started)

    async def round_ended(self, *args: Any) -> None:
        return None

    async def match_ended(self, *args: Any) -> None:
        return None
