"""Containing untrusted bots: a bubblewrap sandbox, cgroup (or rlimit) limits, an allow-listed environment, and a
capped log. Everything that makes a bot contained is decided here and applied to every bot the arena starts
(:mod:`arena.players.process` is the only caller); the referee and the tournament never know whether a bot is
contained. See docs/explanation/security.md.
"""

from arena.sandbox.contain import Containment, SandboxError, bot_folder_of, contain, exposure_problem, overlaps
from arena.sandbox.host import SandboxUnavailable, host
from arena.sandbox.limits import DEFAULT_LIMITS, LIMIT_KEYS, Limits, LimitsError, exceeds, limits_from_table
from arena.sandbox.logs import CappedLog

__all__ = ["CappedLog", "Containment", "DEFAULT_LIMITS", "LIMIT_KEYS", "Limits", "LimitsError", "SandboxError",
           "SandboxUnavailable", "bot_folder_of", "contain", "exceeds", "exposure_problem", "host", "limits_from_table",
           "overlaps"]
