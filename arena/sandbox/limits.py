"""The resources one bot may use, and where each number comes from: the defaults here, a tournament's ``[limits]``,
a bot's own ``limits``, or ``play``/``check-bot``'s command line.

A limit is a promise to the *other* bots: a bot over its memory or process limit is stopped (a ``resource_limit``
fault naming the limit), a bot over its log limit keeps running with its log cut, a bot that fills its ``/tmp`` gets
"no space left", and a bot that spins every thread gets no more than its CPU share, so its opponents and the referee
keep their time.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

from ..errors import ArenaError


@dataclass(frozen=True)
class Limits:
    """Per bot process. The defaults fit a Python, Node.js or JVM bot with room to spare on a small machine."""

    memory_mb: int = 1024
    """Resident memory of every process in the bot's sandbox together (cgroup), or its data segment (rlimit)."""
    pids: int = 128
    """Processes and threads alive at once in the sandbox (a JVM or Go runtime starts a few dozen threads)."""
    log_mb: int = 10
    """Bytes of stdout and stderr kept in the bot's log; the rest is dropped and the bot keeps running."""
    tmp_mb: int = 64
    """Size of the bot's private, writable ``/tmp`` (its only writable place)."""
    cpus: float = 1.0
    """CPU time per wall-clock second (1.0 = one core), on top of an equal share with the other bots."""

    def describe(self) -> str:
        return (f"memory {self.memory_mb} MiB, {self.pids} processes, log {self.log_mb} MiB, /tmp {self.tmp_mb} MiB, "
                f"{self.cpus:g} CPU")

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


LIMIT_KEYS = tuple(f.name for f in fields(Limits))
BOUNDS: dict[str, tuple[float, float]] = {
    "memory_mb": (16, 1 << 20),
    "pids": (4, 1 << 16),
    "log_mb": (1, 1 << 20),
    "tmp_mb": (1, 1 << 20),
    "cpus": (0.05, 1024),
}


class LimitsError(ArenaError, ValueError):
    """A limit that cannot be applied, with the key, the bounds and the bad value."""


def limits_from_table(table: Mapping[str, Any], base: Limits = Limits(), where: str = "limits.") -> Limits:
    """``base`` with the values of a ``[limits]`` table (or a bot's ``limits``) applied, each checked."""
    if not isinstance(table, Mapping):
        raise LimitsError(f"key '{where.rstrip('.')}' must be a table with {', '.join(LIMIT_KEYS)}, got {table!r}")
    unknown = sorted(set(table) - set(LIMIT_KEYS))
    if unknown:
        raise LimitsError(f"unknown key '{unknown[0]}' in [{where.rstrip('.')}]; valid keys: {', '.join(LIMIT_KEYS)}")
    values: dict[str, Any] = {}
    for key, value in table.items():
        low, high = BOUNDS[key]
        number_ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key != "cpus" and not isinstance(value, int):
            number_ok = False
        if not number_ok or not low <= value <= high:
            kind = "a number" if key == "cpus" else "an integer"
            raise LimitsError(f"key '{where}{key}' must be {kind} from {low:g} to {high:.0f}, got {value!r}")
        values[key] = float(value) if key == "cpus" else value
    return replace(base, **values)


def exceeds(limits: Limits, ceiling: Limits) -> str | None:
    """The first limit of ``limits`` above ``ceiling`` (an operator's maximum), as ``key value > maximum``."""
    for f in fields(Limits):
        if getattr(limits, f.name) > getattr(ceiling, f.name):
            return f"{f.name} {getattr(limits, f.name):g} > {getattr(ceiling, f.name):g}"
    return None
