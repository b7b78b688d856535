"""A league's timeline, pure: the league file's [timeline] and [finals] with one line per mistake, the phase at
every boundary from the clock and what the database records, the steps a restarted server takes, the next moment
it wakes at, the status line, and the refusals of the steps the timeline owns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from arena.league.files import load_league
from arena.league.rules.config import ConfigError, FinalsSettings, Timeline, league_from_text
from arena.league.rules.errors import StateError
from arena.league.rules.model import Author, Freeze
from arena.league.rules.permissions import OPERATOR, Caller, sees_finals_results
from arena.league.rules.timeline import (
    DONE,
    FINALS,
    FROZEN,
    OPEN,
    UPCOMING,
    Recorded,
    due_steps,
    duration,
    next_boundary,
    phase_of,
    recorded_of,
    require_manual,
    status_of,
)

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

MINIMAL = 'name = "ladder"\nvariant = "draw"\n'
OPENS = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
FREEZE = datetime(2026, 12, 5, 18, 0, tzinfo=UTC)
FINALS_AT = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
RESULTS = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
FULL = Timeline(opens=OPENS, freeze=FREEZE, finals=FINALS_AT, results=RESULTS)
TIMELINE = """[timeline]
opens = 2026-11-01T12:00:00Z
freeze = 2026-12-05T19:00:00+01:00
finals = "2026-12-06T09:00:00Z"
results = 2026-12-07T12:00:00Z
"""
SECOND = timedelta(seconds=1)
NOTHING, FROZEN_ONLY = Recorded(), Recorded(frozen=True)
PLAYING, ENDED, FAILED = (Recorded(frozen=True, finals=state) for state in ("playing", "done", "failed"))
ANN = Author(1, "ann", OPENS, None)


def league(text: str):
    return league_from_text(MINIMAL + text)


def test_the_timeline_reads_toml_datetimes_and_z_strings_as_utc() -> None:
    config = league(TIMELINE + "[finals]\ndeal_sets = 4\n")
    assert config.timeline == FULL  # 19:00+01:00 is 18:00 UTC
    assert config.timeline.freeze is not None and config.timeline.freeze.tzinfo == UTC
    assert config.finals == FinalsSettings(deal_sets=4, tables=0)
    assert [key for key, _ in config.timeline.given()] == ["opens", "freeze", "finals", "results"]


def test_without_a_timeline_every_step_is_the_operators() -> None:
    config = league("")
    assert config.timeline == Timeline() and config.timeline.given() == []
    assert config.finals == FinalsSettings(deal_sets=10, tables=0)  # what arena league finals --start uses
    require_manual(config, "freeze")
    require_manual(config, "finals")  # no refusal


def test_each_key_is_optional_and_those_given_keep_their_order() -> None:
    config = league('[timeline]\nfinals = 2026-12-06T09:00:00Z\n')
    assert config.timeline == Timeline(finals=FINALS_AT)
    assert league('[timeline]\nopens = 2026-11-01T12:00:00Z\nresults = 2026-12-07T12:00:00Z\n').timeline == \
        Timeline(opens=OPENS, results=RESULTS)


@pytest.mark.parametrize(("extra", "message"), [
    ('[timeline]\nfreeze = 2026-12-05T18:00:00\n',
     "key 'timeline.freeze' must say its offset (UTC: 2026-12-05T18:00:00Z), got 2026-12-05T18:00:00 without one: "
     "a time without an offset is no one moment"),
    ('[timeline]\nopens = "2026-12-05T18:00:00"\n',
     "key 'timeline.opens' must be a UTC time, a TOML datetime with its offset or an ISO 8601 string ending in Z "
     "(2026-12-05T18:00:00Z), got '2026-12-05T18:00:00'"),
    ('[timeline]\nopens = "2026-12-05T18:00:00+02:00"\n', "key 'timeline.opens' must be a UTC time"),
    ('[timeline]\nopens = "next tuesday"\n', "got 'next tuesday'"),
    ('[timeline]\nresults = 2026-12-05\n',
     "key 'timeline.results' must be a date and a time with its offset (2026-12-05T18:00:00Z), got 2026-12-05"),
    ('[timeline]\nresults = 18:00:00\n', "key 'timeline.results' must be a date and a time with its offset"),
    ('[timeline]\nfinals = 1765044000\n', "key 'timeline.finals' must be a UTC time (2026-12-05T18:00:00Z), got "
                                         "1765044000"),
    ('[timeline]\nopens = 2026-12-05T18:00:00Z\nfreeze = 2026-12-01T08:30:00Z\n',
     "key 'timeline.freeze' (2026-12-01 08:30 UTC) must come after timeline.opens (2026-12-05 18:00 UTC): the "
     "steps are opens, freeze, finals, results, in that order"),
    ('[timeline]\nfreeze = 2026-12-05T18:00:00Z\nfinals = 2026-12-05T19:00:00+01:00\n',
     "key 'timeline.finals' (2026-12-05 18:00 UTC) must come after timeline.freeze (2026-12-05 18:00 UTC)"),
    ('[timeline]\nopens = 2026-12-05T18:00:00Z\nresults = 2026-12-05T17:59:59Z\n',
     "key 'timeline.results' (2026-12-05 17:59:59 UTC) must come after timeline.opens (2026-12-05 18:00 UTC)"),
    ('[timeline]\ncloses = 2026-12-05T18:00:00Z\n',
     "unknown key 'closes' in [timeline]; valid keys: opens, freeze, finals, results"),
    ('timeline = "soon"\n', "key 'timeline' must be a table with opens, freeze, finals, results, got 'soon'"),
    ('[finals]\ndeal_sets = 0\n', "key 'finals.deal_sets' must be an integer >= 1 and <= 10000, got 0"),
    ('[finals]\ntables = 3\n', "key 'finals.tables' is for k-player tables: the finals of two sides are a round "
                               "robin, a Swiss or a knockout (every table seats two), got 3"),
    ('[finals]\ngames = 3\n', "unknown key 'games' in [finals]; valid keys: format, deal_sets, tables, rounds, "
                              "tiebreak_deal_sets, elimination"),
    ('[finals]\nformat = "ladder"\n',
     "key 'finals.format' must be one of 'round_robin', 'swiss', 'knockout', got 'ladder'"),
    ('[finals]\nformat = 3\n', "key 'finals.format' must be one of 'round_robin', 'swiss', 'knockout', got 3"),
    ('[finals]\nformat = "knockout"\nelimination = "triple"\n',
     "key 'finals.elimination' must be one of 'single', 'double', got 'triple'"),
    ('[finals]\nrounds = 3\n', "key 'finals.rounds' is for swiss finals (format = 'swiss'), got it with format = "
                               "'round_robin'"),
    ('[finals]\nformat = "swiss"\nelimination = "double"\n',
     "key 'finals.elimination' is for knockout finals (format = 'knockout'), got it with format = 'swiss'"),
    ('[finals]\nformat = "swiss"\ntiebreak_deal_sets = 2\n',
     "key 'finals.tiebreak_deal_sets' is for knockout finals (format = 'knockout'), got it with format = 'swiss'"),
    ('[finals]\nformat = "swiss"\nrounds = -1\n', "key 'finals.rounds' must be an integer >= 0 and <= 1000, got -1"),
    ('[finals]\nformat = "swiss"\nrounds = 1001\n',
     "key 'finals.rounds' must be an integer >= 0 and <= 1000, got 1001"),
    ('[finals]\nformat = "knockout"\ntiebreak_deal_sets = -1\n',
     "key 'finals.tiebreak_deal_sets' must be an integer >= 0 and <= 50, got -1"),
    ('[finals]\nformat = "knockout"\ntiebreak_deal_sets = 51\n',
     "key 'finals.tiebreak_deal_sets' must be an integer >= 0 and <= 50, got 51"),
    ('[finals]\ndeal_sets = 10001\n', "key 'finals.deal_sets' must be an integer >= 1 and <= 10000, got 10001"),
])
def test_a_bad_timeline_is_one_line_naming_file_and_keys(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text(MINIMAL + extra)
    with pytest.raises(ConfigError) as caught:
        load_league(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and message in text, text
    assert "\n" not in text


def test_k_player_finals_take_their_tables() -> None:
    config = league_from_text('name = "ladder"\nvariant = "draw"\nplayers = 3\n[finals]\ntables = 7\n')
    assert config.finals == FinalsSettings(deal_sets=10, tables=7)


@pytest.mark.parametrize("extra", ['format = "swiss"\n', 'format = "knockout"\nelimination = "double"\n'])
def test_k_player_finals_are_a_round_robin(tmp_path: Path, extra: str) -> None:
    """A Swiss or a knockout pairs two sides: a league of three players' tables is refused at load, in one line."""
    path = tmp_path / "league.toml"
    path.write_text('name = "ladder"\nvariant = "draw"\nplayers = 3\n[finals]\n' + extra)
    with pytest.raises(ConfigError) as caught:
        load_league(path)
    fmt = extra.split('"')[1]
    assert str(caught.value) == (f"{path}: key 'finals.format' {fmt!r} is for two sides (two players or two "
                                 f"teams): the finals of 3 sides are a round robin (a balanced schedule), "
                                 f"format = 'round_robin'")


def test_two_sided_finals_take_a_swiss_or_a_knockout() -> None:
    swiss = league('[finals]\nformat = "swiss"\nrounds = 1000\ndeal_sets = 2\n')
    assert swiss.finals == FinalsSettings(format="swiss", deal_sets=2, rounds=1000)
    knockout = league('[finals]\nformat = "knockout"\nelimination = "double"\ntiebreak_deal_sets = 50\n')
    assert knockout.finals == FinalsSettings(format="knockout", elimination="double", tiebreak_deal_sets=50)
    lowest = league('[finals]\nformat = "knockout"\ntiebreak_deal_sets = 0\ndeal_sets = 1\n')
    assert lowest.finals == FinalsSettings(format="knockout", tiebreak_deal_sets=0, deal_sets=1)
    assert league('[finals]\nformat = "swiss"\nrounds = 0\n').finals.rounds == 0  # ceil(log2(field))
    teams = league_from_text('name = "pairs"\nvariant = "la_plaza_teams"\n'
                             '[finals]\nformat = "knockout"\n')
    assert teams.finals.format == "knockout"


# --- the phase at every boundary -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("now", "recorded", "phase"), [
    (OPENS - SECOND, NOTHING, UPCOMING),
    (OPENS, NOTHING, OPEN),
    (FREEZE - SECOND, NOTHING, OPEN),
    (FREEZE, NOTHING, FROZEN),  # the clock leads: the freeze row comes at the running league's next look
    (FREEZE, FROZEN_ONLY, FROZEN),
    (FINALS_AT - SECOND, FROZEN_ONLY, FROZEN),
    (FINALS_AT, FROZEN_ONLY, FINALS),
    (FINALS_AT, NOTHING, FINALS),  # a server down through freeze and finals: the finals' phase all the same
    (FINALS_AT, PLAYING, FINALS),
    (RESULTS - SECOND, PLAYING, FINALS),
    (RESULTS - SECOND, ENDED, FINALS),  # ended, but the results are withheld until RESULTS
    (RESULTS - SECOND, FAILED, FINALS),
    (RESULTS, ENDED, DONE),
    (RESULTS, FAILED, DONE),
    (RESULTS, PLAYING, FINALS),  # results are published when the finals end
    (RESULTS + timedelta(days=400), ENDED, DONE),
    (OPENS - SECOND, FROZEN_ONLY, FROZEN),  # what the database records moves the phase too
    (OPENS - SECOND, PLAYING, FINALS),
])
def test_the_phase_at_each_boundary(now: datetime, recorded: Recorded, phase: str) -> None:
    assert phase_of(FULL, now, recorded) == phase


@pytest.mark.parametrize(("recorded", "phase"), [
    (NOTHING, OPEN), (FROZEN_ONLY, FROZEN), (PLAYING, FINALS), (ENDED, DONE), (FAILED, DONE)])
def test_without_a_timeline_the_database_alone_says_the_phase(recorded: Recorded, phase: str) -> None:
    for now in (OPENS - timedelta(days=1000), RESULTS + timedelta(days=1000)):
        assert phase_of(Timeline(), now, recorded) == phase


def test_results_without_the_other_steps_only_withhold_the_ranking() -> None:
    timeline = Timeline(results=RESULTS)
    assert phase_of(timeline, RESULTS + SECOND, NOTHING) == OPEN  # the operator freezes it
    assert phase_of(timeline, RESULTS - SECOND, ENDED) == FINALS
    assert phase_of(timeline, RESULTS, ENDED) == DONE


def test_the_database_record_of_a_freeze() -> None:
    assert recorded_of(None) == NOTHING
    assert recorded_of(Freeze(1, FREEZE, (3, 4), None)) == FROZEN_ONLY
    assert recorded_of(Freeze(1, FREEZE, (3, 4), {"state": "playing", "scheduled": 4})) == PLAYING
    assert recorded_of(Freeze(1, FREEZE, (3, 4), {"state": "done"})).ended


# --- the steps a running (or restarted) league takes ----------------------------------------------------------------

@pytest.mark.parametrize(("now", "recorded", "steps"), [
    (OPENS, NOTHING, []),
    (FREEZE - SECOND, NOTHING, []),
    (FREEZE, NOTHING, ["freeze"]),
    (FREEZE, FROZEN_ONLY, []),  # taken once
    (FINALS_AT - SECOND, FROZEN_ONLY, []),
    (FINALS_AT, FROZEN_ONLY, ["finals"]),
    (FINALS_AT + timedelta(hours=5), NOTHING, ["freeze", "finals"]),  # restarted after both passed: in order
    (FINALS_AT, PLAYING, []),  # playing: the finals' task resumes them
    (RESULTS, ENDED, []),
    (RESULTS, FAILED, []),
])
def test_the_steps_due(now: datetime, recorded: Recorded, steps: list[str]) -> None:
    assert due_steps(FULL, now, recorded) == steps


def test_finals_without_a_freeze_freeze_first_and_a_manual_freeze_counts() -> None:
    timeline = Timeline(finals=FINALS_AT)
    assert due_steps(timeline, FINALS_AT - SECOND, NOTHING) == []
    assert due_steps(timeline, FINALS_AT, NOTHING) == ["freeze", "finals"]
    assert due_steps(timeline, FINALS_AT, FROZEN_ONLY) == ["finals"]  # the operator froze it earlier
    assert due_steps(Timeline(), RESULTS, NOTHING) == []


def test_the_next_moment_to_wake_at() -> None:
    assert next_boundary(FULL, OPENS - SECOND) == OPENS
    assert next_boundary(FULL, OPENS) == FREEZE
    assert next_boundary(FULL, FINALS_AT + SECOND) == RESULTS
    assert next_boundary(FULL, RESULTS) is None
    assert next_boundary(Timeline(), OPENS) is None


# --- what arena league status and the pages say ----------------------------------------------------------------------

@pytest.mark.parametrize(("timeline", "now", "recorded", "phase", "next_phase", "at", "line"), [
    (FULL, OPENS - timedelta(days=3, hours=4, minutes=5), NOTHING, UPCOMING, OPEN, OPENS,
     "opens in 3 days 4 h (at 2026-11-01 12:00 UTC)"),
    (FULL, FREEZE - timedelta(hours=2, minutes=14, seconds=30), NOTHING, OPEN, FROZEN, FREEZE,
     "freezes in 2 h 14 min (at 2026-12-05 18:00 UTC)"),
    (FULL, FINALS_AT - timedelta(seconds=42), FROZEN_ONLY, FROZEN, FINALS, FINALS_AT,
     "the finals start in 42 s (at 2026-12-06 09:00 UTC)"),
    (FULL, FINALS_AT, PLAYING, FINALS, DONE, RESULTS, "results are published in 1 day 3 h (at 2026-12-07 12:00 UTC)"),
    (FULL, RESULTS, PLAYING, FINALS, DONE, None, "results are published when the finals end"),
    (FULL, RESULTS, ENDED, DONE, "", None, "the finals' results are published"),
    (Timeline(finals=FINALS_AT), FINALS_AT - timedelta(minutes=5), NOTHING, OPEN, FROZEN, FINALS_AT,
     "freezes and starts its finals in 5 min (at 2026-12-06 09:00 UTC)"),
    (Timeline(), OPENS, NOTHING, OPEN, FROZEN, None, "the operator freezes it for its finals (arena league freeze)"),
    (Timeline(), OPENS, FROZEN_ONLY, FROZEN, FINALS, None,
     "the operator starts the finals (arena league finals --start)"),
    (Timeline(), OPENS, PLAYING, FINALS, DONE, None, "results are published when the finals end"),
])
def test_the_status_line(timeline: Timeline, now: datetime, recorded: Recorded, phase: str, next_phase: str,
                         at: datetime | None, line: str) -> None:
    status = status_of(timeline, now, recorded)
    assert (status.phase, status.next_phase, status.next_at, status.next) == (phase, next_phase, at, line)
    assert status.published == (phase == DONE)


@pytest.mark.parametrize(("left", "shown"), [
    (timedelta(0), "1 s"), (timedelta(milliseconds=300), "1 s"), (timedelta(seconds=59), "59 s"),
    (timedelta(seconds=60), "1 min"), (timedelta(minutes=59, seconds=59), "59 min"), (timedelta(hours=1), "1 h"),
    (timedelta(hours=2, minutes=14), "2 h 14 min"), (timedelta(days=1), "1 day"),
    (timedelta(days=2, hours=23, minutes=59), "2 days 23 h"),
])
def test_durations(left: timedelta, shown: str) -> None:
    assert duration(left) == shown


# --- the operator's steps and who sees the results ------------------------------------------------------------------

def test_a_step_the_timeline_owns_is_refused_to_the_operator() -> None:
    config = league(TIMELINE)
    with pytest.raises(StateError) as caught:
        require_manual(config, "freeze")
    assert str(caught.value) == ("league 'ladder' freezes by its timeline at 2026-12-05 18:00 UTC (timeline.freeze): "
                                 "the operator does not freeze it")
    with pytest.raises(StateError) as caught:
        require_manual(config, "finals")
    assert str(caught.value) == ("league 'ladder' starts its finals by its timeline at 2026-12-06 09:00 UTC "
                                 "(timeline.finals, with its [finals]): the operator does not start them")
    only_results = league('[timeline]\nresults = 2026-12-07T12:00:00Z\n')
    require_manual(only_results, "freeze")
    require_manual(only_results, "finals")  # left out of the timeline: the operator's


def test_the_results_are_the_operators_alone_until_published() -> None:
    assert sees_finals_results(OPERATOR, published=False)
    assert not sees_finals_results(Caller(ANN), published=False)
    assert not sees_finals_results(None, published=False)  # a spectator of the pages
    assert all(sees_finals_results(who, published=True) for who in (OPERATOR, Caller(ANN), None))
