"""A match's time control: each decision's time, a bank, the grace for the reply's way back, and the first move's
allowance. Apart from the referee that enforces it (:mod:`arena.referee`, which re-exports these names), so that the
command line's flags (``--grace-ms``) show its defaults without loading the referee."""

from __future__ import annotations

from dataclasses import dataclass

GRACE_MS = 250
"""The default grace: what a reply may take beyond its time before it is a timeout. It covers the way back (a gRPC
reply over a Unix socket, a JSON line over a pipe) and the scheduling of a busy machine, where a bot's thread or the
arena's may wait a few tens of milliseconds to run; it is short enough that a bot cannot quietly think much longer
than it was given. At short move times it is a large share of the move (``move_ms = 50`` gives 300 ms in all), so a
tournament can set its own (``[time] grace_ms``, ``--grace-ms``), and every request tells the bot the real deadline."""
MAX_GRACE_MS = 60_000
"""The longest grace: more than a minute is no longer a margin for transport but thinking time (``move_ms`` or
``bank_ms``, which the bot is told it may spend)."""


def grace_problem(grace_ms: int) -> str | None:
    """What is wrong with a grace, or None: a whole number of milliseconds from 0 (none) to :data:`MAX_GRACE_MS`."""
    if isinstance(grace_ms, bool) or not isinstance(grace_ms, int) or not 0 <= grace_ms <= MAX_GRACE_MS:
        return f"must be an integer from 0 to {MAX_GRACE_MS} (milliseconds), got {grace_ms!r}"
    return None


@dataclass(frozen=True)
class TimeControl:
    """Per-move time, an optional per-match bank per seat, a grace for transport, and an allowance for each seat's
    first decision of a match (a JVM or another runtime that compiles as it goes is slow at first)."""

    move_ms: int = 1000
    bank_ms: int = 0
    grace_ms: int = GRACE_MS
    """Added to every deadline for the transport and a busy machine (see :data:`GRACE_MS`); never the bot's to
    spend: a decision that takes longer than its move time spends the bank, grace or not."""
    first_move_ms: int = 0
    """Time for a seat's first decision of a match, when more than ``move_ms``."""

    def move_time_ms(self, first: bool) -> int:
        return max(self.move_ms, self.first_move_ms) if first else self.move_ms

    def deadline_ms(self, bank_left_ms: int, first: bool = False) -> int:
        """The hard deadline of a decision, in milliseconds from when it is sent: its move time, the seat's bank left
        and the grace. A reply later than this is a timeout; the request tells the bot this number
        (``TimeControl.deadline_ms``), so that it never has to guess the grace."""
        return self.move_time_ms(first) + bank_left_ms + self.grace_ms

    def deadline_s(self, bank_left_ms: int, first: bool = False) -> float:
        return self.deadline_ms(bank_left_ms, first) / 1000
