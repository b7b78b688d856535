"""Waiting on a fact with a deadline (polling it, never sleeping in place of it)."""

from __future__ import annotations


def wait_for(condition, seconds: float, what: str) -> None:
    """Wait for a condition with a deadline (polling a fact, never sleeping in place of one)."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
