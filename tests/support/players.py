"""In-process players that fail on cue (recorded faults without a bot process)."""

from __future__ import annotations


def fails_after(seed: str, after: int, name: str = "fails"):
    """A random in-process player whose bot stops answering at its decision number ``after`` (a recorded timeout
    fault)."""
    from arena.players import RandomPlayer
    from arena.players.base import LocalPlayer
    from arena.players.faults import BotFailure, FaultKind

    class FailsAfter(LocalPlayer):
        def __init__(self) -> None:
            super().__init__(RandomPlayer(seed), name=name)
            self.left = after

        async def act(self, request, timeout_s: float):
            if self.left == 0:
                raise BotFailure(FaultKind.TIMEOUT, allowed_ms=2250)
            self.left -= 1
            return await super().act(request, timeout_s)

    return FailsAfter()
