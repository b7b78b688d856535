"""The arena's command line run as a user runs it: ``python -m arena ...`` in a subprocess, from the repository."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)
