"""Calibration: each entrant's beliefs scored against the truth (Brier score and log loss per tile, how many
beliefs), exact on a hand-computed game played by the referee, through the record, the standings, standings.json and
every table that shows them; standings without beliefs unchanged."""

from __future__ import annotations

import math
import pytest
from rich.console import Console

from arena.records.beliefs import calibration_by_seat
from arena.rules.beliefs import Calibration, brier, log_loss
from arena.tournament.standings import (
    CALIBRATION_HEADER,
    EntrantStanding,
    Standings,
    StandingsTable,
    outcome_of,
)
from arena.web.data import standings_table
from arena.web.tournament_page import standings_html

from support.beliefs import BRIER, LOG_LOSS, played_record

pytestmark = pytest.mark.fast  # starts no process, no server, no browser


@pytest.mark.parametrize("probabilities, truth, expected_brier, expected_log", [
    ((0.25, 0.75), 1, 0.125, -math.log(0.75)),
    ((1.0, 0.0), 1, 2.0, math.log(1000)),          # certain and wrong: the log loss stops at the floor, 1/1000
    ((0.5, 0.2, 0.3), 0, 0.38, math.log(2)),        # 0.25 + 0.04 + 0.09
    ((0.0, 0.0, 1.0), 2, 0.0, 0.0),
])
def test_each_tile_is_scored_by_the_formulas(probabilities, truth, expected_brier, expected_log) -> None:
    assert brier(probabilities, truth) == pytest.approx(expected_brier, abs=1e-12)
    assert log_loss(probabilities, truth) == pytest.approx(expected_log, abs=1e-12)


async def test_a_game_s_calibration_is_exact_from_its_record() -> None:
    record = await played_record()
    calibration = calibration_by_seat(record)
    assert list(calibration) == [0]
    assert (calibration[0].beliefs, calibration[0].tiles) == (1, 2)
    assert calibration[0].brier == pytest.approx(BRIER, abs=1e-12)
    assert calibration[0].log_loss == pytest.approx(LOG_LOSS, abs=1e-12)


async def test_the_standings_report_each_bot_s_calibration_where_they_are_shown() -> None:
    record = await played_record()
    standings = Standings()
    standings.add(outcome_of(record))
    standings.add(outcome_of(record))                 # twice: the sums double, the means stay
    believer = standings.standing("believer")
    assert (believer.calibration.beliefs, believer.calibration.tiles) == (2, 4)
    assert believer.calibration.brier == pytest.approx(BRIER, abs=1e-12)
    assert standings.standing("random").calibration == Calibration()

    data = standings.to_json()
    by_name = {e["name"]: e for e in data["entrants"]}
    assert by_name["believer"]["calibration"] == {"beliefs": 2, "tiles": 4, "brier": pytest.approx(BRIER),
                                                  "log_loss": pytest.approx(LOG_LOSS)}
    assert "calibration" not in by_name["random"]
    again = StandingsTable.from_json(data).entrant("believer")
    assert again is not None and again.calibration.brier == pytest.approx(BRIER)

    console = Console(width=200, record=True)
    console.print(standings.table())
    text = console.export_text()
    assert CALIBRATION_HEADER in text
    assert f"{BRIER:.3f} · {LOG_LOSS:.2f} (2)" in text   # 1.062 · 3.60 (2)

    snapshot = standings.snapshot()
    web = standings_table(snapshot)
    assert web["calibration_header"] == CALIBRATION_HEADER
    assert [row["calibration"] for row in web["rows"]] == [
        f"{BRIER:.3f} · {LOG_LOSS:.2f} (2)" if e.name == "believer" else "-" for e in snapshot.entrants]
    page = standings_html({"id": "t", "name": "t", "variant": "draw", "state": "done", "games_done": 2,
                           "games_total": 2}, snapshot)
    assert CALIBRATION_HEADER in page and f"{BRIER:.3f} · {LOG_LOSS:.2f} (2)" in page


async def test_standings_without_beliefs_have_no_calibration() -> None:
    record = await played_record()
    for rnd in record["rounds"]:
        for move in rnd["moves"]:
            move.pop("belief", None)
    standings = Standings()
    standings.add(outcome_of(record))
    assert all("calibration" not in e for e in standings.to_json()["entrants"])
    console = Console(width=200, record=True)
    console.print(standings.table())
    assert "Brier" not in console.export_text()
    assert standings_table(standings.snapshot())["calibration_header"] == ""
    assert isinstance(standings.snapshot().entrants[0], EntrantStanding)
