"""The leaderboard's rows, pure (arena/league/rules/board.py): one row per bot, its active version, placed among the
shown rows only (exact positions, rank ranges and ties); a whole board shown is the fit's own board; each version's
form from its results; the place and the form in a spectator's words."""

from __future__ import annotations

import pytest

from arena.display import names_text, ordinal
from arena.league.rules.board import (
    BoardEntry,
    Form,
    board_of,
    bots_board,
    scores_of,
)
from arena.tournament.likelihood import Tally, fit
from arena.web.league import form_text, place_text

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


def entry(version_id: int, position: int, best: int, worst: int, tied: tuple[int, ...], elo: float | None = 0.0
          ) -> BoardEntry:
    fitted = elo is not None
    return BoardEntry(version_id, position, best, worst, elo, elo - 50 if fitted else None,  # type: ignore[operator]
                      elo + 50 if fitted else None, 4, tied, None)  # type: ignore[operator]


def test_replaced_versions_leave_the_board_and_ranks_count_the_shown_rows() -> None:
    """alpha-v1 (10), replaced by alpha-v2 (11), is first on the whole board; the shown rows are beta (20), gamma
    (30), alpha-v2 (11) and delta (40, rated after the refit). 20 and 30 are tied, 30 and 11 too, 20 and 11 apart:
    20 is 1st-2nd, 30 1st-3rd, 11 2nd-3rd among the shown, 40 4th; 10's tie with 20 is gone with its row."""
    whole = [entry(10, 1, 1, 2, (20,), 90.0), entry(20, 2, 1, 3, (10, 30), 60.0), entry(30, 3, 2, 4, (20, 11), 10.0),
             entry(11, 4, 3, 4, (30,), -30.0), entry(40, 5, 5, 5, (), None)]
    shown = bots_board(whole, {11, 20, 30, 40})
    assert [(e.version_id, e.position, e.best, e.worst, e.tied_with, e.fitted) for e in shown] == [
        (20, 1, 1, 2, (30,), True), (30, 2, 1, 3, (20, 11), True), (11, 3, 2, 3, (30,), True),
        (40, 4, 4, 4, (), False)]
    assert [e.rank for e in shown] == ["1-2", "1-3", "2-3", "4"]
    assert [(e.elo, e.low, e.high, e.deal_sets) for e in shown[:1]] == [(60.0, 10.0, 110.0, 4)]  # kept as fitted
    assert bots_board(whole, set()) == []
    assert [(e.version_id, e.best, e.worst) for e in bots_board(whole, {40, 41})] == [(40, 1, 1)]


def test_a_whole_board_shown_is_the_fits_own_board() -> None:
    """Every version shown: the rows are exactly board_of's (the ranges of the fit over the same field)."""
    tally = Tally()
    for better, worse, times in (("1", "2", 6), ("2", "3", 6), ("3", "4", 2), ("4", "3", 1), ("1", "4", 9)):
        for _ in range(times):
            tally.add(((better,), (worse,)))
    whole = board_of(fit(tally.evidence()), [])
    assert len({e.rank for e in whole}) > 1 and any(e.tied_with for e in whole)  # a board with ties and apart rows
    assert bots_board(whole, {1, 2, 3, 4}) == whole


def test_scores_and_form_keep_the_last_deal_sets() -> None:
    assert scores_of((("7",), ("8",))) == {"7": 1.0, "8": 0.0}
    assert scores_of((("7", "8"),)) == {"7": 0.5, "8": 0.5}
    assert scores_of((("1",), ("2", "3"), ("4",))) == {"1": 1.0, "2": 0.5, "3": 0.5, "4": 0.0}
    form = Form(kept=3)
    form.extend([(("1",), ("2",)), (("2",), ("1",)), (("1", "2"),), (("1",), ("3",))])
    assert (form.of(1), form.of(2), form.of(3), form.of(9)) == ((0.0, 0.5, 1.0), (0.0, 1.0, 0.5), (0.0,), ())


def test_places_and_forms_read_in_words() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert names_text(["foo"]) == "foo" and names_text(["foo", "bar"]) == "foo and bar"
    assert names_text(["a", "b", "c"]) == "a, b and c"
    assert names_text(list("abcdefg")) == "a, b, c, d, e and 2 others"
    assert names_text(list("abcdef")) == "a, b, c, d, e and 1 other"
    assert place_text(2, 2, True, []) == "2nd"
    assert place_text(2, 4, True, ["foo", "bar"]) == "could be 2nd to 4th; not yet told apart from foo and bar"
    assert place_text(5, 6, False, []) == "new: placed after the rated bots until the ratings are next refitted"
    assert form_text([1.0, 0.0, 0.5, 1.0, 2 / 3]) == "won 2, lost 1 of its last 5 deal sets"
    assert form_text([1.0]) == "won 1, lost 0 of its deal set" and form_text([]) == "no deal set yet"
