"""Bots that dial in: the arena's side of a bot that connected out to the server (``proto/dominoes/v1/dial_in.proto``).

A dial-in bot is one stream, however many games it plays: :class:`DialInConnection` holds it on the trio thread (the
requests in flight by id, the replies matched to them, the messages to send), and :class:`DialInBot` is the
:class:`~arena.players.client.BotClient` the referee plays a seat through, exactly as it plays a started or an
addressed bot: the same handshake checks, the same clock (a decision is timed from when its request is handed to the
stream to when its reply reaches the trio thread, so the network's latency is the bot's), the same faults, and the
same end of a decision the arena gives up on (a timeout, a cancelled game): a bot the arena runs sees its call
cancelled, a dial-in bot is sent a ``Cancel`` of the request.

:class:`DialInRegistry` knows which bots the server's tournaments wait for (each by its name and its token's
SHA-256) and which are connected; a tournament's :class:`~arena.players.process.BotProcess` of a dial-in entrant asks
it for the bot's connection, waiting for it up to its start time. The server's gRPC side
(``arena/server/dial_in.py``) only moves messages between the stream and these objects.

Everything here runs on the trio thread; the stream is grpc.aio's, on that same thread (:func:`arena.guest.run`),
and calls these objects directly.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import grpc
import trio

from arena.guest import Outbox
from arena.players.base import DecisionRequest
from arena.players.client import BotClient, accept_hello
from arena.players.faults import BotFailure, FaultKind
from arena.protocol import bot_pb2, dial_in_pb2
from arena.protocol.convert import act_request_pb

MAX_ABANDONED = 10_000
"""Ids of requests given up on (timed out, cancelled) whose late replies are still let through quietly."""
MAX_BELIEF_PROBLEM = 500
"""The longest reason for a dropped belief a relay may send that the arena keeps (the record's fault message)."""
GAME_STOPPED = "the game was stopped"
"""The reason a Cancel gives when the arena gave up on a request before its deadline: the waiting game was
cancelled (a tournament cancelled, the server stopping)."""


class DialInRefused(Exception):
    """A dial-in stream the arena does not accept: the status it is closed with and a one-line message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def token_digest(token: str) -> str:
    """The SHA-256 of a token as a tournament file writes it (64 lowercase hex digits)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Close:
    """The end of a stream, as put on its outbox: the status the server closes it with (OK: a clean end)."""

    code: grpc.StatusCode
    message: str


@dataclass
class _Pending:
    """A decision request in flight: set once its reply, or the stream's end, has come."""

    done: trio.Event
    reply: bot_pb2.ActReply | None = None
    belief_problem: str = ""
    """Why the relay dropped the reply's belief (``PlayRequest.belief_problem``), cut to :data:`MAX_BELIEF_PROBLEM`."""
    received_at: float = 0.0
    failure: BotFailure | None = None


class DialInConnection:
    """One accepted dial-in stream, on the trio thread: what to send (``outbox``, read by the stream's writer)
    and the decision requests waiting for their replies."""

    def __init__(self, bot: str, digest: str, hello: bot_pb2.HelloReply) -> None:
        self.bot = bot
        self.digest = digest
        self.hello = hello
        self.outbox: Outbox[dial_in_pb2.PlayResponse | Close] = Outbox()
        self.closed = False
        self.why = ""
        self._kind = FaultKind.CRASHED
        """The fault of a decision the ended stream cannot make: a crash, or a malformed reply when the bot broke
        the protocol."""
        """Why the stream ended, once it has."""
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._abandoned: dict[int, None] = {}
        """Requests given up on, oldest first: a reply to one of them is late, not a protocol error."""

    # --- what the referee's side does ---

    async def decide(self, request: bot_pb2.ActRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, float, str]:
        """Send one decision request and wait up to ``timeout_s`` for its reply; the reply, the time the arena
        measured, and why the relay dropped the belief the bot sent with it ("" when it did not). Raises
        :class:`BotFailure`: TIMEOUT, or CRASHED (the stream ended), or MALFORMED_REPLY (the bot broke the protocol
        on it). Given up on (the time ran out, or the game was cancelled meanwhile), the request
        is withdrawn on the stream with a Cancel."""
        if self.closed:
            raise BotFailure(self._kind, detail=f"the dial-in stream ended: {self.why}")
        request_id = next(self._ids)
        pending = _Pending(trio.Event())
        self._pending[request_id] = pending
        started = time.perf_counter()
        self.outbox.put(dial_in_pb2.PlayResponse(request_id=request_id, act=request))
        allowed_ms = int(timeout_s * 1000)
        try:
            with trio.move_on_after(timeout_s) as clock:
                await pending.done.wait()
        finally:
            if self._pending.pop(request_id, None) is not None and pending.reply is None:
                # its time ran out, or (the clock still running) the game waiting for it was cancelled
                self._give_up(request_id, str(BotFailure(FaultKind.TIMEOUT, allowed_ms=allowed_ms))
                              if clock.cancelled_caught else GAME_STOPPED)
        if pending.failure is not None:
            raise pending.failure
        if pending.reply is None:
            raise BotFailure(FaultKind.TIMEOUT, allowed_ms=allowed_ms)
        return pending.reply, pending.received_at - started, pending.belief_problem

    def notify(self, message: bot_pb2.Notification) -> None:
        """Send a notification (no reply); nothing when the stream has ended."""
        if not self.closed:
            self.outbox.put(dial_in_pb2.PlayResponse(notification=message))

    def close(self, code: grpc.StatusCode, message: str) -> None:
        """End the stream with this status; every request in flight fails (CRASHED, or MALFORMED_REPLY when the
        bot broke the protocol)."""
        if self.closed:
            return
        self.closed = True
        self.why = message
        if code not in (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED):
            self._kind = FaultKind.MALFORMED_REPLY
        for pending in self._pending.values():
            pending.failure = BotFailure(self._kind, detail=f"the dial-in stream ended: {message}")
            pending.done.set()
        self._pending.clear()
        self.outbox.put(Close(code, message))

    # --- what the stream's reader hands over ---

    def received(self, message: dial_in_pb2.PlayRequest) -> bool:
        """One message from the bot; False when it broke the protocol (the stream is then closed, with the reason,
        and the reader stops reading)."""
        if self.closed:
            return False
        which = message.WhichOneof("message")
        problem = None
        if which == "hello":
            problem = "a second hello: the hello is sent once, first"
        elif which is None:
            problem = "a message with neither hello nor act set"
        else:
            pending = self._pending.get(message.request_id)
            if pending is None:
                if message.request_id in self._abandoned:
                    del self._abandoned[message.request_id]
                    return True  # a late reply to a request given up on: the fault is recorded already
                problem = f"a reply to request {message.request_id}, which was never sent or was answered already"
            else:
                del self._pending[message.request_id]
                pending.reply = message.act
                pending.belief_problem = message.belief_problem[:MAX_BELIEF_PROBLEM]
                pending.received_at = time.perf_counter()
                pending.done.set()
                return True
        self.broke(problem)
        return False

    def broke(self, problem: str) -> None:
        """The bot sent what the protocol does not allow: the stream ends with INVALID_ARGUMENT, saying what."""
        self.close(grpc.StatusCode.INVALID_ARGUMENT, f"the bot broke the dial-in protocol: {problem}")

    def lost(self, detail: str) -> None:
        """The stream ended on the bot's side (or the network's)."""
        self.close(grpc.StatusCode.UNAVAILABLE, detail)

    def _give_up(self, request_id: int, why: str) -> None:
        """The arena no longer waits for this request's reply (timed out, or its game cancelled): the bot is told,
        as a bot the arena runs sees its call cancelled, and a late reply is let through quietly."""
        self._abandoned[request_id] = None
        if len(self._abandoned) > MAX_ABANDONED:
            del self._abandoned[next(iter(self._abandoned))]
        self.outbox.put(dial_in_pb2.PlayResponse(request_id=request_id, cancel=dial_in_pb2.Cancel(reason=why)))


class DialInBot(BotClient):
    """A seat's bot over a dial-in stream: the referee's client, like :class:`~arena.players.remote.RemoteBot`.
    Several of them (a tournament's processes of one entrant, in every game) share one connection."""

    def __init__(self, connection: DialInConnection, name: str) -> None:
        super().__init__(name, f"dial-in:{connection.bot}")
        self.connection = connection

    def close(self) -> None:
        """Nothing to let go of: the stream is the bot's, shared by every seat it plays."""

    async def _hello(self, request: bot_pb2.HelloRequest, timeout_s: float, budget_s: float) -> bot_pb2.HelloReply:
        """The bot said hello when it dialed in (and was welcomed with the arena's own)."""
        return self.connection.hello

    async def _act(self, request: DecisionRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, float]:
        reply, think, belief_problem = await self.connection.decide(act_request_pb(request), timeout_s)
        self._keep_unread(reply, belief_problem)  # a belief the relay could not read is a fault of the belief here
        return reply, think

    async def _notify(self, message: bot_pb2.Notification) -> None:
        self.connection.notify(message)


class DialInRegistry:
    """The dial-in bots the server's tournaments wait for, and the ones connected (on the trio thread)."""

    def __init__(self) -> None:
        self._expected: Counter[tuple[str, str]] = Counter()
        """(bot name, token digest) -> how many active tournaments name that entry."""
        self._connected: dict[tuple[str, str], DialInConnection] = {}
        self._arrived = trio.Event()
        self.on_attach: list[Callable[[], None]] = []
        """Called (on the trio thread) each time a bot dials in: a league's ladder looks again at once."""

    def expect(self, bots: Iterable[object]) -> None:
        """A tournament names these bots (its BotSpecs, typed loosely: arena/players/process.py imports this module;
        only the dial-in ones count)."""
        for bot in bots:
            if getattr(bot, "dial_in", False):  # a dial-in BotSpec, which has a name and a token digest
                self._expected[(bot.name, bot.token_sha256)] += 1  # type: ignore[attr-defined]

    def forget(self, bots: Iterable[object]) -> None:
        """The tournament is over: a bot no active tournament names any more is told so and its stream ends."""
        for bot in bots:
            if not getattr(bot, "dial_in", False):
                continue
            key = (bot.name, bot.token_sha256)  # type: ignore[attr-defined]  # a dial-in BotSpec, as in expect()
            self._expected[key] -= 1
            if self._expected[key] <= 0:
                del self._expected[key]
                connection = self._connected.pop(key, None)
                if connection is not None:
                    connection.close(grpc.StatusCode.OK, "no tournament or league on this server waits for this bot any more")

    def authenticate(self, token: str | None) -> tuple[str, list[str]]:
        """The token's digest and the bots it may play as, or UNAUTHENTICATED (:class:`DialInRefused`) when it is
        missing or the token of no bot waited for. The server asks before it reads the stream's first message, so
        that a caller without credentials learns nothing of what the protocol accepts and holds no thread waiting
        for a hello."""
        if token is None:
            raise DialInRefused(grpc.StatusCode.UNAUTHENTICATED,
                                "missing token: send the metadata 'authorization: Bearer <token>' (arena connect "
                                "--token-file F)")
        digest = token_digest(token)
        matches = [name for name, expected in self._expected if hmac.compare_digest(expected, digest)]
        if not matches:
            raise DialInRefused(grpc.StatusCode.UNAUTHENTICATED,
                                "wrong token: it is the token of no dial-in bot a tournament or league on this server waits for")
        return digest, matches

    def attach(self, hello: dial_in_pb2.DialInHello, token: str | None) -> DialInConnection:
        """Accept a stream's hello with the call's token, or refuse it (:class:`DialInRefused`). The token is
        checked again: what the server waits for may have changed since the stream opened. A new stream of a bot
        that is connected already replaces the old one (a bot reconnecting after its network dropped)."""
        digest, matches = self.authenticate(token)
        if hello.bot not in matches:
            raise DialInRefused(grpc.StatusCode.PERMISSION_DENIED,
                                f"this token is another bot's: it does not let its holder play as {hello.bot!r}")
        try:
            accepted = accept_hello(hello.hello)
        except BotFailure as failure:
            raise DialInRefused(grpc.StatusCode.INVALID_ARGUMENT, f"hello refused: {failure}") from None
        key = (hello.bot, digest)
        old = self._connected.get(key)
        if old is not None:
            old.close(grpc.StatusCode.ABORTED, "replaced by a new stream of the same bot")
        connection = DialInConnection(hello.bot, digest, accepted)
        self._connected[key] = connection
        self._arrived.set()
        self._arrived = trio.Event()
        for listener in self.on_attach:
            listener()
        return connection

    def detach(self, connection: DialInConnection) -> None:
        """A stream is over: it no longer serves its bot."""
        key = (connection.bot, connection.digest)
        if self._connected.get(key) is connection:
            del self._connected[key]

    def connected(self, bot: str, digest: str) -> bool:
        """Whether the bot has a live stream now."""
        connection = self._connected.get((bot, digest))
        return connection is not None and not connection.closed

    async def connection(self, bot: str, digest: str, timeout_s: float) -> DialInConnection:
        """The bot's live stream, waiting up to ``timeout_s`` for it to dial in; START_FAILED if it does not."""
        with trio.move_on_after(timeout_s):
            while True:
                connection = self._connected.get((bot, digest))
                if connection is not None and not connection.closed:
                    return connection
                await self._arrived.wait()
        raise BotFailure(FaultKind.START_FAILED,
                         detail=f"bot {bot!r} did not dial in within {timeout_s:g} s (its owner runs `arena connect "
                                f"--server ADDR --bot {bot} --token-file F -- COMMAND`)")

    def close_all(self, message: str) -> None:
        """The server is stopping: end every stream with UNAVAILABLE."""
        for connection in list(self._connected.values()):
            connection.close(grpc.StatusCode.UNAVAILABLE, message)
        self._connected.clear()


REGISTRY = DialInRegistry()
"""The registry of this process: the server feeds it streams, its tournaments' dial-in entrants take them from it."""
