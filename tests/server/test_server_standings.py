"""The standings a server sends are the local ones: the Standings message printed by ``arena status`` as the table
``arena run`` prints (points as 14.5, never 14; the tie-break caption), fractional points kept exactly, the Elo cell
the local one; and the tables ``arena watch`` rebuilds from the games are the server's own numbers."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from google.protobuf import json_format
from rich.console import Console

from arena.cli.server import standings_from_games, standings_table
from arena.protocol import arena_pb2 as apb
from arena.rules.beliefs import Calibration
from arena.server.events import entrant_standing, standings_pb
from arena.tournament.standings import CALIBRATION_HEADER, GameOutcome, Standings, TIE_RULE, row_cells

from support.cli import arena
from support.paths import ROOT
from support.tables import rendered


def outcome(index: int, seats: tuple[str, ...], scores: tuple[int, ...], ranking: tuple[int, ...],
            deal_key: str) -> GameOutcome:
    return GameOutcome(index=index, deal_key=deal_key, seats=seats, side_of=tuple(range(len(seats))), scores=scores,
                       ranking=ranking, winner=ranking[0], fault_seats=(), think_ms=(3.0,) * len(seats),
                       decisions=(2,) * len(seats))


TWO_SIDED = [outcome(i, ("ann", "bob") if i % 2 else ("bob", "ann"), (3 + i, 1) if i % 3 else (0, 2 + i),
                     (0, 1) if i % 3 else (1, 0), f"d{i // 2}") for i in range(8)]
"""Two-sided games in deal sets of two: the Elo column with its by-deal interval."""
SHARED_SEATS = [outcome(0, ("ann", "bob", "ann", "cid"), (10, 3, 5, 0), (0, 2, 1, 3), "a"),
                outcome(1, ("cid", "ann", "bob", "bob"), (4, 9, 1, 6), (1, 3, 0, 2), "b")]
"""Four sides, two of them held by one entrant: OpenSkill, and points that are means of several sides."""


@pytest.mark.parametrize("games, group_size", [(TWO_SIDED, 2), (SHARED_SEATS, 1)], ids=["elo", "openskill"])
@pytest.mark.fast
def test_the_server_standings_print_as_the_local_table(games: list[GameOutcome], group_size: int) -> None:
    """The same games through standings.json and the Standings message print the same table as `arena run`:
    header, cells (points as 14.5, never 14), caption with the tie-break rule."""
    local = Standings(group_size=group_size)
    for game in games:
        local.add(game)
    served = standings_table(standings_pb(local.to_json()), "the title")
    assert rendered(served) == rendered(local.table("the title"))
    assert TIE_RULE in rendered(served)


@pytest.mark.fast
def test_fractional_points_arrive_exact_and_rounded() -> None:
    standings = Standings()
    for game in SHARED_SEATS:
        standings.add(game)
    ann = next(e for e in standings_pb(standings.to_json()).entrants if e.name == "ann")
    assert (ann.scored_exact, ann.scored) == (7.5 + 9, 16), "ann scored (10 + 5) / 2 and 9"
    assert ann.conceded == pytest.approx((3 + 0) / 2 + (4 + 1 + 6) / 3)


@pytest.mark.fast
def test_the_elo_cell_of_the_message_is_the_local_one() -> None:
    message = apb.EntrantStanding(score=0.6, elo=70.4, elo_low_by_deal=-12.6, elo_high_by_deal=160.2,
                                  elo_low=1.0, elo_high=2.0)
    def rating_text(e: apb.EntrantStanding) -> str:
        return row_cells(1, entrant_standing(e), "elo").rating

    assert rating_text(message) == "+70 [-13, +160]"
    assert rating_text(apb.EntrantStanding(score=1.0)) == "+∞"
    assert rating_text(apb.EntrantStanding()) == "-"



BELIEVING = [GameOutcome(index=i, deal_key=f"d{i}", seats=("ann", "bob"), side_of=(0, 1), scores=(5, 1),
                         ranking=(0, 1), winner=0, fault_seats=(), think_ms=(3.0, 3.0), decisions=(2, 2),
                         calibration=((0, Calibration(3, 12, 3.0, 6.0)),)) for i in range(2)]
"""Ann sent 3 beliefs naming 12 tiles a game (Brier 0.25, log loss 0.5 per tile); bob none."""


@pytest.mark.fast
def test_the_server_standings_carry_the_calibration_of_standings_json() -> None:
    """Each entrant's calibration arrives as standings.json has it (absent for one that sent no belief), and
    `arena status` prints it in the column `arena run` prints; `arena watch` keeps it in the table it rebuilds."""
    local = Standings()
    for game in BELIEVING:
        local.add(game)
    written = local.to_json()
    message = standings_pb(written)
    ann, bob = (next(e for e in message.entrants if e.name == name) for name in ("ann", "bob"))
    assert (ann.calibration.beliefs, ann.calibration.tiles, ann.calibration.brier, ann.calibration.log_loss) == \
        (6, 24, 0.25, 0.5)
    assert json_format.MessageToDict(ann.calibration, preserving_proto_field_name=True) == \
        {**written["entrants"][0]["calibration"], "beliefs": "6", "tiles": "24"}  # uint64 is a string in JSON
    assert not bob.HasField("calibration") and "calibration" not in written["entrants"][1]
    served = wide(standings_table(message, "the title"))
    assert served == wide(local.table("the title"))
    assert CALIBRATION_HEADER in served and "0.250 · 0.50 (6)" in served
    summaries = [apb.GameSummary(index=g.index, seats=g.seats, side_of_seat=g.side_of, deal_key=g.deal_key,
                                 result={"scores": g.scores, "ranking": g.ranking, "winner": 0})
                 for g in BELIEVING]
    assert "0.250 · 0.50 (6)" in wide(standings_from_games(summaries, message).table("the title"))


def wide(table: object) -> str:
    """A table as text on a console wide enough that no column wraps."""
    console = Console(width=250, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def test_standings_rebuilt_from_the_games_are_the_servers(tmp_path: Path) -> None:
    """The tables `arena watch` prints come from a Standings fed with the server's game summaries (in the order the
    games finished, each entrant's think time from the server's standings): the numbers are the server's own, for
    three sides (OpenSkill, conceded as a mean) as for two."""
    import json

    from arena.records.store import iter_records
    from arena.cli.server import standings_from_games
    from arena.server.events import game_summary, standings_pb
    from arena.tournament.standings import Standings, outcome_of

    entrants = "".join(f'[[bots]]\nname = "{name}"\ncommand = {json.dumps([sys.executable, str(ROOT / bot)])}\n'
                       for name, bot in (("r", "bots/python/random_bot.py"), ("g", "bots/python/greedy_bot.py"),
                                         ("s", "bots/python/random_bot.py")))
    spec = tmp_path / "t.toml"
    spec.write_text(f'name = "three"\nvariant = "block"\nplayers = 3\ngames = 2\nconcurrency = 1\n'
                    f'[options]\ntarget = 1\n{entrants}')
    done = arena("run", str(spec), "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stdout + done.stderr
    stored = list(iter_records(tmp_path / "run" / "games.jsonl"))
    server = Standings(group_size=3)
    for record in stored:  # as the server counts them: in the order they were recorded
        server.add(outcome_of(record))
    expected = server.to_json()
    rebuilt = standings_from_games([game_summary(r) for r in reversed(stored)], standings_pb(expected)).to_json()
    assert expected["rating"] == "openskill" and expected["games"] == 6
    think = [[t for e in data["entrants"] for t in (e.pop("think_ms"), e.pop("think_ms_per_decision"))]
             for data in (expected, rebuilt)]
    assert think[1] == pytest.approx(think[0], rel=1e-9)  # one sum against the sum of the games: rounding only
    assert rebuilt == expected
