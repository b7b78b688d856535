"""Bots that dial in, for the tests: tokens and tournament entries, a raw dial-in client speaking the protocol by
hand from the test (well-behaved or hostile), and ``arena connect`` as a separate process."""

from __future__ import annotations

import hashlib
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Iterable

import grpc

from arena.protocol import bot_pb2, dial_in_pb2

from support.paths import ROOT

PLAY = "/dominoes.v1.DialInService/Play"


def write_token(folder: Path, name: str) -> tuple[Path, str]:
    """A private token file for bot ``name``; its path and the token."""
    token = hashlib.sha256(f"{folder}/{name}".encode()).hexdigest()[:40]
    path = folder / f"{name}.token"
    path.write_text(token + "\n")
    path.chmod(0o600)
    return path, token


def dial_in_entry(name: str, token: str) -> str:
    """The ``[[bots]]`` entry of a dial-in bot with this token."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    return f'\n[[bots]]\nname = "{name}"\ndial_in = true\ntoken_sha256 = "{digest}"\n'


def hello(bot: str, name: str = "raw") -> dial_in_pb2.PlayRequest:
    return dial_in_pb2.PlayRequest(hello=dial_in_pb2.DialInHello(
        bot=bot, hello=bot_pb2.HelloReply(name=name, version="1", protocol_version=1)))


def first_legal(message: dial_in_pb2.PlayResponse) -> list[dial_in_pb2.PlayRequest]:
    """The polite answer: the first legal action."""
    return [dial_in_pb2.PlayRequest(request_id=message.request_id, act=bot_pb2.ActReply(index=0))]


Answer = Callable[[dial_in_pb2.PlayResponse], "Iterable[bytes | dial_in_pb2.PlayRequest] | None"]
"""What the raw client sends for a decision request: messages (or raw bytes), or None to cut the stream."""


class RawDialIn:
    """A dial-in stream opened by hand (raw bytes on the wire, so it can send what no PlayRequest is), read on a
    thread: every message the server sent, and how the stream ended."""

    def __init__(self, address: str, bot: str, token: str | None, answer: Answer = first_legal,
                 credentials: grpc.ChannelCredentials | None = None, first: bytes | None = None,
                 silent: bool = False, cancelled: Answer | None = None) -> None:
        """``first``: the bytes to send instead of the hello; ``silent``: send nothing at all; ``cancelled``: what
        to send when the server cancels a request (nothing by default)."""
        self.received: list[dial_in_pb2.PlayResponse] = []
        self.code: grpc.StatusCode | None = None
        self.details = ""
        self.answer = answer
        self.cancelled = cancelled
        self._out: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._channel = (grpc.secure_channel(address, credentials) if credentials
                         else grpc.insecure_channel(address))
        play = self._channel.stream_stream(PLAY, request_serializer=None,
                                           response_deserializer=dial_in_pb2.PlayResponse.FromString)
        if not silent:
            self._out.put(first if first is not None else hello(bot).SerializeToString())
        metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
        self._call = play(self._requests(), metadata=metadata, timeout=300)
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _requests(self):
        while (data := self._out.get()) is not None:
            yield data

    def _read(self) -> None:
        try:
            for message in self._call:
                self.received.append(message)
                which = message.WhichOneof("message")
                respond = {"act": self.answer, "cancel": self.cancelled}.get(which)
                if respond is None:
                    continue
                replies = respond(message)
                if replies is None:
                    self._call.cancel()  # the connection cut mid-game
                    break
                for reply in replies:
                    self._out.put(reply if isinstance(reply, bytes) else reply.SerializeToString())
            self.code = grpc.StatusCode.OK
        except grpc.RpcError as error:
            self.code, self.details = error.code(), error.details() or ""
        self._out.put(None)
        self.ended.set()

    def acts(self) -> list[dial_in_pb2.PlayResponse]:
        return [m for m in self.received if m.WhichOneof("message") == "act"]

    def wait_ended(self, seconds: float) -> tuple[grpc.StatusCode | None, str]:
        assert self.ended.wait(seconds), f"the dial-in stream did not end within {seconds} s"
        return self.code, self.details

    def close(self) -> None:
        self._call.cancel()
        self._channel.close()


def connect(address: str, bot: str, token_file: Path, *more: str, tls_ca: Path | None = None,
            extra: tuple[str, ...] = (), command: tuple[str, ...] = ()) -> subprocess.Popen:
    """``arena connect`` in its own process, relaying a local bot (``more``, or ``command``) to the server, with
    ``extra`` options."""
    tls = ("--tls-ca", str(tls_ca)) if tls_ca else ()
    return subprocess.Popen([sys.executable, "-m", "arena", "connect", "--server", address, "--bot", bot,
                             "--token-file", str(token_file), *tls, *extra, "--", *more, *command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


class Lines:
    """A process's stderr read line by line on a thread, to wait for a line while it runs."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_line(self, start: str, seconds: float) -> str:
        """The first line starting with ``start`` (the ones before it are kept in ``seen``)."""
        while (line := self.lines.get(timeout=seconds)) is not None:
            self.seen.append(line)
            if line.startswith(start):
                return line
        raise AssertionError(f"the process ended without a line starting {start!r}: {self.seen}")

    def rest(self, seconds: float) -> list[str]:
        """Every line until the process closed its stderr."""
        while (line := self.lines.get(timeout=seconds)) is not None:
            self.seen.append(line)
        return self.seen


def records_by_match(folder: Path) -> dict[str, dict]:
    """A run folder's game records by the match id their bots were sent."""
    lines = (folder / "games.jsonl").read_text().splitlines()
    return {record["matchId"]: record for record in map(json.loads, lines)}
