"""``arena connect``'s relay: a bot of any kind run on its owner's machine, dialed in to a remote arena server.

The relay starts the bot as the arena would (a :class:`~arena.players.process.BotProcess`: a gRPC bot, a stdio bot,
a kit binary; not sandboxed, as it is the owner's own program on the owner's machine), takes its handshake, and
opens one ``DialInService.Play`` stream to the server (``proto/dominoes/v1/dial_in.proto``): the hello with the
bot's own, then each decision request is handed to it as the arena would have sent it to a local bot (a gRPC bot
gets the request's own bytes, any other bot the request rebuilt for its protocol; several at once, as the server
sends them), and its reply goes back unchanged, for the server to check (with, when a stdio bot's belief could not
be read and was left out, the reason: ``PlayRequest.belief_problem``, a fault of the belief at the server). A bot
that crashed is started again for the next request; a request it cannot answer is left unanswered (the server's
clock runs out on it). When the server
gives up on a request (its ``Cancel``: a timeout, a game cancelled), the local call is cancelled, so the local bot
sees CANCELLED as a bot the arena runs itself does, and nothing is sent back.

The bot is a :class:`LocalBot`: :class:`ProcessBot` for a program the relay starts (``arena connect``), or a Python
botkit policy called in the bot's own process (``--connect``, :mod:`arena.botkit`), which saves the local hop.

The gRPC stream is grpc.aio's, on the thread trio runs on (the relay runs under :func:`arena.guest.run`): a reader
task on the loop hands what the server sends to trio through a memory channel, as it is read (what arrives together
wakes trio once), and a writer task writes what the relay's outbox holds as it is put.

:func:`relay_with_reconnects` dials again when a stream drops (the network, a server restarting), on a fresh channel
each time, after a doubling pause, and gives up after a bounded number of attempts in a row that got no welcome. It
stops at once when the server ends the stream cleanly or refuses the bot (:data:`FINAL`: a wrong token is not
fixed by trying again, and a bot replaced by another stream of itself must not fight it for its place).

The relay times each decision on its side, from the request's arrival to its reply leaving (:class:`Latency`): the
local bot's thinking and the relay's own cost. The arena's think time for the bot (its standings) is that plus the
network's round trip. It counts the decisions the arena took: not one it cancelled, nor one whose reply crossed the
server's Cancel on the way (the arena ignored that reply).
"""

from __future__ import annotations

import asyncio
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
import grpc.aio
import trio

from arena import guest
from arena.futures import until_interrupted
from arena.guest import Outbox
from arena.players.backoff import Backoff as Backoff
from arena.players.base import DecisionRequest
from arena.players.client import wire_logged
from arena.players.faults import BotFailure, FaultKind
from arena.players.process import BotProcess
from arena.players.remote import RemoteBot
from arena.protocol import bot_pb2, dial_in_pb2, dial_in_pb2_grpc
from arena.protocol.convert import observation_from_pb, options_from_pb
from arena.rules import Game, new_game

NO_DEADLINE_S = 60.0
"""A request from an arena that sends no deadline is given this long."""
FINAL = frozenset({
    grpc.StatusCode.OK,  # the server said farewell: no tournament waits for the bot any more
    grpc.StatusCode.UNAUTHENTICATED,  # no token, or one of no bot the server waits for
    grpc.StatusCode.PERMISSION_DENIED,  # another bot's token
    grpc.StatusCode.INVALID_ARGUMENT,  # the hello was refused, or the stream broke the protocol
    grpc.StatusCode.FAILED_PRECONDITION,  # the server refuses plain text beyond loopback
    grpc.StatusCode.ABORTED,  # another stream of the same bot replaced this one
    grpc.StatusCode.UNIMPLEMENTED,  # no dial-in service there
})
"""How a stream ends that dialing again would not mend; any other end (UNAVAILABLE, CANCELLED, ...) is retried."""
LATENCY_SAMPLES = 10_000
"""The most recent decisions :class:`Latency` keeps (a relay may run for days)."""
RECEIVED_BUFFER = 256
"""Messages from the server read ahead of the relay taking them."""
ANSWERED_KEPT = 1_000
"""The most recent replies sent whose request a Cancel may still withdraw (a Cancel crosses a reply within a round
trip; this is many more)."""


class RelayError(Exception):
    """The stream could not be opened or ended with an error: a one-line message (its status and details)."""


@dataclass
class Ended:
    """The server's stream is over: OK (with its message) or an error."""

    code: grpc.StatusCode
    details: str


def decision_request(message: bot_pb2.ActRequest, games: dict[tuple[str, int], Game]) -> DecisionRequest:
    """The engine's request for a received ActRequest (the inverse of the arena's encoding), so that the local bot
    is sent what the arena sends a bot it runs itself. ``games`` caches each match's game."""
    key = (message.variant, message.observation.players)
    game = games.get(key)
    options = options_from_pb(message.options)
    if game is None or dict(game.options) != options:
        game = games[key] = new_game(message.variant, message.observation.players, options)
    return DecisionRequest(match_id=message.match_id, game=game, seat=message.seat,
                           observation=observation_from_pb(message.observation, game),
                           move_number=message.move_number, move_ms=message.time.move_ms,
                           bank_ms=message.time.bank_ms, deadline_ms=message.time.deadline_ms)


@dataclass
class Latency:
    """The relay's own time per decision, request received to reply sent, in ms (the latest
    :data:`LATENCY_SAMPLES`)."""

    samples: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))

    def add(self, ms: float) -> None:
        self.samples.append(ms)

    def discard(self, ms: float) -> None:
        """Take back a decision added (one sample of ``ms``), if it is still among the samples kept."""
        try:
            self.samples.remove(ms)
        except ValueError:
            pass

    def quantile(self, fraction: float) -> float | None:
        """The ``fraction`` quantile (0.5: the median), by the nearest rank; None before any decision."""
        if not self.samples:
            return None
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]

    def report(self, decisions: int) -> str:
        """One line: the decisions served and the latency seen here."""
        if not self.samples:
            return f"served {decisions} decisions"
        return (f"served {decisions} decisions; round trip here (request received to reply sent): median "
                f"{self.quantile(0.5):.1f} ms, p90 {self.quantile(0.9):.1f} ms (the arena's think time for this bot, in its standings, "
                f"adds the network's round trip)")


@dataclass
class InFlight:
    """A decision the local bot is making: the scope its call runs in (cancelled when the server withdraws the
    request), and the server's reason once it has."""

    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    withdrawn: str = ""


class LocalBot(Protocol):
    """What the relay plays through: the bot on its owner's machine, however it is reached."""

    async def hello(self) -> bot_pb2.HelloReply:
        """Its handshake (starting it first if need be); raises :class:`BotFailure` when it cannot start."""

    async def decide(self, message: bot_pb2.ActRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, str]:
        """Its reply to a request as the server sent it, and why the belief it sent could not be read and was left
        out of the reply ("" when it was not: the server records a reason as a fault of the belief); raises
        :class:`BotFailure` when it has none, ValueError or KeyError for a request it cannot take."""

    async def notify(self, message: bot_pb2.Notification) -> None: ...

    async def stop(self) -> None: ...


class ProcessBot:
    """A bot of any kind that the relay starts (:class:`~arena.players.process.BotProcess`, not sandboxed: its
    owner's own program) and calls as the arena calls a bot it runs: a gRPC bot is sent the ActRequest as the arena
    encoded it (what an arena running the bot sends it), any other bot the request rebuilt into the engine's (see
    :func:`decision_request`) and encoded for its protocol (and, with the wire log on, every bot, so that the log
    names the decision). Started again after a crash, for the next request."""

    def __init__(self, process: BotProcess) -> None:
        self.process = process
        self._games: dict[tuple[str, int], Game] = {}

    async def hello(self) -> bot_pb2.HelloReply:
        client = await self.process.ensure_running()
        assert client.hello is not None
        return client.hello

    async def decide(self, message: bot_pb2.ActRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, str]:
        client = await self.process.ensure_running()
        if isinstance(client, RemoteBot) and not wire_logged():
            # a gRPC bot is sent the request the arena encoded, which is what it would be sent by an arena running it
            reply, _ = await client.act_encoded(message.SerializeToString(), timeout_s)
            return reply, ""
        reply, _ = await client.reply(decision_request(message, self._games), timeout_s)
        return reply, client.unread_belief(reply)  # a stdio line's belief that is not a Belief

    async def notify(self, message: bot_pb2.Notification) -> None:
        client = self.process.client
        if client is not None:
            await client.notify(message)

    async def stop(self) -> None:
        await self.process.stop()


class PolicyBot:
    """A policy in this process as the relay's :class:`LocalBot` (the botkit's ``--connect``): each decision on a
    worker thread (a policy may think for seconds while other games' requests arrive), its exceptions a crash of that
    decision only, as the gRPC server makes them. A decision given up on (its deadline passed here, or the relay
    cancelled it on the server's Cancel) leaves the thread to finish alone, its answer dropped, and ``given_up`` true
    for it."""

    def __init__(self, hello: bot_pb2.HelloReply,
                 reply: Callable[[bot_pb2.ActRequest, Callable[[], bool]], bot_pb2.ActReply],
                 on_notify: Callable[[bot_pb2.Notification], None] | None, no_legal_actions: str) -> None:
        self._hello = hello
        self._reply = reply
        self._on_notify = on_notify
        self._no_legal_actions = no_legal_actions

    async def hello(self) -> bot_pb2.HelloReply:
        return self._hello

    async def decide(self, message: bot_pb2.ActRequest, timeout_s: float) -> tuple[bot_pb2.ActReply, str]:
        if not message.observation.legal_actions:
            raise ValueError(self._no_legal_actions)
        given_up = threading.Event()
        try:
            with trio.move_on_after(timeout_s):
                try:
                    reply = await trio.to_thread.run_sync(self._reply, message, given_up.is_set,
                                                          abandon_on_cancel=True)
                    return reply, ""  # a message built here: its belief is a Belief
                except Exception as error:  # the policy's own bug: this decision fails, the bot goes on
                    raise BotFailure(FaultKind.CRASHED, detail=f"the policy raised {type(error).__name__}: "
                                                                f"{str(error)[:200]}") from None
            raise BotFailure(FaultKind.TIMEOUT, allowed_ms=int(timeout_s * 1000))
        finally:
            given_up.set()  # answered (nothing left to tell), timed out or cancelled: the thread may stop

    async def notify(self, message: bot_pb2.Notification) -> None:
        if self._on_notify is not None:
            self._on_notify(message)

    async def stop(self) -> None:
        """Nothing to stop: the policy is this process."""


class Relay:
    """One local bot and its dial-in streams (one at a time)."""

    def __init__(self, local: LocalBot, channel: grpc.aio.Channel | None, bot: str,
                 metadata: tuple[tuple[str, str], ...], say: Any = None) -> None:
        self.local = local
        self.channel = channel
        """The channel of the next stream (:func:`relay_with_reconnects` gives each attempt a fresh one)."""
        self.bot = bot
        self.metadata = metadata
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.outbox: Outbox[dial_in_pb2.PlayRequest | None] = Outbox()
        self.decisions = 0
        self.latency = Latency()
        self.in_flight: dict[int, InFlight] = {}
        """The decisions the local bot is making, by request id."""
        self.answered: dict[int, float] = {}
        """The latest replies sent (request id to the latency counted), oldest first: a Cancel that crossed one
        takes it back."""
        self.welcomed = False
        """The current stream was welcomed (the server accepted the bot)."""
        self.farewell = ""
        """Why the server ended the stream cleanly (its Farewell), once it has."""

    async def run(self) -> Ended:
        """Start the bot (unless it runs already), dial in, and relay until the stream ends; how it ended."""
        hello = await self.local.hello()
        assert self.channel is not None
        outbox: Outbox[dial_in_pb2.PlayRequest | None] = Outbox()
        self.outbox = outbox  # a stream of its own: the last one's writer has ended
        self.answered = {}  # request ids are the stream's own
        self.welcomed, self.farewell = False, ""
        outbox.put(dial_in_pb2.PlayRequest(hello=dial_in_pb2.DialInHello(bot=self.bot, hello=hello)))
        stub: Any = dial_in_pb2_grpc.DialInServiceStub(self.channel)  # grpc-stubs type it as grpcio's
        call = stub.Play(metadata=self.metadata)  # no request iterator: the writer task writes
        send, receive = trio.open_memory_channel[Any](RECEIVED_BUFFER)
        loop = asyncio.get_running_loop()
        reader = loop.create_task(self._read(call, send))
        writer = loop.create_task(self._write(call, outbox))
        try:
            async with trio.open_nursery() as nursery:
                async for message in receive:
                    if isinstance(message, Ended):
                        nursery.cancel_scope.cancel()
                        return message
                    self._take(nursery, *message)
        finally:
            call.cancel()
            reader.cancel()
            writer.cancel()
        return Ended(grpc.StatusCode.OK, "")  # pragma: no cover (the reader always sends how it ended)

    async def _read(self, call: Any, send: trio.MemorySendChannel[Any]) -> None:
        """The reader task (on the loop): each message the server sends, with the time it arrived, to trio, and
        last how the stream ended."""
        try:
            while (message := await call.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]  # as in guest
                await self._hand_over(send, (message, time.perf_counter()))
            code = await call.code()
            ended = Ended(code, self.farewell if code == grpc.StatusCode.OK else await call.details() or "")
        except grpc.aio.AioRpcError as error:
            ended = Ended(error.code(), error.details() or "")
        await self._hand_over(send, ended)

    @staticmethod
    async def _hand_over(send: trio.MemorySendChannel[Any], item: Any) -> None:
        """To trio, at once while the channel has room (the usual case: the relay takes a message as it comes);
        waiting for room when it has none, so that the server is read no faster than the relay takes."""
        try:
            guest.from_loop(send.send_nowait, item)
        except trio.WouldBlock:
            await guest.await_trio(send.send, item)

    @staticmethod
    async def _write(call: Any, outbox: Outbox[dial_in_pb2.PlayRequest | None]) -> None:
        """The writer task (on the loop): what the outbox holds, in order, until its None (or the stream ends)."""
        try:
            while True:
                message = await outbox.take()
                if message is None:
                    await call.done_writing()
                    return
                await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):  # the stream is over: the reader says how
            pass

    def _take(self, nursery: trio.Nursery, message: dial_in_pb2.PlayResponse, received: float) -> None:
        which = message.WhichOneof("message")
        if which == "welcome":
            self.welcomed = True
            self.say(f"connected as {self.bot} (arena {message.welcome.arena_version}); waiting for games")
        elif which == "act":
            # registered before the task runs, so that a Cancel read right after the request finds it
            self.in_flight[message.request_id] = InFlight()
            nursery.start_soon(self._decide, message.request_id, message.act, received)
        elif which == "cancel":
            self._withdraw(message.request_id, message.cancel.reason)
        elif which == "notification":
            nursery.start_soon(self._notify, message.notification)
        elif which == "farewell":
            self.farewell = message.farewell.reason

    async def _decide(self, request_id: int, message: bot_pb2.ActRequest, received: float) -> None:
        """One decision: the local bot's reply, sent back as it came; nothing when the bot cannot answer, or when
        the server withdrew the request meanwhile (the local call is then cancelled)."""
        timeout_s = message.time.deadline_ms / 1000 if message.time.deadline_ms else NO_DEADLINE_S
        thinking = self.in_flight[request_id]
        try:
            with thinking.scope:
                reply, belief_problem = await self.local.decide(message, timeout_s)
        except BotFailure as failure:
            self.say(f"the bot did not answer request {request_id} (match {message.match_id[:8]}): {failure}")
            return
        except (ValueError, KeyError) as error:  # a request the rules engine cannot rebuild: never from an arena
            self.say(f"cannot relay request {request_id}: {error}")
            return
        finally:
            del self.in_flight[request_id]
        if thinking.scope.cancelled_caught:
            self.say(f"the arena gave up on request {request_id} (match {message.match_id[:8]}): "
                     f"{thinking.withdrawn}; the bot's decision was cancelled")
            return
        self._send(request_id, reply, (time.perf_counter() - received) * 1000, belief_problem)

    def _send(self, request_id: int, reply: bot_pb2.ActReply, latency_ms: float, belief_problem: str = "") -> None:
        """A reply to the server, counted as served (until a Cancel that crossed it takes it back), with why the
        bot's belief was left out of it, if it was: the server records that as the bot's fault of the belief."""
        self.outbox.put(dial_in_pb2.PlayRequest(request_id=request_id, act=reply, belief_problem=belief_problem))
        self.decisions += 1
        self.latency.add(latency_ms)
        self.answered[request_id] = latency_ms
        if len(self.answered) > ANSWERED_KEPT:
            del self.answered[next(iter(self.answered))]

    def _withdraw(self, request_id: int, reason: str) -> None:
        """The server gave up on a request: the local bot's call is cancelled if it is still thinking; a reply
        already sent reached the server too late and is not counted."""
        thinking = self.in_flight.get(request_id)
        if thinking is not None:
            thinking.withdrawn = reason or "cancelled"
            thinking.scope.cancel()
        elif (latency_ms := self.answered.pop(request_id, None)) is not None:
            self.decisions -= 1
            self.latency.discard(latency_ms)

    async def _notify(self, message: bot_pb2.Notification) -> None:
        await self.local.notify(message)


async def relay_with_reconnects(relay: Relay, open_channel: Callable[[], grpc.aio.Channel],
                                backoff: Backoff = Backoff()) -> Ended:
    """Relay over one stream after another until one ends for good (:data:`FINAL`) or ``backoff.attempts``
    attempts in a row got no welcome; how the last one ended. A stream that was welcomed starts the count
    again. Each attempt gets a fresh channel (a channel that failed waits out its own backoff, up to minutes,
    before it connects again)."""
    failures = 0
    while True:
        relay.channel = open_channel()
        try:
            ended = await relay.run()
        finally:
            asyncio.get_running_loop().create_task(relay.channel.close(None))  # the host's loop runs it to its end
        if ended.code in FINAL:
            return ended
        failures = 1 if relay.welcomed else failures + 1
        if failures > backoff.attempts:
            return Ended(ended.code, f"{ended.details} (gave up after {backoff.attempts} attempts in a row "
                                     f"without a welcome)" if backoff.attempts else ended.details)
        delay = backoff.delay_s(failures)
        relay.say(f"the stream ended ({ended.code.name}: {ended.details}); {relay.latency.report(relay.decisions)}; "
                  f"dialing again in {delay:g} s (attempt {failures} of {backoff.attempts})")
        await trio.sleep(delay)


async def dial_in(relay: Relay, open_channel: Callable[[], grpc.aio.Channel], backoff: Backoff = Backoff()
                  ) -> Ended | None:
    """:func:`relay_with_reconnects` until a stream ends for good, or until SIGINT (Ctrl-C) or SIGTERM: then
    None, the stream cancelled. The local bot is stopped either way. (A signal, not KeyboardInterrupt: that can land
    inside grpc.) Raises :class:`BotFailure` when the local bot does not start."""
    try:
        return await until_interrupted(lambda: relay_with_reconnects(relay, open_channel, backoff), (BotFailure,))
    finally:
        await relay.local.stop()


def dial_in_until_done(relay: Relay, open_channel: Callable[[], grpc.aio.Channel], backoff: Backoff) -> Ended | None:
    """:func:`dial_in` run to its end on a trio loop of its own (the botkit's ``--connect``, which has none)."""
    return guest.run(dial_in, relay, open_channel, backoff)


def last_words(relay: Relay, ended: Ended | None, where: str = "") -> tuple[int, list[str]]:
    """How a dial-in ends, for its owner: the exit status (0: the server ended it cleanly; 1: it refused the bot,
    or could not be reached; 130: stopped by a signal) and the lines to print (the latency report first; ``where``:
    more to say after an error, such as the bot's log)."""
    report = relay.latency.report(relay.decisions)
    if ended is None:
        return 130, [f"interrupted: {report}"]
    if ended.code == grpc.StatusCode.OK:
        return 0, [report, f"the server ended the stream after {relay.decisions} decisions: {ended.details or 'done'}"]
    return 1, [report, f"error: {ended.code.name}: {ended.details} (after {relay.decisions} decisions{where})"]
