"""A Swiss or knockout event on a tournament's page, from known data and without a server: the section the page and
its JSON carry (the Swiss table and rounds, the placements and bracket, drawn by the code the league's finals use),
every game its viewer may open a link and no other game named, names escaped; and the event rebuilt from the record
file only when a game was added to it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from arena.records.format import to_json_line
from arena.records.run_folder import RunFolder, SeedCommitment
from arena.server.tournaments import Tournament
from arena.tournament.knockout import build_bracket
from arena.tournament.matches import SCORE, Match
from arena.tournament.rounds import Event, event_from_records, wave_schedule
from arena.tournament.spec import spec_from_dict
from arena.tournament.swiss import pair_round, swiss_table
from arena.web import data
from arena.web.data import TournamentEvent
from arena.web.tournament_page import event_section
from support.records import played

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

NAMES = ("a<b", "beta", "gamma", "delta", "eps")


def decided(match: Match, first_wins: bool, games: range) -> Match:
    score = (2.0, 0.0) if first_wins else (0.0, 2.0)
    return dataclasses.replace(match, score=score, winner=match.entrants[0 if first_wins else 1], games=tuple(games),
                               deal_sets=1, decided_by=SCORE)


def swiss_event() -> Event:
    """Five entrants, two rounds (a bye each), each pairing two games won by the better seed."""
    rounds: list[tuple[Match, ...]] = []
    index = 0
    for _ in range(2):
        played_round = []
        for match in pair_round(5, rounds):
            if not match.bye:
                match = decided(match, match.entrants[0] < match.entrants[1], range(index, index + 2))
                index += 2
            played_round.append(match)
        rounds.append(tuple(played_round))
    return Event("swiss", NAMES, (), tuple(rounds), swiss_table(5, rounds), None, True, None, frozenset(), (), (), 8)


def knockout_event(elimination: str, finished: bool = True) -> Event:
    """Five entrants, every match won by the better seed (two games each); unfinished: the grand final still to
    play."""
    done: dict[str, Match] = {}
    index = 0
    while not (bracket := build_bracket(5, elimination, done)).finished:
        playing = bracket.next_matches()
        if not finished and any(m.id.startswith("GF") for m in playing):
            break
        for match in playing:
            done[match.id] = decided(match, match.entrants[0] < match.entrants[1], range(index, index + 2))
            index += 2
    return Event("knockout", NAMES, (), (tuple(bracket.matches),), None, bracket, bracket.finished, None,
                 frozenset(), (), (), 36)


def test_a_swiss_section_links_every_game_its_viewer_may_open_and_names_no_other() -> None:
    event = swiss_event().to_json()
    section = event_section("t 1", event, released=frozenset(range(8)) - {6, 7})
    assert re.findall(r'<table id="([\w-]+)"', section) == ["swiss-table", "round-1", "round-2"]
    assert sorted(map(int, re.findall(r'href="/t/t%201/games/(\d+)"', section))) == [0, 1, 2, 3, 4, 5]
    assert "game 6" not in section and "game 7" not in section  # its deal set still being played: not even named
    # its table row, and in each of its two pairings as a side and as the winner (the first seed wins)
    assert section.count('href="/t/t%201/entrants/a%3Cb">a&lt;b</a>') == 1 + 2 + 2
    rows = re.findall(r'<tr><td class="">(\d)</td><td class="l"><a href="[^"]+">([^<]+)</a></td><td class="">([\d.]+)<',
                      section)
    assert [(rank, name, points) for rank, name, points in rows] == [
        (str(r["rank"]), r["entrant"].replace("<", "&lt;"), f'{r["points"]:g}') for r in event["table"]]
    assert section.count(">bye<") == 2 * 2 and section.count('<td class="l">R1-') == 3  # score and winner


def test_a_knockout_section_draws_its_brackets_and_places_once_finished() -> None:
    for elimination, brackets, shown in (("double", ["w", "l", "gf"], ["1", "2", "3", "4", "5"]),
                                         ("single", ["w"], ["1", "2", "3–4", "3–4", "5"])):
        event = knockout_event(elimination)
        section = event_section("t", event.to_json(), released=frozenset(range(100)))
        assert re.findall(r'id="bracket-(\w+)"', section) == brackets
        assert section.count('class="match"') == len(event.matches())
        games = sorted(index for m in event.matches() for index in m.games)
        assert sorted(map(int, re.findall(r'href="/t/t/games/(\d+)"', section))) == games
        places = re.findall(r'<tr><td class="">([\d–]+)</td><td class="l"><a href="/t/t/entrants/[^"]+">', section)
        assert places == shown, elimination
    assert "Grand final" not in section and "<h3>Bracket</h3>" in section
    unfinished = event_section("t", knockout_event("double", finished=False).to_json(), released=frozenset(range(100)))
    assert "Placements" not in unfinished and "GF · to play" in unfinished and "Grand final" in unfinished


def test_a_round_robin_has_no_section() -> None:
    assert event_section("t", None, frozenset()) == ""


def test_the_event_is_rebuilt_only_when_a_game_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Swiss of two entrants, one pairing of one deal set (two games): the event is rebuilt at the first look
    and after each game added, never for a look that finds nothing new; a game is released with its deal set."""
    builds: list[int] = []

    def counted(*args, **kwargs):
        builds.append(1)
        return event_from_records(*args, **kwargs)

    monkeypatch.setattr(data, "event_from_records", counted)
    spec = spec_from_dict({"variant": "block", "options": {"target": 1}, "format": "swiss", "rounds": 1, "games": 1,
                           "bots": [{"name": n, "command": "builtin:random"} for n in ("north", "south")]})
    RunFolder(tmp_path).publish(SeedCommitment("master", "00ff"))
    t = Tournament(id="t", folder=tmp_path, name="t", variant="block", players=2, entrants=["north", "south"],
                   games_total=2, group_size=2, spec=spec)
    wave = event_from_records(spec, "master", []).pending
    assert wave is not None
    scheduled = list(wave_schedule(spec, "master", wave))
    cache = TournamentEvent()

    def look() -> tuple[dict, frozenset[int]]:
        event, released = cache.refresh(t)
        assert event is not None
        return event, released

    event, released = look()
    assert (len(builds), released, event["rounds"][0][0]["decided_by"]) == (1, frozenset(), "")
    look()
    assert len(builds) == 1
    for game in scheduled:
        record = played("block", game.seed, game.index, options={"target": 1})
        record.update(seats=[spec.bots[e].name for e in game.seats], seed=game.seed, dealKey=game.deal_key,
                      rotation=game.rotation)
        with open(RunFolder(tmp_path).records, "a") as f:
            f.write(to_json_line(record) + "\n")
        event, released = look()
        look()
        assert len(builds) == 2 + game.index
        assert released == (frozenset() if game.index == 0 else frozenset({0, 1}))  # with its deal set only
    assert released == frozenset({0, 1}) and event["finished"] and event["rounds"][0][0]["games"] == [0, 1]
    assert event["rounds"][0][0]["decided_by"] == "score"
