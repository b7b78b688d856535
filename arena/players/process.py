"""Bot processes: start from a command line (exec, never fork), handshake, restart after a crash, stop cleanly.

Every start goes through :func:`arena.sandbox.contain`, which turns the command into a contained one (a bubblewrap
sandbox, a cgroup or rlimits, an allow-listed environment); this module only runs what it is given. The arena tells
a bot where to listen through ``DOMINOES_BOT_LISTEN`` (a Unix socket in a folder private to that bot: in a sandbox,
its own small tmpfs, reached through the sandbox's first process), waits for its
handshake within the startup timeout, and copies its stdout and stderr into a per-bot log, capped. Stopping is
SIGTERM, then SIGKILL after a grace period, then every process left in the bot's cgroup. A bot given as an address
is just connected to: it is outside the arena's control; so is a bot that dials in (arena/players/dial_in.py), whose
stream is waited for instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.display import seconds_label
from arena.players.client import BotClient
from arena.players.dial_in import REGISTRY, DialInBot
from arena.players.faults import BotFailure, FaultKind
from arena.players.remote import RemoteBot
from arena.players.stdio import StdioBot
from arena.protocol import LISTEN_ENV, bot_pb2
from arena.sandbox import CappedLog, Containment, Limits, SandboxError, SandboxUnavailable, contain

STOP_GRACE_S = 3.0
SOCKET_POLL_S = 0.002
EXIT_AFTER_EOF_S = 5.0
"""How long a stdio bot whose stdout ended before its handshake may take to exit, so its status can be told."""
LOG_CLOSE_S = 1.0
"""How long a stopped bot's log may take to reach its end (a process outside any sandbox may hold the pipe)."""
STDERR_TAIL = 600
BUILTIN_PREFIX = "builtin:"
"""How a built-in player is named where a bot command may be (``builtin:greedy``)."""


@dataclass(frozen=True)
class BotSpec:
    """How to reach a bot: a command to start, or the address of a running server."""

    name: str
    """The entrant's name in the standings; unique in the file."""
    command: tuple[str, ...] = ()
    """The program and its arguments, a text (split as a shell would) or a list; or ``builtin:KIND`` for a player
    of the arena's own. Exactly one of ``command`` and ``address``."""
    address: str | None = None
    """A bot already running (``127.0.0.1:50051``, ``unix:/path``), outside the arena's control."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables for the bot: its only environment besides the arena's few."""
    cwd: str | None = None
    """The bot's working folder, where its command's relative paths are found (default: the arena's)."""
    folder: str | None = None
    """The bot's own folder, visible read-only in its sandbox (default: the folder of the command's program file)."""
    sandbox: bool = True
    limits: Limits = Limits()
    """This bot's limits, as a table of [limits]'s keys over the tournament's (default: the tournament's)."""
    transport: str = "unix"
    """Where a started bot listens: ``unix`` (a socket), or ``tcp`` (a loopback port, for runtimes without one)."""
    protocol: str = "grpc"
    """``grpc`` (the Bot service), or ``stdio`` (JSON lines on stdin and stdout: arena/players/stdio.py)."""
    dial_in: bool = False
    """The bot dials in to the arena server from its owner's machine, neither started nor called: its entry then
    has only ``name``, ``dial_in`` and ``token_sha256``."""
    token_sha256: str = ""
    """A dial-in bot's credential: the SHA-256 of the token it presents, 64 lowercase hex digits (``arena new-token
    FILE`` prints it); the arena never holds the token. Required with ``dial_in``."""

    def __post_init__(self) -> None:
        if bool(self.command) + bool(self.address) + self.dial_in != 1:
            raise ValueError(f"bot {self.name!r} needs exactly one of a command, an address or dial_in")

    @property
    def remembers(self) -> str:
        """Why this bot's author may keep every deal it is sent ("" when the arena holds its process): a bot that
        dials in from its author's machine, or one given by address, runs outside the arena, which can neither
        stop nor empty it, so it could recognise a deal dealt again under another seat rotation."""
        if self.dial_in:
            return "dials in from its author's machine"
        if self.address:
            return "is played at an address outside the arena"
        return ""

    @property
    def builtin(self) -> str | None:
        """The kind of built-in player a command of one word ``builtin:KIND`` names (None for a program): it is
        played in the arena's own process, so it has no program to find, no sandbox and no process to start."""
        if len(self.command) == 1 and self.command[0].startswith(BUILTIN_PREFIX):
            return self.command[0][len(BUILTIN_PREFIX):]
        return None


class BotProcess:
    """One running bot (started by the arena, or external), with its client connection."""

    def __init__(self, spec: BotSpec, log_dir: Path | None = None, startup_s: float = 10.0,
                 protected: Sequence[Path] = ()) -> None:
        self.spec = spec
        self.startup_s = startup_s
        self.log_dir = log_dir if log_dir is not None else Path(tempfile.mkdtemp(prefix="arena-logs-"))
        self.protected = tuple(protected)
        """Paths no sandbox of this bot may see (the run folder, the server's data and token)."""
        self.client: BotClient | None = None
        self.hello: bot_pb2.HelloReply | None = None
        self.starts = 0
        self.containment_report: dict[str, Any] | None = None
        self.startup_ms: float | None = None
        """From exec to the end of the handshake, at the last start: the bot's start, not gRPC's reconnect backoff."""
        self._process: ChildProcess | None = None
        self._log: CappedLog | None = None
        self._containment: Containment | None = None
        self._pipes: list[trio.lowlevel.FdStream] = []
        """A stdio bot's stdin and stdout, the arena's ends."""

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def log_path(self) -> Path:
        return self.log_dir / log_file_name(self.spec.name)

    def running(self) -> bool:
        if self.spec.dial_in:
            return isinstance(self.client, DialInBot) and not self.client.connection.closed
        if self.spec.address:
            return self.client is not None
        return self._process is not None and self._process.returncode is None and not self._lost

    _lost = False
    """The connection to the bot was lost (it crashed, or was stopped for a limit): restart it, even when its
    sandbox has not finished exiting yet."""

    async def ensure_running(self) -> BotClient:
        """Start (or restart after a crash) and handshake; raise BotFailure if the bot does not come up."""
        if self.running() and self.client is not None:
            return self.client
        await self.stop()
        if self.spec.dial_in:
            return await self._dialed_in()
        if self.spec.address:
            return await self._connect(self.spec.address)
        return await self._start()

    async def _dialed_in(self) -> DialInBot:
        """The bot's dial-in stream, waited for up to the start time (it connects when its owner runs it)."""
        self.starts += 1
        started = time.perf_counter()
        connection = await REGISTRY.connection(self.spec.name, self.spec.token_sha256, self.startup_s)
        client = DialInBot(connection, self.spec.name)
        self.hello = await client.handshake(self.startup_s)
        self.startup_ms = (time.perf_counter() - started) * 1000
        self.client = client
        return client

    async def _connect(self, address: str) -> RemoteBot:
        client = RemoteBot(address, self.spec.name)
        try:
            self.hello = await client.handshake(self.startup_s)
        except BaseException:
            client.close()
            raise
        self.client = client
        return client

    async def _start(self) -> BotClient:
        self.starts += 1
        self._lost = False
        spec = self.spec
        try:
            self._containment = containment = contain(
                spec.command, listen_env=LISTEN_ENV, env=spec.env, cwd=spec.cwd, folder=spec.folder,
                limits=spec.limits, sandbox=spec.sandbox, protected=self.protected, transport=spec.transport)
        except (SandboxError, SandboxUnavailable) as error:
            raise BotFailure(FaultKind.START_FAILED, detail=str(error)) from None
        except OSError as error:  # the machine refused what the sandbox needs (a folder, a cgroup): this start fails
            raise BotFailure(FaultKind.START_FAILED, detail=f"cannot prepare its sandbox: {error}") from None
        self.containment_report = containment.report
        try:
            self._log = CappedLog(self._open_log(containment.log_head), spec.limits.log_mb * 1024 * 1024)
        except OSError as error:
            await self.stop()
            raise BotFailure(FaultKind.START_FAILED, detail=f"cannot open its log {self.log_path}: "
                                                            f"{error.strerror or error}") from None
        started = time.perf_counter()
        stdio = spec.protocol == "stdio"
        # A stdio bot talks on its stdin and stdout (pipes the arena holds); a gRPC bot's stdout goes to its log.
        child_in, arena_in = os.pipe() if stdio else (subprocess.DEVNULL, -1)
        arena_out, child_out = os.pipe() if stdio else (-1, self._log.write_fd)
        try:
            self._process = ChildProcess(
                containment.argv, env=containment.env, cwd=containment.cwd, stdin=child_in,
                stdout=child_out, stderr=self._log.write_fd, start_new_session=True, pass_fds=containment.pass_fds,
            )
        except OSError as error:
            containment.started()
            for fd in (child_in, arena_in, arena_out, child_out) if stdio else ():
                os.close(fd)
            self._log.close_unstarted()
            self._log = None
            await self.stop()
            raise BotFailure(FaultKind.START_FAILED, detail=f"cannot run {spec.command[0]!r}: {error}") from None
        containment.started()
        self._log.start()
        client: BotClient | None = None
        if stdio:
            os.close(child_in)
            os.close(child_out)
            self._pipes = [trio.lowlevel.FdStream(arena_in), trio.lowlevel.FdStream(arena_out)]
            client = StdioBot(self._pipes[0], self._pipes[1], spec.name, explain=self._explain)
        outcome: dict[str, object] = {}

        async def handshake(cancel: trio.CancelScope) -> None:
            nonlocal client
            try:
                if client is None:  # gRPC
                    client = RemoteBot(await self._socket_of(containment), spec.name, explain=self._explain)
                left = max(0.001, self.startup_s - (time.perf_counter() - started))
                outcome["hello"] = await client.handshake(left, budget_s=self.startup_s)
            except BotFailure as failure:
                outcome["failure"] = failure
                if stdio and failure.kind is FaultKind.START_FAILED and self._process is not None:
                    # Its stdout ended because it is exiting: report its status, as for a gRPC bot (polled, since
                    # watch_exit is the one waiting on the process's descriptor).
                    with trio.move_on_after(EXIT_AFTER_EOF_S):
                        while (status := self._process.returncode) is None:
                            await trio.sleep(0.01)
                        outcome["exit"] = status
            cancel.cancel()

        async def watch_exit(cancel: trio.CancelScope) -> None:
            assert self._process is not None
            outcome["exit"] = await self._process.wait()
            cancel.cancel()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(handshake, nursery.cancel_scope)
            nursery.start_soon(watch_exit, nursery.cancel_scope)
        if "hello" in outcome and client is not None:
            self.startup_ms = (time.perf_counter() - started) * 1000
            self.client = client
            hello = outcome["hello"]
            assert isinstance(hello, bot_pb2.HelloReply)  # what the handshake returned
            self.hello = hello
            return client
        if client is not None:
            client.close()
        failure = outcome.get("failure")
        detail = self._why_not_started(outcome)
        await self.stop()
        if isinstance(failure, BotFailure) and failure.kind is FaultKind.HANDSHAKE_FAILED:
            raise failure
        raise BotFailure(FaultKind.START_FAILED, detail=detail)

    async def _socket_of(self, containment: Containment) -> str:
        """Where the arena connects to a gRPC bot: its socket, found through its sandbox once bubblewrap has made it,
        and held by inode once the bot listens (see :meth:`Containment.pin`). A START_FAILED BotFailure if not."""
        address: str | None = None
        try:
            with trio.move_on_after(self.startup_s):
                address = await containment.locate()
            if address is None:
                raise BotFailure(FaultKind.START_FAILED, detail=f"its sandbox was not made within {seconds_label(self.startup_s)}")
            await _listening(address, self.startup_s)
            return containment.pin()
        except SandboxError as error:
            raise BotFailure(FaultKind.START_FAILED, detail=str(error)) from None

    def _why_not_started(self, outcome: dict[str, object]) -> str:
        tail = self.stderr_tail()
        if "exit" in outcome:
            return f"the process exited with status {outcome['exit']} before the handshake" + (
                f"; its last output: {tail}" if tail else "")
        failure = outcome.get("failure")
        message = str(failure.values.get("detail", failure)) if isinstance(failure, BotFailure) else "no handshake"
        return message + (f"; its last output: {tail}" if tail else "")

    def _open_log(self, head: list[str]) -> Any:
        """The bot's log, opened for this start: a line naming the start, then ``head`` (what its sandbox refuses
        it, so the bot's author reads why a call failed where the bot's own output is)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        log.write(f"--- start {self.starts}: {' '.join(self.spec.command)}\n".encode())
        log.write("".join(f"{line}\n" for line in head).encode())
        log.flush()
        return log

    def _explain(self, failure: BotFailure) -> BotFailure:
        """A crash or a timeout of a bot the kernel stopped for going over a limit is that limit's fault."""
        if failure.kind is FaultKind.CRASHED:
            self._lost = True
        containment = self._containment
        if containment is None or failure.kind not in (FaultKind.CRASHED, FaultKind.TIMEOUT):
            return failure
        limit = containment.over_limit()
        if limit is None:
            return failure
        return BotFailure(FaultKind.RESOURCE_LIMIT, limit=limit, detail=str(failure))

    def stderr_tail(self) -> str:
        """The end of the bot's log, for fault messages."""
        if not self.log_path.exists():
            return ""
        data = self.log_path.read_bytes()[-STDERR_TAIL:]
        return data.decode(errors="replace").strip().replace("\n", " | ")

    async def stop(self) -> None:
        """Close the connection; terminate the bot (SIGTERM: inside its sandbox, the sandbox's processes, which
        bubblewrap would not pass it on to), kill it after a grace period. Never raises."""
        if self.client is not None:
            self.client.close()
            self.client = None
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with trio.CancelScope(shield=True):
                if self._containment is None or not self._containment.signal_sandbox(signal.SIGTERM):
                    _signal_group(process, signal.SIGTERM)
                with trio.move_on_after(STOP_GRACE_S):
                    await process.wait()
                if process.returncode is None:
                    _signal_group(process, signal.SIGKILL)
                    await process.wait()
        if process is not None:
            process.close()
        pipes, self._pipes = self._pipes, []
        for pipe in pipes:
            with trio.CancelScope(shield=True):
                await pipe.aclose()
        containment, self._containment = self._containment, None
        if containment is not None:
            containment.close()  # whatever the bot left running (a setsid grandchild) goes with its cgroup
        log, self._log = self._log, None
        if log is not None:
            with trio.CancelScope(shield=True):
                await log.wait_closed(LOG_CLOSE_S)

    def over_limit(self) -> str | None:
        """The limit the running (or last) start went over, if any."""
        return self._containment.over_limit() if self._containment is not None else None


async def _listening(address: str, timeout_s: float) -> None:
    """Wait (a few milliseconds at a time) for a Unix socket to appear, so the handshake's first connection finds
    the bot listening instead of waiting out a reconnect backoff; the handshake's deadline still bounds it all."""
    if not address.startswith("unix:"):
        return
    path = Path(address[len("unix:"):])
    with trio.move_on_after(timeout_s):
        while not path.exists():
            await trio.sleep(SOCKET_POLL_S)


class ChildProcess:
    """A child process started from the calling (trio) thread and awaited through a pidfd.

    Not ``trio.lowlevel.open_process``: trio starts children from a worker thread, and ``--pdeathsig`` fires when
    the *thread* that started the child exits, which trio's idle worker threads do after a few seconds. Starting
    from the thread that runs trio ties the bot's life to the arena's. fork+exec is a few milliseconds.
    """

    def __init__(self, command: list[str], **popen: Any) -> None:
        """``popen``: subprocess.Popen's keyword arguments, in binary mode (no ``text`` or encoding)."""
        self._popen: subprocess.Popen[bytes] = subprocess.Popen(command, **popen)
        self.pid = self._popen.pid
        self._pidfd: int | None = os.pidfd_open(self.pid) if hasattr(os, "pidfd_open") else None

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        """Wait for the child to exit, without a thread (pidfd readable), or by polling where there is none."""
        while self._popen.poll() is None:
            if self._pidfd is not None:
                await trio.lowlevel.wait_readable(self._pidfd)
            else:
                await trio.sleep(0.05)
        self._close_pidfd()
        return self._popen.returncode

    def send_signal(self, sig: int) -> None:
        self._popen.send_signal(sig)

    def close(self) -> None:
        """Release the pidfd (a process that died on its own was never waited for)."""
        self._close_pidfd()

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            trio.lowlevel.notify_closing(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None


def _signal_group(process: ChildProcess, sig: int) -> None:
    """Signal the bot's whole process group (a shell wrapper's children too)."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            process.send_signal(sig)
        except ProcessLookupError:
            pass


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "bot"


def log_file_name(name: str) -> str:
    """The file a bot process named ``name`` logs to in its logs folder: the name made safe for a path, then
    ``.log`` (what readers of a run's bot logs ask, rather than spell it again)."""
    return f"{_safe(name)}.log"
