"""What every client command of a server shares (``arena status``, ``arena league ...``): the connection made from
``--server``, ``--token-file`` and the TLS flags, a refusal as one ``error:`` line and exit status 1, a secret shown
once, and the command to print as a hint. Light on purpose: a client command loads the gRPC client, not the server.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any, TextIO

from arena.cli.parsers.server import DEFAULT_SERVER
from arena.display import safe_name
from arena.errors import UsageError
from arena.invocation import arena_command
from arena.server.client import ServerSaidNo, connect

EXIT_REFUSED = 1


def new_private_file(path: str, what: str) -> TextIO:
    """A new file only its owner may read, open for writing; a UsageError when it exists or cannot be made (a
    token is never written over another file)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise UsageError(f"{path}: cannot write {what}: {error.strerror or error}") from None
    return os.fdopen(descriptor, "w")


CLIENT_FLAGS = ("server", "token_file", "tls_ca", "tls", "tls_server_name")
"""The flags of :func:`add_client_arguments`, repeated by :func:`client_command`."""


def client_command(args: argparse.Namespace, *words: str, flags: tuple[str, ...] = CLIENT_FLAGS) -> str:
    """A client command to print as a hint (``follow it: ...``) that works as printed: the arena as it was called
    (``.venv/bin/arena``, not an ``arena`` the PATH may not have), the words, and this call's own ``--server``,
    ``--token-file`` and TLS flags (a server with a token refuses a call without one), or those of ``flags``.
    Quoted for a shell."""
    parts = [*words]
    for name in flags:
        value = getattr(args, name, None)
        flag = "--" + name.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif value and not (name == "server" and value == DEFAULT_SERVER):
            parts += [flag, str(value)]
    return " ".join([arena_command(), *(shlex.quote(safe_name(str(p), 400)) for p in parts)])


def _client(args: argparse.Namespace, aio: bool = False) -> Any:
    return connect(args.server, args.token_file, args.tls_ca, args.tls, args.tls_server_name, aio)


def shown_once(what: str, secret: str) -> int:
    """A secret the server shows only this once: what it is on stderr, the secret alone on stdout (so ``> FILE``
    keeps exactly the secret). The exit status of a command that got one: 0."""
    print(what, file=sys.stderr)
    print(secret)
    return 0


def _refused(message: str) -> int:
    print(f"error: {safe_name(message, 4000)}", file=sys.stderr)
    return EXIT_REFUSED


def _with_client(args: argparse.Namespace, body: Any, connect: Any = None) -> int:
    client = (connect or _client)(args)
    try:
        status: int = body(client)
        return status
    except ServerSaidNo as error:
        return _refused(str(error))
    except BrokenPipeError:  # the output went to a pipe that closed (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_REFUSED
    finally:
        client.close()
