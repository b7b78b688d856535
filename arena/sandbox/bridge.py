"""The TCP transport inside a sandbox: a small relay that runs the bot and carries the arena's connections from the
bot's Unix socket to the loopback port the bot listens on.

A bot with ``transport = "tcp"`` (a runtime without Unix sockets) listens on ``127.0.0.1:PORT``, but inside its
sandbox that loopback is its own network namespace's, which the arena cannot reach; only the socket folder is
shared. So the sandbox runs this relay as its first process: it starts the bot, listens on the Unix socket the
arena connects to, and copies bytes both ways to the bot's port. It adds one local hop per message and nothing
else; it exits with the bot's status when the bot exits, taking the sandbox down with it.

Run as ``python -m arena.sandbox.bridge --unix PATH --tcp HOST:PORT -- COMMAND ...`` (the arena builds this).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time

CONNECT_TRIES_S = 60.0
CHUNK = 65536


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copy until ``source`` ends, then end ``target``'s writing side (HTTP/2 needs both directions apart)."""
    try:
        while data := source.recv(CHUNK):
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _connect(host: str, port: int, child: subprocess.Popen[bytes]) -> socket.socket | None:
    """The bot's port, once it listens (the arena's handshake deadline bounds how long that may take)."""
    deadline = time.monotonic() + CONNECT_TRIES_S
    while time.monotonic() < deadline and child.poll() is None:
        try:
            upstream = socket.create_connection((host, port))
            upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small frames go at once (no Nagle)
            return upstream
        except OSError:
            time.sleep(0.005)
    return None


def _serve(client: socket.socket, host: str, port: int, child: subprocess.Popen[bytes]) -> None:
    upstream = _connect(host, port, child)
    if upstream is None:
        client.close()
        return
    for a, b in ((client, upstream), (upstream, client)):
        threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena.sandbox.bridge")
    parser.add_argument("--unix", required=True, help="the Unix socket the arena connects to")
    parser.add_argument("--tcp", required=True, help="HOST:PORT the bot listens on")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    host, _, port = args.tcp.rpartition(":")
    child = subprocess.Popen(command)
    if os.path.exists(args.unix):
        os.unlink(args.unix)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(args.unix)
    listener.listen(16)

    def accept() -> None:
        while True:
            client, _ = listener.accept()
            threading.Thread(target=_serve, args=(client, host, int(port), child), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    status = child.wait()
    return status if status >= 0 else 128 - status  # killed by a signal: the shell's convention


if __name__ == "__main__":
    sys.exit(main())
