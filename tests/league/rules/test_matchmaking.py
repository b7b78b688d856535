"""The league's matchmaker, its pure part: placement first, tables built around the version that
most needs games with opponents close in rating, repeated pairings avoided, coverage guaranteed; and a simulated
hour of a ladder (seeded, no clock: the same ladder at every run) that checks the guarantee on what was played."""

from __future__ import annotations

import itertools

import pytest

from arena.league.rules.matchmaking import PLACEMENT, MatchmakingRules, Plan, Table, VersionState, choose_tables
from arena.bench.matchmaking import simulate, summary


def field(n: int, **changes: object) -> list[VersionState]:
    """``n`` placed versions rated 10, 11, 12, ... with a sigma of 2 and nothing played."""
    return [VersionState(f"v{i}", 10.0 + i, 2.0, **changes) for i in range(n)]  # type: ignore[arg-type]


@pytest.mark.fast
def test_placement_games_come_first_against_mid_field() -> None:
    versions = field(9) + [VersionState("new", 25.0, 8.3, placed=False)]
    plan = choose_tables(versions, 2)
    assert plan.tables[0] == Table(("new", "v4"), PLACEMENT)  # v4 (rating 14) is the placed field's median
    assert plan.tables[1].reason != PLACEMENT and "new" not in plan.tables[1].versions


@pytest.mark.fast
def test_the_anchor_has_fewest_recent_sets_then_widest_sigma() -> None:
    versions = [VersionState("a", 10, 2.0, recent=3), VersionState("b", 11, 1.0, recent=1),
                VersionState("c", 12, 3.0, recent=1), VersionState("d", 13, 2.0, recent=5)]
    plan = choose_tables(versions, 1, MatchmakingRules(coverage=2))
    assert plan.tables == (Table(("c", "b"), "coverage: 1 of 2 deal sets in the last hour"),)
    rich = choose_tables([VersionState(v.id, v.mu, v.sigma, recent=v.recent + 4) for v in versions], 1,
                         MatchmakingRules(coverage=2))
    assert rich.tables == (Table(("c", "b"), "needs games: 5 in the last hour, sigma 3.00"),)


@pytest.mark.fast
def test_opponents_are_close_and_not_just_met() -> None:
    versions = [VersionState("x", 20.0, 2.0, recent=0, recent_opponents={"near": 2}),
                VersionState("near", 20.5, 2.0, recent=5, recent_opponents={"x": 2}),
                VersionState("next", 22.0, 2.0, recent=5), VersionState("far", 40.0, 2.0, recent=5)]
    rules = MatchmakingRules(coverage=0, load_penalty=0)
    assert choose_tables(versions, 1, rules).tables[0].versions == ("x", "next")  # 0.5 + 2 x 3 > 2.0
    assert choose_tables(versions, 1, MatchmakingRules(coverage=0, pairing_penalty=0, load_penalty=0)
                         ).tables[0].versions == ("x", "near")


@pytest.mark.fast
def test_k_player_tables_seat_distinct_versions_each_its_share() -> None:
    plan = choose_tables(field(10), 5, MatchmakingRules(sides=4))
    assert len(plan.tables) == 5 and plan.note == ""
    assert all(len(set(t.versions)) == 4 for t in plan.tables)
    seats = [v for t in plan.tables for v in t.versions]
    assert max(seats.count(v) for v in set(seats)) <= 2  # ceil(5 x 4 / 10)


@pytest.mark.fast
def test_one_call_gives_no_version_more_than_its_even_share() -> None:
    """a has played nothing and the others 5 deal sets each: a would anchor every table of the call, but 3 free
    tables of two sides are 6 seats for 4 versions, ceil(6 / 4) = 2 each, so a takes two tables and the third goes
    to two others; 4 free tables are 8 seats, 2 each, every version exactly 2."""
    versions = [VersionState("a", 10.0, 2.0)] + [VersionState(f"b{i}", 10.0 + i, 2.0, recent=5) for i in (1, 2, 3)]
    coverage = [f"coverage: {n} of 4 deal sets in the last hour" for n in (0, 1)]
    assert choose_tables(versions, 3) == Plan((Table(("a", "b1"), coverage[0]), Table(("a", "b2"), coverage[1]),
                                               Table(("b3", "b2"), "needs games: 5 in the last hour, sigma 2.00")))
    seats = [v for t in choose_tables(versions, 4).tables for v in t.versions]
    assert sorted(seats) == ["a", "a", "b1", "b1", "b2", "b2", "b3", "b3"]


@pytest.mark.fast
def test_a_pair_met_earlier_in_a_call_pays_the_penalty() -> None:
    """No meeting in the last hour, but the call's first table seats a with b: at its second table a meets c
    (2.0 away) rather than b again (0.5 away + 3.0 for the meeting a moment ago). At three sides the pair b-c of
    the call's first table costs as much between two opponents of z: z takes b, then d (1.5 away) before a or c
    (0.15 or 0.2 away, + 3.0 for meeting b at the first table)."""
    rules = MatchmakingRules(coverage=0, load_penalty=0)
    versions = [VersionState("a", 10.0, 2.0), VersionState("b", 10.5, 2.0, recent=5),
                VersionState("c", 12.0, 2.0, recent=5)]
    assert choose_tables(versions, 2, rules).tables == (
        Table(("a", "b"), "needs games: 0 in the last hour, sigma 2.00"),
        Table(("a", "c"), "needs games: 1 in the last hour, sigma 2.00"))
    three = MatchmakingRules(sides=3, coverage=0, load_penalty=0)
    versions = [VersionState("a", 19.85, 2.0), VersionState("b", 19.9, 2.0, recent=5),
                VersionState("c", 19.8, 2.0, recent=5), VersionState("z", 20.0, 3.0, recent=1),
                VersionState("d", 18.5, 2.0, recent=5)]
    assert choose_tables(versions, 2, three).tables == (
        Table(("a", "b", "c"), "needs games: 0 in the last hour, sigma 2.00"),
        Table(("z", "b", "d"), "needs games: 1 in the last hour, sigma 3.00"))


@pytest.mark.fast
def test_fewer_versions_than_seats_make_no_table_and_say_why() -> None:
    assert choose_tables(field(3), 4, MatchmakingRules(sides=4)) == Plan(
        (), "waiting for versions: 3 ready, a table seats 4")
    assert choose_tables(field(1), 1) == Plan((), "waiting for versions: 1 ready, a table seats 2")
    assert choose_tables(field(5), 0) == Plan(())
    two = choose_tables(field(2), 3)  # two versions share three free tables: the pair plays three deal sets at once
    assert [t.reason for t in two.tables] == [f"coverage: {n} of 4 deal sets in the last hour" for n in range(3)]
    assert {t.versions for t in two.tables} == {("v0", "v1")} and two.note == ""
    short = choose_tables(field(3), 3, MatchmakingRules(sides=3))  # ceil(3 x 3 / 3) = 3 each, but 3 would be all
    assert len(short.tables) == 3
    scarce = choose_tables(field(4), 3, MatchmakingRules(sides=3, coverage=0))
    assert len(scarce.tables) == 3 and scarce.note == ""


@pytest.mark.fast
def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="each version once"):
        choose_tables(field(2) + field(1), 1)
    with pytest.raises(ValueError, match="at least 2 sides"):
        MatchmakingRules(sides=1)


# --- a simulated hour -------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_an_hour_covers_fifty_versions_and_the_top_two_meet() -> None:
    """50 versions, 4 tables at once of about a minute each: 243 tables in the hour, 486 seats, an even share of
    9.7 deal sets; every version plays 9 to 11 of them (above the coverage target of 4), the new ones' placement
    first, and the two strongest meet each other."""
    rules = MatchmakingRules(sides=2, coverage=4)
    ladder = simulate(50, rules, concurrency=4, deal_set_seconds=60)
    result = summary(ladder, rules)
    assert result["tables"] == 243
    assert result["deal_sets_per_version"] == {"min": 9, "max": 11}
    assert result["top_two_met"] >= 1
    assert result["reasons"]["placement"] >= 50 * 3 // 2  # every version's three placement deal sets, two a table
    first = [table.reason for _, table in ladder.played[:4]]
    assert first == [PLACEMENT] * 4


@pytest.mark.fast
def test_with_little_concurrency_each_version_gets_its_share() -> None:
    """One table at a time of about two minutes: 30 tables, 60 seats for 50 versions (1.2 each); the coverage target
    of 4 cannot be met, so every version plays one or two, none starved."""
    rules = MatchmakingRules(sides=2, coverage=4)
    result = summary(simulate(50, rules, concurrency=1, deal_set_seconds=120), rules)
    assert result["tables"] == 30 and result["deal_sets_per_version"] == {"min": 1, "max": 2}


@pytest.mark.fast
def test_k_player_ladders_cover_every_version_at_distinct_seats() -> None:
    rules = MatchmakingRules(sides=8, coverage=4)
    ladder = simulate(50, rules, concurrency=4, deal_set_seconds=60)
    assert all(len(set(table.versions)) == 8 for _, table in ladder.played)
    result = summary(ladder, rules)
    assert result["deal_sets_per_version"]["min"] >= 36 and result["top_two_met"] >= 1


@pytest.mark.fast
def test_the_pairing_penalty_spreads_the_meetings() -> None:
    """Measured on the same simulated hour: without the penalty, 110 distinct pairs for 243 meetings and one pair
    met 5 times; with it, at least 230 distinct pairs and no pair met more than 3 times."""
    with_penalty = MatchmakingRules(sides=2)
    without = MatchmakingRules(sides=2, pairing_penalty=0)
    spread = summary(simulate(50, with_penalty, 4, 60), with_penalty)["pairings"]
    repeated = summary(simulate(50, without, 4, 60), without)["pairings"]
    assert repeated["distinct"] <= 120 and repeated["most_of_one_pair"] >= 5
    assert spread["distinct"] >= 230 and spread["most_of_one_pair"] <= 3


@pytest.mark.fast
def test_the_simulation_is_the_same_at_every_run() -> None:
    rules = MatchmakingRules(sides=4)
    one = [t for _, t in simulate(20, rules, 3, 60, seconds=1200).played]
    assert one == [t for _, t in simulate(20, rules, 3, 60, seconds=1200).played]
    assert one != [t for _, t in simulate(20, rules, 3, 60, seconds=1200, seed=2).played]
    assert all(len(set(t.versions)) == 4 for t in one)
    assert set(itertools.chain.from_iterable(t.versions for t in one)) == {f"v{i:03d}" for i in range(20)}


def test_bench_matchmaking_refuses_a_bad_size() -> None:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "arena", "bench", "matchmaking", "--versions", "30", "--hours",
                          "0.25", "--concurrency", "2", "--sides", "2,3"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert [(r["versions"], r["sides"]) for r in results] == [(30, 2), (30, 3)]
    assert all(r["decisions_per_second"] > 0 and r["deal_sets_per_version"]["min"] >= 1 for r in results)
    bad = subprocess.run([sys.executable, "-m", "arena", "bench", "matchmaking", "--sides", "1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr == ("error: --sides must be table sizes of at least 2, comma-separated, "
                                                  "got '1'\n")
