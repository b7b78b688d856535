"""gRPC server reflection and health checking, seen by a client of another stack: the real grpcurl (built, pinned, by
scripts/tools.sh) against a real ``arena serve`` and a real botkit bot, each in its own process on a free port (the
port read from its "listening on" line).

Both servers answer grpc.reflection.v1 and v1alpha with the descriptors compiled from proto/ (compared field for
field with protoc's), and grpc.health.v1 with SERVING for "" and for their service. No sleeps synchronise anything:
the tests wait on the processes' output lines, with deadlines. Skipped only when Go is not installed.
"""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
from google.protobuf import descriptor_pb2

from arena.protocol import arena_pb2, bot_pb2
from support.paths import ROOT
from support.tools import go_tool

RANDOM_BOT = ROOT / "bots" / "python" / "random_bot.py"
HEALTH = "grpc.health.v1.Health"
REFLECTION = {"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}


class Process:
    """A server in its own process; ``address`` is read from the line of its stderr that matches ``listening``."""

    def __init__(self, command: list[str], listening: str, seconds: float = 60) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        cwd=ROOT)
        self.output: list[str] = []
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.output.append(line)
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + seconds
        while True:
            try:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise AssertionError(f"no line like {listening!r} within {seconds} s: {''.join(self.output)}")
            if line is None:
                raise AssertionError(f"{command[:4]} ended before listening: {''.join(self.output)}")
            if match := re.search(listening, line):
                self.address = match.group(1)
                return

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def grpcurl() -> str:
    return go_tool("grpcurl")


@pytest.fixture(scope="module")
def arena_server(grpcurl: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    # No --bots and no --allow-commands: this server refuses every submission, and reflection needs none.
    data = tmp_path_factory.mktemp("reflection") / "data"
    server = Process([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data", str(data)],
                     r"^listening on (\S+)$")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def bot(grpcurl: str) -> Iterator[Process]:
    """The example random bot started by hand; botkit binds port 0 and prints the port it got."""
    process = Process([sys.executable, str(RANDOM_BOT), "--listen", "127.0.0.1:0"], r" listening on (\S+)$")
    yield process
    process.stop()


def call(grpcurl: str, address: str, *request: str, data: str | None = None, token: str | None = None,
         flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``grpcurl -plaintext [flags] ADDRESS request...``, with ``-d data`` and the token's header when given."""
    flags += ("-d", data) if data is not None else ()
    flags += ("-H", f"authorization: Bearer {token}") if token else ()
    return subprocess.run([grpcurl, "-plaintext", "-max-time", "30", *flags, address, *request], capture_output=True,
                          text=True, timeout=60)


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, f"grpcurl failed ({result.returncode}): {result.stdout}{result.stderr}"
    return result.stdout


def compiled_descriptors() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """proto/ compiled by protoc (grpcio-tools), without source info, by file name."""
    import tempfile

    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        files = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto").rglob("*.proto"))
        assert protoc.main(["protoc", f"-I{ROOT / 'proto'}", f"--descriptor_set_out={out}", *files]) == 0
        compiled = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return {f.name: f for f in compiled.file}


def without_json_names(file: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """protoc fills in every field's json_name; a runtime's descriptors leave the default out. Nothing else differs."""
    copy = descriptor_pb2.FileDescriptorProto()
    copy.CopyFrom(file)
    messages = list(copy.message_type)
    while messages:
        message = messages.pop()
        for field in message.field:
            field.ClearField("json_name")
        messages.extend(message.nested_type)
    return copy


def served_descriptors(grpcurl: str, address: str, symbol: str,
                       folder: Path) -> list[descriptor_pb2.FileDescriptorProto]:
    """The files grpcurl got by reflection to describe ``symbol`` (it and its dependencies)."""
    out = folder / f"{symbol}.protoset"
    ok(call(grpcurl, address, "describe", symbol, flags=("-protoset-out", str(out))))
    return list(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)


def rpc_lines(service) -> list[str]:
    """grpcurl's rendering of a service's methods, from the generated code's descriptor."""
    lines = []
    for method in service.methods:
        stream = "stream " if method.server_streaming else ""
        lines.append(f"rpc {method.name} ( .{method.input_type.full_name} ) returns "
                     f"( {stream}.{method.output_type.full_name} );")
    return lines


# --- the arena server -------------------------------------------------------------------------------------------


def test_arena_server_lists_its_services(grpcurl: str, arena_server: Process) -> None:
    services = set(ok(call(grpcurl, arena_server.address, "list")).split())
    assert services == {"dominoes.v1.Arena", "dominoes.v1.DialInService", HEALTH, *REFLECTION}


def test_arena_server_describes_the_dial_in_service(grpcurl: str, arena_server: Process) -> None:
    from arena.protocol import dial_in_pb2

    text = ok(call(grpcurl, arena_server.address, "describe", "dominoes.v1.DialInService"))
    assert text.startswith("dominoes.v1.DialInService is a service:"), text
    rpc = "rpc Play ( stream .dominoes.v1.PlayRequest ) returns ( stream .dominoes.v1.PlayResponse );"
    assert rpc in text and len(dial_in_pb2.DESCRIPTOR.services_by_name["DialInService"].methods) == 1, text


def test_arena_server_describes_the_arena_service(grpcurl: str, arena_server: Process) -> None:
    text = ok(call(grpcurl, arena_server.address, "describe", "dominoes.v1.Arena"))
    assert text.startswith("dominoes.v1.Arena is a service:"), text
    for line in rpc_lines(arena_pb2.DESCRIPTOR.services_by_name["Arena"]):
        assert line in text, text
    # Messages of every file are described too: a tournament spec, an observation's layout.
    spec = ok(call(grpcurl, arena_server.address, "describe", "dominoes.v1.TournamentSpec"))
    assert "message TournamentSpec {" in spec, spec
    assert "repeated .dominoes.v1.OpenEnd open_ends = 4;" in ok(
        call(grpcurl, arena_server.address, "describe", "dominoes.v1.Layout"))


def test_arena_server_reflects_proto_descriptors(grpcurl: str, arena_server: Process, tmp_path: Path) -> None:
    compiled = compiled_descriptors()
    served = served_descriptors(grpcurl, arena_server.address, "dominoes.v1.Arena", tmp_path)
    assert sorted(f.name for f in served) == ["dominoes/v1/arena.proto", "dominoes/v1/tournament.proto",
                                              "dominoes/v1/types.proto"]
    for file in served:
        assert without_json_names(file) == without_json_names(compiled[file.name]), file.name


def test_arena_server_is_healthy(grpcurl: str, arena_server: Process) -> None:
    for service in ("", "dominoes.v1.Arena"):
        reply = ok(call(grpcurl, arena_server.address, f"{HEALTH}/Check", data=json.dumps({"service": service})))
        assert json.loads(reply) == {"status": "SERVING"}, (service, reply)
    unknown = call(grpcurl, arena_server.address, f"{HEALTH}/Check", data='{"service": "no.such.Service"}')
    assert unknown.returncode != 0 and "NotFound" in unknown.stderr, unknown.stderr


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_both_reflection_versions_answer(grpcurl: str, arena_server: Process, version: str) -> None:
    """grpcurl uses v1 when it is there; older clients use v1alpha. Both are called here directly."""
    method = f"grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
    reply = json.loads(ok(call(grpcurl, arena_server.address, method, data='{"list_services": ""}')))
    names = {service["name"] for service in reply["list_services_response"]["service"]}
    assert names == {"dominoes.v1.Arena", "dominoes.v1.DialInService", HEALTH, *REFLECTION}


def test_with_a_token_reflection_and_health_need_it(grpcurl: str, tmp_path: Path) -> None:
    token = "t" * 32
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    server = Process([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", "--data",
                      str(tmp_path / "data"), "--token-file", str(token_file)], r"^listening on (\S+)$")
    try:
        refused = call(grpcurl, server.address, "list")
        assert refused.returncode != 0 and "Unauthenticated" in refused.stderr, refused.stderr
        assert "dominoes.v1.Arena" in ok(call(grpcurl, server.address, "list", token=token)).split()
        health = call(grpcurl, server.address, f"{HEALTH}/Check", data='{"service": ""}')
        assert health.returncode != 0 and "Unauthenticated" in health.stderr, health.stderr
        reply = ok(call(grpcurl, server.address, f"{HEALTH}/Check", data='{"service": ""}', token=token))
        assert json.loads(reply) == {"status": "SERVING"}
    finally:
        server.stop()


# --- a botkit bot -----------------------------------------------------------------------------------------------


def test_bot_lists_its_services(grpcurl: str, bot: Process) -> None:
    services = set(ok(call(grpcurl, bot.address, "list")).split())
    assert services == {"dominoes.v1.Bot", HEALTH, *REFLECTION}


def test_bot_describes_the_bot_service(grpcurl: str, bot: Process, tmp_path: Path) -> None:
    text = ok(call(grpcurl, bot.address, "describe", "dominoes.v1.Bot"))
    assert text.startswith("dominoes.v1.Bot is a service:"), text
    for line in rpc_lines(bot_pb2.DESCRIPTOR.services_by_name["Bot"]):
        assert line in text, text
    compiled = compiled_descriptors()
    served = served_descriptors(grpcurl, bot.address, "dominoes.v1.Bot", tmp_path)
    assert sorted(f.name for f in served) == ["dominoes/v1/bot.proto", "dominoes/v1/types.proto"]
    for file in served:
        assert without_json_names(file) == without_json_names(compiled[file.name]), file.name


def test_bot_is_healthy_and_answers_by_reflection(grpcurl: str, bot: Process) -> None:
    for service in ("", "dominoes.v1.Bot"):
        reply = ok(call(grpcurl, bot.address, f"{HEALTH}/Check", data=json.dumps({"service": service})))
        assert json.loads(reply) == {"status": "SERVING"}, (service, reply)
    # A call built from reflection alone: grpcurl has no .proto file.
    hello = json.loads(ok(call(grpcurl, bot.address, "dominoes.v1.Bot/Hello", data='{"protocol_version": 1}')))
    assert hello["name"] == "py-random" and hello["protocol_version"] == 1, hello
