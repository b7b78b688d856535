"""Standings that say what they mean (issue 12): one game counts once for an entrant holding several seats, points
print whole when whole, ties in points are broken by the written rule, and the Elo column shows one interval (by
deal set) as its two bounds."""

from __future__ import annotations

from fractions import Fraction

from rich.console import Console

from arena.tournament.standings import (ELO_HEADER, TIE_RULE, GameOutcome, Standings, elo_cell, exact_mean,
                                        points_text)


def game(index: int, seats: str, scores: tuple[int, ...], *, winner: int | None, ranking: tuple[int, ...] | None = None,
         side_of: tuple[int, ...] | None = None, deal: str | None = None) -> GameOutcome:
    """An outcome; ``seats`` like "A B C A"; side == seat and a higher-first ranking unless given."""
    names = tuple(seats.split())
    if ranking is None:
        ranking = tuple(sorted(range(len(scores)), key=lambda side: (-scores[side], side)))
    return GameOutcome(index=index, deal_key=deal if deal is not None else f"deal{index}", seats=names,
                       side_of=side_of if side_of is not None else tuple(range(len(names))), scores=scores,
                       ranking=ranking, winner=winner)


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


def test_three_entrants_at_a_four_seat_table_count_one_game_each() -> None:
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


def test_points_print_whole_when_whole_and_with_two_decimals_otherwise() -> None:
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


def test_ties_in_points_head_to_head_decides_before_the_number_of_wins() -> None:
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


def test_the_elo_column_always_shows_the_by_deal_interval_as_two_bounds() -> None:
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
