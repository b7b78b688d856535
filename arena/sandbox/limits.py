"""The resources one bot may use, and where each number comes from: the defaults here, a tournament's ``[limits]``,
a bot's own ``limits``, or ``play``/``check-bot``'s command line.

A limit is a promise to the *other* bots: a bot over its memory or process limit is stopped (a ``resource_limit``
fault naming the limit), a bot over its log limit keeps running with its log cut, a bot that fills its ``/tmp`` gets
"no space left", and a bot that spins every thread gets no more than its CPU share, so its opponents and the referee
keep their time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from arena.display import escaped
from arena.errors import ArenaError


@dataclass(frozen=True)
class Limits:
    """Per bot process. The defaults fit a Python, Node.js or JVM bot with room to spare on a small machine."""

    memory_mb: int = 1024
    """MiB of resident memory of every process in the bot's sandbox together (cgroup), or of its data segment
    (rlimit); its ``/tmp`` counts too. Over it the kernel stops the bot: a ``resource_limit`` fault."""
    pids: int = 128
    """Processes and threads alive at once in the sandbox (a JVM or Go runtime starts a few dozen threads)."""
    log_mb: int = 10
    """MiB of stdout and stderr kept in the bot's log; the rest is dropped and the bot keeps running."""
    tmp_mb: int = 64
    """MiB of the bot's private, writable ``/tmp`` (also its ``HOME``), held in memory; then "no space left"."""
    cpus: float = 1.0
    """CPU time per wall-clock second (1.0 = one core), on top of an equal share with the other bots."""

    def describe(self) -> str:
        return (f"memory {self.memory_mb} MiB, {self.pids} processes, log {self.log_mb} MiB, /tmp {self.tmp_mb} MiB, "
                f"{self.cpus:g} CPU")

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


DEFAULT_LIMITS = Limits()
"""The limits of a bot nobody set any for (frozen, so one instance serves every default argument)."""
LIMIT_KEYS = tuple(f.name for f in fields(Limits))
BOUNDS: dict[str, tuple[float, float]] = {
    "memory_mb": (16, 65536),
    "pids": (4, 4096),
    "log_mb": (1, 1024),
    "tmp_mb": (1, 4096),
    "cpus": (0.05, 64),
}
"""The least and the most each limit may be, wherever it is set (a tournament file, a server's registry, a
submission, ``play``/``check-bot``'s flags): 64 GiB of memory, 4,096 processes, a 1 GiB log, a 4 GiB /tmp (held in
memory), 64 CPUs. A maximum keeps a typo (``memory_mb = 1073741824``) from becoming no limit at all."""


class LimitsError(ArenaError, ValueError):
    """A limit that cannot be applied, with the key, the bounds and the bad value."""


def limits_from_table(table: Mapping[str, Any], base: Limits = Limits(), where: str = "limits.") -> Limits:
    """``base`` with the values of a ``[limits]`` table (or a bot's ``limits``) applied, each checked against
    :data:`BOUNDS`. ``where`` prefixes the key in errors (``bots[1].limits.``; ``--`` for command-line flags)."""
    if not isinstance(table, Mapping):
        raise LimitsError(f"key '{where.rstrip('.')}' must be a table with {', '.join(LIMIT_KEYS)}, got {table!r}")
    unknown = sorted(set(table) - set(LIMIT_KEYS))
    if unknown:
        raise LimitsError(f"unknown key '{escaped(unknown[0])}' in [{where.rstrip('.')}]; valid keys: "
                          f"{', '.join(LIMIT_KEYS)}")
    values: dict[str, Any] = {}
    for key, value in table.items():
        values[key] = _checked(key, value, f"{where}{key.replace('_', '-')}" if where == "--" else f"{where}{key}")
    return replace(base, **values)


def _checked(key: str, value: Any, name: str) -> Any:
    """``value`` as limit ``key`` wants it, or a one-line LimitsError naming ``name``, the value and the bounds."""
    low, high = BOUNDS[key]
    kind = "a number" if key == "cpus" else "an integer"
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if is_number and (key == "cpus" or isinstance(value, int)) and value > high:
        raise LimitsError(f"key '{name}' is {value!r}, above its maximum of {high:g}")
    if not is_number or (key != "cpus" and not isinstance(value, int)) or value < low:
        raise LimitsError(f"key '{name}' must be {kind} from {low:g} to {high:g}, got {value!r}")
    return float(value) if key == "cpus" else value


def exceeds(limits: Limits, ceiling: Limits) -> str | None:
    """The first limit of ``limits`` above ``ceiling`` (an operator's maximum), as ``key value > maximum``."""
    for f in fields(Limits):
        if getattr(limits, f.name) > getattr(ceiling, f.name):
            return f"{f.name} {getattr(limits, f.name):g} > {getattr(ceiling, f.name):g}"
    return None
