"""The SVG charts the pages draw, read back: a line's points from its path."""

from __future__ import annotations

import re

PATH = re.compile(r'<path d="([^"]*)"[^>]*\bdata-version="([^"]*)"')
POINT = re.compile(r"[ML]\s*(-?[\d.]+),(-?[\d.]+)")


def path_xs(svg: str, version: str) -> list[float]:
    """The x of each point of the line drawn for ``version`` (its ``data-version``), in the path's order."""
    found = [d for d, name in PATH.findall(svg) if name == version]
    assert len(found) == 1, (version, PATH.findall(svg))
    return [float(x) for x, _ in POINT.findall(found[0])]
