"""A bot over stdin and stdout: the beginner's way in, and the way for languages without a gRPC library.

The same messages as the gRPC protocol, in protobuf's JSON mapping, one JSON object per line, each an envelope naming
the call (every field written, zeros and empty lists too): the arena writes ``{"hello": HelloRequest}``, ``{"act": ActRequest}`` or ``{"notify": Notification}``; the
bot answers ``hello`` and ``act`` with one line each (a ``HelloReply``, an ``ActReply``) and ``notify`` with nothing.
Its stderr goes to its log. One request at a time per process: concurrent games of one process wait their turn, and
each gets its own deadline once its request is written. Faults are the gRPC ones: no reply in time is a timeout, a
line that is not JSON or not a reply is a malformed reply, an index out of range an illegal action, the end of its
stdout a crash. A reply's ``belief`` is read apart from its choice: one that is not a ``Belief`` is a fault of the
belief alone (:func:`arena.players.client.decision_of`), as any refused belief is.

A reply that comes after its deadline, or after the caller gave up on the request (a cancelled game, the server's
Cancel relayed by ``arena connect``), is still owed: the arena remembers it and throws it away when it comes, so the
next request's answer is never taken for the last one's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

import trio
from google.protobuf import json_format
from google.protobuf.message import Message

from arena.display import seconds_label
from arena.players.base import DecisionRequest
from arena.players.client import BotClient
from arena.players.faults import BotFailure, FaultKind
from arena.protocol import MAX_MESSAGE_BYTES, bot_pb2
from arena.protocol.convert import act_request_pb

NOTIFY_TIMEOUT_S = 2.0


class StdioBot(BotClient):
    """The arena's end of a stdio bot: a writer to its stdin and a line reader on its stdout."""

    def __init__(self, stdin: trio.abc.SendStream, stdout: trio.abc.ReceiveStream, name: str,
                 explain: Callable[[BotFailure], BotFailure] | None = None) -> None:
        super().__init__(name, "stdio", explain)
        self._stdin = stdin
        self._stdout = stdout
        self._buffer = bytearray()
        self._lock = trio.Lock()
        self._owed = 0
        """Replies the bot still owes for requests whose deadline passed: thrown away when they come."""

    def close(self) -> None:
        """The pipes are closed by the process's stop; nothing to do here (the BotClient interface)."""

    async def _hello(self, request: bot_pb2.HelloRequest, timeout_s: float, budget_s: float) -> bot_pb2.HelloReply:
        try:
            line = await self._call("hello", request, timeout_s)
        except BotFailure as failure:
            if failure.kind is FaultKind.TIMEOUT:
                raise BotFailure(FaultKind.START_FAILED,
                                 detail=f"no handshake on stdin/stdout within {seconds_label(budget_s)}") from None
            if failure.kind is FaultKind.CRASHED:
                raise BotFailure(FaultKind.START_FAILED, detail=str(failure)) from None
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=str(failure)) from None
        try:
            return _parse(line, bot_pb2.HelloReply())
        except ValueError as error:
            raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=f"the hello reply is not a HelloReply: {error}") from None

    async def _act(self, request: DecisionRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, float]:
        started = time.perf_counter()
        try:
            line = await self._call("act", act_request_pb(request), timeout_s, started_at=lambda: started)
            try:
                reply, unread = _parse_act_reply(line)
            except ValueError as error:
                raise BotFailure(FaultKind.MALFORMED_REPLY, detail=f"the line is not an ActReply: {error}") from None
            self._keep_unread(reply, unread)
        except BotFailure as failure:
            raise self._explain(failure) from None
        return reply, time.perf_counter() - started

    async def _notify(self, message: bot_pb2.Notification) -> None:
        """Best effort, never a fault: written when the channel is free, within a short time."""
        with trio.move_on_after(NOTIFY_TIMEOUT_S):
            async with self._lock:
                try:
                    await self._write("notify", message)
                except BotFailure:
                    pass

    async def _call(self, call: str, message: Any, timeout_s: float,
                    started_at: Callable[[], float] | None = None) -> bytes:
        """Write one request and read its reply line, one call at a time; the deadline starts once it is written."""
        async with self._lock:
            await self._write(call, message)
            try:
                with trio.fail_after(timeout_s):
                    while self._owed:
                        await self._read_line()
                        self._owed -= 1
                    return await self._read_line()
            except trio.TooSlowError:
                self._owed += 1
                raise BotFailure(FaultKind.TIMEOUT, allowed_ms=int(timeout_s * 1000)) from None
            except trio.Cancelled:  # the caller gave up on it (a game cancelled, a relay's Cancel): its line is owed
                self._owed += 1
                raise

    async def _write(self, call: str, message: Any) -> None:
        # Every field, zeros too: a newcomer's bot reads tile["low"] of [0|3] without a special case.
        body = json_format.MessageToDict(message, always_print_fields_with_no_presence=True)
        line = json.dumps({call: body}, separators=(",", ":")).encode() + b"\n"
        try:
            await self._stdin.send_all(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            raise BotFailure(FaultKind.CRASHED, detail=f"its stdin is closed ({error})") from None

    async def _read_line(self) -> bytes:
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                self._buffer.clear()
                raise BotFailure(FaultKind.MALFORMED_REPLY, detail=f"a line longer than {MAX_MESSAGE_BYTES} bytes")
            try:
                data = await self._stdout.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                raise BotFailure(FaultKind.CRASHED, detail=f"its stdout is closed ({error})") from None
            if not data:
                raise BotFailure(FaultKind.CRASHED, detail="its stdout ended (the bot exited)")
            self._buffer += data
        end = self._buffer.index(b"\n")
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line


M = TypeVar("M", bound=Message)


def _parse_act_reply(line: bytes) -> tuple[bot_pb2.ActReply, str]:
    """An act reply line, its belief read apart: a belief that is not a ``Belief`` is dropped, and the reason
    returned, so that it is a fault of the belief, never of the choice."""
    data = _object(line)
    belief = data.pop("belief", None)
    reply = _parse_object(data, bot_pb2.ActReply())
    if belief is None:
        return reply, ""
    try:
        reply.belief.CopyFrom(_parse_object(belief, bot_pb2.Belief()))
    except ValueError as error:
        return reply, f"the belief is not a Belief: {error}"
    return reply, ""


def _parse(line: bytes, message: M) -> M:
    """One reply line into ``message``: JSON, an object, and the message's JSON mapping (unknown fields refused)."""
    return _parse_object(_object(line), message)


def _object(line: bytes) -> dict[str, Any]:
    """A line's JSON object; ValueError if it is not one."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"not JSON ({error}): {line[:120]!r}") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {line[:120]!r}")
    return data


def _parse_object(data: Any, message: M) -> M:
    """A JSON value into ``message`` by protobuf's JSON mapping (unknown fields refused); ValueError if it does not
    fit."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return json_format.ParseDict(data, message)
    except (json_format.ParseError, RecursionError) as error:
        raise ValueError(str(error)) from None
