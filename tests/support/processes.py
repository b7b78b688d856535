"""The processes a test started, found by the marker it put on their command lines."""

from __future__ import annotations


def bot_processes(tag: str) -> list[int]:
    """Pids of live processes whose command line contains ``tag`` (a marker the test put on its bots)."""
    from pathlib import Path

    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids
