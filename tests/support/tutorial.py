"""The tutorials' pages run as a reader follows them: every shell block a page of docs/tutorials/ marks is run, in its
order, by one bash in a fresh folder, with the repository's ``.venv/bin`` first on the PATH.

**The convention.** A block a test runs is a fenced ```` ```sh ```` block right after the line
``<!-- tutorial: NAME -->`` (NAME is the page's file name, ``first-bot`` for docs/tutorials/first-bot.md). The one
block after ``<!-- tutorial: NAME setup -->`` (installing the arena, the PATH, the working folder) is what the test
does itself, so it is not run, only checked. The other fenced blocks of the page are excerpts of the output: the
first ```` ```text ```` block after a marked block, before the next one, is that block's (:meth:`Tutorial.excerpt`).

The blocks run as one script under ``set -e`` (a failing command stops it there), each preceded by a marker line, so
each block's output can be told apart (:meth:`Ran.of`, by a piece of the block's text). The environment is the test's, less what the test suite sets
for itself (``ARENA_RECORDS``: a reader's run writes the default compact records).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.paths import ROOT

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
READER_ADDRESSES = (("127.0.0.1", 50500), ("127.0.0.1", 8080))
"""The addresses a reader's server listens at by default (gRPC, the web dashboard), which the tutorials keep."""
SUITE_ONLY = ("ARENA_RECORDS",)
"""Variables tests/conftest.py sets for the suite's own runs, which a reader does not have."""


def unavailable(reason: str) -> None:
    """Skip, or fail in CI (``CI=true``), where every tutorial must be run."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"a tutorial's test cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Tutorial:
    """One page of docs/tutorials/, by its name."""

    name: str

    @property
    def page(self) -> Path:
        return ROOT / "docs" / "tutorials" / f"{self.name}.md"

    def _marked(self) -> list[tuple[str, str, str]]:
        """(mark, the sh block's text, the text of the excerpt after it, "" if none) for every marked block."""
        text = self.page.read_text()
        marks = list(re.finditer(rf"^<!-- tutorial: {re.escape(self.name)}( setup)? -->\n", text, re.M))
        found = []
        for n, mark in enumerate(marks):
            end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
            fences = list(FENCE.finditer(text, mark.end(), end))
            assert fences and fences[0].start() == mark.end() and fences[0][1] == "sh", (
                f"{self.page.name}: {mark[0].strip()} must be followed at once by a ```sh block")
            excerpt = next((fence[2] for fence in fences[1:] if fence[1] == "text"), "")
            found.append((mark[1] or "", fences[0][2], excerpt))
        return found

    def blocks(self) -> list[str]:
        """The blocks the test runs, in order."""
        return [block for setup, block, _ in self._marked() if not setup]

    def setup(self) -> str:
        """The one setup block (what the test does itself)."""
        (block,) = [block for setup, block, _ in self._marked() if setup]
        return block

    def excerpt(self, key: str) -> str:
        """The output the page shows for the one block that has ``key`` in it."""
        (found,) = [excerpt for setup, block, excerpt in self._marked() if not setup and key in block]
        return found

    def run(self, folder: Path, timeout: float) -> Ran:
        """Every block run in ``folder``, as one script."""
        steps = self.blocks()
        assert steps, f"{self.page.name}: no block marked <!-- tutorial: {self.name} -->"
        script = "set -e\n" + "".join(f"echo '@@block {n}'\n{text}" for n, text in enumerate(steps)) + "echo '@@end'\n"
        env = {key: value for key, value in os.environ.items() if key not in SUITE_ONLY}
        env["PATH"] = f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        started = time.monotonic()
        done = subprocess.run(["bash", "-c", script], cwd=folder, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
        return Ran(steps, done.stdout, done.returncode, time.monotonic() - started)

    def run_with_server(self, folder: Path, timeout: float) -> Ran:
        """Every block run in ``folder`` by a page that starts a server at the reader's default addresses (its pid in
        ``server.pid``, its log in ``server.log``): the addresses held while it runs, the server stopped whatever
        happens, and the run checked, with the server's log shown when a block failed."""
        with reader_addresses():
            try:
                ran = self.run(folder, timeout)
            finally:
                stop_server(folder / "server.pid")
        log = folder / "server.log"
        ran.check(more=f"--- server.log ---\n{log.read_text()[-4000:] if log.exists() else ''}")
        print(f"the tutorial took {ran.seconds:.1f} s")
        return ran


@dataclass(frozen=True)
class Ran:
    """What a tutorial's script said."""

    steps: list[str]
    said: str
    returncode: int
    seconds: float

    def check(self, more: str = "") -> None:
        """Every block ran and the script ended (``more``: what else to show when it did not, e.g. a server's log)."""
        assert self.returncode == 0 and self.said.rstrip().endswith("@@end"), f"{self.said[-4000:]}\n{more}"

    def of(self, key: str) -> str:
        """The output of the one block that has ``key`` in it."""
        parts = re.split(r"^@@block \d+$\n", self.said.rsplit("@@end", 1)[0], flags=re.M)[1:]
        assert len(parts) == len(self.steps), self.said[-4000:]
        (found,) = [said for text, said in zip(self.steps, parts, strict=True) if key in text]
        return found


def lines_missing(excerpt: str, said: str) -> list[str]:
    """The lines of a page's excerpt that the output does not have. A line ``...`` stands for lines left out, and
    ``...`` within a line for any text; lines are compared with their spaces at the end stripped."""
    lines = [line.rstrip() for line in said.splitlines()]
    missing = []
    for line in excerpt.splitlines():
        line = line.rstrip()
        if line in ("...", ""):
            continue
        pattern = re.compile(".*".join(re.escape(part) for part in line.split("...")))
        if not any(pattern.fullmatch(have) for have in lines):
            missing.append(line)
    return missing


@contextlib.contextmanager
def reader_addresses() -> Iterator[None]:
    """The reader's default addresses, for one tutorial at a time: a lock file that every tutorial test holds while
    its server runs (so two tutorials in two test processes take turns, waiting on the lock, not on the clock), and
    a failure saying so when something else holds one of them."""
    with open(Path(tempfile.gettempdir()) / "arena-tutorial-addresses.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for address in READER_ADDRESSES:
            with socket.socket() as probe:
                taken = probe.connect_ex(address) == 0
            assert not taken, f"{address[0]}:{address[1]} is taken: a tutorial's server listens there, as a reader's would"
        yield


def stop_server(pid_file: Path) -> None:
    """Stop a tutorial's server, if it is still running (SIGTERM, then SIGKILL), and wait until it is gone."""
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().split()[0])

    def alive() -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return False
        return state != "Z"

    for sig, seconds in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        if not alive():
            return
        os.kill(pid, sig)
        deadline = time.monotonic() + seconds
        while alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not alive(), f"the tutorial's server (pid {pid}) did not stop"
