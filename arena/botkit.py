"""Write a bot in Python in a dozen lines: ``serve(policy)``.

A policy receives the decision request (``ActRequest``: match id, variant, options, seat, the seat's observation
with its legal actions, time left) and returns the index of one of ``request.observation.legal_actions`` (or the
action message itself, or a whole ``ActReply``: :func:`reply` makes one with a comment or a belief about the hidden
tiles). ``serve`` runs the gRPC server where the arena says (``DOMINOES_BOT_LISTEN``, or
``--listen ADDR``; port 0 picks a free port), answers the handshake, and stops cleanly on SIGTERM or SIGINT. Beside
the ``Bot`` service it serves gRPC health checking (``grpc.health.v1``, SERVING for "" and for "dominoes.v1.Bot") and
server reflection (``grpc.reflection.v1`` and ``v1alpha``), so ``grpcurl -plaintext ADDR list`` works::

    from arena.botkit import serve

    def first_legal(request):
        return 0

    serve(first_legal, name="first-legal")

The same bot dials in to an arena server instead, for a tournament that names it with ``dial_in = true``, with
``--connect ADDR --bot NAME --token-file F`` (and ``--tls-ca CERT`` or ``--tls`` beyond loopback; ``--reconnect N``
as for ``arena connect``): it relays through the code of ``arena connect`` (:mod:`arena.players.relay`), calling the
policy itself, so it dials again when the connection drops and prints the decisions it served and their latency at
the end.

A policy is plain code on a thread of its own and cannot be interrupted. When the arena gives up on its decision
(the deadline passed, the game was cancelled; dialed in, the server's ``Cancel``), whatever it returns is dropped,
never sent; a policy that thinks long may poll :func:`cancelled` and stop early::

    def search(request):
        best = 0
        for depth in range(1, 100):
            if cancelled():
                break                      # nobody waits for the answer any more
            best = deepen(request, depth, best)
        return best
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent import futures
from typing import Any

import grpc
import grpc.aio
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer as AioHealthServicer  # grpc.aio's, missing in the stubs
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer as LoopReflectionServicer  # as above

from arena.protocol import LISTEN_ENV, MAX_MESSAGE_BYTES, PROTOCOL_VERSION, bot_pb2, bot_pb2_grpc, types_pb2
from arena.protocol.addresses import is_loopback
from arena.protocol.convert import action_from_pb
from arena.rules.actions import NO_TILE
from arena.rules.all_fives import points_in_play
from arena.rules.spinner import Spinner
from arena.rules.tiles import HIGH, LOW, parse_tile

Policy = Callable[[Any], "int | types_pb2.Action | bot_pb2.ActReply"]
Listener = Callable[[Any], None]

BOT_SERVICE = bot_pb2.DESCRIPTOR.services_by_name["Bot"].full_name
"""``dominoes.v1.Bot``: the service name a bot's health status is reported under."""
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"
"""grpcio-reflection implements only v1alpha; v1 is the same protocol under this name (see ``add_introspection``)."""


def reply(choice: int | types_pb2.Action, *,
          belief: Mapping[Any, Sequence[float]] | Iterable[tuple[Any, Sequence[float]]] | None = None,
          comment: str = "") -> bot_pb2.ActReply:
    """A whole reply: the choice (an index into the legal actions, or the action), an optional comment, and an
    optional belief about the hidden tiles (a mapping, or pairs): for each tile it cannot see (a ``Tile`` message, a
    ``(low, high)`` pair or a text like ``"[3|5]"``), one probability per place, in the order the protocol gives the places (every other seat
    in seat order, then the boneyard; :func:`belief_places` lists them). The arena checks the belief apart from the
    choice: a belief it refuses is recorded as a fault of the belief, and the move stands::

        def policy(request):
            hidden = ...   # the tiles in no hand of mine and not on the table
            places = belief_places(request)
            uniform = [1 / len(places)] * len(places)
            return reply(0, belief={tile: uniform for tile in hidden})
    """
    message = bot_pb2.ActReply(comment=comment)
    if isinstance(choice, types_pb2.Action):
        message.action.CopyFrom(choice)
    else:
        message.index = int(choice)
    for tile, probabilities in (belief.items() if isinstance(belief, Mapping) else belief or ()):
        message.belief.tiles.add(tile=_tile_message(tile), probabilities=list(probabilities))
    return message


def belief_places(request: Any) -> list[str]:
    """The places of a belief from the request's seat, in the protocol's order: ``["seat 0", "seat 2",
    "boneyard"]`` for seat 1 of three."""
    return [f"seat {s}" for s in range(request.observation.players) if s != request.seat] + ["boneyard"]


def _tile_message(tile: Any) -> types_pb2.Tile:
    """A tile given as a message, a (low, high) pair or a text (``"[3|5]"``, ``"3-5"``)."""
    if isinstance(tile, types_pb2.Tile):
        return tile
    if isinstance(tile, str):
        tile = parse_tile(tile)
        return types_pb2.Tile(low=LOW[tile], high=HIGH[tile])
    low, high = tile
    return types_pb2.Tile(low=min(low, high), high=max(low, high))


def pips(tile: types_pb2.Tile) -> int:
    """A tile's pip total."""
    return tile.low + tile.high


def is_placement(action: types_pb2.Action) -> bool:
    return action.kind == types_pb2.ACTION_KIND_PLACE


NO_LEGAL_ACTIONS = "the request has no legal actions"

_decision = threading.local()
"""The decision the policy on this thread is making: ``given_up``, a function saying whether the arena gave up on
it (set around each policy call, on the thread that runs it)."""


def cancelled() -> bool:
    """Whether the arena gave up on the decision the calling policy is making: its gRPC call was cancelled or ran
    past its deadline, or (dialed in) the server sent a Cancel of it. Its reply is dropped then, so a policy may poll
    this and return anything at once. False outside a policy call."""
    given_up = getattr(_decision, "given_up", None)
    return given_up is not None and given_up()


class _BotServicer(bot_pb2_grpc.BotServicer):
    def __init__(self, policy: Policy, hello: bot_pb2.HelloReply, on_notify: Listener | None) -> None:
        self._policy = policy
        self._hello = hello
        self._on_notify = on_notify

    def Hello(self, request: bot_pb2.HelloRequest, context: grpc.ServicerContext) -> bot_pb2.HelloReply:
        return self._hello

    def Act(self, request: bot_pb2.ActRequest, context: grpc.ServicerContext) -> bot_pb2.ActReply:
        if not request.observation.legal_actions:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, NO_LEGAL_ACTIONS)
        return self.reply(request, lambda: not context.is_active())

    def reply(self, request: bot_pb2.ActRequest, given_up: Callable[[], bool]) -> bot_pb2.ActReply:
        """The policy's choice as a reply: an index into the legal actions, or the action itself. ``given_up`` is
        what :func:`cancelled` asks while the policy runs."""
        _decision.given_up = given_up
        try:
            choice = self._policy(request)
        finally:
            _decision.given_up = None
        if isinstance(choice, bot_pb2.ActReply):
            return choice
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


def add_introspection(server: grpc.Server, *services: str) -> health.HealthServicer:
    """Serve, beside ``services`` (full names, e.g. ``dominoes.v1.Bot``), gRPC health checking and server reflection.

    Health (``grpc.health.v1.Health``): SERVING for the whole server ("") and for each of ``services``; the returned
    servicer's ``enter_graceful_shutdown()`` turns them all NOT_SERVING. Reflection describes the services with the
    descriptors of the generated code (every file of ``proto/``), under ``grpc.reflection.v1`` and ``v1alpha``.
    """
    checker = health.HealthServicer()
    for name in ("", *services):
        checker.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    _add_reflection(server, reflection.ReflectionServicer(_described(services)))
    return checker


class LoopHealthServicer(AioHealthServicer):  # type: ignore[misc]  # untyped: missing in the stubs
    """grpc.aio's health servicer, SERVING from the start for ``services`` (its setter is a coroutine, and the
    server is put together before the loop runs anything), with every handler on the loop: ``List``, which
    grpcio-health-checking leaves to the generated base (synchronous), answered as that base answers it."""

    def __init__(self, services: Sequence[str]) -> None:
        super().__init__()
        self._server_status.update(dict.fromkeys(services, health_pb2.HealthCheckResponse.SERVING))

    async def List(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")


def add_loop_introspection(server: grpc.aio.Server, *services: str) -> None:
    """:func:`add_introspection` for a grpc.aio server: the same services with grpc.aio's own servicers, whose
    handlers run on the loop. Health says SERVING for as long as the server runs."""
    health_pb2_grpc.add_HealthServicer_to_server(LoopHealthServicer(("", *services)), server)
    _add_reflection(server, LoopReflectionServicer(_described(services)))


def _described(services: tuple[str, ...]) -> tuple[str, ...]:
    """The services reflection describes: ``services``, health and reflection's own (both versions)."""
    _add_reflection_v1_descriptor(descriptor_pool.Default())
    return (*services, health.SERVICE_NAME, REFLECTION_V1, reflection.SERVICE_NAME)


def _add_reflection(server: grpc.Server | grpc.aio.Server, servicer: Any) -> None:
    """Reflection under v1alpha and v1: grpc.reflection.v1 is v1alpha renamed, message for message and field for
    field, so the v1alpha servicer and messages answer it byte for byte."""
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(REFLECTION_V1, {
        "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo,
            request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
            response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString),
    }),))


def _add_reflection_v1_descriptor(pool: Any) -> None:
    """Put ``grpc/reflection/v1/reflection.proto`` in ``pool`` (derived from v1alpha's, which grpcio-reflection
    ships), so reflection can describe its own v1 service too."""
    name = "grpc/reflection/v1/reflection.proto"
    try:
        pool.FindFileByName(name)
        return
    except KeyError:
        pass
    old, new = f".{reflection_pb2.DESCRIPTOR.package}.", ".grpc.reflection.v1."
    file = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    file.name, file.package = name, new.strip(".")
    file.options.Clear()
    file.options.go_package = "google.golang.org/grpc/reflection/grpc_reflection_v1"
    file.options.java_package = "io.grpc.reflection.v1"
    file.options.java_outer_classname = "ServerReflectionProto"
    file.options.java_multiple_files = True
    for message in file.message_type:
        for field in message.field:
            if field.type_name:
                field.type_name = field.type_name.replace(old, new)
    for service in file.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new)
            method.output_type = method.output_type.replace(old, new)
    pool.AddSerializedFile(file.SerializeToString())


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
    """A started gRPC server for ``policy`` on ``address``, with health checking and reflection; returns it and the
    bound port (0 for Unix sockets)."""
    server, port, _ = _make_server(policy, address, name=name, version=version, author=author, variants=variants,
                                   on_notify=on_notify, workers=workers)
    return server, port


def _make_server(
    policy: Policy,
    address: str,
    *,
    name: str,
    version: str = "1.0.0",
    author: str = "",
    variants: Sequence[str] = (),
    on_notify: Listener | None = None,
    workers: int = 32,
) -> tuple[grpc.Server, int, health.HealthServicer]:
    hello = _hello_reply(name, version=version, author=author, variants=variants)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers),
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
    bot_pb2_grpc.add_BotServicer_to_server(_BotServicer(policy, hello, on_notify), server)
    checker = add_introspection(server, BOT_SERVICE)
    port = server.add_insecure_port(address)
    if port == 0 and not address.startswith("unix:"):
        raise RuntimeError(f"could not listen on {address}")
    server.start()
    return server, port, checker


def _hello_reply(name: str, *, version: str = "1.0.0", author: str = "", variants: Sequence[str] = (),
                 **_server_only: Any) -> bot_pb2.HelloReply:
    """The bot's handshake, from :func:`serve`'s keywords (those only its gRPC server takes, ignored)."""
    return bot_pb2.HelloReply(name=name, version=version, author=author, protocol_version=PROTOCOL_VERSION,
                              variants=list(variants))


DIAL_AGAIN = 10
"""``--reconnect``'s default, as ``arena connect``'s (arena.players.relay.Backoff; not imported for it: a bot that
listens never loads the relay)."""


def dial_in_options(argv: Sequence[str] | None = None) -> argparse.Namespace | None:
    """``--connect ADDR --bot NAME --token-file F [--tls-ca CERT | --tls] [--reconnect N]``, or None without
    ``--connect`` (the bot then listens, as the arena expects of a bot it starts)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--connect")
    parser.add_argument("--bot")
    parser.add_argument("--token-file")
    parser.add_argument("--tls-ca")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--reconnect", type=int, default=DIAL_AGAIN)
    known, _ = parser.parse_known_args(argv)
    return known if known.connect else None


def _dial_in_token(options: argparse.Namespace) -> str:
    """The bot's token, after the checks ``arena connect`` makes; a mistake exits with one ``error:`` line."""
    if not options.bot or not options.token_file:
        sys.exit("error: --connect needs --bot NAME (the entrant's name in the tournament file) and --token-file F "
                 "(its token)")
    if not (options.tls or options.tls_ca) and not is_loopback(options.connect):
        sys.exit(f"error: refusing to dial in to {options.connect} in plain text: beyond loopback the token must "
                 f"travel over TLS; pass --tls-ca CERT (or --tls for the system's roots)")
    if options.reconnect < 0:
        sys.exit(f"error: --reconnect must be 0 or more, got {options.reconnect}")
    try:
        with open(options.token_file) as file:
            token = file.read().strip()
    except OSError as error:
        sys.exit(f"error: {options.token_file}: cannot read the token file: {error.strerror or error}")
    if not token:
        sys.exit(f"error: {options.token_file}: the token file is empty")
    try:
        _dial_in_credentials(options)
    except OSError as error:
        sys.exit(f"error: {options.tls_ca}: cannot read the TLS root certificate: {error.strerror or error}")
    return token


def _dial_in_credentials(options: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """TLS credentials of a bot's own dial-in stream (reading ``--tls-ca``: OSError when it cannot), or None for
    plain text."""
    if not (options.tls or options.tls_ca):
        return None
    roots = None
    if options.tls_ca:
        with open(options.tls_ca, "rb") as file:
            roots = file.read()
    return grpc.ssl_channel_credentials(root_certificates=roots)


def _dial_in_channel(options: argparse.Namespace) -> grpc.aio.Channel:
    """The channel of a bot's own dial-in stream: grpc.aio's, on the relay's loop (:func:`arena.guest.run`)."""
    limits = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
              ("grpc.max_send_message_length", MAX_MESSAGE_BYTES), ("grpc.enable_retries", 0)]
    credentials = _dial_in_credentials(options)
    if credentials is None:
        return grpc.aio.insecure_channel(options.connect, limits)
    return grpc.aio.secure_channel(options.connect, credentials, limits)


def connect_out(policy: Policy, options: argparse.Namespace, *, name: str, **hello: Any) -> int:
    """Dial in to the arena server of ``options.connect`` and play until it ends the stream (or a signal stops
    the bot); the exit status of ``arena connect``. Relayed by ``arena connect``'s own code, with the policy called
    here, in this process (:class:`~arena.players.relay.PolicyBot`): no socket and no second gRPC call between the
    stream and it."""
    # trio and the relay cost a bot ~0.1 s and 9 MB at start: only a bot that dials in pays them
    from arena.players import relay  # noqa: PLC0415

    token = _dial_in_token(options)
    servicer = _BotServicer(policy, _hello_reply(name, **hello), hello.get("on_notify"))
    local = relay.PolicyBot(servicer._hello, servicer.reply, servicer._on_notify, NO_LEGAL_ACTIONS)
    dialing = relay.Relay(local, None, options.bot, (("authorization", f"Bearer {token}"),))
    ended = relay.dial_in_until_done(dialing, lambda: _dial_in_channel(options), relay.Backoff(options.reconnect))
    status, lines = relay.last_words(dialing, ended)
    for line in lines:
        print(line, file=sys.stderr, flush=True)
    return status


def serve(policy: Policy, *, name: str, argv: Sequence[str] | None = None, **hello: Any) -> None:
    """Run the bot until SIGTERM or SIGINT (the arena stops bots with SIGTERM); with ``--connect ADDR``, dial in to
    an arena server instead (:func:`connect_out`) and exit with its status."""
    options = dial_in_options(argv)
    if options is not None:
        sys.exit(connect_out(policy, options, name=name, **hello))
    address = listen_address(argv)
    server, port, checker = _make_server(policy, address, name=name, **hello)
    shown = address if address.startswith("unix:") or port == 0 else address.rsplit(":", 1)[0] + f":{port}"
    print(f"{name} listening on {shown}", file=sys.stderr, flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    checker.enter_graceful_shutdown()  # health watchers see NOT_SERVING before the server goes
    server.stop(grace=1).wait()


def all_fives_score(observation: types_pb2.Observation, action: types_pb2.Action) -> int:
    """What placing ``action`` would score at once in All Fives: the layout count if it is a multiple of five.

    Rebuilds the public layout from the history with the arena's own rules engine, so it is exact.
    """
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
