"""The finals' formats, pure: the tournament file's lines of a Swiss and a knockout (and their refusal for k-player
tables), a Swiss's or a knockout's ranking as the finals keep it, deal sets in words, and the finals page of each
format listing every game as a link to its replay (rendered from the events the tournament's own rules build); a
Swiss that could not pair its next round, its games played as its schedule and why it stopped; ``arena league
finals`` printing a ranking by the finals' format."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from arena.cli.league import finals_table
from arena.league.play.finals import (
    ended_early,
    event_ranking,
    schedule_lines,
    settings_json,
    settings_of,
    started_file,
    swiss_rounds,
)
from arena.league.play.table_run import league_tournament_file, table_spec
from arena.league.rules.config import FinalsSettings, league_from_text
from arena.league.rules.errors import LeagueError
from arena.players.process import BotSpec
from arena.protocol import league_pb2 as lpb
from arena.records.run_folder import RunFolder
from arena.tournament.knockout import build_bracket
from arena.tournament.matches import SCORE, Match
from arena.tournament.rounds import Event
from arena.tournament.spec import SpecError
from arena.tournament.swiss import PairingError, pair_round, swiss_table
from arena.web.access import Access, Viewer
from arena.web.league import deal_set_words, finals_game_url, finals_html

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

NAMES = [f"b{i}-v1" for i in range(1, 6)]
SWISS = FinalsSettings(format="swiss", deal_sets=2)
DOUBLE = FinalsSettings(format="knockout", elimination="double", deal_sets=1, tiebreak_deal_sets=1)


def league(duplicate: bool = True, players: str = ""):
    return league_from_text(f'name = "x"\nvariant = "draw"\nduplicate = {str(duplicate).lower()}\n{players}')


def spec_of(config, settings: FinalsSettings, names: list[str] = NAMES):
    top = schedule_lines(config, names, list(range(len(names))), 0, settings)
    bots = [BotSpec(name=name, command=("python3", "bot.py")) for name in names]
    return top, table_spec(league_tournament_file(config, "x finals", bots, Path("finals"),
                                                  deal_sets=settings.deal_sets, top=top))


@pytest.mark.parametrize(("field", "rounds"), [(2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4), (64, 6)])
def test_a_swiss_plays_ceil_log2_of_the_field_rounds_by_default(field: int, rounds: int) -> None:
    assert swiss_rounds(field) == rounds and rounds <= field - 1


def test_the_finals_file_of_a_swiss_and_a_knockout() -> None:
    top, spec = spec_of(league(), SWISS)
    assert top == ['format = "swiss"', "rounds = 3"]
    assert (spec.format, spec.rounds, spec.games, spec.expected_games()) == ("swiss", 3, 2, 3 * 2 * 2 * 2)
    assert [bot.name for bot in spec.bots] == NAMES  # seed order: the first is seed 1
    top, spec = spec_of(league(), dataclasses.replace(SWISS, rounds=4))
    assert top[1] == "rounds = 4" and spec.expected_games() == 4 * 2 * 2 * 2
    top, spec = spec_of(league(), DOUBLE)
    assert top == ['format = "knockout"', 'elimination = "double"', "tiebreak_games = 1"]
    assert (spec.elimination, spec.tiebreak_games, spec.expected_games()) == ("double", 1, (2 * 4 + 1) * 2 * 2)
    top, spec = spec_of(league(duplicate=False), DOUBLE)  # no duplicate deals: a deal set is its rotations' games
    assert top[2] == "tiebreak_games = 2" and spec.games == 2


def test_a_k_player_field_gets_no_swiss_or_knockout() -> None:
    three = league(players="players = 3")
    with pytest.raises(LeagueError) as caught:
        schedule_lines(three, NAMES, list(range(5)), 0, SWISS)
    assert str(caught.value) == "the finals of 3 sides are a round robin (a balanced schedule): a swiss pairs two sides"
    with pytest.raises(LeagueError, match="--tables is for k-player tables"):
        schedule_lines(league(), NAMES, list(range(5)), 4, DOUBLE)


def decided(match: Match, score: tuple[float, float], games: range) -> Match:
    """``match`` won by the side with more points (a draw when equal), its games those indices."""
    winner = None if score[0] == score[1] else match.entrants[0 if score[0] > score[1] else 1]
    return dataclasses.replace(match, score=score, winner=winner, games=tuple(games), deal_sets=len(games) // 2,
                               decided_by=SCORE)


def swiss_event() -> Event:
    """Five entrants, three rounds, each pairing 2 deal sets (4 games): the lower index wins, but for a draw of
    R2-1; a bye each round."""
    rounds: list[tuple[Match, ...]] = []
    index = 0
    for _ in range(3):
        played = []
        for match in pair_round(5, rounds):
            if match.bye:
                played.append(match)
                continue
            score = (2.0, 2.0) if match.id == "R2-1" else (3.0, 1.0) if match.entrants[0] < match.entrants[1] \
                else (1.0, 3.0)
            played.append(decided(match, score, range(index, index + 4)))
            index += 4
        rounds.append(tuple(played))
    return Event("swiss", tuple(NAMES), (), tuple(rounds), swiss_table(5, rounds), None, True, None, frozenset(), (),
                 (), index)


def knockout_event() -> tuple[Event, int]:
    """Five entrants in a double elimination, every match won by the better seed (2 games each)."""
    played: dict[str, Match] = {}
    index = 0
    while not (bracket := build_bracket(5, "double", played)).finished:
        for match in bracket.next_matches():
            first_better = match.entrants[0] < match.entrants[1]
            played[match.id] = decided(match, (2.0, 0.0) if first_better else (0.0, 2.0), range(index, index + 2))
            index += 2
    event = Event("knockout", tuple(NAMES), (), (tuple(bracket.matches),), None, bracket, True, None, frozenset(),
                  (), (), index)
    return event, index


def test_a_swiss_ranks_by_its_table_with_points_and_buchholz() -> None:
    data = swiss_event().to_json()
    ranking = event_ranking(data, {name: number for number, name in enumerate(NAMES, 1)})
    table = {row["entrant"]: row for row in data["table"]}
    assert [row["version"] for row in ranking] == [row["entrant"] for row in data["table"]]
    assert [row["rank"] for row in ranking] == ["1", "2", "3", "4", "5"]  # the seed breaks the last tie
    for row in ranking:
        swiss = table[row["version"]]
        assert (row["points"], row["buchholz"], row["wins"], row["draws"], row["losses"], row["byes"]) == (
            swiss["points"], swiss["buchholz"], swiss["wins"], swiss["draws"], swiss["losses"], swiss["byes"])
        assert row["deal_sets"] == 2 * (3 - row["byes"]) and row["tied_with"] == []
    assert sum(row["points"] for row in ranking) == 3 * 2 + 3  # two pairings a round, one point each; three byes
    assert ranking[0]["version"] == "b1-v1" and ranking[0]["points"] >= 2.5


def test_a_knockout_ranks_by_placement_with_equal_places_tied() -> None:
    event, _games = knockout_event()
    ranking = event_ranking(event.to_json(), {name: number for number, name in enumerate(NAMES, 1)})
    assert [(row["rank"], row["version"]) for row in ranking][:2] == [("1", "b1-v1"), ("2", "b2-v1")]
    shared = [row for row in ranking if row["best"] != row["worst"]]
    for row in shared:
        assert row["rank"] == f'{row["best"]}–{row["worst"]}' and len(row["tied_with"]) == row["worst"] - row["best"]
    assert sorted(row["version"] for row in ranking) == NAMES and ranking[-1]["worst"] == 5


@pytest.mark.parametrize(("key", "games", "deal_sets", "words"), [
    ("0/0", 4, 4, "deal set 1 of 4"), ("2/3", 4, 4, "deal set 4 of 4"), ("W1-2/1", 2, 2, "deal set 2 of 2"),
    ("GF/2", 2, 2, "tie-break deal set 1"), ("R3-1/0", 8, 4, "game 1 of 8"), ("", 4, 4, "-"), ("odd", 4, 4, "odd")])
def test_deal_sets_in_words(key: str, games: int, deal_sets: int, words: str) -> None:
    assert deal_set_words(key, games, deal_sets) == words


def page_of(event: Event, settings: FinalsSettings, games: int) -> dict:
    """The finals' JSON as the web gives it, every game of the event recorded (two a deal set)."""
    entrants = [{"seed": seed, "version": name, "version_id": seed, "bot": name[:-3], "number": 1,
                 "team": f"team {name[:2]}"} for seed, name in enumerate(NAMES, 1)]
    data = event.to_json()
    ranking = event_ranking(data, {name: number for number, name in enumerate(NAMES, 1)})
    match_of = {index: match for match in event.matches() for index in match.games}
    results = [{"index": index, "deal_set": f"{match_of[index].id}/{(index - match_of[index].games[0]) // 2}",
                "seats": [NAMES[e] for e in match_of[index].entrants], "scores": [1, 0],
                "url": finals_game_url("x", index),
                "words": deal_set_words(f"{match_of[index].id}/{(index - match_of[index].games[0]) // 2}",
                                        settings.deal_sets, settings.deal_sets)} for index in range(games)]
    return {"league": "x", "state": "done", "field": NAMES, "frozen_at": None, "results_at": None,
            "settings": dataclasses.asdict(settings), "entrants": entrants, "deal_sets": settings.deal_sets,
            "scheduled": games, "games": games, "started_at": None, "ended_at": None, "error": "", "ranking": ranking,
            "event": data, "results": results, "commitment": "", "seed": "", "nonce": ""}


def test_the_swiss_page_shows_its_table_rounds_teams_and_links_every_game() -> None:
    event = swiss_event()
    text = finals_html(page_of(event, dataclasses.replace(SWISS, rounds=3), event.expected), Viewer(Access.PUBLIC))
    assert 'id="finals-format">Swiss, 3 rounds, 2 deal sets a pairing<' in text
    for index in range(event.expected):
        assert text.count(f'href="/leagues/x/finals/games/{index}"') == 2  # in its round and in the games' list
    assert [f"round-{n}" for n in (1, 2, 3)] == re.findall(r'<table id="(round-\d)"', text)
    assert "team b1" in text and '<th class="">Buchholz</th>' in text and "deal set 2 of 2" in text
    assert "0/0" not in text and ">draw<" in text  # R2-1 drawn


def test_the_knockout_page_draws_its_brackets_and_links_every_game() -> None:
    event, games = knockout_event()
    text = finals_html(page_of(event, DOUBLE, games), Viewer(Access.PUBLIC))
    assert 'id="finals-format">knockout (double elimination), 1 deal set a match; a tie: up to 1 tie-break deal ' \
           'set, then the better seed<' in text
    assert all(f'id="bracket-{part}"' in text for part in ("w", "l", "gf"))
    assert "Winners&#x27; bracket" in text and "grand final" in text
    for index in range(games):
        assert text.count(f'href="/leagues/x/finals/games/{index}"') == 2
    assert text.count('class="match"') == len([m for m in event.matches()])


def test_the_finals_state_keeps_what_a_resumed_run_plays_again() -> None:
    """The settings go into the finals' JSON when they start and come back from it unchanged (a server restarted
    mid-finals plays the same event whatever its league file says now); finals started before the state held a
    format are a round robin."""
    for settings in (SWISS, DOUBLE, FinalsSettings(tables=7)):
        assert settings_of(json.loads(json.dumps(settings_json(settings)))) == settings
    assert settings_of({"state": "playing", "deal_sets": 4, "tables": 0, "scheduled": 24}) == FinalsSettings(
        deal_sets=4)


def stopped_swiss() -> Event:
    """Ten entrants, nine rounds planned, every pairing drawn (one deal set, two games): each round is paired so
    that the next can be, yet after round 7 those that have not met leave no round 8 without a repeat."""
    rounds: list[tuple[Match, ...]] = []
    index, stopped = 0, ""
    while len(rounds) < 9:
        try:
            pairings = pair_round(10, rounds, 9 - len(rounds) - 1)
        except PairingError as error:
            stopped = str(error)
            break
        rounds.append(tuple(decided(match, (1.0, 1.0), range(index + 2 * n, index + 2 * n + 2))
                            for n, match in enumerate(pairings)))
        index += 2 * len(pairings)
    names = tuple(f"b{i}-v1" for i in range(10))
    return Event("swiss", names, (), tuple(rounds), swiss_table(10, rounds), None, True, None, frozenset(), (), (),
                 9 * 5 * 2, stopped)


def test_a_swiss_that_stopped_early_is_scheduled_as_the_games_it_played_and_says_why() -> None:
    why = "round 8 of 10 entrants cannot be paired without two entrants meeting again; play fewer rounds"
    assert ended_early(stopped_swiss().to_json()) == {"stopped": why, "stopped_after": 7, "scheduled": 7 * 5 * 2}
    assert ended_early(swiss_event().to_json()) == {} and ended_early(knockout_event()[0].to_json()) == {}
    event = swiss_event()
    page = {**page_of(event, dataclasses.replace(SWISS, rounds=3), event.expected), "stopped": "round 3 cannot be "
            "paired", "stopped_after": 2}
    assert f'id="finals-schedule">{event.expected} games (the event stopped after round 2: round 3 cannot be ' \
           'paired)<' in finals_html(page, Viewer(Access.PUBLIC))
    unstopped = finals_html(page_of(event, dataclasses.replace(SWISS, rounds=3), event.expected),
                            Viewer(Access.PUBLIC))
    assert f'id="finals-schedule">{event.expected} games<' in unstopped and "stopped" not in unstopped


def printed(reply: lpb.FinalsResponse) -> str:
    """What ``arena league finals`` prints of the reply's ranking, as one line of words (the table's lines out)."""
    console = Console(record=True, width=200)
    table = finals_table(reply)
    assert table is not None
    console.print(table)
    return " ".join(re.sub("[\u2500-\u257f]", " ", console.export_text()).split())


def test_the_finals_command_prints_the_ranking_by_the_finals_format() -> None:
    """A knockout's and a Swiss's ranking carry no rating (their rows' ratings and intervals are all 0): the format,
    not the missing intervals, says how they are printed; a round robin's has its fit."""
    placed = [lpb.FinalsRank(rank="1", version="b1-v1", version_id=1, deal_sets=3),
              lpb.FinalsRank(rank="2–3", version="b2-v1", version_id=2, deal_sets=2, tied_with=["b3-v1"]),
              lpb.FinalsRank(rank="2–3", version="b3-v1", version_id=3, deal_sets=1, tied_with=["b2-v1"])]
    knockout = printed(lpb.FinalsResponse(state="done", format="knockout", ranking=placed))
    assert "ranked by the knockout's placements (versions out in the same round placed equal)" in knockout
    assert "2–3 b2-v1 (2) 2 b3-v1" in knockout and "interval" not in knockout and "Swiss" not in knockout
    swiss = printed(lpb.FinalsResponse(state="done", format="swiss", ranking=placed))
    assert "ranked by the Swiss table (points, Buchholz, Sonneborn-Berger, then seed)" in swiss
    fitted = [lpb.FinalsRank(rank="1", version="b1-v1", version_id=1, rating=42.0, rating_low=-10.0,
                             rating_high=94.0, deal_sets=4)]
    for fmt in ("round_robin", ""):  # "": a server that names no format ran a round robin
        fit = printed(lpb.FinalsResponse(state="done", format=fmt, ranking=fitted))
        assert "ranked by the maximum-likelihood fit (Elo, 95% interval)" in fit and "1 b1-v1 (1) +42 -10 to +94 4" in fit
    assert finals_table(lpb.FinalsResponse(state="playing", format="knockout")) is None


def test_a_resumed_finals_plays_the_file_it_started_with_seating_the_field_in_seed_order(tmp_path: Path) -> None:
    """The run folder's copy of the finals' file, not the league file as it reads now; refused when it cannot be
    read or seats another field or order (the finals then fail with that line, and the server goes on)."""
    run = RunFolder(tmp_path / "finals")
    with pytest.raises(SpecError, match="cannot read the tournament file the finals started with"):
        started_file(run, NAMES)
    run.path.mkdir()
    top, _spec = spec_of(league(), DOUBLE)
    bots = [BotSpec(name=name, command=("python3", "bot.py")) for name in NAMES]
    text = league_tournament_file(league(), "x finals", bots, run.path, deal_sets=1, top=top)
    run.spec_copy.write_text(text)
    spec, again = started_file(run, NAMES)
    assert again == text and [bot.name for bot in spec.bots] == NAMES and spec.elimination == "double"
    with pytest.raises(SpecError) as refused:
        started_file(run, list(reversed(NAMES)))
    assert str(refused.value) == (f"{run.spec_copy}: the finals' run seats {', '.join(NAMES)}, not the field in seed "
                                  f"order ({', '.join(reversed(NAMES))})")
