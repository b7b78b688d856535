"""Swiss pairings and knockout brackets as pure rules: no repeat pairing, everyone paired once a round, byes to the
lowest-ranked without one, the table's tie-breaks; single and double elimination brackets of 2 to 9 entrants with
byes, walkovers, the grand final and its reset, sudden-death tie-breaks and placements; a tournament file's
one-line refusals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.knockout import build_bracket, match_count, seed_order, settle
from arena.tournament.matches import BYE, SCORE, SEED, TIEBREAK, Match
from arena.tournament.rounds import event_from_records, wave_schedule
from arena.tournament.schedule import ScheduledGame
from arena.tournament.spec import SpecError, TournamentSpec, spec_from_dict
from arena.tournament.swiss import PairingError, pair_round, swiss_table

pytestmark = pytest.mark.fast


def decide(match: Match, outcome: int) -> Match:
    """The match with a result: 0 the first entrant wins, 1 the second, 2 a draw."""
    if match.bye:
        return match
    score = ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5))[outcome]
    winner = None if outcome == 2 else match.entrants[outcome]
    return replace(match, score=score, winner=winner, decided_by=SCORE)


def play_swiss(entrants: int, rounds: int, outcomes: list[int]) -> list[tuple[Match, ...]]:
    played: list[tuple[Match, ...]] = []
    results = iter(outcomes)
    for _ in range(rounds):
        pairings = pair_round(entrants, played)
        played.append(tuple(decide(m, next(results, 0)) for m in pairings))
    return played


def test_round_one_pairs_the_top_half_against_the_bottom_half_by_seed() -> None:
    assert [m.entrants for m in pair_round(8, [])] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    five = pair_round(5, [])
    assert [m.entrants for m in five] == [(0, 2), (1, 3), (4,)]
    assert [m.id for m in five] == ["R1-1", "R1-2", "R1-3"] and five[-1].decided_by == BYE


def test_round_two_pairs_within_score_groups_top_against_bottom() -> None:
    """Round 1 of 8: seeds 0-3 win. Round 2: the winners 0,1,2,3 pair 0v2, 1v3; the losers 4v6, 5v7; the
    entrant listed first fewer times before sits first."""
    first = play_swiss(8, 1, [0, 0, 0, 0])
    second = pair_round(8, first)
    assert sorted(tuple(sorted(m.entrants)) for m in second) == [(0, 2), (1, 3), (4, 6), (5, 7)]
    assert all(m.entrants[0] >= 4 for m in second if min(m.entrants) >= 4)  # they were listed second in round 1


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=2, max_value=12), st.data())
def test_swiss_rounds_never_repeat_a_pairing_and_pair_everyone_once(entrants: int, data: st.DataObject) -> None:
    rounds = data.draw(st.integers(min_value=1, max_value=max(1, entrants // 2)))
    outcomes = data.draw(st.lists(st.integers(min_value=0, max_value=2), min_size=rounds * entrants,
                                  max_size=rounds * entrants))
    played = play_swiss(entrants, rounds, outcomes)
    seen: set[frozenset[int]] = set()
    byes: list[int] = []
    for number, pairings in enumerate(played, 1):
        present = [e for m in pairings for e in m.entrants]
        assert sorted(present) == list(range(entrants))  # every entrant once a round
        assert [m.id for m in pairings] == [f"R{number}-{k}" for k in range(1, len(pairings) + 1)]
        for match in pairings:
            if match.bye:
                byes.append(match.entrants[0])
                continue
            assert frozenset(match.entrants) not in seen
            seen.add(frozenset(match.entrants))
    assert len(byes) == len(set(byes)) == (rounds if entrants % 2 else 0)  # one bye each at most


def test_the_bye_goes_to_the_lowest_ranked_without_one() -> None:
    """Five entrants: round 1's bye is seed 5 (entrant 4); in round 2, entrant 4 (1 point from its bye) is not the
    lowest, and the lowest-ranked without a bye gets it."""
    played = play_swiss(5, 1, [0, 0])
    table = swiss_table(5, played)
    second = pair_round(5, played)
    bye = [m for m in second if m.bye][0].entrants[0]
    assert bye != 4
    assert bye == [row.entrant for row in table.rows if row.entrant != 4][-1]


def test_a_round_that_cannot_be_paired_without_a_repeat_is_refused() -> None:
    """Four entrants after 3 rounds have met everyone."""
    played = play_swiss(4, 3, [0] * 12)
    with pytest.raises(PairingError, match="round 4 of 4 entrants cannot be paired"):
        pair_round(4, played)


def test_the_swiss_table_orders_by_points_then_buchholz_then_sonneborn_berger() -> None:
    """Four entrants, two rounds. R1: 0 beats 2, 1 draws 3. R2 (0 has 1 point, 1 and 3 have ½, 2 has 0): 0 v 1
    drawn, 3 beats 2 → points 0: 1.5, 3: 1.5, 1: 1, 2: 0. Buchholz 0: 0 + 1 = 1; 3: 1 + 0 = 1; level;
    Sonneborn-Berger 0: 0 (beat 2, 0 pts) + ½·1 = 0.5; 3: ½·1 + 0 = 0.5; level: seed puts 0 first."""
    first = pair_round(4, [])
    assert [m.entrants for m in first] == [(0, 2), (1, 3)]
    r1 = (decide(first[0], 0), decide(first[1], 2))
    second = pair_round(4, [r1])
    assert sorted(tuple(sorted(m.entrants)) for m in second) == [(0, 1), (2, 3)]
    r2 = tuple(decide(m, 2) if 0 in m.entrants else decide(m, m.entrants.index(3)) for m in second)
    table = swiss_table(4, [r1, r2])
    assert [(r.entrant, r.points, r.buchholz, r.sonneborn_berger) for r in table.rows] == [
        (0, 1.5, 1.0, 0.5), (3, 1.5, 1.0, 0.5), (1, 1.0, 3.0, 1.5), (2, 0.0, 3.0, 0.0)]
    assert (table.row(0).wins, table.row(0).draws, table.row(0).losses, table.row(0).opponents) == (1, 1, 0, (2, 1))


def test_a_bye_counts_as_a_win_and_adds_nothing_to_buchholz() -> None:
    played = play_swiss(3, 1, [0])
    row = swiss_table(3, played).row(2)
    assert (row.points, row.byes, row.buchholz, row.opponents, row.wins) == (1.0, 1, 0.0, (), 0)


def test_seed_order_keeps_the_top_seeds_apart() -> None:
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert seed_order(4) == [1, 4, 2, 3]


def run_bracket(entrants: int, elimination: str, reset: bool = False) -> tuple[list[list[str]], object]:
    """Plays a bracket to the end, the higher seed winning every match (but the grand final, which the losers'
    bracket's finalist wins when ``reset``); the ids of each wave's matches, and the bracket."""
    decided: dict[str, Match] = {}
    waves: list[list[str]] = []
    while not (bracket := build_bracket(entrants, elimination, decided)).finished:
        wave = bracket.next_matches()
        waves.append([m.id for m in wave])
        for match in wave:
            side = 1 if reset and match.id == "GF" else match.entrants.index(min(match.entrants))
            decided[match.id] = decide(match, side)
    return waves, bracket


@pytest.mark.parametrize("entrants", [2, 3, 4, 5, 6, 7, 8, 9])
def test_a_single_elimination_plays_one_match_fewer_than_entrants_and_the_top_seed_wins(entrants: int) -> None:
    waves, bracket = run_bracket(entrants, "single")
    played = [m for m in bracket.matches if not m.bye]  # type: ignore[attr-defined]
    assert len(played) == entrants - 1 == match_count(entrants, "single")
    assert bracket.placements()[:2] == [(0,), (1,)]  # type: ignore[attr-defined]


def test_byes_go_to_the_top_seeds() -> None:
    """Five entrants in a bracket of 8: seeds 1, 2 and 3 have byes; 4 v 5 is the one first-round match."""
    bracket = build_bracket(5, "single", {})
    assert [(m.id, m.entrants, m.decided_by) for m in bracket.matches] == [
        ("W1-1", (0,), BYE), ("W1-2", (3, 4), ""), ("W1-3", (1,), BYE), ("W1-4", (2,), BYE), ("W2-2", (1, 2), "")]
    assert [m.id for m in bracket.next_matches()] == ["W1-2", "W2-2"]


def test_double_elimination_of_three() -> None:
    waves, bracket = run_bracket(3, "double")
    assert waves == [["W1-2"], ["W2-1"], ["L2-1"], ["GF"]]  # L1-1 is a walkover: W1-1 was a bye, no loser
    ids = [m.id for m in bracket.matches if not m.bye]  # type: ignore[attr-defined]
    assert ids == ["W1-2", "W2-1", "L2-1", "GF"]
    assert bracket.placements() == [(0,), (1,), (2,)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("entrants", [3, 5, 8])
def test_double_elimination_plays_a_bracket_reset_when_the_losers_finalist_wins_the_grand_final(
        entrants: int) -> None:
    _, without = run_bracket(entrants, "double")
    _, reset = run_bracket(entrants, "double", reset=True)
    played = [m.id for m in without.matches if not m.bye]  # type: ignore[attr-defined]
    with_reset = [m.id for m in reset.matches if not m.bye]  # type: ignore[attr-defined]
    assert len(played) == 2 * entrants - 2 and played[-1] == "GF"
    assert len(with_reset) == 2 * entrants - 1 == match_count(entrants, "double") and with_reset[-2:] == ["GF", "GF2"]
    placements = reset.placements()  # type: ignore[attr-defined]
    assert sorted(e for group in placements for e in group) == list(range(entrants))
    assert placements[0] == (0,)  # the GF2: the higher seed wins it


def test_double_elimination_of_eight_takes_every_loser_once_into_the_losers_bracket() -> None:
    _, bracket = run_bracket(8, "double")
    matches = {m.id: m for m in bracket.matches}  # type: ignore[attr-defined]
    assert matches["L1-1"].entrants == (4, 7) and matches["L1-2"].entrants == (5, 6)
    assert matches["GF"].entrants == (0, 1)  # the winners' bracket's winner first
    assert bracket.placements() == [(0,), (1,), (2,), (3,), (4, 5), (6, 7)]  # type: ignore[attr-defined]


def test_a_tied_match_plays_sudden_death_deal_sets_then_the_higher_seed_advances() -> None:
    tied, won = (1.0, 1.0), (1.5, 0.5)
    assert settle((3, 1), [won, tied], games=2, tiebreak_games=2) == (3, SCORE)
    assert settle((3, 1), [tied], games=2, tiebreak_games=2) is None  # its games are not all played
    assert settle((3, 1), [tied, tied], games=2, tiebreak_games=2) is None  # a sudden-death deal set wanted
    assert settle((3, 1), [tied, tied, tied, (0.0, 2.0)], games=2, tiebreak_games=2) == (1, TIEBREAK)
    assert settle((3, 1), [tied, tied, tied, tied], games=2, tiebreak_games=2) == (1, SEED)
    assert settle((3, 1), [tied, tied], games=2, tiebreak_games=0) == (1, SEED)


@pytest.mark.parametrize(("changes", "message"), [
    ({"variant": "draw", "players": 3, "format": "swiss", "rounds": 1},
     "format = \"swiss\" pairs two sides (2 players, or two teams); this variant seats 3 sides"),
    ({"format": "swiss", "rounds": 4}, "key 'rounds' must be at most 3 for 4 bots"),
    ({"format": "swiss"}, "key 'rounds' is missing"),
    ({"format": "knockout", "elimination": "triple"}, "key 'elimination' must be one of single, double"),
    ({"format": "knockout", "tiebreak_games": 51}, "key 'tiebreak_games' must be an integer >= 0 and <= 50"),
    ({"format": "knockout", "apart": [["a", "b"]]}, "key 'apart' is for format = \"round_robin\" or"),
    ({"format": "knockout", "candidates": ["a"]}, "key 'candidates' is for format = \"gauntlet\""),
    ({"format": "swiss", "rounds": 1, "tables": 3}, "key 'tables' is for format = \"balanced\""),
    ({"format": "round_robin", "rounds": 2}, "key 'rounds' is for format = \"swiss\""),
    ({"format": "swiss", "rounds": 1, "elimination": "double"}, "key 'elimination' is for format = \"knockout\""),
])
def test_a_bad_event_file_is_refused_in_one_line(changes: dict[str, object], message: str) -> None:
    data: dict[str, object] = {"variant": "draw", "bots": [{"name": n, "command": "builtin:random"}
                                                            for n in "abcd"]}
    data.update(changes)
    with pytest.raises(SpecError) as refused:
        spec_from_dict(data)
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_the_expected_games_of_a_swiss_and_a_knockout() -> None:
    bots = [{"name": n, "command": "builtin:random"} for n in "abcde"]
    swiss = spec_from_dict({"variant": "draw", "bots": bots, "format": "swiss", "rounds": 3, "games": 2})
    assert swiss.expected_games() == 3 * 2 * 2 * 2  # rounds x pairings a round x deal sets x rotations
    knockout = spec_from_dict({"variant": "draw", "bots": bots, "format": "knockout", "elimination": "double",
                               "games": 1, "tiebreak_games": 1})
    assert knockout.expected_games() == 9 * 2 * 2  # matches at most x (games + tie-break) x rotations


def spec_of(**keys: object) -> TournamentSpec:
    bots = [{"name": n, "command": "builtin:random"} for n in ("a", "b", "c", "d", "e")]
    return spec_from_dict({"variant": "draw", "bots": bots, **keys})


def record_of(scheduled: ScheduledGame, names: list[str], winner: str | None) -> dict[str, object]:
    """A record of a two-player game won by ``winner`` (None: drawn), as the record file holds it."""
    seats = [names[e] for e in scheduled.seats]
    side = seats.index(winner) if winner is not None else 0
    result: dict[str, object] = {"scores": [2, 0] if side == 0 else [0, 2], "ranking": [side, 1 - side]}
    if winner is not None:
        result["winner"] = side
    else:
        result["scores"] = [1, 1]
    return {"index": scheduled.index, "seats": seats, "sideOfSeat": [0, 1], "seed": scheduled.seed,
            "dealKey": scheduled.deal_key, "rotation": scheduled.rotation, "result": result}


def play_event(spec: TournamentSpec, pick: Callable[[tuple[str, ...]], str | None]) -> list[dict[str, object]]:
    """Every record of an event whose games ``pick`` decides (the winner among a game's seats), wave by wave."""
    names = [b.name for b in spec.bots]
    records: list[dict[str, object]] = []
    while not (event := event_from_records(spec, "m", records)).finished:
        assert event.pending is not None
        for scheduled in wave_schedule(spec, "m", event.pending):
            records.append(record_of(scheduled, names, pick(tuple(names[e] for e in scheduled.seats))))
    return records


def test_an_event_is_rebuilt_from_its_records_in_any_order_and_a_misfit_record_is_played_again() -> None:
    """A Swiss of five bots, 2 rounds of 1 deal set (2 games a pairing), the bot earliest in the alphabet winning
    every game: its game indices follow wave by wave, its seeds name the match and deal set, and the records
    shuffled rebuild the same event; a record whose seed is not its game's is not counted."""
    spec = spec_of(format="swiss", rounds=2, games=1)
    records = play_event(spec, min)
    event = event_from_records(spec, "m", records)
    assert event.finished and len(event.waves) == 2 and event.done == frozenset(range(8))
    assert [(w.number, w.first_index) for w in event.waves] == [(1, 0), (2, 4)]
    assert records[0]["seed"] == "m/R1-1/0" and records[1]["seed"] == "m/R1-1/0" and records[4]["seed"] == "m/R2-1/0"
    assert event.table is not None and event.table.ranking()[0] == 0
    assert event.to_json()["ranking"][0] == ["a"]
    assert event_from_records(spec, "m", list(reversed(records))) == event
    tampered = [*records[:5], {**records[5], "seed": "m/R2-9/0"}, *records[6:]]
    again = event_from_records(spec, "m", tampered)
    assert not again.finished and again.pending == event.waves[1] and 5 not in again.done
    assert again.rejected[0][0] == 5 and "does not fit the event" in again.rejected[0][1]


def test_a_drawn_knockout_match_plays_sudden_death_deal_sets_then_goes_to_the_higher_seed() -> None:
    """Every game drawn: each match plays its 1 deal set and 2 sudden-death ones (3 waves a round), then the higher
    seed advances; five bots, single elimination: 4 matches of 3 deal sets of 2 games."""
    spec = spec_of(format="knockout", games=1, tiebreak_games=2)
    event = event_from_records(spec, "m", play_event(spec, lambda seats: None))
    assert event.finished and event.bracket is not None
    played = [m for m in event.matches() if not m.bye]
    assert [(m.id, m.deal_sets, m.decided_by, m.winner) for m in played] == [
        ("W1-2", 3, SEED, 3), ("W2-1", 3, SEED, 0), ("W2-2", 3, SEED, 1), ("W3-1", 3, SEED, 0)]
    assert len(event.done) == 4 * 3 * 2 == spec.expected_games()  # every match to its last tie-break
    assert event.ranking() == [(0,), (1,), (2, 3), (4,)]


def test_a_swiss_event_whose_next_round_cannot_be_paired_ends_there_and_says_so() -> None:
    """Ten bots, nine rounds, every game drawn: each round is paired so that the next one can be, but after seven
    rounds the bots that have not met leave no way to pair round 8 without a repeat; the event ends after round 7
    (a run of it can finish and reveal its seed) and says why."""
    bots = [{"name": f"b{i}", "command": "builtin:random"} for i in range(10)]
    spec = spec_from_dict({"variant": "draw", "bots": bots, "format": "swiss", "rounds": 9, "games": 1})
    event = event_from_records(spec, "m", play_event(spec, lambda seats: None))
    assert event.finished and event.pending is None and len(event.rounds) == 7
    assert event.stopped == ("round 8 of 10 entrants cannot be paired without two entrants meeting again; play fewer "
                             "rounds")
    assert event.to_json()["stopped"] == event.stopped


def test_a_round_is_paired_so_that_the_next_can_be() -> None:
    """Six bots, every game drawn: the first pairing in order of preference for round 3 would leave the bots that
    have not met as two triangles (no round 4); the one taken leaves a cycle, and all five rounds are played."""
    bots = [{"name": n, "command": "builtin:random"} for n in "abcdef"]
    spec = spec_from_dict({"variant": "draw", "bots": bots, "format": "swiss", "rounds": 5, "games": 1})
    event = event_from_records(spec, "m", play_event(spec, lambda seats: None))
    assert event.finished and event.stopped == "" and len(event.rounds) == 5
    met = [frozenset(m.entrants) for m in event.matches()]
    assert len(met) == len(set(met)) == 15  # a whole round robin, no pairing twice
    drawn = [tuple(decide(m, 2) for m in pair_round(6, [], 0))]
    for _ in range(2):
        drawn.append(tuple(decide(m, 2) for m in pair_round(6, drawn)))
    with pytest.raises(PairingError, match="round 4 of 6"):  # without looking ahead
        pair_round(6, drawn)
