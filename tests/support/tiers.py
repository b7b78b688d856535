"""The fast tier, and its check: a test marked ``fast`` (``scripts/test.sh --fast`` runs them, and the full command
runs them first) may start no process, no server and no browser. While a fast test runs (its set-up, fixtures
included, and its call), each way this interpreter starts one is replaced by a refusal that fails the test with what
it tried, so a test that drifts out of its tier is caught the first time it runs, not when the fast tier has grown
slow.

The ways covered: every child process (``subprocess``, ``trio.run_process``, ``multiprocessing`` and the sandbox all
end in ``_posixsubprocess.fork_exec``, ``os.fork`` or ``os.posix_spawn``; Chromium and PostgreSQL are started so),
every listening socket (``socket.socket.listen``: Hypercorn, trio's and asyncio's servers) and every gRPC server
(``grpc.server``, ``grpc.aio.server``: they listen in C, not through ``socket``). Loaded by tests/conftest.py;
tests/test_test_runner.py tries each for real in a fast test and sees it fail."""

from __future__ import annotations

import _posixsubprocess
import contextlib
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import grpc.aio
import pytest

FAST = "fast"
"""The marker's name: ``pytestmark = pytest.mark.fast`` on a module, or ``@pytest.mark.fast`` on a test."""

SOAK = "soak"
"""The marker of the soak profile's long runs, left out of both tiers."""

STARTERS: list[tuple[Any, str, str]] = [
    (_posixsubprocess, "fork_exec", "a process"),
    (subprocess, "_fork_exec", "a process"),
    (os, "fork", "a process"),
    (os, "forkpty", "a process"),
    (os, "posix_spawn", "a process"),
    (os, "posix_spawnp", "a process"),
    (socket.socket, "listen", "a server (a listening socket)"),
    (grpc, "server", "a gRPC server"),
    (grpc.aio, "server", "a gRPC server"),
]


class StartedInTheFastTier(Exception):
    """What a fast test gets when it starts a process or a server: the test belongs in the full tier."""


def refusal(what: str, name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise StartedInTheFastTier(
            f"a test marked fast started {what} ({name}): the fast tier starts no process, no server and no "
            "browser; leave the mark off (the test runs in the full tier)")

    return refuse


@contextlib.contextmanager
def nothing_started() -> Iterator[None]:
    """Every way to start a process or a server refused, for the time of the block."""
    with pytest.MonkeyPatch.context() as patch:
        for owner, attribute, what in STARTERS:
            if hasattr(owner, attribute):
                patch.setattr(owner, attribute, refusal(what, f"{getattr(owner, '__name__', owner)}.{attribute}"))
        yield


def guarded(item: pytest.Item) -> contextlib.AbstractContextManager[None]:
    return nothing_started() if item.get_closest_marker(FAST) else contextlib.nullcontext()


# The set-up (with the fixtures it starts) and the call; not the tear-down, where the last test of a run also stops
# the session's shared servers (a fast test's own fixtures start nothing to stop).
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with guarded(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with guarded(item):
        yield


def pytest_sessionstart(session: pytest.Session) -> None:
    """Probe the machine's sandbox once, before any test: ``arena.sandbox.host()`` runs ``bwrap --version`` and
    caches what it learns. A fast test that asks what the machine can do (to refuse a bot before starting it) then
    starts nothing, whichever module ran first; without this it passed only when an earlier module had asked."""
    from arena.sandbox import host  # here, not at the top: loading the plugin must not probe the machine

    host()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{SOAK}: a long run of a promise the full tier checks in a shorter form; only the soak profile "
                   "runs it (scripts/test.sh --soak)")
    config.addinivalue_line(
        "markers", f"{FAST}: starts no process, no server and no browser (the fast tier: scripts/test.sh --fast); "
                   "checked while it runs (tests/support/tiers.py)")
