"""The client side of the control API: a channel to the server with the token on every call, and one-line
messages for every way a call can fail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio

from arena.protocol import MAX_MESSAGE_BYTES
from arena.protocol import arena_pb2_grpc as apb_grpc
from arena.server.auth import ConfigError, bearer, read_file, read_token

DEFAULT_SERVER = "127.0.0.1:50500"
CALL_TIMEOUT_S = 30.0


class ServerSaidNo(Exception):
    """A call the server refused or could not answer (exit status 1), with a one-line message."""


@dataclass
class Client:
    """A stub to the Arena service and the metadata every call carries."""

    address: str
    stub: Any
    channel: grpc.Channel
    metadata: tuple[tuple[str, str], ...]

    def call(self, method: str, request: Any, timeout: float | None = CALL_TIMEOUT_S) -> Any:
        try:
            return getattr(self.stub, method)(request, timeout=timeout, metadata=self.metadata)
        except grpc.RpcError as error:
            raise ServerSaidNo(describe(error, self.address)) from None

    def stream(self, method: str, request: Any) -> Any:
        return getattr(self.stub, method)(request, metadata=self.metadata)

    def close(self) -> None:
        self.channel.close()


def describe(error: grpc.RpcError, address: str) -> str:
    """``UNAVAILABLE: ...`` becomes a sentence a person can act on."""
    code = error.code() if hasattr(error, "code") else None
    details = (error.details() if hasattr(error, "details") else None) or str(error)
    if code == grpc.StatusCode.UNAVAILABLE and "shutting down" not in details:
        return f"cannot reach the arena server at {address} (is `arena serve` running there?): {details}"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"the arena server at {address} did not answer in time"
    name = code.name.lower().replace("_", " ") if code is not None else "error"
    return f"{name}: {details}"


def connect(address: str, token_file: str | None = None, tls_ca: str | None = None, tls: bool = False,
            tls_server_name: str | None = None, aio: bool = False) -> Client:
    """A client for the server at ``address``; TLS with ``tls_ca`` (a PEM file) or, with ``tls``, system roots.
    ``aio``: its channel is grpc.aio's (for a stream on the loop of :func:`arena.guest.run`), not grpcio's."""
    grpc_: Any = grpc.aio if aio else grpc
    token = read_token(token_file) if token_file else None
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.enable_retries", 0),
    ]
    if tls_server_name:
        options.append(("grpc.ssl_target_name_override", tls_server_name))
    if tls or tls_ca:
        roots = read_file(tls_ca, "TLS root certificate") if tls_ca else None
        channel = grpc_.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=roots), options)
    else:
        if tls_server_name:
            raise ConfigError("--tls-server-name needs --tls or --tls-ca")
        channel = grpc_.insecure_channel(address, options)
    return Client(address, apb_grpc.ArenaStub(channel), channel, bearer(token) if token else ())
