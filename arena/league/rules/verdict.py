"""A challenge's verdict: what its data say of the challenger against its opponent, in words, from its SPRT.

The SPRT's own answer when it stopped: H1 accepted is **better**, H0 accepted is **not better by <elo1> Elo** (the
test asked whether the challenger is ``elo1`` better rather than ``elo0``; H0 does not say it is worse). When the test
did not stop before the challenge's cap of deal sets, the Elo difference's 95% interval decides: **better** when it
lies above 0, **worse** when it lies below, else **not told apart after N deal sets** (or games, without duplicate
deals). An infinite Elo (every unit won, or every unit lost) has no interval, and is not told apart either: the test
would have stopped on it had there been enough units. Pure: it reads a test as ``standings.json`` saves it
(:meth:`arena.tournament.sprt.Sprt.to_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

BETTER = "better"
WORSE = "worse"
H0, H1, CONTINUE = "H0", "H1", "continue"
"""The SPRT's states (arena.tournament.sprt)."""


@dataclass(frozen=True)
class Verdict:
    """What a challenge's data say: ``outcome`` in a few words, ``why`` from which numbers."""

    outcome: str
    """``better``, ``worse``, ``not better by 10 Elo`` or ``not told apart after 200 deal sets``."""
    why: str
    """The SPRT's decision, or the interval that decided (or did not)."""

    @property
    def line(self) -> str:
        return f"{self.outcome} ({self.why})"


def verdict(state: str, elo0: float, elo1: float, interval: tuple[float, float] | None, units: int,
            unit: str = "deal sets") -> Verdict:
    """The verdict of a test in ``state`` (H0, H1 or continue) after ``units`` units (``unit``: what they are), whose
    Elo difference has the 95% ``interval`` (None when it has none; one of no width, as every deal set drawn gives,
    is none either: no spread was seen, so it bounds nothing)."""
    counted = f"{units} {unit}"
    if interval is not None and interval[0] == interval[1]:
        interval = None
    if state == H1:
        return Verdict(BETTER, f"the SPRT accepted H1, {_elo(elo1)} Elo rather than {_elo(elo0)}, after {counted}")
    if state == H0:
        return Verdict(f"not better by {elo1:g} Elo",
                       f"the SPRT accepted H0, {_elo(elo0)} Elo rather than {_elo(elo1)}, after {counted}")
    if state != CONTINUE:
        raise ValueError(f"expected an SPRT state among {H0}, {H1}, {CONTINUE}, got {state!r}")
    undecided = f"the SPRT did not stop within {counted}"
    if interval is None:
        return Verdict(f"not told apart after {counted}",
                       f"{undecided}, and the Elo difference has no 95% interval")
    low, high = interval
    shown = f"[{_elo(low)}, {_elo(high)}]"
    if low > 0.0:
        return Verdict(BETTER, f"{undecided}; the Elo difference's 95% interval {shown} lies above 0")
    if high < 0.0:
        return Verdict(WORSE, f"{undecided}; the Elo difference's 95% interval {shown} lies below 0")
    return Verdict(f"not told apart after {counted}", f"{undecided}; the Elo difference's 95% interval {shown} "
                                                      f"holds 0")


def verdict_of(sprt: Mapping[str, Any], unit: str = "deal sets") -> Verdict:
    """The verdict of a saved test (``standings.json``'s ``sprt``, as a challenge's result keeps it)."""
    estimate = sprt.get("estimate") or {}
    interval = estimate.get("elo_interval")
    return verdict(str(sprt["state"]), float(sprt["elo0"]), float(sprt["elo1"]),
                   (float(interval[0]), float(interval[1])) if interval else None, int(sprt["units"]),
                   str(sprt.get("unit") or unit))


def _elo(value: float) -> str:
    return f"{value:+.1f}"


__all__ = ["BETTER", "WORSE", "Verdict", "verdict", "verdict_of"]
