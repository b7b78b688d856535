"""The wire log's logger and its switch (``--log-level debug``, ``ARENA_LOG_WIRE``), apart from the client that
writes it (:mod:`arena.players.client`, which re-exports them): the command line sets it up before any command,
without loading gRPC."""

from __future__ import annotations

import logging
import os

WIRE_LOG = logging.getLogger("arena.wire")
WIRE_ENV = "ARENA_LOG_WIRE"
"""Set (to anything but empty or 0), the command line logs the wire at any ``--log-level``."""


def wire_wanted() -> bool:
    """Whether ``ARENA_LOG_WIRE`` asks for the wire log."""
    return os.environ.get(WIRE_ENV, "") not in ("", "0")
