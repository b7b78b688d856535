"""How a dialed-in bot's relay dials again after its connection drops (``arena connect --reconnect``), apart from the
relay (:mod:`arena.players.relay`, which re-exports it): the command line's help shows its numbers without loading
gRPC."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """How :func:`~arena.players.relay.relay_with_reconnects` dials again: after ``first_s``, doubling up to ``most_s``, at most
    ``attempts`` times in a row without a welcome (0: never dial again)."""

    attempts: int = 10
    first_s: float = 0.5
    most_s: float = 30.0

    def delay_s(self, failures: int) -> float:
        """The pause before the attempt after ``failures`` failed ones in a row (1 or more)."""
        return min(self.most_s, self.first_s * 2.0 ** (failures - 1))
