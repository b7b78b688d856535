"""Where things are: the repository's root, whatever the current folder."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's top folder (tests/support/paths.py is two levels below it)."""
