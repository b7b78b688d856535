"""``arena serve``: the trio main loop, the grpc.aio server in front of it (in the loop trio is the guest of), and a
clean stop on SIGTERM or SIGINT.

The server's process is put together here, above everything it starts: the arena's service (:mod:`arena.server`),
the leagues (:mod:`arena.league`) and the web dashboard (:mod:`arena.web`), which reads the server's tournaments; so
the server's own modules never import the dashboard, and no layer imports one above it.

Stopping: new calls are refused, every watch ends with UNAVAILABLE "server shutting down", every tournament is
cancelled (games in flight are cancelled on the wire, so their bots see CANCELLED; finished records are already
fsynced), bot processes are stopped, and the gRPC server stops after a short grace. The tournaments stay QUEUED or
RUNNING in their ``server.json``, so the next start on the same data folder resumes them.
"""

from __future__ import annotations

import asyncio
import errno
import signal
import socket
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import structlog
import trio

from arena import guest
from arena.botkit import add_loop_introspection
from arena.cluster.options import backend_from
from arena.display import safe_name
from arena.league.assembly import OpenLeague, open_league
from arena.league.core import LeagueCore
from arena.league.files import load_leagues
from arena.league.intake.pipeline import default_kit_cache
from arena.league.rules.config import LeagueConfig
from arena.league.rules.errors import LeagueError
from arena.league.storage.db import sqlite_file, sqlite_url
from arena.players.dial_in import REGISTRY
from arena.protocol import MAX_MESSAGE_BYTES, arena_pb2
from arena.sandbox import SandboxUnavailable, host, overlaps
from arena.server.admission import DEFAULT_MAX_BOT_PROCESSES, Admission
from arena.server.auth import (
    ConfigError,
    Continuation,
    Handler,
    ServerInterceptor,
    TokenInterceptor,
    check_listen,
    check_private,
    is_loopback,
    read_token,
    server_credentials,
)
from arena.server.core import Arena, make_private_folder
from arena.server.defaults import DEFAULT_DATA
from arena.server.dial_in import CALLS as DIAL_IN_CALLS
from arena.server.dial_in import SHUTTING_DOWN, DialInServicer
from arena.server.dial_in import add_to_server as add_dial_in
from arena.server.events import WATCH_BUFFER_EVENTS
from arena.server.league_service import SERVICE_NAME, LeagueServicer, ShareLinks
from arena.server.league_service import add_to_server as add_league
from arena.server.registry import load_registry
from arena.server.service import ArenaServicer, add_to_server
from arena.server.streams import MAX_STREAMS, MAX_STREAMS_PER_CLIENT, StreamLimitInterceptor, StreamLimits
from arena.web.access import WILDCARD_HOSTS, AccessRules, Signer, check_host_name, check_http_listen
from arena.web.app import serve_web

DEFAULT_LISTEN = "127.0.0.1:50500"
DIAL_IN_SERVICE = "dominoes.v1.DialInService"
"""The service bots dial in to (dial_in.proto), served beside the Arena service."""
LEAGUE_CALLS = "/dominoes.v1.LeagueService/"
"""The league service's calls, which check their tokens themselves (an author's token is not the server's)."""
STOP_GRACE_S = 2.0
"""Calls still running this long after a stop signal are cancelled."""


@dataclass(frozen=True)
class ServeConfig:
    listen: str = DEFAULT_LISTEN
    data: Path = Path(DEFAULT_DATA)
    token: str | None = None
    credentials: grpc.ServerCredentials | None = None
    concurrency: int = 4
    max_tournaments: int = 4
    watch_buffer: int = WATCH_BUFFER_EVENTS
    max_streams: int = MAX_STREAMS
    max_streams_per_client: int = MAX_STREAMS_PER_CLIENT
    admission: Admission = Admission()
    max_bot_processes: int = DEFAULT_MAX_BOT_PROCESSES
    data_mode_was: int | None = None
    """The data folder's mode before the server made it private (None when it already was, or is new)."""
    http: str | None = None
    """Where the web dashboard listens (HOST:PORT), or None for none."""
    http_public: bool = False
    http_hosts: tuple[str, ...] = ()
    """The names the dashboard answers for (``Host:``), beside its listen address's: ``--http-host`` and the host
    name of ``--http``."""
    tls_files: tuple[str, str] | None = None
    """The certificate chain and key files of --tls-cert/--tls-key: the dashboard serves HTTPS with them too."""
    backend: Any = None
    """Where games are played: the runner's backend factory (``--backend ray``), or None for this machine."""
    leagues: tuple[LeagueConfig, ...] = ()
    """The leagues of ``--league FILE``, served by LeagueService."""
    database: str | None = None
    """The league database's URL (``--database``; default: SQLite in the data folder)."""
    kit_cache: Path | None = None
    """The kits' prepared caches that the leagues' builds read (``--kit-cache``; see arena league prepare-kits)."""
    protected: tuple[Path, ...] = ()
    """What no bot or build may see: the data folder, the token file, the TLS key, the bots' registry, and the
    league's SQLite file when it is elsewhere."""


def config_from_args(args: Any) -> ServeConfig:
    """Check the command line (a ConfigError, exit status 2, for anything that cannot work)."""
    token = None
    if args.token_file:
        token = read_token(args.token_file)
        check_private(args.token_file, "token file")
    check_listen(args.listen, token)
    http = getattr(args, "http", None)
    if http is not None:

        http_address(http)
        check_http_listen(http, token, args.http_public)
        http_hosts = http_names(http, getattr(args, "http_host", None) or [])
    elif getattr(args, "http_public", False):
        raise ConfigError("--http-public goes with --http [ADDR]")
    elif getattr(args, "http_host", None):
        raise ConfigError("--http-host goes with --http [ADDR]")
    else:
        http_hosts = ()
    credentials = server_credentials(args.tls_cert, args.tls_key)
    for name in ("concurrency", "max_tournaments", "watch_buffer", "max_entrants", "max_bot_processes",
                 "max_streams", "max_streams_per_client"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    # Absolute from the start: the league's versions run from folders under it, in a sandbox with another cwd.
    data = Path(args.data).absolute()
    mode_was = prepare_data(data)
    protected = tuple(Path(p).resolve() for p in (data, args.token_file, args.tls_key, args.bots) if p)
    registry = load_registry(Path(args.bots), protected=protected) if args.bots else None
    admission = Admission(registry=registry, allow_commands=args.allow_commands, max_entrants=args.max_entrants,
                          protected=protected, cwd=Path.cwd())
    if admission.runs_anything:
        require_sandbox()
    backend = backend_from(getattr(args, "backend", "local"), getattr(args, "address", None), args.concurrency)
    leagues, database = leagues_from_args(args, token, data)
    kit_cache = None
    if leagues:
        require_sandbox()  # every uploaded version is built and checked by playing it, in its sandbox
        protected = (*protected, *league_database_file(database))
        kit_cache = kit_cache_from_args(args, protected)
    elif getattr(args, "kit_cache", None):
        raise ConfigError("--kit-cache goes with --league FILE")
    return ServeConfig(listen=args.listen, data=data, token=token, credentials=credentials,
                       concurrency=args.concurrency, max_tournaments=args.max_tournaments,
                       watch_buffer=args.watch_buffer, admission=admission, max_streams=args.max_streams,
                       max_streams_per_client=args.max_streams_per_client,
                       max_bot_processes=args.max_bot_processes, data_mode_was=mode_was, http=http,
                       http_public=bool(getattr(args, "http_public", False)), http_hosts=http_hosts,
                       backend=backend, leagues=leagues, database=database, kit_cache=kit_cache,
                       protected=protected,
                       tls_files=(args.tls_cert, args.tls_key) if credentials is not None else None)


def leagues_from_args(args: Any, token: str | None, data: Path) -> tuple[tuple[LeagueConfig, ...], str | None]:
    """The league files of ``--league`` (checked now: a bad file is one line before anything starts) and the
    database's URL; the league needs the operator's token (``--token-file``), which alone may create authors."""
    files = getattr(args, "league", None) or []
    database = getattr(args, "database", None)
    if not files:
        if database:
            raise ConfigError("--database goes with --league FILE")
        return (), None
    if token is None:
        raise ConfigError("--league needs --token-file FILE: the operator's token, which creates the league's "
                          "authors (each author then calls with a token of its own)")
    return load_leagues(files), database or sqlite_url(data)


def league_database_file(url: str | None) -> tuple[Path, ...]:
    """The league's SQLite file, which no build may see (by default it is in the data folder, protected already);
    nothing for PostgreSQL."""
    file = sqlite_file(url) if url else None
    return (file,) if file is not None else ()


def kit_cache_from_args(args: Any, protected: tuple[Path, ...]) -> Path:
    """``--kit-cache`` or its default; refused when it is inside what builds must not see (the builds read it)."""
    given = getattr(args, "kit_cache", None)
    cache = (Path(given) if given else default_kit_cache()).resolve()
    for secret in protected:
        if overlaps(cache, secret):
            raise ConfigError(f"--kit-cache {cache} overlaps {secret}, which no build may see: keep the kits' "
                              f"cache outside the data folder and the server's secrets")
    return cache


def http_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT``) of the web dashboard, checked."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"cannot serve the web dashboard on {address}: expected HOST:PORT with a port from 0 to "
                          f"65535 (0: any free port)")
    return host.strip("[]"), int(port)


def http_names(address: str, given: list[str]) -> tuple[str, ...]:
    """The names the dashboard answers for beside its socket's address: each ``--http-host`` (checked) and the host
    of ``--http`` when it is a name (``--http arena.example.org:8080``)."""

    host, _ = http_address(address)
    names = [check_host_name(name) for name in given]
    if host.lower() not in WILDCARD_HOSTS:
        names.append(check_host_name(host))
    return tuple(dict.fromkeys(names))


def bind_http(address: str) -> socket.socket:
    """The dashboard's listening socket, bound here so that a busy port is one clear line (as for gRPC)."""
    host, port = http_address(address)
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as error:
        raise ConfigError(f"cannot serve the web dashboard on {address}: not an address of this machine "
                          f"({getattr(error, 'strerror', None) or error})") from None
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(where)
        listener.listen(128)
    except OSError as error:
        listener.close()
        raise ConfigError(f"cannot serve the web dashboard on {address}: {_reason(error)}") from None
    return listener


def require_sandbox() -> None:
    """A server starts bots only in their sandbox (no client or registry can turn it off): without one, refuse to
    start at all rather than fail every game."""

    try:
        host().require_sandbox()
    except SandboxUnavailable as error:
        message = str(error).split("; or run the bots without a sandbox")[0]
        raise ConfigError(f"{message}; an arena server runs bots only in their sandbox") from None


def prepare_data(data: Path) -> int | None:
    """The data folder and its tournaments/, private to the server's user (they hold the unrevealed seeds and the
    records of games still withheld). Returns the mode an existing, looser data folder had."""
    try:
        before = stat.S_IMODE(data.stat().st_mode) if data.is_dir() else None
        make_private_folder(data)
        make_private_folder(data / "tournaments")
    except OSError as error:
        raise ConfigError(f"cannot use {data} as the data folder: {error.strerror or error}") from None
    return before if before is not None and before & 0o077 else None


class ServerLog:
    """One JSON event per line in ``<data>/arena.log``, and a short readable line on stderr."""

    def __init__(self, data: Path) -> None:
        self._file = open(data / "arena.log", "a")
        self._log = structlog.wrap_logger(
            structlog.WriteLogger(self._file),
            processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                        structlog.processors.JSONRenderer()])

    def _emit(self, level: str, event: str, **values: Any) -> None:
        getattr(self._log, level)(event, **values)
        self._file.flush()
        details = " ".join(f"{k}={safe_name(str(v), 300)}" for k, v in values.items())
        print(f"arena: {event.replace('_', ' ')}" + (f" ({details})" if details else ""), file=sys.stderr,
              flush=True)

    def info(self, event: str, **values: Any) -> None:
        self._emit("info", event, **values)

    def warning(self, event: str, **values: Any) -> None:
        self._emit("warning", event, **values)

    def error(self, event: str, **values: Any) -> None:
        self._emit("error", event, **values)

    def close(self) -> None:
        self._file.close()


class Opening(ServerInterceptor):
    """Holds the calls that come before :meth:`open`: the server is started before the arena's own tasks are (so
    that starting it, which waits on the loop, lets none of them run before the server says where it listens), and
    takes calls once they are."""

    def __init__(self) -> None:
        self._open = asyncio.Event()

    def open(self) -> None:
        self._open.set()

    async def intercept_service(self, continuation: Continuation, details: grpc.HandlerCallDetails
                                ) -> Handler:
        if not self._open.is_set():
            await self._open.wait()
        return await continuation(details)


@dataclass(frozen=True)
class Serving:
    """The gRPC server of :func:`make_server` and what goes with it."""

    server: grpc.aio.Server
    opening: Opening
    """Holds the calls until the arena is ready (:meth:`Opening.open`)."""
    address: str


def make_server(config: ServeConfig, servicer: ArenaServicer, league: LeagueServicer | None = None,
                dial_in: DialInServicer | None = None) -> Serving:
    """The gRPC server (grpc.aio's, in the loop trio is the guest of), bound but not started, with the gate that
    holds calls until the arena is ready, and the address it listens on (the real port when 0 was asked). Every
    handler and interceptor is grpc.aio's own, run on the loop: the server has no thread pool.

    Beside the Arena service it serves gRPC health checking (SERVING for "" and "dominoes.v1.Arena") and server
    reflection (grpc.reflection.v1 and v1alpha); with a token, these calls need it too (the interceptor sees every
    call).

    Streams (watches, health watches, reflection, dial-ins) are limited apart from quick calls
    (arena/server/streams.py), so that open streams, read or not, never crowd out the quick calls."""
    unix = config.listen.startswith("unix")
    if not unix:
        check_port(config.listen)  # before the server is made: an error then leaves no server behind
    streams = StreamLimits(config.max_streams, config.max_streams_per_client)
    opening = Opening()
    server = grpc.aio.server(
        interceptors=[opening, *interceptors(config, streams, league is not None, dial_in is not None)],
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
        maximum_concurrent_rpcs=streams.calls_in_flight(),
    )
    add_services(server, servicer, league, dial_in)
    try:
        if config.credentials is not None:
            port = server.add_secure_port(config.listen, config.credentials)
        else:
            port = server.add_insecure_port(config.listen)
        bound = unix or port != 0  # older gRPC said 0 instead of raising
    except RuntimeError:  # gRPC says only "Failed to bind ...; set GRPC_VERBOSITY=debug ...": find out why
        bound = False
    if not bound:
        asyncio.get_running_loop().create_task(server.stop(None))  # guest.run finishes it, on the loop
        del server  # not kept alive by the error's traceback past the loop's end (grpc.aio fails at exit then)
        raise ConfigError(f"cannot listen on {config.listen}: {bind_problem(config.listen)}")
    shown = config.listen if unix else config.listen.rsplit(":", 1)[0] + f":{port}"
    return Serving(server, opening, shown)


def interceptors(config: ServeConfig, streams: StreamLimits, league: bool, dial_in: bool) -> list[ServerInterceptor]:
    """The server's interceptors after its opening gate: the token check first (no stream slot without the
    token), then the streams' limits. The league's and the dial-in's calls check their own tokens."""
    own_checks = ((LEAGUE_CALLS,) if league else ()) + ((DIAL_IN_CALLS,) if dial_in else ())
    tokens: list[ServerInterceptor] = [TokenInterceptor(config.token, own_checks)] if config.token else []
    return [*tokens, StreamLimitInterceptor(streams)]


def add_services(server: grpc.aio.Server, servicer: ArenaServicer, league: LeagueServicer | None = None,
                 dial_in: DialInServicer | None = None) -> None:
    """The services of :func:`make_server`: the Arena's, the dial-in's and the league's when given, and health
    and reflection for them all."""
    add_to_server(server, servicer)
    services = [arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name]
    if dial_in is not None:
        add_dial_in(server, dial_in)
        services.append(DIAL_IN_SERVICE)
    if league is not None:
        add_league(server, league)
        services.append(SERVICE_NAME)
    add_loop_introspection(server, *services)


def check_port(address: str) -> None:
    """``HOST:PORT`` with a port from 0 to 65535 (gRPC would take ``HOST`` alone as port 443, and 99999 modulo
    65536)."""
    _, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535 or address.endswith("]"):
        raise ConfigError(f"cannot listen on {address}: expected HOST:PORT with a port from 0 to 65535 (0: any free "
                          f"port), or unix:/path")


BIND_REASONS = {
    errno.EADDRINUSE: "address already in use",
    errno.EADDRNOTAVAIL: "not an address of this machine",
}
"""What a failed bind means, in words; other errors are told by their system message."""


def bind_problem(address: str) -> str:
    """Why the address cannot be listened on, found by binding it ourselves (gRPC's own error names no reason).

    The probe binds as gRPC does (SO_REUSEADDR, so a port in TIME_WAIT is free) and closes at once; a Unix socket
    file it creates is removed."""
    if address.startswith("unix-abstract:"):
        return "gRPC could not bind it"
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.bind(path)
        except OSError as error:
            return _reason(error)
        finally:
            probe.close()
        Path(path).unlink(missing_ok=True)  # the probe's own socket file (binding fails on an existing one)
        return "gRPC could not bind it"
    host, _, port = address.rpartition(":")
    try:
        found = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        return f"not an address of this machine ({getattr(error, 'strerror', None) or error})"
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(where)
            except OSError as error:
                if error.errno == errno.EACCES:
                    return "permission denied (ports below 1024 need privileges)"
                return _reason(error)
    return "gRPC could not bind it"


def _reason(error: OSError) -> str:
    """The error in words for one line: ``address already in use``, else the system's message in lower case."""
    return BIND_REASONS.get(error.errno or 0) or (error.strerror or str(error)).lower()


def log_policy(log: ServerLog, config: ServeConfig) -> None:
    """Say at the start what this server will run for its clients, and anything the operator should fix."""
    if config.data_mode_was is not None:
        log.warning("data_folder_made_private", folder=str(config.data), mode_was=oct(config.data_mode_was),
                    mode="0o700")
    admission = config.admission
    registry = admission.registry
    log.info("bots", registry=f"{registry.path} ({len(registry.bots)} bots)" if registry else "none",
             commands="allowed (sandboxed)" if admission.allow_commands else "refused",
             max_entrants=admission.max_entrants, max_bot_processes=config.max_bot_processes)
    if registry is not None and registry.skipped:
        log.warning("registered_bots_not_installed", bots=", ".join(registry.skipped))
    if not admission.runs_anything:
        log.warning("no_bots", advice="every submission with a bot to run here is refused: pass --bots FILE (or "
                    "--allow-commands); a tournament whose entrants all dial in is accepted")


async def serve(config: ServeConfig) -> None:
    make_private_folder(config.data)
    log = ServerLog(config.data)
    arena = Arena(config.data, concurrency=config.concurrency, max_tournaments=config.max_tournaments, log=log,
                  watch_buffer=config.watch_buffer, admission=config.admission,
                  max_bot_processes=config.max_bot_processes, backend=config.backend)
    league: OpenLeague | None = None
    try:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            servicer = ArenaServicer(arena)
            league = await open_leagues(config, log, arena.limiter) if config.leagues else None
            league_servicer = (LeagueServicer(league.core, league.store.tmp, share_links(config))
                               if league is not None else None)
            dial_in = DialInServicer(REGISTRY, plain_text_beyond_loopback=(
                config.credentials is None and not is_loopback(config.listen)))
            serving = make_server(config, servicer, league_servicer, dial_in)  # a port in use: one line
            server = serving.server
            try:
                listener = bind_http(config.http) if config.http is not None else None
                log_policy(log, config)
                async with trio.open_nursery() as nursery:
                    await guest.await_loop(server.start())  # its calls held until the arena is ready
                    await nursery.start(arena.run)
                    if league is not None:
                        await league.start(nursery)
                    serving.opening.open()
                    address = serving.address
                    tls = "TLS" if config.credentials is not None else "plain text"
                    auth = "token required" if config.token else "no token"
                    # Tests and scripts read this line to learn the port.
                    print(f"listening on {address}", file=sys.stderr, flush=True)
                    log.info("server_started", address=address, transport=tls, auth=auth, data=str(config.data),
                             concurrency=config.concurrency)
                    web = (await start_web(nursery, arena, config, listener,
                                           league.core if league is not None else None)
                           if listener is not None else None)
                    if config.token and config.credentials is None and not is_loopback(config.listen):
                        log.warning("token_in_plain_text", advice="without --tls-cert/--tls-key anyone on the path can "
                                                                  "read the token")
                    async for received in signals:
                        log.info("shutting_down", signal=signal.Signals(received).name)
                        break
                    arena.stopping = True
                    if web is not None:
                        web.stop.set()
                    stopped = asyncio.ensure_future(server.stop(grace=STOP_GRACE_S))  # new calls refused from now on
                    REGISTRY.close_all(SHUTTING_DOWN)
                    await arena.shutdown()
                    arena.cancel_stuck_streams()
                    await guest.await_loop(stopped)  # every call over: grpc.aio cancels those left after the grace
                    nursery.cancel_scope.cancel()
            except BaseException:
                asyncio.get_running_loop().create_task(server.stop(None))  # guest.run finishes it, on the loop
                # not kept alive by the error's traceback past the loop's end (grpc.aio fails at exit then)
                del server, serving
                raise
        log.info("stopped")
    finally:
        if league is not None:
            await league.database.close()
        log.close()


async def open_leagues(config: ServeConfig, log: ServerLog, limiter: trio.CapacityLimiter) -> OpenLeague:
    """The leagues of ``--league`` opened (:func:`arena.league.assembly.open_league`) in a private ``league`` folder of the
    data folder, with this server's token, kit cache, protected paths, games-at-once ``limiter`` and backend; a
    database that cannot be opened is one ConfigError line."""
    try:
        return await open_league(config.leagues, config.database or "", config.data / "league",
                                 operator_token=config.token, kit_cache=config.kit_cache or Path(),
                                 build_protected=config.protected, play_protected=ladder_protected(config), log=log,
                                 limiter=limiter, backend=config.backend, private_folder=make_private_folder)
    except LeagueError as error:
        raise ConfigError(str(error)) from None


def share_links(config: ServeConfig) -> ShareLinks | None:
    """How ``arena league share`` makes a link: signed as the dashboard signs its own (with the server's token),
    when the server serves a dashboard for it to open."""
    if config.http is None or config.token is None:
        return None
    signer = Signer(config.token)
    return lambda name, hours: signer.league_link(name, hours, time.time())


def ladder_protected(config: ServeConfig) -> tuple[Path, ...]:
    """What no ladder bot may see: the token and TLS key, the tournaments, the league's store and database. (Not
    the whole data folder: a version's own folder, which its bot runs from, lies inside it.)"""
    data = config.data.resolve()
    paths = [data / "tournaments", data / "league" / "store", data / "league.db"]
    paths += [Path(p).resolve() for p in config.admission.protected if not Path(p).resolve() == data]
    return tuple(paths)


async def start_web(nursery: trio.Nursery, arena: Arena, config: ServeConfig, listener: socket.socket,
                    league: LeagueCore | None = None) -> Any:
    """The web dashboard on the same trio loop and the same Arena (arena/web), with the league's pages when
    ``league`` (its LeagueCore) is given; prints where it is."""

    web = await nursery.start(serve_web, arena, AccessRules(config.token, config.http_public), listener,
                              config.tls_files, config.http_hosts, league)
    # Tests and scripts read this line to learn the dashboard's port.
    print(f"web dashboard on {web.address}", file=sys.stderr, flush=True)
    return web


def run(config: ServeConfig) -> int:
    guest.run(serve, config)
    return 0
