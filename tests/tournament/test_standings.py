"""Standings and ratings from game outcomes: exact numbers on hand-made outcomes, and flat memory; one game counts
once for an entrant holding several seats, points print whole when whole, ties in points are broken by the written
rule, and the Elo column shows one interval (by deal set) as its two bounds."""

from __future__ import annotations

import json
import math
import statistics
from fractions import Fraction

import pytest
from openskill.models import PlackettLuce
from rich.console import Console

from arena.tournament.ratings import ELO_CLAMP, elo_of_score
from arena.tournament.standings import (
    ELO_HEADER, GameOutcome, OutcomeError, Standings, TIE_RULE, elo_cell, exact_mean, points_text,
)

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def game(index: int, seats: str, scores: tuple[int, ...], *, winner: int | None, ranking: tuple[int, ...] | None = None,
         side_of: tuple[int, ...] | None = None, deal: str | None = None, faults: tuple[int, ...] = (),
         think_ms: tuple[float, ...] = (), decisions: tuple[int, ...] = ()) -> GameOutcome:
    """An outcome; ``seats`` like "A B A B"; side == seat and a higher-first ranking unless given."""
    names = tuple(seats.split())
    if ranking is None:
        ranking = tuple(sorted(range(len(scores)), key=lambda side: (-scores[side], side)))
    return GameOutcome(index=index, deal_key=deal if deal is not None else f"deal{index}", seats=names,
                       side_of=side_of if side_of is not None else tuple(range(len(names))), scores=scores,
                       ranking=ranking, winner=winner, fault_seats=faults, think_ms=think_ms, decisions=decisions)


def expected_elo(samples: list[float]) -> tuple[float, float, float]:
    """The formula of the brief, by hand: Elo of the mean and of mean ± 1.96·sd/√n clamped into (0, 1)."""
    s = statistics.fmean(samples)
    half = 1.96 * statistics.stdev(samples) / math.sqrt(len(samples))

    def to_elo(x: float) -> float:
        x = min(max(x, ELO_CLAMP), 1 - ELO_CLAMP)
        return -400 * math.log10(1 / x - 1)

    return to_elo(s), to_elo(s - half), to_elo(s + half)


def round_robin() -> Standings:
    """A, B and C, two-player games: A beats B, B draws C, C beats A, B beats A."""
    standings = Standings()
    standings.add(game(0, "A B", (100, 60), winner=0, think_ms=(100.0, 50.0), decisions=(10, 5)))
    standings.add(game(1, "B C", (80, 80), winner=None, think_ms=(30.0, 20.0), decisions=(3, 4)))
    standings.add(game(2, "C A", (100, 40), winner=0, think_ms=(20.0, 60.0), decisions=(4, 5)))
    standings.add(game(3, "B A", (100, 90), winner=0, think_ms=(10.0, 40.0), decisions=(2, 5)))
    return standings


def test_two_player_round_robin_counts_points_and_scores() -> None:
    standings = round_robin()
    a, b, c = (standings.entrant(name) for name in "ABC")
    assert (a["games"], a["wins"], a["draws"], a["losses"], a["match_points"]) == (3, 1, 0, 2, 1.0)
    assert (b["games"], b["wins"], b["draws"], b["losses"], b["match_points"]) == (3, 1, 1, 1, 1.5)
    assert (c["games"], c["wins"], c["draws"], c["losses"], c["match_points"]) == (2, 1, 1, 0, 1.5)
    assert (a["scored"], a["conceded"]) == (100 + 40 + 90, 60 + 100 + 100)
    assert (b["scored"], b["conceded"]) == (60 + 80 + 100, 100 + 80 + 90)
    assert (c["scored"], c["conceded"]) == (80 + 100, 80 + 40)
    assert a["think_ms_per_decision"] == pytest.approx((100 + 60 + 40) / (10 + 5 + 5))
    assert c["think_ms_per_decision"] == pytest.approx((20 + 20) / (4 + 4))
    assert [e["faults"] for e in (a, b, c)] == [0, 0, 0]


def test_two_player_round_robin_pairwise_cells() -> None:
    standings = round_robin()
    assert standings.pairwise("A", "B") == (1, 0, 1)
    assert standings.pairwise("B", "A") == (1, 0, 1)
    assert standings.pairwise("B", "C") == (0, 1, 0)
    assert standings.pairwise("C", "B") == (0, 1, 0)
    assert standings.pairwise("C", "A") == (1, 0, 0)
    assert standings.pairwise("A", "C") == (0, 0, 1)


def test_two_player_round_robin_elo_and_intervals() -> None:
    elo = round_robin().elo()
    # A: match points 1, 0, 0 -> s = 1/3, Elo = -400·log10(2); the low bound is clamped.
    assert elo["A"].score == pytest.approx(1 / 3)
    assert elo["A"].elo == pytest.approx(-400 * math.log10(2))
    assert elo["A"].elo_interval == pytest.approx(expected_elo([1, 0, 0])[1:])
    assert elo["A"].low == pytest.approx(-400 * math.log10(1 / ELO_CLAMP - 1))
    # B: 0, 0.5, 1 -> s = 0.5, Elo 0, a symmetric interval.
    assert elo["B"].elo == pytest.approx(0.0)
    low, high = expected_elo([0, 0.5, 1])[1:]
    assert elo["B"].elo_interval == pytest.approx((low, high)) and low == pytest.approx(-high)
    # C: 0.5, 1 -> s = 0.75, Elo = -400·log10(1/3).
    assert elo["C"].elo == pytest.approx(-400 * math.log10(1 / 3))
    assert elo["C"].elo_interval == pytest.approx(expected_elo([0.5, 1])[1:])
    assert (elo["C"].games, elo["C"].deal_sets) == (2, 2)
    # Without duplicate every game is its own deal set: both intervals agree.
    assert elo["A"].elo_interval_by_deal == pytest.approx(elo["A"].elo_interval)


def test_two_player_round_robin_order_table_and_json() -> None:
    standings = round_robin()
    # B and C share 1.5 points; C's higher Elo puts it first.
    assert standings.order() == ["C", "B", "A"]
    assert standings.leaders(2) == [("C", 1.5), ("B", 1.5)]
    assert standings.rating_kind == "elo"
    elo_c, low_c, high_c = expected_elo([0.5, 1])
    # The Elo and the two bounds of its 95% interval (not symmetric: a ± half-width would misplace both bounds).
    assert standings.rating_text("C") == f"+{elo_c:.0f} [{low_c:+.0f}, {high_c:+.0f}]" == "+191 [-182, +1200]"
    console = Console(record=True, width=200)
    console.print(standings.table("round robin"))
    text = console.export_text()
    for header in ("rank", "entrant", "games", "W", "D", "L", "points", "scored", "conceded", "faults", "think ms",
                   "Elo [95% by deal set]"):
        assert header in text
    assert "+191 [-182, +1200]" in text and "-120 [-1200, +748]" in text and "+0 [-1200, +1200]" in text
    assert "ties in points: head-to-head among the tied entrants, then more wins, then fewer games, then name" in text
    console.print(standings.pairwise_table())
    assert "1-0-1" in console.export_text()
    data = json.loads(json.dumps(standings.to_json()))
    assert data["rating"] == "elo" and data["games"] == 4
    assert [e["name"] for e in data["entrants"]] == ["C", "B", "A"]
    assert data["pairwise"]["A"]["B"] == {"wins": 1, "draws": 0, "losses": 1}
    assert "C" not in data["pairwise"]["C"]
    assert data["entrants"][0]["elo"]["elo"] == pytest.approx(elo_c)
    assert set(data["entrants"][0]["openskill"]) == {"mu", "sigma", "ordinal"}


def test_a_perfect_scores_infinite_elo_is_reported_as_none() -> None:
    standings = Standings()
    standings.add(game(0, "A B", (100, 0), winner=0))
    standings.add(game(1, "B A", (0, 100), winner=1))
    elo = standings.elo()
    assert elo["A"].score == 1.0 and elo["A"].elo is None and elo["A"].elo_interval is None
    assert elo["B"].score == 0.0 and elo["B"].elo is None
    assert standings.rating_text("A") == "+∞" and standings.rating_text("B") == "−∞"
    assert elo_of_score(0.5) == 0.0 and elo_of_score(0.0) is None and elo_of_score(1.0) is None


def test_duplicate_deal_sets_narrow_the_interval() -> None:
    """Four deal sets of two games (seats swapped): A sweeps one set, the other three split by the deal's luck."""
    standings = Standings(group_size=2)
    index = 0
    for deal, a_wins_both in (("d1", True), ("d2", False), ("d3", False), ("d4", False)):
        standings.add(game(index, "A B", (100, 50), winner=0, deal=deal))
        if a_wins_both:
            standings.add(game(index + 1, "B A", (50, 100), winner=1, deal=deal))
        else:
            standings.add(game(index + 1, "B A", (100, 50), winner=0, deal=deal))
        index += 2
    assert standings.pending_deal_sets == 0
    a = standings.elo()["A"]
    per_game = [1, 1, 1, 0, 1, 0, 1, 0]
    per_deal = [1, 0.5, 0.5, 0.5]
    assert (a.games, a.deal_sets) == (8, 4)
    assert a.elo == pytest.approx(expected_elo(per_game)[0]) == pytest.approx(expected_elo(per_deal)[0])
    assert a.elo_interval == pytest.approx(expected_elo(per_game)[1:])
    assert a.elo_interval_by_deal == pytest.approx(expected_elo(per_deal)[1:])
    assert a.high_by_deal - a.low_by_deal < a.high - a.low
    # The table shows the by-deal interval (the deal set is the sample), as its two bounds.
    assert standings.rating_text("A") == f"{a.elo:+.0f} [{a.low_by_deal:+.0f}, {a.high_by_deal:+.0f}]"
    assert standings.rating_text("A") == "+89 [-85, +330]"
    # An unfinished set still counts as one by-deal sample, with the games it has.
    standings.add(game(index, "A B", (100, 50), winner=0, deal="d5"))
    assert standings.pending_deal_sets == 1
    a = standings.elo()["A"]
    assert (a.games, a.deal_sets) == (9, 5)
    assert a.elo_interval_by_deal == pytest.approx(expected_elo(per_deal + [1])[1:])


def three_players() -> Standings:
    """Lowest wins. g0: A and B tie for first; g1: C would win but faults; g2: A faults, level with C's score."""
    standings = Standings()
    standings.add(game(0, "A B C", (20, 20, 50), winner=None, ranking=(0, 1, 2)))
    standings.add(game(1, "A B C", (30, 40, 10), winner=0, ranking=(0, 1, 2), faults=(2,)))
    standings.add(game(2, "B C A", (10, 30, 30), winner=0, ranking=(0, 1, 2), faults=(2,)))
    return standings


def test_three_players_tie_for_first_and_forfeits() -> None:
    standings = three_players()
    a, b, c = (standings.entrant(name) for name in "ABC")
    # g0: A and B draw with (1 below + 0.5 tied) / 2 = 0.75 each, C loses with 0.
    # g1: A wins (1), B is second (0.5), C forfeits last (0).
    # g2: B wins (1); C (30) ranks above A (30, faulted): C 0.5, A 0.
    assert (a["wins"], a["draws"], a["losses"], a["match_points"]) == (1, 1, 1, 1.75)
    assert (b["wins"], b["draws"], b["losses"], b["match_points"]) == (1, 1, 1, 2.25)
    assert (c["wins"], c["draws"], c["losses"], c["match_points"]) == (0, 0, 3, 0.5)
    assert (a["faults"], b["faults"], c["faults"]) == (1, 0, 1)
    # Conceded is the mean of the other sides' scores.
    assert (a["scored"], a["conceded"]) == (20 + 30 + 30, (20 + 50) / 2 + (40 + 10) / 2 + (10 + 30) / 2)
    assert standings.pairwise("A", "B") == (1, 1, 1)
    assert standings.pairwise("C", "A") == (1, 0, 2)
    assert standings.pairwise("B", "C") == (3, 0, 0)
    assert standings.rating_kind == "openskill"
    assert standings.order() == ["B", "A", "C"]
    console = Console(record=True, width=200)
    console.print(standings.table("three"))
    assert "ordinal (μ, σ)" in console.export_text()
    skill = standings.ratings()["B"]
    assert standings.rating_text("B") == f"{skill.mu - 3 * skill.sigma:.1f} ({skill.mu:.1f}, {skill.sigma:.1f})"


def test_teams_count_once_per_game() -> None:
    standings = Standings()
    standings.add(game(0, "A B A B", (100, 50), winner=0, side_of=(0, 1, 0, 1), think_ms=(10.0, 20.0, 30.0, 40.0),
                       decisions=(1, 2, 3, 2)))
    standings.add(game(1, "B A B A", (60, 90), winner=1, side_of=(0, 1, 0, 1), faults=(3,)))
    a, b = standings.entrant("A"), standings.entrant("B")
    assert (a["games"], a["wins"], a["losses"], a["match_points"]) == (2, 2, 0, 2.0)
    assert (a["scored"], a["conceded"]) == (190, 110)
    assert (b["games"], b["wins"], b["losses"], b["match_points"]) == (2, 0, 2, 0.0)
    assert a["think_ms_per_decision"] == pytest.approx(40 / 4)
    assert b["think_ms_per_decision"] == pytest.approx(60 / 4)
    assert a["faults"] == 1
    assert standings.pairwise("A", "B") == (2, 0, 0)
    assert standings.elo()["A"].games == 2


def test_partners_do_not_meet_and_opponents_do() -> None:
    standings = Standings()
    standings.add(game(0, "A B C D", (50, 100), winner=1, ranking=(1, 0), side_of=(0, 1, 0, 1)))
    assert standings.pairwise("A", "C") == (0, 0, 0)
    assert standings.pairwise("B", "A") == standings.pairwise("D", "C") == (1, 0, 0)
    assert standings.to_json()["pairwise"]["A"] == {"B": {"wins": 0, "draws": 0, "losses": 1},
                                                     "D": {"wins": 0, "draws": 0, "losses": 1}}


def test_an_entrant_on_two_sides_counts_once_per_game() -> None:
    """A holds sides 0 and 2 of a three-sided game (fewer entrants than seats): one game, one result for A."""
    standings = Standings()
    standings.add(game(0, "A B A", (10, 20, 30), winner=2))
    a, b = standings.entrant("A"), standings.entrant("B")
    # A's sides are placed third (0 points) and first (1 point): a win, worth their mean, 0.5.
    assert (a["games"], a["wins"], a["draws"], a["losses"], a["match_points"]) == (1, 1, 0, 0, 0.5)
    # Scored: the mean of its sides' scores; conceded: the mean of the sides it does not hold (B's alone).
    assert (a["scored"], a["conceded"]) == (20, 20)
    assert (b["games"], b["losses"], b["match_points"]) == (1, 1, 0.5)
    assert (b["scored"], b["conceded"]) == (20, 20)
    assert standings.games == 1 and standings.elo()["A"].games == 1
    assert standings.pairwise("A", "B") == standings.pairwise("B", "A") == (1, 0, 1)
    assert standings.pairwise("A", "A") == (0, 0, 0)


def test_openskill_raises_winners_lowers_losers_ties_share() -> None:
    standings = Standings()
    standings.add(game(0, "A B", (100, 50), winner=0))
    ratings = standings.ratings()
    assert ratings["A"].mu > 25 > ratings["B"].mu
    assert ratings["A"].ordinal == pytest.approx(ratings["A"].mu - 3 * ratings["A"].sigma)

    standings = Standings()
    standings.add(game(0, "C D E", (20, 20, 50), winner=None, ranking=(0, 1, 2)))
    ratings = standings.ratings()
    assert ratings["C"].mu == pytest.approx(ratings["D"].mu) and ratings["C"].mu > 25 > ratings["E"].mu
    model = PlackettLuce()
    fresh = [[model.rating()] for _ in range(3)]
    [[c]], [[d]], [[e]] = ([team] for team in model.rate(fresh, ranks=[0, 0, 2]))
    assert (ratings["C"].mu, ratings["D"].mu, ratings["E"].mu) == pytest.approx((c.mu, d.mu, e.mu))
    assert ratings["E"].sigma == pytest.approx(e.sigma)


def test_bad_outcomes_are_refused_with_a_clear_message() -> None:
    standings = Standings()
    with pytest.raises(OutcomeError, match="expected the winner first in the ranking"):
        standings.add(game(0, "A B", (100, 50), winner=1, ranking=(0, 1)))
    with pytest.raises(OutcomeError, match="expected a tie for first in a drawn match"):
        standings.add(game(0, "A B", (100, 50), winner=None))
    with pytest.raises(OutcomeError, match="expected a ranking of the sides 0..1"):
        standings.add(game(0, "A B", (100, 50), winner=0, ranking=(0, 0)))
    with pytest.raises(OutcomeError, match="expected think_ms for 2 seats"):
        standings.add(game(0, "A B", (100, 50), winner=0, think_ms=(1.0,)))
    with pytest.raises(OutcomeError, match="group size of at least 1"):
        Standings(group_size=0)
    assert standings.games == 0 and standings.order() == []


def test_memory_stays_flat_over_100000_games() -> None:
    """Deal sets of two games arrive four sets at a time, interleaved; each is folded as soon as it is complete."""
    standings = Standings(group_size=2)
    most_pending = 0
    games = 100_000
    for start in range(0, games, 8):
        sets = range(start // 2, start // 2 + 4)
        batch = [(key, rotation) for rotation in (0, 1) for key in sets]
        for offset, (key, rotation) in enumerate(batch):
            seats = "A B" if rotation == 0 else "B A"
            winner = (key + rotation) % 2
            standings.add(game(start + offset, seats, (100, 50) if winner == 0 else (50, 100), winner=winner,
                               ranking=(winner, 1 - winner), deal=f"d{key}"))
            most_pending = max(most_pending, len(standings._deal_sets))
    assert standings.games == games
    assert most_pending == 4 and len(standings._deal_sets) == 0
    a = standings.elo()["A"]
    assert (a.games, a.deal_sets) == (games, games // 2)
    assert a.score == pytest.approx(0.5) and a.elo == pytest.approx(0.0)


# --- entrants holding several seats, points as printed, ties, the Elo interval -------------------------------


def text_of(standings: Standings, title: str = "t") -> str:
    console = Console(record=True, width=220)
    console.print(standings.table(title))
    return console.export_text()


def row(text: str, name: str) -> list[str]:
    """The cells of the table row of ``name``."""
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if len(cells) > 1 and cells[1] == name:
            return cells
    raise AssertionError(f"no row for {name} in\n{text}")


def test_three_at_four_seats_count_one_game_each() -> None:
    """Mexican Train for 4 with 3 entrants (lowest wins): X holds seats 0 and 3 in both games."""
    standings = Standings()
    standings.add(game(0, "X Y Z X", (10, 20, 30, 50), winner=0, ranking=(0, 1, 2, 3)))
    standings.add(game(1, "X Y Z X", (25, 5, 15, 35), winner=1, ranking=(1, 2, 0, 3)))
    x, y, z = (standings.entrant(name) for name in "XYZ")
    assert standings.games == 2
    assert [e["games"] for e in (x, y, z)] == [2, 2, 2]
    assert (x["wins"], x["draws"], x["losses"]) == (1, 0, 1)
    # Game 0: X's sides are placed 1st (1) and 4th (0): 1/2. Game 1: 3rd (1/3) and 4th (0): 1/6. Sum 2/3.
    assert x["match_points"] == float(Fraction(2, 3))
    # Scored: the mean of its two sides; conceded: the mean of Y's and Z's scores.
    assert (x["scored"], x["conceded"]) == ((10 + 50) // 2 + (25 + 35) // 2, (20 + 30) // 2 + (5 + 15) // 2) == (60, 35)
    assert (y["scored"], y["conceded"]) == (25, (10 + 30 + 50) // 3 + (25 + 15 + 35) // 3) == (25, 55)
    assert isinstance(y["conceded"], int), "a whole number stays an int in standings.json"
    assert z["conceded"] == float(Fraction(10 + 20 + 50, 3) + Fraction(25 + 5 + 35, 3))  # 48.33...
    text = text_of(standings, "trio: mexican_train, 2 games")
    assert row(text, "X")[2:10] == ["2", "1", "0", "1", "0.67", "60", "35", "0"]
    assert row(text, "Y")[6:9] == ["1.67", "25", "55"]
    assert row(text, "Z")[6:9] == ["1", "45", "48.33"]


def test_points_print_whole_or_with_two_decimals() -> None:
    assert [points_text(v) for v in (702, Fraction(1404, 2), Fraction(1405, 2), Fraction(2107, 3), 0, -3)] == [
        "702", "702", "702.5", "702.33", "0", "-3"]
    assert exact_mean(1405, 2) == Fraction(1405, 2) and isinstance(exact_mean(1404, 2), int)
    # Three sides, conceded = the mean of the two others: halves add up to a whole number over two games.
    standings = Standings()
    standings.add(game(0, "A B C", (10, 21, 30), winner=2))
    assert row(text_of(standings), "A")[8] == "25.5"
    standings.add(game(1, "A B C", (10, 20, 31), winner=2))
    cells = row(text_of(standings), "A")
    conceded = standings.entrant("A")["conceded"]
    assert cells[8] == "51" and conceded == 51 and isinstance(conceded, int), "standings.json writes 51, not 51.0"


def add(standings: Standings, index: int, seats: str, winner: int | None) -> None:
    """A two-player game: the first seat wins (0), the second (1), or a draw (None)."""
    scores = {0: (100, 50), 1: (50, 100), None: (70, 70)}[winner]
    standings.add(game(index, seats, scores, winner=winner, ranking=(1, 0) if winner == 1 else (0, 1)))


def test_ties_in_points_head_to_head_first_then_fewer_games() -> None:
    """B and D end level on 2 points, A and C on 1.5; name order would say B before D and A before C."""
    standings = Standings()
    for index, (seats, winner) in enumerate([("D B", 0), ("D C", 0), ("C B", 0), ("B A", 0), ("B A", 0),
                                             ("C A", None), ("A D", 0)]):
        add(standings, index, seats, winner)
    assert {name: standings.entrant(name)["match_points"] for name in "ABCD"} == {"A": 1.5, "B": 2, "C": 1.5, "D": 2}
    # D beat B: D first. A and C drew their game and won one each; C played one game fewer.
    assert [(standings.entrant(n)["wins"], standings.entrant(n)["games"]) for n in "AC"] == [(1, 4), (1, 3)]
    assert standings.order() == ["D", "B", "C", "A"]
    assert TIE_RULE == ("ties in points: head-to-head among the tied entrants, then more wins, then fewer games, "
                        "then name")
    assert TIE_RULE in text_of(standings), "the table's caption says the rule"


def test_ties_in_points_then_more_wins() -> None:
    """M drew twice, Z won once and lost once: both 1 point in 2 games, never met; Z's win ranks it first."""
    standings = Standings()
    for index, (seats, winner) in enumerate([("Z W", 0), ("W Z", 0), ("M W", None), ("W M", None)]):
        add(standings, index, seats, winner)
    assert standings.order() == ["W", "Z", "M"]


def test_ties_in_points_head_to_head_before_wins() -> None:
    """B and A end level on 2 points in 3 games each. B beat A, then drew twice with Z (1 win); A won twice against
    W (2 wins). Head-to-head puts B first; the number of wins, and the names, would put A first."""
    standings = Standings()
    for index, (seats, winner) in enumerate([("B A", 0), ("B Z", None), ("Z B", None), ("A W", 0), ("W A", 1)]):
        add(standings, index, seats, winner)
    b, a = standings.entrant("B"), standings.entrant("A")
    assert (b["match_points"], b["wins"], b["games"]) == (2, 1, 3)
    assert (a["match_points"], a["wins"], a["games"]) == (2, 2, 3)
    assert standings.pairwise("B", "A") == (1, 0, 0)
    assert standings.order() == ["B", "A", "Z", "W"]


def test_the_elo_column_shows_the_by_deal_interval_as_bounds() -> None:
    standings = Standings(group_size=2)
    # One finished deal set and one with a single game: two by-deal samples, three games.
    standings.add(game(0, "A B", (100, 50), winner=0, deal="d1"))
    standings.add(game(1, "B A", (100, 50), winner=0, deal="d1"))
    standings.add(game(2, "A B", (100, 50), winner=0, deal="d2"))
    a = standings.elo()["A"]
    assert a.deal_sets == 2 and a.games == 3
    text = standings.rating_text("A")
    assert text == f"{round(a.elo):+d} [{round(a.low_by_deal):+d}, {round(a.high_by_deal):+d}]"
    assert ELO_HEADER == "Elo [95% by deal set]" and ELO_HEADER in text_of(standings)
    # One deal set only: no interval at all (never the per-game one in its place).
    single = Standings(group_size=2)
    single.add(game(0, "A B", (100, 50), winner=0, deal="d1"))
    single.add(game(1, "B A", (100, 50), winner=0, deal="d1"))
    assert single.elo()["A"].elo_interval is not None and single.elo()["A"].elo_interval_by_deal is None
    assert single.rating_text("A") == "+0"
    assert (elo_cell(None, 1.0, None), elo_cell(None, 0.0, None), elo_cell(None, None, None)) == ("+∞", "−∞", "-")
    assert elo_cell(-0.4, 0.5, (-120.6, 80.2)) == "+0 [-121, +80]"
