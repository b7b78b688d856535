"""A real ``arena serve`` process on a free port (the port read from its "listening on" line), its registry
of bots, quick tournament files, and its clients: submit, watch (all at once or on a thread), the run folder's records;
and the hanging bot's program (the ``hang_bot`` fixture of tests/conftest.py writes it out)."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import grpc

from arena.protocol import arena_pb2 as apb
from arena.protocol import arena_pb2_grpc as apb_grpc

from support.paths import ROOT

RANDOM_BOT = ROOT / "bots" / "python" / "random_bot.py"
WATCHED_BOT = ROOT / "tests" / "bots" / "watched_bot.py"
FINISHED = apb.TOURNAMENT_STATE_FINISHED


def bot_entry(name: str, *command: str) -> str:
    return f'\n[[bots]]\nname = "{name}"\ncommand = {json.dumps([sys.executable, *command])}\n'


def random_bot(name: str, tag: str) -> str:
    return bot_entry(name, str(RANDOM_BOT), "--tag", tag)


def gated_bot(folder: Path, tag: str, *options: str) -> str:
    """The registry entry of ``gated``: the slow bot, answering only as far as the file ``gate`` in its own folder
    lets it (see tests/bots/watched_bot.py; ``options`` such as ``--gate-unit seat``), which :func:`open_gate`
    writes. Closed at first."""
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    for name in ("watched_bot.py", "testbot.py"):
        (folder / name).write_bytes((WATCHED_BOT.parent / name).read_bytes())
        (folder / name).chmod(0o644)
    open_gate(folder / "gate", "")
    return (bot_entry("gated", str(folder / "watched_bot.py"), "--mode", "slow", "--delay", "0.05", "--tag", tag,
                      "--gate", str(folder / "gate"), *options) + f"folder = {json.dumps(str(folder))}\n")


def open_gate(gate: Path, allowed: int | str) -> None:
    """Let the gated bot give ``allowed`` answers in all (or answer in the seats listed), written whole, then
    renamed: never read half-written."""
    partial = gate.with_suffix(".new")
    partial.write_text(f"{allowed}\n")
    partial.chmod(0o644)
    partial.replace(gate)


def named(*names: str) -> str:
    """``[[bots]]`` entries that name registered bots."""
    return "".join(f'\n[[bots]]\nname = "{name}"\n' for name in names)


def registry(folder: Path, entries: str, extra: str = "") -> tuple[str, ...]:
    """``arena serve`` arguments for a registry file holding ``entries`` (``[[bots]]`` tables)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bots-{uuid.uuid4().hex[:8]}.toml"
    path.write_text(extra + entries)
    return ("--bots", str(path))


def random_pair(folder: Path, tag: str) -> tuple[str, ...]:
    """A registry with two random Python bots, alpha and beta, tagged ``tag`` (to find their processes)."""
    return registry(folder, random_bot("alpha", tag) + random_bot("beta", tag))


def tournament(*, games: int = 2, concurrency: int = 2, variant: str = "block", duplicate: bool = True,
               bots: str | None = None, extra: str = "", name: str = "t") -> str:
    """A quick tournament: one-round matches (target 1) between two registered bots (alpha and beta unless
    ``bots`` says otherwise)."""
    return (f'name = "{name}"\nvariant = "{variant}"\ngames = {games}\nconcurrency = {concurrency}\n'
            f'duplicate = {str(duplicate).lower()}\n{extra}\n[options]\ntarget = 1\n'
            + (bots if bots is not None else named("alpha", "beta")))


class Server:
    """``arena serve`` in its own process, on a free port."""

    def __init__(self, data: Path, *extra: str) -> None:
        self.data = data
        self.process = subprocess.Popen(
            [sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data", str(data), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.address = self.wait_line(r"^listening on (\S+)$", 30).group(1)

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.output.append(line)
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_line(self, pattern: str, seconds: float) -> re.Match:
        deadline = time.monotonic() + seconds
        while True:
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line like {pattern!r} within {seconds} s: {''.join(self.output)}")
            if line is None:
                raise AssertionError(f"the server ended before a line like {pattern!r}: {''.join(self.output)}")
            match = re.search(pattern, line)
            if match:
                return match

    def stub(self, *, credentials: grpc.ChannelCredentials | None = None,
             options: list | None = None) -> apb_grpc.ArenaStub:
        channel = (grpc.secure_channel(self.address, credentials, options or []) if credentials
                   else grpc.insecure_channel(self.address, options or []))
        return apb_grpc.ArenaStub(channel)

    def stop(self, sig: int = signal.SIGTERM, seconds: float = 20) -> float:
        """Signal the server and wait for it to exit; returns how long it took."""
        if self.process.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.process.send_signal(sig)
        self.process.wait(timeout=seconds)
        return time.monotonic() - started

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arena", *args, "--server", self.address],
                              capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def submit(stub: apb_grpc.ArenaStub, text: str, metadata: tuple = ()) -> apb.TournamentInfo:
    return stub.SubmitTournament(apb.SubmitTournamentRequest(toml=text), timeout=30, metadata=metadata).tournament


def watch(stub: apb_grpc.ArenaStub, tournament_id: str, *, moves: bool = False, seconds: float = 120,
          metadata: tuple = ()) -> list[apb.TournamentEvent]:
    """Every event of a watch, to the end of the stream."""
    request = apb.WatchTournamentRequest(id=tournament_id, moves=moves)
    return [e for reply in stub.WatchTournament(request, timeout=seconds, metadata=metadata) for e in reply.events]


def kinds(events: list[apb.TournamentEvent]) -> list[str]:
    return [e.WhichOneof("kind") for e in events]


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]


def index(record: dict) -> int:
    return int(record.get("index", 0))






class BackgroundWatch:
    """A watch stream read on a thread: its events as they come, and how it ended."""

    def __init__(self, stub: apb_grpc.ArenaStub, tournament_id: str, moves: bool = False) -> None:
        self.events: list[apb.TournamentEvent] = []
        self.finished_games = 0
        self.error: grpc.RpcError | None = None
        self.progress = threading.Condition()
        self._call = stub.WatchTournament(apb.WatchTournamentRequest(id=tournament_id, moves=moves), timeout=180)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for reply in self._call:
                with self.progress:
                    self.events.extend(reply.events)
                    self.finished_games += sum(1 for e in reply.events if e.HasField("game_finished"))
                    self.progress.notify_all()
        except grpc.RpcError as error:
            self.error = error
        with self.progress:
            self.progress.notify_all()

    def wait_games(self, count: int, seconds: float) -> None:
        with self.progress:
            if not self.progress.wait_for(lambda: self.finished_games >= count or not self.thread.is_alive(),
                                          seconds):
                raise AssertionError(f"fewer than {count} games finished within {seconds} s")

    def join(self, seconds: float) -> None:
        self.thread.join(seconds)
        assert not self.thread.is_alive(), "the watch did not end"


def self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


HANG_BOT = """# A bot that never answers an Act, and says so on stderr: in its sandbox its log is all it can write.
import sys
import threading

from arena.protocol import bot_pb2
from testbot import serve_handlers


def say(text):
    print(text, file=sys.stderr, flush=True)


def act(request, context):
    say("asked")
    over = threading.Event()
    context.add_callback(over.set)  # the call ended without an answer: the arena cancelled it
    over.wait(600)
    say("cancelled")
    return bot_pb2.ActReply(index=0)


serve_handlers(lambda request, context: bot_pb2.HelloReply(name="hanger", version="0", protocol_version=1), act,
               lambda request, context: bot_pb2.NotifyReply(), None)
"""
