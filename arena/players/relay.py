"""``arena connect``'s relay: a bot of any kind run on its owner's machine, dialed in to a remote arena server.

The relay starts the bot as the arena would (a :class:`~arena.players.process.BotProcess`: a gRPC bot, a stdio bot, a
kit binary; not sandboxed, as it is the owner's own program on the owner's machine), takes its handshake, and opens
one ``DialInService.Play`` stream to the server (``proto/dominoes/v1/dial_in.proto``): the hello with the bot's own,
then each decision request is rebuilt into the request the arena would have sent a local bot and handed to it
(several at once, as the server sends them), and its reply goes back unchanged, for the server to check. A bot that
crashed is started again for the next request; a request it cannot answer is left unanswered (the server's clock
runs out on it).

The gRPC stream runs on threads of its own (grpcio's blocking API): its replies arrive in trio through a memory
channel, and what the relay sends goes out through a queue the stream's request iterator reads.
"""

from __future__ import annotations

import queue
import sys
import threading
from dataclasses import dataclass
from typing import Any, Iterator

import grpc
import trio

from ..protocol import bot_pb2, dial_in_pb2, dial_in_pb2_grpc
from ..protocol.convert import observation_from_pb, options_from_pb
from ..rules import Game, new_game
from .base import DecisionRequest
from .faults import BotFailure
from .process import BotProcess

NO_DEADLINE_S = 60.0
"""A request from an arena that sends no deadline is given this long."""


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


class Relay:
    """One local bot and its dial-in stream."""

    def __init__(self, process: BotProcess, channel: grpc.Channel, bot: str,
                 metadata: tuple[tuple[str, str], ...], say: Any = None) -> None:
        self.process = process
        self.channel = channel
        self.bot = bot
        self.metadata = metadata
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.outbox: queue.SimpleQueue[dial_in_pb2.PlayRequest | None] = queue.SimpleQueue()
        self.decisions = 0
        self.farewell = ""
        """Why the server ended the stream cleanly (its Farewell), once it has."""
        self._games: dict[tuple[str, int], Game] = {}

    def _requests(self) -> Iterator[dial_in_pb2.PlayRequest]:
        while (message := self.outbox.get()) is not None:
            yield message

    async def run(self) -> Ended:
        """Start the bot, dial in, and relay until the server ends the stream; how it ended."""
        client = await self.process.ensure_running()
        assert client.hello is not None
        self.outbox.put(dial_in_pb2.PlayRequest(hello=dial_in_pb2.DialInHello(bot=self.bot, hello=client.hello)))
        stub = dial_in_pb2_grpc.DialInServiceStub(self.channel)
        call = stub.Play(self._requests(), metadata=self.metadata)
        send, receive = trio.open_memory_channel[Any](256)
        token = trio.lowlevel.current_trio_token()

        def read() -> None:
            try:
                for message in call:
                    trio.from_thread.run(send.send, message, trio_token=token)
                ended = Ended(grpc.StatusCode.OK, self.farewell)
            except grpc.RpcError as error:
                ended = Ended(error.code(), error.details() or "")
            except trio.RunFinishedError:
                return
            try:
                trio.from_thread.run(send.send, ended, trio_token=token)
            except trio.RunFinishedError:
                pass

        threading.Thread(target=read, daemon=True, name="dial-in reader").start()
        try:
            async with trio.open_nursery() as nursery:
                async for message in receive:
                    if isinstance(message, Ended):
                        nursery.cancel_scope.cancel()
                        return message
                    self._take(nursery, message)
        finally:
            self.outbox.put(None)
            call.cancel()
        return Ended(grpc.StatusCode.OK, "")  # pragma: no cover (the reader always sends how it ended)

    def _take(self, nursery: trio.Nursery, message: dial_in_pb2.PlayResponse) -> None:
        which = message.WhichOneof("message")
        if which == "welcome":
            self.say(f"connected as {self.bot} (arena {message.welcome.arena_version}); waiting for games")
        elif which == "act":
            nursery.start_soon(self._decide, message.request_id, message.act)
        elif which == "notification":
            nursery.start_soon(self._notify, message.notification)
        elif which == "farewell":
            self.farewell = message.farewell.reason

    async def _decide(self, request_id: int, message: bot_pb2.ActRequest) -> None:
        """One decision: the local bot's reply, sent back as it came; nothing when the bot cannot answer."""
        timeout_s = message.time.deadline_ms / 1000 if message.time.deadline_ms else NO_DEADLINE_S
        try:
            request = decision_request(message, self._games)
            client = await self.process.ensure_running()
            reply, _ = await client.reply(request, timeout_s)
        except BotFailure as failure:
            self.say(f"the bot did not answer request {request_id} (match {message.match_id[:8]}): {failure}")
            return
        except (ValueError, KeyError) as error:  # a request the rules engine cannot rebuild: never from an arena
            self.say(f"cannot relay request {request_id}: {error}")
            return
        self.decisions += 1
        self.outbox.put(dial_in_pb2.PlayRequest(request_id=request_id, act=reply))

    async def _notify(self, message: bot_pb2.Notification) -> None:
        client = self.process.client
        if client is not None:
            await client.notify(message)
