"""One abstraction for talking to a seat's player, in-process or remote (python-chess's ``Protocol`` habit).

The referee builds a :class:`DecisionRequest`, awaits ``player.act(request)`` under a deadline computed outside the
player, and gets a :class:`Decision` (the action, the think time) or a :class:`BotFailure` that it records as a
fault. Legality is the referee's to check, never the player's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

from arena.rules import Action, Game, Observation, RoundResult, RoundState
from arena.rules.beliefs import Belief
from arena.rules.results import MatchResult


class DecisionRequest:
    """What a seat is asked: everything it may know, and how long it has.

    Made with an :class:`Observation`, or by the referee from the round itself (:meth:`of_round`): then the
    observation is built when first read, because a bot over gRPC is sent bytes encoded straight from the round
    (:func:`arena.protocol.wire.act_request_bytes`) and never needs one. It must be read before the round moves on
    (an in-process player reads it while it decides); a later first read is a mistake in the arena, and raises.
    """

    __slots__ = ("match_id", "game", "seat", "move_number", "move_ms", "bank_ms", "deadline_ms", "_observation",
                 "_round", "_moves")

    def __init__(self, match_id: str, game: Game, seat: int, observation: Observation | None, move_number: int,
                 move_ms: int, bank_ms: int, deadline_ms: int) -> None:
        self.match_id = match_id
        self.game = game
        self.seat = seat
        self.move_number = move_number
        self.move_ms = move_ms
        self.bank_ms = bank_ms
        self.deadline_ms = deadline_ms
        """The hard deadline, in ms from when the request is sent: move time + bank left + the referee's grace (the
        referee computes it and waits exactly this long; the bot is told it)."""
        self._observation = observation
        self._round: RoundState | None = None
        self._moves = 0

    @classmethod
    def of_round(cls, match_id: str, game: Game, state: RoundState, move_number: int, move_ms: int, bank_ms: int,
                 deadline_ms: int) -> DecisionRequest:
        """The request of the seat to move in ``state``, its observation left to be built when first read. Its
        fields are set here, once each, rather than by ``__init__`` and then again (the referee makes one a
        decision)."""
        request = object.__new__(cls)
        request.match_id, request.game, request.seat, request.move_number = match_id, game, state.turn, move_number
        request.move_ms, request.bank_ms, request.deadline_ms = move_ms, bank_ms, deadline_ms
        request._observation, request._round, request._moves = None, state, len(state.history)
        return request

    @property
    def observation(self) -> Observation:
        observation = self._observation
        if observation is None:
            observation = self._observation = self._unmoved_round().observation(self.seat)
            self._round = None
        return observation

    @property
    def legal_actions(self) -> Sequence[Action]:
        """The seat's legal actions, without building the observation when it is not built yet (the reply's check
        reads them for every decision)."""
        state = self._round
        if state is not None and len(state.history) == self._moves:
            return state.legal_actions()
        return self.observation.legal_actions

    @property
    def round(self) -> RoundState | None:
        """The round the request was made from, while its observation is not built and the round has not moved on:
        hidden information, only for the arena's own encoders (:mod:`arena.protocol.wire`), never for a player."""
        state = self._round
        return state if state is not None and len(state.history) == self._moves else None

    def _unmoved_round(self) -> RoundState:
        state = self.round
        if state is None:
            raise RuntimeError(f"the observation of move {self.move_number} of match {self.match_id} was first "
                               "asked for after the round moved on")
        return state

    def __repr__(self) -> str:
        return (f"DecisionRequest(match_id={self.match_id!r}, variant={self.game.name!r}, seat={self.seat}, "
                f"move_number={self.move_number}, move_ms={self.move_ms}, bank_ms={self.bank_ms}, "
                f"deadline_ms={self.deadline_ms})")


class Decision(NamedTuple):
    action: Action
    think_s: float
    comment: str = ""
    belief: Belief | None = None
    """The belief the player sent with its choice, as read (the referee checks it against the round)."""
    belief_problem: str = ""
    """Why a belief that was sent could not even be read (then ``belief`` is None): a fault of the belief alone."""


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
