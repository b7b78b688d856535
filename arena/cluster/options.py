"""``--backend`` and ``--address``, shared by ``arena run`` and ``arena serve`` (a helper below both commands, so
neither imports the other), and the backend they choose. Light to import: Ray, and the runner the Ray backend
drives, are loaded only when chosen (:func:`backend_from` imports :mod:`.ray_backend` then), so that building the
command line's parser loads neither."""

from __future__ import annotations

import argparse
from typing import Any

from arena.rules import RulesError

BACKENDS = ("local", "ray")


def add_backend_arguments(p: argparse.ArgumentParser) -> None:
    """``--backend`` and ``--address`` on a command that plays tournaments."""
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="where games are played: this machine's bot processes (default), or the nodes of a Ray "
                        "cluster (the ray extra; see docs/cluster.md)")
    p.add_argument("--address", help="with --backend ray: the cluster to join (host:port of its head, or auto); "
                                     "default: a Ray of this machine alone")


def check_backend_arguments(backend: str, address: str | None) -> None:
    """``--address`` means nothing without ``--backend ray``: say so rather than run on this machine silently."""
    if backend != "ray" and address:
        raise RulesError(f"--address is for --backend ray, got --backend {backend}")


def backend_from(backend: str, address: str | None, concurrency: int, actors_per_node: int = 1) -> Any:
    """The runner's backend factory (None: this machine), joining the Ray cluster now, before trio starts (joining
    blocks); ``concurrency`` is the most games in flight over the whole cluster, ``actors_per_node`` the referee
    processes on each node (``arena run --workers``)."""
    check_backend_arguments(backend, address)
    if backend != "ray":
        return None
    # the runner and Ray, loaded only for --backend ray: the command line's parser imports this module
    from arena.cluster.ray_backend import connect, ray_factory  # noqa: PLC0415

    connect(address)
    return ray_factory(concurrency, actors_per_node)
