"""A bot over gRPC: the client side of ``proto/dominoes/v1/bot.proto``.

Every call carries a deadline; calls are awaited from trio through :func:`await_call`, so cancelling a game
cancels the call on the wire. Every way the call can fail becomes a :class:`BotFailure` with its fault kind.
"""

from __future__ import annotations

import time
import uuid
import weakref
from typing import Any, Callable

import grpc

from .. import __version__
from ..protocol import MAX_MESSAGE_BYTES, PROTOCOL_VERSION, bot_pb2, bot_pb2_grpc
from ..protocol.wire import act_request_bytes
from ..protocol.convert import (
    ProtocolError, action_from_pb, match_result_pb, observation_pb, options_pb, round_result_pb,
)
from ..rules import Action, Kind, RoundResult
from ..rules.results import MatchResult
from .base import Decision, DecisionRequest
from .faults import BotFailure, FaultKind
from .grpc_trio import await_call

NOTIFY_TIMEOUT_S = 2.0
MAX_COMMENT = 1000
MAX_NAME = 64
MAX_VARIANTS = 32

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.enable_retries", 0),
    # A fresh subchannel per bot: never share a connection between two bot processes.
    ("grpc.use_local_subchannel_pool", 1),
    # A bot that is still starting refuses the first connections: retry within milliseconds, not gRPC's default
    # second, so the start time measured is the bot's (exec to handshake), not the backoff's.
    ("grpc.initial_reconnect_backoff_ms", 10),
    ("grpc.min_reconnect_backoff_ms", 10),
    ("grpc.max_reconnect_backoff_ms", 100),
]


def channel_options(address: str) -> list[tuple[str, Any]]:
    """The options of a channel to a bot. On a Unix socket gRPC would send the percent-encoded socket path as the
    HTTP/2 ``:authority``, which strict HTTP/2 stacks (Rust's hyper under tonic) reject: say ``localhost``."""
    if address.startswith("unix:"):
        return [*CHANNEL_OPTIONS, ("grpc.default_authority", "localhost")]
    return list(CHANNEL_OPTIONS)


HTTP2_SIGNS = ("rst_stream", "protocol error", "protocol_error", "http2", "goaway")


def http2_hint(detail: str) -> str:
    """A hint for a handshake the bot's HTTP/2 layer refused, which gRPC reports only as a stream reset."""
    if not any(sign in detail.lower() for sign in HTTP2_SIGNS):
        return ""
    return ("; hint: the bot's HTTP/2 layer refused the arena's request (a stream reset or protocol error, which "
            "gRPC stacks raise for a header they do not accept, such as the :authority; the arena sends "
            "'localhost' on Unix sockets); check that the bot serves plain gRPC over HTTP/2 without TLS, "
            "or try --transport tcp")


def failure_from_rpc(error: grpc.RpcError, allowed_ms: int) -> BotFailure:
    """Map a failed call to a fault kind."""
    code = error.code() if hasattr(error, "code") else None
    details = (error.details() if hasattr(error, "details") else None) or str(error)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return BotFailure(FaultKind.TIMEOUT, allowed_ms=allowed_ms)
    if code == grpc.StatusCode.UNAVAILABLE:
        return BotFailure(FaultKind.CRASHED, detail=details)
    if code == grpc.StatusCode.INTERNAL and "deserializ" in details.lower():
        return BotFailure(FaultKind.MALFORMED_REPLY, detail=f"the reply is not an ActReply ({details})")
    name = code.name if code is not None else "UNKNOWN"
    return BotFailure(FaultKind.BOT_ERROR, detail=f"{name}: {details}")


def chosen_action(reply: bot_pb2.ActReply, request: DecisionRequest) -> Any:
    """The legal action an ActReply chooses (by index, or the action itself); a fault when it chooses none."""
    legal = request.observation.legal_actions
    which = reply.WhichOneof("choice")
    if which == "index":
        if reply.index >= len(legal):
            raise BotFailure(FaultKind.ILLEGAL_ACTION, choice=f"index {reply.index} of {len(legal)} legal actions")
        return legal[reply.index]
    if which == "action":
        try:
            action = action_from_pb(reply.action)
            return action if action.kind == Kind.PLACE else Action(action.kind)
        except ProtocolError as error:
            raise BotFailure(FaultKind.MALFORMED_REPLY, detail=str(error)) from None
    raise BotFailure(FaultKind.MALFORMED_REPLY, detail="the reply sets neither index nor action")


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


class Notifications:
    """The end-of-round and end-of-match notifications, the same for every transport: each builds the Notification
    and hands it to the transport's ``_notify`` (best effort, never a fault)."""

    async def _notify(self, message: bot_pb2.Notification) -> None:
        raise NotImplementedError

    async def round_ended(self, match_id: str, seat: int, index: int, result: RoundResult,
                          scores: tuple[int, ...]) -> None:
        await self._notify(bot_pb2.Notification(match_id=match_id, seat=seat,
                                                round_end=round_result_pb(result, index, scores)))

    async def match_ended(self, match_id: str, seat: int, result: MatchResult, by_fault: bool) -> None:
        await self._notify(bot_pb2.Notification(match_id=match_id, seat=seat,
                                                match_end=match_result_pb(result, by_fault)))


class RemoteBot(Notifications):
    """A connection to one bot process (or an address given by the user)."""

    def __init__(self, address: str, name: str | None = None,
                 explain: Callable[[BotFailure], BotFailure] | None = None) -> None:
        self.address = address
        self.name = name or address
        self._explain = explain or (lambda failure: failure)
        """Turns a crash or timeout into the fault that really happened (a limit of the bot's sandbox)."""
        self.hello: bot_pb2.HelloReply | None = None
        self._channel = grpc.insecure_channel(address, options=channel_options(address))
        self._stub = bot_pb2_grpc.BotStub(self._channel)
        # Act with the request already encoded (arena.protocol.wire): no serializer, the bytes go as they are.
        self._act_bytes = self._channel.unary_unary(
            "/dominoes.v1.Bot/Act", request_serializer=None, response_deserializer=bot_pb2.ActReply.FromString)

    def close(self) -> None:
        self._channel.close()

    async def handshake(self, timeout_s: float) -> bot_pb2.HelloReply:
        """Hello, waiting up to ``timeout_s`` for the bot to come up; checks the protocol version."""
        request = bot_pb2.HelloRequest(arena_version=__version__, protocol_version=PROTOCOL_VERSION)
        try:
            reply = await await_call(self._stub.Hello.future(request, timeout=timeout_s, wait_for_ready=True))
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise BotFailure(FaultKind.START_FAILED,
                                 detail=f"no handshake at {self.address} within {timeout_s:g} s") from None
            detail = f"{error.code().name}: {error.details()}"
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=detail + http2_hint(detail)) from None
        if reply.protocol_version != PROTOCOL_VERSION:
            raise BotFailure(FaultKind.HANDSHAKE_FAILED,
                             detail=f"expected protocol version {PROTOCOL_VERSION}, got {reply.protocol_version}")
        problem = hello_problem(reply)
        if problem:
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=problem)
        self.hello = reply
        return reply

    def plays(self, variant: str) -> bool:
        """Whether the handshake claimed this variant (an empty list claims every variant)."""
        return self.hello is None or not self.hello.variants or variant in self.hello.variants

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        message = act_request_bytes(request)
        started = time.perf_counter()
        try:
            reply = await await_call(self._act_bytes.future(message, timeout=timeout_s))
        except grpc.RpcError as error:
            raise self._explain(failure_from_rpc(error, int(timeout_s * 1000))) from None
        except ValueError as error:  # grpc: "Cannot invoke RPC: Channel closed!" (the bot was stopped or restarted)
            raise self._explain(BotFailure(FaultKind.CRASHED,
                                           detail=f"the connection to the bot was closed ({error})")) from None
        think = time.perf_counter() - started
        return Decision(chosen_action(reply, request), think, reply.comment[:MAX_COMMENT])

    async def _notify(self, message: bot_pb2.Notification) -> None:
        """Best effort: a slow or failing Notify is never a fault."""
        try:
            await await_call(self._stub.Notify.future(message, timeout=NOTIFY_TIMEOUT_S))
        except (grpc.RpcError, ValueError):  # ValueError: the channel was closed by a restart meanwhile
            pass


_OPTIONS: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def _options_of(game: Any) -> dict:
    """The options map of a game, converted once per game object."""
    options = _OPTIONS.get(game)
    if options is None:
        options = _OPTIONS[game] = options_pb(game.options)
    return options


def act_request_pb(request: DecisionRequest) -> bot_pb2.ActRequest:
    """The decision request exactly as a bot receives it."""
    game = request.game
    return bot_pb2.ActRequest(
        match_id=request.match_id,
        variant=game.name,
        options=_options_of(game),
        seat=request.seat,
        observation=observation_pb(request.observation, game.side_of),
        time=bot_pb2.TimeControl(move_ms=request.move_ms, bank_ms=request.bank_ms,
                                deadline_ms=request.deadline_ms),
        move_number=request.move_number,
    )


def new_match_id() -> str:
    return uuid.uuid4().hex
