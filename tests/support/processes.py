"""The processes a test started, found by the marker it put on their command lines or by their parent."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def bot_processes(tag: str) -> list[int]:
    """Pids of live processes whose command line contains ``tag`` (a marker the test put on its bots)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def parents() -> dict[int, int]:
    """Every live process's pid and its parent's pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])  # the name in () may hold spaces
    return found


def kill_descendants(pid: int) -> list[int]:
    """SIGKILL every live descendant of ``pid`` (not ``pid`` itself), at once: the pids killed."""
    parent_of = parents()
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parent_of.items() if parent in frontier]
        found += children
        frontier = children
    for child in found:
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return found
