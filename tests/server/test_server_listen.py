"""``arena serve --listen``: an address that cannot be listened on (a port in use, a bad address, a missing folder
for a Unix socket) is one line saying why, exit status 2."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from support.cli import arena


def test_a_port_in_use_is_one_line_saying_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        out = arena("serve", "--listen", address, "--data", str(tmp_path / "data"), timeout=60)
    assert out.returncode == 2
    assert out.stderr == f"error: cannot listen on {address}: address already in use\n"
    assert out.stdout == ""


@pytest.mark.parametrize("address, reason", [
    ("127.0.0.1:99999", "expected HOST:PORT with a port from 0 to 65535 (0: any free port), or unix:/path"),
    ("127.0.0.1", "expected HOST:PORT with a port from 0 to 65535 (0: any free port), or unix:/path"),
    ("unix:/no/such/folder/arena.sock", "no such file or directory"),
])
def test_an_unusable_address_is_one_line(address: str, reason: str, tmp_path: Path) -> None:
    out = arena("serve", "--listen", address, "--data", str(tmp_path / "data"), timeout=60)
    assert out.returncode == 2
    assert out.stderr == f"error: cannot listen on {address}: {reason}\n"
