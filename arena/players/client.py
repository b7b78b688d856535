"""The arena's end of a running bot: one interface whatever the transport (python-chess's engine ``Protocol`` habit:
the same async verbs over every transport, replies as objects).

:class:`BotClient` has the verbs: :meth:`~BotClient.handshake`, :meth:`~BotClient.act`, the notifications
(:meth:`~BotClient.round_ended`, :meth:`~BotClient.match_ended`) and :meth:`~BotClient.close`. A transport
(:class:`~arena.players.remote.RemoteBot` over gRPC, :class:`~arena.players.stdio.StdioBot` over stdin and stdout)
only moves messages: ``_hello``, ``_act`` and ``_notify``, each turning its own failures into a
:class:`BotFailure` of the right kind. What the arena accepts is written here, once: a handshake's protocol version
and texts (:func:`hello_problem`), an act reply's choice (:func:`chosen_action`) and belief (:func:`sent_belief`).

The wire, visible when asked: with the ``arena.wire`` logger at DEBUG (``arena --log-level debug``, or
``ARENA_LOG_WIRE=1``) every request to a bot and every reply from it is logged as one shortened line naming the bot,
the call and, for decisions, the match and the move, as python-chess logs engine traffic. Off by default; it is a
log, never part of a record (the messages are only encoded for it when it is on).
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format

from arena import __version__
from arena.display import move_label, safe_name
from arena.players.base import Decision, DecisionRequest
from arena.players.faults import BotFailure, FaultKind
from arena.players.wire_log import WIRE_ENV as WIRE_ENV
from arena.players.wire_log import WIRE_LOG as WIRE_LOG
from arena.players.wire_log import wire_wanted as wire_wanted
from arena.protocol import PROTOCOL_VERSION, bot_pb2
from arena.protocol.convert import (
    ProtocolError,
    act_request_pb,
    action_from_pb,
    belief_from_pb,
    match_result_pb,
    round_result_pb,
)
from arena.rules import Action, Kind, RoundResult
from arena.rules.beliefs import Belief
from arena.rules.results import MatchResult

MAX_COMMENT = 1000
MAX_NAME = 64
MAX_VARIANTS = 32

WIRE_LINE = 300
"""The longest wire log line, in characters: a Mexican Train observation is many kilobytes."""


def message_text(message: Any) -> str:
    """A message as compact JSON (protobuf's mapping), for the wire log."""
    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"), ensure_ascii=True)


def act_request_text(request: DecisionRequest) -> str:
    """An ActRequest for the wire log, what a reader looks for first: the seat's time, legal actions and hand, then
    the rest of its observation (the match id, variant and options are in the line's head or the same each time)."""
    data = json_format.MessageToDict(act_request_pb(request))
    observation = data.get("observation", {})
    first = {key: observation.pop(key) for key in ("legalActions", "hand") if key in observation}
    return json.dumps({"time": data.get("time", {}), **first, **observation}, separators=(",", ":"),
                      ensure_ascii=True)


def notification_text(message: bot_pb2.Notification) -> str:
    """A Notification for the wire log, without its match id (in the line's head)."""
    data = json_format.MessageToDict(message)
    data.pop("matchId", None)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True)


def wire_logged() -> bool:
    """Whether the wire log is on (``arena.wire`` at DEBUG): a decision's path then names and logs its messages."""
    return WIRE_LOG.isEnabledFor(logging.DEBUG)


def log_wire(bot: str, direction: str, call: str, body: Callable[[], str]) -> None:
    """One wire line: ``bot -> call: body``, control characters dropped, cut to :data:`WIRE_LINE` characters;
    ``body`` is only called when the wire log is on."""
    if WIRE_LOG.isEnabledFor(logging.DEBUG):
        WIRE_LOG.debug("%s", safe_name(f"{bot} {direction} {call}: {body()}", WIRE_LINE))


def log_wire_failure(bot: str, call: str, failure: BotFailure) -> None:
    """The wire line of a call that got no acceptable reply: the fault it becomes."""
    log_wire(bot, "<-", call, lambda: f"{failure.kind.value}: {failure}")


def decision_call(request: DecisionRequest) -> str:
    """``act match 1a2b3c4d move 5 seat 1``: which decision a wire line is about."""
    return f"act match {request.match_id[:8]} {move_label(request.move_number)} seat {request.seat}"


def hello_problem(reply: bot_pb2.HelloReply) -> str | None:
    """What is wrong with a handshake's texts: a name is required, and every text is short and printable (a bot's
    name ends up in terminals, tables and web pages)."""
    if not reply.name:
        return "the bot sent no name"
    texts = [("name", reply.name, MAX_NAME), ("version", reply.version, MAX_NAME), ("author", reply.author, 200)]
    texts += [("variant", v, MAX_NAME) for v in reply.variants[:MAX_VARIANTS + 1]]
    if len(reply.variants) > MAX_VARIANTS:
        return f"the bot claims {len(reply.variants)} variants; at most {MAX_VARIANTS}"
    for what, text, longest in texts:
        if len(text) > longest:
            return f"the bot's {what} is {len(text)} characters long; at most {longest}"
        if not text.isprintable():
            return f"the bot's {what} {text[:longest]!r} holds control characters"
    return None


def accept_hello(reply: bot_pb2.HelloReply) -> bot_pb2.HelloReply:
    """The handshake reply, if the arena accepts it: the protocol version it speaks, and :func:`hello_problem`."""
    if reply.protocol_version != PROTOCOL_VERSION:
        raise BotFailure(FaultKind.HANDSHAKE_FAILED,
                         detail=f"expected protocol version {PROTOCOL_VERSION}, got {reply.protocol_version}")
    problem = hello_problem(reply)
    if problem:
        raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=problem)
    return reply


def chosen_action(reply: bot_pb2.ActReply, request: DecisionRequest) -> Any:
    """The legal action an ActReply chooses (by index, or the action itself); a fault when it chooses none."""
    legal = request.legal_actions
    which = reply.WhichOneof("choice")
    if which == "index":
        index = reply.index
        if index >= len(legal):
            raise BotFailure(FaultKind.ILLEGAL_ACTION, choice=f"index {index} of {len(legal)} legal actions")
        return legal[index]
    if which == "action":
        try:
            action = action_from_pb(reply.action)
            return action if action.kind == Kind.PLACE else Action(action.kind)
        except ProtocolError as error:
            raise BotFailure(FaultKind.MALFORMED_REPLY, detail=str(error)) from None
    raise BotFailure(FaultKind.MALFORMED_REPLY, detail="the reply sets neither index nor action")


def decision_of(reply: bot_pb2.ActReply, request: DecisionRequest, think_s: float, unread: str = "") -> Decision:
    """An ActReply as the referee takes it: the chosen action (:func:`chosen_action`), the comment cut to
    :data:`MAX_COMMENT`, and the belief read apart (:func:`sent_belief`), so that a bad belief never costs the move.
    ``unread``: why the transport could not read a belief it dropped from the reply (a JSON line's)."""
    belief, problem = (None, unread) if unread else sent_belief(reply)
    return Decision(chosen_action(reply, request), think_s, reply.comment[:MAX_COMMENT], belief, problem)


def sent_belief(reply: bot_pb2.ActReply) -> tuple[Belief | None, str]:
    """The reply's belief as read, or why it cannot be read; (None, "") when it sent none or an empty one."""
    if not reply.HasField("belief") or not reply.belief.tiles:
        return None, ""
    try:
        return belief_from_pb(reply.belief), ""
    except ProtocolError as error:
        return None, str(error)


class BotClient(ABC):
    """A connection to one bot: the verbs the arena uses, the same over every transport."""

    def __init__(self, name: str, address: str, explain: Callable[[BotFailure], BotFailure] | None = None) -> None:
        self.name = name
        self.address = address
        self.hello: bot_pb2.HelloReply | None = None
        """The accepted handshake, once there was one."""
        self._explain = explain or (lambda failure: failure)
        """Turns a crash or timeout into the fault that really happened (a limit of the bot's sandbox)."""
        self._unread: dict[int, str] = {}
        """Why the belief of a reply (by its id, until the reply is taken) could not be read."""

    # --- the verbs --------------------------------------------------------------------------------------------

    async def handshake(self, timeout_s: float, budget_s: float | None = None) -> bot_pb2.HelloReply:
        """Hello within ``timeout_s``, and the reply accepted (:func:`accept_hello`); raises :class:`BotFailure`
        (START_FAILED: no handshake; HANDSHAKE_FAILED: a handshake the arena refuses). ``budget_s``: the wait a
        missing handshake's message names, when ``timeout_s`` is only what was left of the start-up's time (the
        user set that, not the 14.9993 s left of it)."""
        request = bot_pb2.HelloRequest(arena_version=__version__, protocol_version=PROTOCOL_VERSION)
        log_wire(self.name, "->", "hello", lambda: message_text(request))
        try:
            reply = await self._hello(request, timeout_s, timeout_s if budget_s is None else budget_s)
        except BotFailure as failure:
            log_wire_failure(self.name, "hello", failure)
            raise
        log_wire(self.name, "<-", "hello", lambda: message_text(reply))
        self.hello = accept_hello(reply)
        return reply

    def plays(self, variant: str) -> bool:
        """Whether the handshake claimed this variant (an empty list claims every variant)."""
        return self.hello is None or not self.hello.variants or variant in self.hello.variants

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        """The bot's decision within ``timeout_s``; raises :class:`BotFailure` (the referee records it)."""
        reply, think = await self.reply(request, timeout_s)
        return decision_of(reply, request, think, self.unread_belief(reply))

    async def reply(self, request: DecisionRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, float]:
        """The bot's ActReply as it came, not yet checked, and its think time: :meth:`act` checks it; the relay of
        ``arena connect`` forwards it unchanged, so the arena at the other end checks it as its own."""
        if not wire_logged():  # every decision's path: no line to name, nothing to log
            return await self._act(request, timeout_s)
        call = decision_call(request)
        log_wire(self.name, "->", call, lambda: act_request_text(request))
        try:
            reply, think = await self._act(request, timeout_s)
        except BotFailure as failure:
            log_wire_failure(self.name, call, failure)
            raise
        log_wire(self.name, "<-", call, lambda: f"{think * 1000:.1f} ms {message_text(reply)}")
        return reply, think

    async def round_ended(self, match_id: str, seat: int, index: int, result: RoundResult,
                          scores: tuple[int, ...]) -> None:
        await self.notify(bot_pb2.Notification(match_id=match_id, seat=seat,
                                               round_end=round_result_pb(result, index, scores)))

    async def match_ended(self, match_id: str, seat: int, result: MatchResult, by_fault: bool) -> None:
        await self.notify(bot_pb2.Notification(match_id=match_id, seat=seat,
                                               match_end=match_result_pb(result, by_fault)))

    async def notify(self, message: bot_pb2.Notification) -> None:
        """Best effort: a slow or failing notification is never a fault."""
        log_wire(self.name, "->", f"notify match {message.match_id[:8]} seat {message.seat}",
                 lambda: notification_text(message))
        await self._notify(message)

    @abstractmethod
    def close(self) -> None:
        """Let go of the connection (the process, if any, is stopped by its owner)."""

    # --- what a transport provides ------------------------------------------------------------------------------

    @abstractmethod
    async def _hello(self, request: bot_pb2.HelloRequest, timeout_s: float, budget_s: float) -> bot_pb2.HelloReply:
        """Send the Hello and return the reply as it came; its failures as START_FAILED (no reply: "within
        ``budget_s``") or HANDSHAKE_FAILED."""

    @abstractmethod
    async def _act(self, request: DecisionRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, float]:
        """Send the decision request; the reply and the think time in seconds (as the transport measures it)."""

    @abstractmethod
    async def _notify(self, message: bot_pb2.Notification) -> None:
        """Send a notification, swallowing every failure."""

    def unread_belief(self, reply: bot_pb2.ActReply) -> str:
        """Why the transport dropped a belief it could not read from ``reply`` (a reply :meth:`reply` returned), or
        "": protobuf's bytes are read whole or not at all, but a JSON line's belief is read apart from its choice,
        and a dial-in relay says why it dropped one. Asked once per reply (:meth:`act`, or the relay of ``arena
        connect``, which forwards it)."""
        return self._unread.pop(id(reply), "")

    def _keep_unread(self, reply: bot_pb2.ActReply, why: str) -> None:
        """For a transport: the belief of ``reply`` could not be read, and was dropped from it."""
        if why:
            self._unread[id(reply)] = why
