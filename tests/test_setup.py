"""The project's set-up: what ``pip install -e`` (scripts/setup.sh) runs prints no setuptools banner."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_editable_install_prints_no_setuptools_banner(tmp_path: Path) -> None:
    """What `pip install -e` (scripts/setup.sh) runs, setuptools' build_editable, on a copy of the project: no
    warning on stderr, and a plain .pth file naming the project folder (no meta path finder)."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "arena", project / "arena", ignore=shutil.ignore_patterns("__pycache__", "_generated"))
    out = subprocess.run([sys.executable, "-c", "from setuptools import build_meta; "
                          "print(build_meta.build_editable('dist'))"],
                         capture_output=True, text=True, timeout=300, cwd=project)
    assert out.returncode == 0, out.stderr
    assert "Editable installation" not in out.stderr and "!!" not in out.stderr, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    with zipfile.ZipFile(project / "dist" / out.stdout.split()[-1]) as wheel:
        pth = [n for n in wheel.namelist() if n.endswith(".pth")]
        assert len(pth) == 1 and wheel.read(pth[0]).decode().strip() == str(project), pth
