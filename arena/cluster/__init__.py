"""Tournaments over several machines, on an existing distributed engine (Ray): see :mod:`.ray_backend`.

Importing this package loads neither Ray nor the runner (the command line imports :mod:`.options` at every start);
the names below load :mod:`.ray_backend` when first used, and using the backend needs the ``ray`` extra (one clear
line says so when it is missing).
"""

from __future__ import annotations

import importlib
from typing import Any

from arena.cluster.options import add_backend_arguments as add_backend_arguments
from arena.cluster.options import backend_from as backend_from

_LAZY = ("ClusterError", "RayBackend", "connect", "ray_factory", "require_ray")

__all__ = ["add_backend_arguments", "backend_from", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(".ray_backend", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
