"""The gRPC side of dial-in streams (``DialInService.Play``): read the hello, have the trio side accept it, then move
messages between the stream and its :class:`~arena.players.dial_in.DialInConnection` until either side ends it.

The service is grpc.aio's (:class:`DialInServicer`), on the thread trio runs on as the guest of the loop
(:func:`arena.guest.run`): the handler calls the registry and the connection directly (:func:`arena.guest.from_loop`), a
reader task hands each message over as it is read, and the handler writes what the connection's outbox holds. No
message crosses a thread, and replies read in one pass of the loop wake their games in one trio tick.

A message is handed over before the next is read, so a bot that floods the stream is read no faster than
the arena takes its messages, and is closed at its first message the protocol does not allow. The streams are counted
with the server's other streams (arena/server/streams.py). The token is checked by the registry, not by the server's
interceptor (a bot's token is not the server's), before the stream's first message is read: a caller without a bot's
token is refused UNAUTHENTICATED whatever it sends, or if it sends nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio
import trio
from google.protobuf.message import DecodeError

from arena import __version__, guest
from arena.players.dial_in import Close, DialInConnection, DialInRefused, DialInRegistry
from arena.protocol import PROTOCOL_VERSION, bot_pb2, dial_in_pb2
from arena.server.auth import AUTH_HEADER, SCHEME

SERVICE = "dominoes.v1.DialInService"
CALLS = f"/{SERVICE}/"
"""The dial-in service's calls, which check their (bot) tokens themselves."""
HELLO_TIMEOUT_S = 30.0
"""A stream that sends no hello within this long is cancelled (it would hold a stream slot for nothing)."""
POLL_S = 1.0
"""How often a stream with nothing to send checks that its call is still alive."""
SHUTTING_DOWN = "server shutting down"


def bearer_token(context: grpc.ServicerContext) -> str | None:
    """The token of the call's ``authorization: Bearer <token>`` metadata, or None without one."""
    for key, value in context.invocation_metadata() or ():
        if key == AUTH_HEADER:
            text = value if isinstance(value, str) else bytes(value).decode(errors="replace")
            return text[len(SCHEME):] if text.startswith(SCHEME) else None
    return None


def refused(plain_text_beyond_loopback: bool) -> str | None:
    """Why every stream is refused (FAILED_PRECONDITION), or None."""
    if not plain_text_beyond_loopback:
        return None
    return ("this server listens beyond loopback without TLS, and a bot's token must not cross the network in plain "
            "text: its operator starts it with --tls-cert/--tls-key")


def welcome() -> dial_in_pb2.PlayResponse:
    """The stream's first message: the arena's own hello."""
    return dial_in_pb2.PlayResponse(welcome=bot_pb2.HelloRequest(arena_version=__version__,
                                                                 protocol_version=PROTOCOL_VERSION))


def farewell(close: Close) -> dial_in_pb2.PlayResponse:
    """The last message of a stream the arena ends cleanly."""
    return dial_in_pb2.PlayResponse(farewell=dial_in_pb2.Farewell(reason=close.message))


def hello_of(first: bytes | None) -> dial_in_pb2.DialInHello | None:
    """The hello the stream's first message carries, or None when it is not one."""
    request = parsed(first) if first is not None else None
    if request is None or request.WhichOneof("message") != "hello":
        return None
    return request.hello


NOT_A_HELLO = "the first message of a dial-in stream must be the hello (PlayRequest.hello)"


class DialInServicer:
    """The dial-in service on grpc.aio, on the thread trio runs on (under :func:`arena.guest.run`): the registry and
    the connection are called directly, every message handed over as it is read, what the outbox holds written as it
    is put. Not the generated servicer: its ``Play`` reads the stream's messages as bytes (:func:`add_to_server`
    registers it so), not as the PlayRequests the generated servicer's signature promises."""

    def __init__(self, registry: DialInRegistry, hello_timeout_s: float = HELLO_TIMEOUT_S,
                 plain_text_beyond_loopback: bool = False) -> None:
        self.registry = registry
        self.hello_timeout_s = hello_timeout_s
        self.refuse_all = plain_text_beyond_loopback

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext[bytes, Any]) -> None:
        """One bot's stream: its token checked before anything is read, its hello, then its messages both ways."""
        refusal = refused(self.refuse_all)
        if refusal is not None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, refusal)
        token = bearer_token(context)  # type: ignore[arg-type]  # the same metadata either way
        await self._registry(context, self.registry.authenticate, token)  # before any message is read
        hello = await self._first(context)
        connection: DialInConnection = await self._registry(context, self.registry.attach, hello, token)
        reader = asyncio.ensure_future(self._read(context, connection))
        try:
            await context.write(welcome())
            await self._write(context, connection)
        finally:
            reader.cancel()
            self._end(connection, "the stream ended")

    async def _registry(self, context: grpc.aio.ServicerContext[bytes, Any], function: Any, *args: Any) -> Any:
        """A call of the registry (on this thread); the stream aborted with its refusal, or UNAVAILABLE when the
        server is stopping."""
        try:
            return guest.from_loop(function, *args)
        except DialInRefused as refusal:
            await context.abort(refusal.code, refusal.message)
        except trio.RunFinishedError:
            await context.abort(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)

    async def _first(self, context: grpc.aio.ServicerContext[bytes, Any]) -> dial_in_pb2.DialInHello:
        """The stream's hello, which must come first and within the hello timeout; the stream aborted otherwise
        (CANCELLED when nothing came, as grpcio's servicer cancels such a stream)."""
        try:
            async with asyncio.timeout(self.hello_timeout_s):
                first = await context.read()
        except Exception:  # noqa: BLE001 (the time ran out, or the stream broke before its first message)
            first = None
        if not isinstance(first, bytes):
            await context.abort(grpc.StatusCode.CANCELLED, f"no hello within {self.hello_timeout_s:g} s")
        hello = hello_of(first)
        if hello is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, NOT_A_HELLO)
        assert hello is not None  # abort raises
        return hello

    async def _write(self, context: grpc.aio.ServicerContext[bytes, Any], connection: DialInConnection) -> None:
        """What the connection's outbox holds, written in order, until its Close."""
        while True:
            item = await connection.outbox.take()
            if isinstance(item, Close):
                if item.code != grpc.StatusCode.OK:
                    await context.abort(item.code, item.message)
                await context.write(farewell(item))
                return
            await context.write(item)

    async def _read(self, context: grpc.aio.ServicerContext[bytes, Any], connection: DialInConnection) -> None:
        """The reader task: every message to the connection, until the stream ends or the bot breaks the
        protocol."""
        why = "the bot closed the stream"
        try:
            while True:
                data = await context.read()
                if not isinstance(data, bytes):  # grpc.aio's EOF: the bot closed its side
                    break
                message = parsed(data)
                if message is None:
                    guest.from_loop(connection.broke, f"{len(data)} bytes that are not a PlayRequest")
                    return
                if not guest.from_loop(connection.received, message):
                    return
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 (the stream broke under the read)
            code = error.code() if isinstance(error, grpc.aio.AioRpcError) else None
            why = f"the stream broke ({code.name if code is not None else type(error).__name__})"
        self._end(connection, why)

    def _end(self, connection: DialInConnection, why: str) -> None:
        """The stream is over: the games waiting on it fault, and the registry lets it go."""
        def end() -> None:
            connection.lost(why)
            self.registry.detach(connection)
        try:
            guest.from_loop(end)
        except trio.RunFinishedError:
            pass


def parsed(data: bytes) -> dial_in_pb2.PlayRequest | None:
    """A message of the stream as a PlayRequest, or None when it is not one."""
    try:
        return dial_in_pb2.PlayRequest.FromString(data)
    except DecodeError:
        return None


def add_to_server(server: grpc.Server | grpc.aio.Server, servicer: DialInServicer) -> None:
    """The service, with its requests left as bytes for :meth:`DialInServicer.Play` to parse (the generated
    registration would have gRPC parse them, and end the call with INTERNAL on one that is not a PlayRequest)."""
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.Play, request_deserializer=None, response_serializer=dial_in_pb2.PlayResponse.SerializeToString)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Play": handler}),))

