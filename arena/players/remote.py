"""A bot over gRPC: the client side of ``proto/dominoes/v1/bot.proto``.

Every call carries a deadline; cancelling a game cancels the call on the wire (the bot sees CANCELLED). Every way
the call can fail becomes a :class:`BotFailure` with its fault kind.

Two transports, one behaviour: under :func:`arena.guest.run` (every command of the arena) the calls are grpc.aio's,
on the one thread the referee runs on, awaited with :func:`arena.guest.await_unary`; under a plain :func:`trio.run`
(tests, embedding code) they are grpcio's futures, awaited with :func:`await_call`, each reply crossing from one of
grpcio's threads.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from arena import guest
from arena.display import seconds_label
from arena.players.base import DecisionRequest
from arena.players.client import BotClient
from arena.players.faults import BotFailure, FaultKind
from arena.players.grpc_trio import await_call
from arena.protocol import MAX_MESSAGE_BYTES, bot_pb2, bot_pb2_grpc
from arena.protocol.wire import act_request_bytes

NOTIFY_TIMEOUT_S = 2.0

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
    name = code.name if code is not None else "UNKNOWN"
    return BotFailure(FaultKind.BOT_ERROR, detail=f"{name}: {details}")


CLOSED_CHANNEL_ERRORS = (ValueError, grpc.aio.UsageError)
"""What invoking a call on a closed channel raises: grpcio's ValueError, grpc.aio's UsageError."""


class RemoteBot(BotClient):
    """A connection to one bot process (or an address given by the user), over gRPC."""

    def __init__(self, address: str, name: str | None = None,
                 explain: Callable[[BotFailure], BotFailure] | None = None) -> None:
        super().__init__(name or address, address, explain)
        self._aio = guest.active()
        self._channel: Any = (grpc.aio.insecure_channel if self._aio else grpc.insecure_channel)(
            address, options=channel_options(address))
        self._stub = bot_pb2_grpc.BotStub(self._channel)
        # Act with the request already encoded (arena.protocol.wire) and the reply parsed here (act_reply): the
        # bytes go and come as they are. (grpc.aio answers a reply its deserializer refuses with None, not an error.)
        self._act_bytes = self._channel.unary_unary("/dominoes.v1.Bot/Act", request_serializer=None,
                                                    response_deserializer=None)
        self._hello_bytes = self._channel.unary_unary("/dominoes.v1.Bot/Hello", response_deserializer=None,
                                                      request_serializer=bot_pb2.HelloRequest.SerializeToString)
        self._closed = False
        """The arena let go of the connection (it stopped the bot): a call cut short by that is no answer of it."""

    def close(self) -> None:
        self._closed = True
        if self._aio:  # grpc.aio closes a channel in a coroutine: the host's loop runs it (host.run waits for it)
            asyncio.get_running_loop().create_task(self._channel.close())
        else:
            self._channel.close()

    async def _call(self, method: Any, request: Any, timeout_s: float, wait_for_ready: bool | None = None) -> Any:
        """One unary call on either transport, awaited from trio."""
        if self._aio:
            return await guest.await_unary(method(request, timeout=timeout_s, wait_for_ready=wait_for_ready))
        return await await_call(method.future(request, timeout=timeout_s, wait_for_ready=wait_for_ready))

    async def _hello(self, request: bot_pb2.HelloRequest, timeout_s: float, budget_s: float) -> bot_pb2.HelloReply:
        """Hello, waiting up to ``timeout_s`` for the bot to come up."""
        try:
            return bot_pb2.HelloReply.FromString(await self._call(self._hello_bytes, request, timeout_s,
                                                                  wait_for_ready=True))
        except DecodeError as error:
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=f"the reply is not a HelloReply ({error})") from None
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise BotFailure(FaultKind.START_FAILED,
                                 detail=f"no handshake at {self.address} within {seconds_label(budget_s)}") from None
            detail = f"{error.code().name}: {error.details()}"
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=detail + http2_hint(detail)) from None

    async def _act(self, request: DecisionRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, float]:
        return await self.act_encoded(act_request_bytes(request), timeout_s)

    async def act_encoded(self, message: bytes, timeout_s: float) -> tuple[bot_pb2.ActReply, float]:
        """Act with the ActRequest already encoded (the relay forwards the arena's own bytes): the reply and the
        think time, failures as :meth:`_act`'s."""
        started = time.perf_counter()
        try:
            reply = act_reply(await self._call(self._act_bytes, message, timeout_s))
        except grpc.RpcError as error:
            if self._closed:  # in flight when the arena stopped the bot (CANCELLED: "Channel closed!")
                raise self._explain(BotFailure(FaultKind.CRASHED, detail="the connection to the bot was closed "
                                               "(the arena stopped it)")) from None
            raise self._explain(failure_from_rpc(error, int(timeout_s * 1000))) from None
        except CLOSED_CHANNEL_ERRORS as error:  # "Channel closed!" (the bot was stopped or restarted)
            raise self._explain(BotFailure(FaultKind.CRASHED,
                                           detail=f"the connection to the bot was closed ({error})")) from None
        except DecodeError as error:
            raise self._explain(BotFailure(FaultKind.MALFORMED_REPLY,
                                           detail=f"the reply is not an ActReply ({error})")) from None
        return reply, time.perf_counter() - started

    async def _notify(self, message: bot_pb2.Notification) -> None:
        """Best effort: a slow or failing Notify is never a fault."""
        try:
            await self._call(self._stub.Notify, message, NOTIFY_TIMEOUT_S)
        except (grpc.RpcError, *CLOSED_CHANNEL_ERRORS):  # the channel may have been closed by a restart meanwhile
            pass


def act_reply(data: bytes) -> bot_pb2.ActReply:
    """An Act call's reply bytes as an ActReply; protobuf's DecodeError if they are not one."""
    return bot_pb2.ActReply.FromString(data)


def new_match_id() -> str:
    return uuid.uuid4().hex
