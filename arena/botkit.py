"""Write a bot in Python in a dozen lines: ``serve(policy)``.

A policy receives the decision request (``ActRequest``: match id, variant, options, seat, the seat's observation
with its legal actions, time left) and returns the index of one of ``request.observation.legal_actions`` (or the
action message itself). ``serve`` runs the gRPC server where the arena says (``DOMINOES_BOT_LISTEN``, or
``--listen ADDR``), answers the handshake, and stops cleanly on SIGTERM or SIGINT::

    from arena.botkit import serve

    def first_legal(request):
        return 0

    serve(first_legal, name="first-legal")
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from concurrent import futures
from typing import Any, Callable, Sequence

import grpc

from .protocol import LISTEN_ENV, MAX_MESSAGE_BYTES, PROTOCOL_VERSION, bot_pb2, bot_pb2_grpc, types_pb2

Policy = Callable[[Any], "int | types_pb2.Action"]
Listener = Callable[[Any], None]


def pips(tile: types_pb2.Tile) -> int:
    """A tile's pip total."""
    return tile.low + tile.high


def is_placement(action: types_pb2.Action) -> bool:
    return action.kind == types_pb2.ACTION_KIND_PLACE


class _BotServicer(bot_pb2_grpc.BotServicer):
    def __init__(self, policy: Policy, hello: bot_pb2.HelloReply, on_notify: Listener | None) -> None:
        self._policy = policy
        self._hello = hello
        self._on_notify = on_notify

    def Hello(self, request: bot_pb2.HelloRequest, context: grpc.ServicerContext) -> bot_pb2.HelloReply:
        return self._hello

    def Act(self, request: bot_pb2.ActRequest, context: grpc.ServicerContext) -> bot_pb2.ActReply:
        if not request.observation.legal_actions:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the request has no legal actions")
        choice = self._policy(request)
        if isinstance(choice, types_pb2.Action):
            return bot_pb2.ActReply(action=choice)
        return bot_pb2.ActReply(index=int(choice))

    def Notify(self, request: bot_pb2.Notification, context: grpc.ServicerContext) -> bot_pb2.NotifyReply:
        if self._on_notify is not None:
            self._on_notify(request)
        return bot_pb2.NotifyReply()


def listen_address(argv: Sequence[str] | None = None) -> str:
    """Where to listen: ``--listen ADDR`` on the command line, else ``$DOMINOES_BOT_LISTEN``."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--listen")
    known, _ = parser.parse_known_args(argv)
    address = known.listen or os.environ.get(LISTEN_ENV)
    if not address:
        sys.exit(f"error: no address to listen on: pass --listen ADDR or set {LISTEN_ENV}")
    return address


def make_server(
    policy: Policy,
    address: str,
    *,
    name: str,
    version: str = "1.0.0",
    author: str = "",
    variants: Sequence[str] = (),
    on_notify: Listener | None = None,
    workers: int = 32,
) -> tuple[grpc.Server, int]:
    """A started gRPC server for ``policy`` on ``address``; returns it and the bound port (0 for Unix sockets)."""
    hello = bot_pb2.HelloReply(name=name, version=version, author=author, protocol_version=PROTOCOL_VERSION,
                               variants=list(variants))
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers),
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
    bot_pb2_grpc.add_BotServicer_to_server(_BotServicer(policy, hello, on_notify), server)
    port = server.add_insecure_port(address)
    if port == 0 and not address.startswith("unix:"):
        raise RuntimeError(f"could not listen on {address}")
    server.start()
    return server, port


def serve(policy: Policy, *, name: str, argv: Sequence[str] | None = None, **hello: Any) -> None:
    """Run the bot until SIGTERM or SIGINT (the arena stops bots with SIGTERM)."""
    address = listen_address(argv)
    server, port = make_server(policy, address, name=name, **hello)
    shown = address if address.startswith("unix:") or port == 0 else address.rsplit(":", 1)[0] + f":{port}"
    print(f"{name} listening on {shown}", file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=1).wait()


def all_fives_score(observation: types_pb2.Observation, action: types_pb2.Action) -> int:
    """What placing ``action`` would score at once in All Fives: the layout count if it is a multiple of five.

    Rebuilds the public layout from the history with the arena's own rules engine, so it is exact.
    """
    from .protocol.convert import action_from_pb
    from .rules.actions import NO_TILE
    from .rules.all_fives import points_in_play
    from .rules.spinner import Spinner

    layout = Spinner()
    for event in observation.history:
        if is_placement(event.action):
            _place(layout, action_from_pb(event.action), NO_TILE)
    if not is_placement(action):
        return 0
    _place(layout, action_from_pb(action), NO_TILE)
    return points_in_play(layout.count())


def _place(layout: Any, action: Any, no_tile: int) -> None:
    if action.target == no_tile:
        layout.lead(action.tile)
    else:
        layout.place(action.tile, action.target, action.point)
