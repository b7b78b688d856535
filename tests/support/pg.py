"""A real, private PostgreSQL server for one test session: a pytest plugin (tests/conftest.py loads it:
``pytest_plugins = ["support.pg"]``).

``initdb`` and ``pg_ctl`` (the Debian package ``postgresql``) make a cluster in a fresh temporary folder and start
it listening only on a Unix socket in that folder (no TCP port: nothing else on the machine can reach it, and no
port can clash). They refuse to run as root, so as root they run as the ``postgres`` user (``runuser -u postgres
--``) on a folder that user owns. The server is stopped and its folder removed at the end of the session, also
when tests failed. Each test gets a database of its own (the ``postgres_database`` fixture).

Without the binaries the PostgreSQL tests are skipped with the reason, except in CI (``CI=true``), where a missing
PostgreSQL is a failure: CI must run them (``.ci/run`` installs the package).
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_USER = "postgres"
SUPERUSER = "arena"
PORT = 5432  # names the socket file only: the server listens on no TCP port
START_TIMEOUT_S = 300  # pg_ctl -w waits for the server to accept connections; this bounds a very busy machine


@dataclass(frozen=True)
class PostgresServer:
    folder: Path
    bin: Path

    @property
    def socket_folder(self) -> str:
        return str(self.folder)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?host={self.socket_folder}&port={PORT}"


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, or Debian's /usr/lib/postgresql/N/bin (newest N)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return candidates[-1].parent if candidates else None


def unavailable(reason: str) -> None:
    """Skip, or fail in CI, where the PostgreSQL tests must run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL tests skipped: {reason} (install the Debian package postgresql)")


def as_server_user(command: list[str]) -> list[str]:
    """``command`` run as the ``postgres`` user when we are root (initdb and pg_ctl refuse root)."""
    return ["runuser", "-u", SERVER_USER, "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str], folder: Path) -> None:
    done = subprocess.run(as_server_user(command), cwd=folder, capture_output=True, text=True,
                          timeout=START_TIMEOUT_S + 60)
    if done.returncode != 0:
        log = (folder / "server.log").read_text() if (folder / "server.log").exists() else ""
        raise RuntimeError(f"{' '.join(command[:2])} failed ({done.returncode}): {done.stderr.strip()}\n{log}")


def _private_folder() -> Path:
    """A new folder the server's user owns (0700), directly in /tmp so that user can reach it."""
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-", dir="/tmp"))
    if os.geteuid() == 0:
        user = pwd.getpwnam(SERVER_USER)
        os.chown(folder, user.pw_uid, user.pw_gid)
    folder.chmod(0o700)
    return folder


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """Start the session's private server (only when a test asks for it) and stop it at the end."""
    bin_folder = postgres_bin()
    if bin_folder is None:
        unavailable("initdb and pg_ctl were not found")
    assert bin_folder is not None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            unavailable(f"running as root, and there is no {SERVER_USER!r} user to run the server as")
        if shutil.which("runuser") is None:
            unavailable("running as root, and runuser (util-linux) is missing")
    folder = _private_folder()
    data = folder / "data"
    started = False
    try:
        _run([str(bin_folder / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
              "--no-sync", "--no-instructions"], folder)
        settings = (f"-c listen_addresses='' -k {folder} -p {PORT} -c fsync=off -c synchronous_commit=off "
                    f"-c full_page_writes=off -c max_connections=50")
        _run([str(bin_folder / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-o", settings,
              "-w", "-t", str(START_TIMEOUT_S), "start"], folder)
        started = True
        yield PostgresServer(folder=folder, bin=bin_folder)
    finally:
        if started:
            _run([str(bin_folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], folder)
        shutil.rmtree(folder, ignore_errors=True)


_numbers = itertools.count(1)


def new_database(server: PostgresServer) -> str:
    """A new, empty database on the server; its SQLAlchemy URL."""
    import psycopg

    name = f"test_{os.getpid()}_{next(_numbers)}"
    with psycopg.connect(host=server.socket_folder, port=PORT, user=SUPERUSER, dbname="postgres",
                         autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return server.url(name)


@pytest.fixture
def postgres_database(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    return new_database(postgres_server)
