"""The pinned Go tools scripts/tools.sh builds (buf, grpcurl), built when missing."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from support.paths import ROOT


def go_tool(name: str) -> str:
    """The path of a Go tool that scripts/tools.sh builds (``.venv/.tools``), building it when it is missing; skips
    the test only when Go is not installed."""
    go = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
    if not (os.path.isfile(go) and os.access(go, os.X_OK)):
        pytest.skip(f"Go is not installed ({go}), so scripts/tools.sh cannot build {name}; install Go 1.26.7 or later")

    def listed() -> str | None:
        try:
            lines = (ROOT / ".venv" / ".tools").read_text().splitlines()
        except FileNotFoundError:
            return None
        paths = dict(line.split("=", 1) for line in lines if "=" in line)
        path = paths.get(name)
        return path if path and os.access(path, os.X_OK) else None

    if listed() is None:
        built = subprocess.run(["bash", "scripts/tools.sh"], cwd=ROOT, capture_output=True, text=True, timeout=3600)
        assert built.returncode == 0, f"scripts/tools.sh failed:\n{built.stdout}{built.stderr}"
    path = listed()
    assert path is not None, f"scripts/tools.sh did not list {name} in .venv/.tools"
    return path
