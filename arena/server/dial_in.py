"""The gRPC side of dial-in streams (``DialInService.Play``): read the hello, have the trio side accept it, then move
messages between the stream and its :class:`~arena.players.dial_in.DialInConnection` until either side ends it.

Each stream holds the gRPC thread that runs its handler (sending what the connection's outbox holds) and one reader
thread of its own (handing each message to the trio thread, one at a time, so a bot that floods the stream is read
no faster than the arena takes its messages, and is closed at its first message the protocol does not allow). The
streams are counted with the server's other streams (arena/server/streams.py). The token is checked by the registry,
not by the server's interceptor (a bot's token is not the server's), before the stream's first message is read: a
caller without a bot's token is refused UNAUTHENTICATED whatever it sends, or if it sends nothing.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import trio
from google.protobuf.message import DecodeError

from arena import __version__
from arena.players.dial_in import Close, DialInConnection, DialInRefused, DialInRegistry
from arena.protocol import PROTOCOL_VERSION, bot_pb2, dial_in_pb2
from arena.server.auth import AUTH_HEADER, SCHEME

SERVICE = "dominoes.v1.DialInService"
CALLS = f"/{SERVICE}/"
"""The dial-in service's calls, which check their (bot) tokens themselves."""
HELLO_TIMEOUT_S = 30.0
"""A stream that sends no hello within this long is cancelled (it would hold a thread for nothing)."""
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


class DialInServicer:
    """The dial-in service on the server's gRPC threads, handing every decision to the trio thread. Not the generated
    servicer: its ``Play`` reads the stream's messages as bytes (:func:`add_to_server` registers it so), not as the
    PlayRequests the generated servicer's signature promises."""

    def __init__(self, registry: DialInRegistry, trio_token: trio.lowlevel.TrioToken,
                 hello_timeout_s: float = HELLO_TIMEOUT_S, plain_text_beyond_loopback: bool = False) -> None:
        self.registry = registry
        self.trio_token = trio_token
        self.hello_timeout_s = hello_timeout_s
        self.refuse_all = plain_text_beyond_loopback
        """The server listens beyond loopback without TLS: a bot's token would cross the network in plain text."""

    def _trio(self, function: Any, *args: Any) -> Any:
        return trio.from_thread.run_sync(function, *args, trio_token=self.trio_token)

    def Play(self, request_iterator: Iterator[bytes],
             context: grpc.ServicerContext) -> Iterator[dial_in_pb2.PlayResponse]:
        """One bot's stream. Its messages arrive as bytes, parsed here: one that is not a PlayRequest is the bot's
        protocol error, told to it and recorded, not gRPC's INTERNAL."""
        if self.refuse_all:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          "this server listens beyond loopback without TLS, and a bot's token must not cross the "
                          "network in plain text: its operator starts it with --tls-cert/--tls-key")
        token = bearer_token(context)
        self._registry(context, self.registry.authenticate, token)  # before any message is read
        hello = self._first(request_iterator, context)
        connection = self._registry(context, self.registry.attach, hello, token)
        reader = threading.Thread(target=self._read, args=(request_iterator, connection), daemon=True,
                                  name=f"dial-in {connection.bot}")
        reader.start()
        try:
            yield dial_in_pb2.PlayResponse(welcome=bot_pb2.HelloRequest(arena_version=__version__,
                                                                        protocol_version=PROTOCOL_VERSION))
            while True:
                try:
                    item = connection.outbox.get(timeout=POLL_S)
                except queue.Empty:
                    if not context.is_active():
                        return
                    continue
                if isinstance(item, Close):
                    if item.code != grpc.StatusCode.OK:
                        context.abort(item.code, item.message)
                    yield dial_in_pb2.PlayResponse(farewell=dial_in_pb2.Farewell(reason=item.message))
                    return
                yield item
        finally:
            self._end(connection, "the stream ended")

    def _registry(self, context: grpc.ServicerContext, function: Any, *args: Any) -> Any:
        """A call of the registry on the trio thread; the stream aborted with the registry's refusal, or UNAVAILABLE
        when the server is stopping."""
        try:
            return self._trio(function, *args)
        except DialInRefused as refusal:
            context.abort(refusal.code, refusal.message)
        except (trio.RunFinishedError, trio.Cancelled):
            context.abort(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)

    def _first(self, request_iterator: Iterator[bytes], context: grpc.ServicerContext) -> dial_in_pb2.DialInHello:
        """The stream's hello, which must come first and within the hello timeout; the stream aborted otherwise."""
        timer = threading.Timer(self.hello_timeout_s, context.cancel)
        timer.daemon = True
        timer.start()
        try:
            first = next(request_iterator, None)
        except grpc.RpcError:
            first = None
        finally:
            timer.cancel()
        if first is None:
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED if context.is_active() else grpc.StatusCode.CANCELLED,
                          f"no hello within {self.hello_timeout_s:g} s")
        request = parsed(first)
        if request is None or request.WhichOneof("message") != "hello":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          "the first message of a dial-in stream must be the hello (PlayRequest.hello)")
        return request.hello

    def _read(self, request_iterator: Iterator[bytes], connection: DialInConnection) -> None:
        """The reader thread: every message to the trio thread, until the stream ends or the bot breaks the
        protocol."""
        why = "the bot closed the stream"
        try:
            for data in request_iterator:
                message = parsed(data)
                if message is None:
                    self._trio(connection.broke, f"{len(data)} bytes that are not a PlayRequest")
                    return
                if not self._trio(connection.received, message):
                    return
        except grpc.RpcError as error:
            code = error.code() if hasattr(error, "code") else None
            why = f"the stream broke ({code.name if code is not None else 'cancelled'})"
        except (trio.RunFinishedError, trio.Cancelled):
            return
        except Exception as error:  # a message gRPC could not parse
            why = f"the stream broke ({type(error).__name__})"
        self._end(connection, why)

    def _end(self, connection: DialInConnection, why: str) -> None:
        """The stream is over: the games waiting on it fault, and the registry lets it go."""
        def end() -> None:
            connection.lost(why)
            self.registry.detach(connection)
        try:
            self._trio(end)
        except (trio.RunFinishedError, trio.Cancelled):
            pass


def parsed(data: bytes) -> dial_in_pb2.PlayRequest | None:
    """A message of the stream as a PlayRequest, or None when it is not one."""
    try:
        return dial_in_pb2.PlayRequest.FromString(data)
    except DecodeError:
        return None


def add_to_server(server: grpc.Server, servicer: DialInServicer) -> None:
    """The service, with its requests left as bytes for :meth:`DialInServicer.Play` to parse (the generated
    registration would have gRPC parse them, and end the call with INTERNAL on one that is not a PlayRequest)."""
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.Play, request_deserializer=None, response_serializer=dial_in_pb2.PlayResponse.SerializeToString)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Play": handler}),))
