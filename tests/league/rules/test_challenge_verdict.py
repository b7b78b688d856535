"""A challenge's verdict (arena/league/rules/verdict.py): the SPRT's when it stopped, else what the Elo difference's
95% interval says; every case, with its exact words, and from a test saved as standings.json saves it."""

from __future__ import annotations

import pytest

from arena.league.rules.verdict import Verdict, verdict, verdict_of
from arena.tournament.sprt import PENTANOMIAL, TRINOMIAL, Sprt

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize(("state", "interval", "units", "expected"), [
    ("H1", (12.0, 95.0), 31, Verdict("better", "the SPRT accepted H1, +40.0 Elo rather than +0.0, after 31 deal sets")),
    ("H1", None, 2, Verdict("better", "the SPRT accepted H1, +40.0 Elo rather than +0.0, after 2 deal sets")),
    ("H0", (-80.0, -20.0), 57, Verdict("not better by 40 Elo",
                                       "the SPRT accepted H0, +0.0 Elo rather than +40.0, after 57 deal sets")),
    ("H0", (-5.0, 30.0), 120, Verdict("not better by 40 Elo",
                                      "the SPRT accepted H0, +0.0 Elo rather than +40.0, after 120 deal sets")),
    ("continue", (-141.4, -4.9), 200, Verdict(
        "worse", "the SPRT did not stop within 200 deal sets; the Elo difference's 95% interval [-141.4, -4.9] "
                 "lies below 0")),
    ("continue", (4.9, 141.4), 200, Verdict(
        "better", "the SPRT did not stop within 200 deal sets; the Elo difference's 95% interval [+4.9, +141.4] "
                  "lies above 0")),
    ("continue", (-20.0, 35.5), 300, Verdict(
        "not told apart after 300 deal sets", "the SPRT did not stop within 300 deal sets; the Elo difference's 95% "
                                              "interval [-20.0, +35.5] holds 0")),
    ("continue", (0.0, 35.5), 300, Verdict(  # an end at 0 does not exclude it
        "not told apart after 300 deal sets", "the SPRT did not stop within 300 deal sets; the Elo difference's 95% "
                                              "interval [+0.0, +35.5] holds 0")),
    ("continue", None, 1, Verdict("not told apart after 1 deal sets", "the SPRT did not stop within 1 deal sets, and "
                                                                      "the Elo difference has no 95% interval")),
    ("continue", (-0.0, -0.0), 3, Verdict(  # every deal set drawn: an interval of no width bounds nothing
        "not told apart after 3 deal sets", "the SPRT did not stop within 3 deal sets, and the Elo difference has no "
                                            "95% interval")),
])
def test_every_case_of_the_verdict(state, interval, units, expected):
    said = verdict(state, 0.0, 40.0, interval, units)
    assert said == expected
    assert said.line == f"{expected.outcome} ({expected.why})"


def test_the_undecided_case_that_was_not_said():
    """"undecided: LLR -0.61, Elo -70.4 [-141.4, -4.9] (95%)": the interval excludes 0, and the verdict says so."""
    assert verdict("continue", 0.0, 10.0, (-141.4, -4.9), 200).outcome == "worse"


def test_games_without_duplicate_deals_and_a_fractional_elo1():
    assert verdict("continue", 0.0, 10.0, (-3.0, 3.0), 40, "games").outcome == "not told apart after 40 games"
    assert verdict("H0", -5.0, 12.5, None, 9, "games") == Verdict(
        "not better by 12.5 Elo", "the SPRT accepted H0, -5.0 Elo rather than +12.5, after 9 games")


def test_an_unknown_state_is_refused():
    with pytest.raises(ValueError, match="^expected an SPRT state among H0, H1, continue, got 'stopped'$"):
        verdict("stopped", 0.0, 40.0, None, 3)


def saved(counts: list[int], kind: str = PENTANOMIAL, elo1: float = 40.0) -> dict:
    """A test as standings.json keeps it: its counts added one unit at a time (so its state is the test's own)."""
    test = Sprt(0.0, elo1, kind=kind)
    for outcome, count in enumerate(counts):
        for _ in range(count):
            test.add(outcome)
    return test.to_json()


def test_from_a_saved_test_undecided_at_its_cap():
    """Five deal sets of each kind but one: no decision, an interval holding 0."""
    sprt = saved([5, 5, 5, 5, 5])
    assert sprt["state"] == "continue"
    low, high = sprt["estimate"]["elo_interval"]
    assert verdict_of(sprt) == Verdict(
        "not told apart after 25 deal sets", f"the SPRT did not stop within 25 deal sets; the Elo difference's 95% "
                                             f"interval [{low:+.1f}, {high:+.1f}] holds 0")


def test_from_a_saved_test_worse_at_its_cap():
    """Ten deal sets, mostly lost: too few for the test to stop (H0 is 0 Elo, H1 10), yet an interval below 0."""
    sprt = saved([6, 3, 1, 0, 0], elo1=10.0)
    assert sprt["state"] == "continue"
    assert verdict_of(sprt) == Verdict("worse", "the SPRT did not stop within 10 deal sets; the Elo difference's 95% "
                                                "interval [-667.0, -210.9] lies below 0")


def test_from_a_saved_test_decided():
    sprt = saved([0, 0, 0, 0, 30])  # thirty deal sets won twice: H1, at the unit that crossed the bound
    assert sprt["state"] == "H1"
    assert verdict_of(sprt).outcome == "better"
    assert verdict_of(sprt).why == "the SPRT accepted H1, +40.0 Elo rather than +0.0, after 30 deal sets"
    lost = saved([30, 0, 0], kind=TRINOMIAL)
    assert lost["state"] == "H0"
    assert verdict_of(lost, "games") == Verdict("not better by 40 Elo",
                                                "the SPRT accepted H0, +0.0 Elo rather than +40.0, after 30 games")
