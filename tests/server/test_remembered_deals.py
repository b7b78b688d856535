"""A bot outside the arena never sees a deal twice: a dial-in bot that remembers every hand it was dealt or shown
(``tests/bots/remembering_bot.py``, on its author's machine) plays a tournament that asks for duplicate deals and
a league's ladder, through a real ``arena serve``; it recognises no deal, every game it played had its own, and
whoever asked for duplicate deals is told in one line that they are off. Its ladder tables are rated game by game.

With duplicate deals it would recognise the deal of every second rotation (seats swapped, its hand the one its
opponent held): turning :func:`arena.tournament.spec.duplicate_off_notice` off makes both tests fail."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.rules.config import league_from_dict
from arena.league.rules.lifecycle import DONE
from arena.league.rules.model import ONLINE
from arena.league.storage.db import open_database, sqlite_url
from arena.league.play.finals import schedule_lines
from arena.league.rules.rating import recompute
from arena.league.play.table_run import league_tournament_file, table_spec
from arena.players.process import BotSpec
from arena.protocol import arena_pb2 as apb
from arena.protocol import league_pb2 as lpb
from arena.tournament.spec import spec_from_dict
from support.dial_in import connect, dial_in_entry, write_token
from support.league import DIAL_IN_LEAGUE, League, bot_folder, league_in, rated_with_seats, tables_folder
from support.paths import ROOT
from support.servers import FINISHED, RANDOM_BOT, Server, named, random_bot, records, registry, tournament
from support.waiting import wait_for

REMEMBERING_BOT = ROOT / "tests" / "bots" / "remembering_bot.py"
GENEROUS_S = 240
"""A deadline for what happens on a busy machine (two cores shared with other tests)."""
LADDER_S = 600
"""Generous: every table starts a sandboxed bot and plays its games, on a busy 2-core machine."""
NOTICE = ("duplicate deals are off: bot '{name}' dials in from its author's machine, which would remember every "
          "deal; each game gets a fresh deal")


def bot_lines(log: Path, kind: str) -> list[dict]:
    """The remembering bot's ``kind`` lines (``DEALT``, ``RECOGNISED``), each as its JSON."""
    if not log.exists():
        return []
    return [json.loads(line.split(" ", 1)[1]) for line in log.read_text().splitlines() if line.startswith(kind + " ")]


def deals(games: list[dict]) -> list[str]:
    """Each game's deal of its first round, every hand, as one text."""
    return [json.dumps(game["rounds"][0]["deal"], sort_keys=True) for game in games]


def assert_every_game_had_its_own_deal(games: list[dict], log: Path) -> None:
    """The bot recognised no deal, and was dealt a distinct hand in every round it played; distinct seeds, deal keys
    and deals in the records."""
    assert bot_lines(log, "RECOGNISED") == []
    dealt = bot_lines(log, "DEALT")
    assert {line["match"] for line in dealt} == {game["matchId"] for game in games}
    assert len({json.dumps(line["hand"]) for line in dealt}) == len(dealt)
    assert len({game["seed"] for game in games}) == len(games)
    assert len({(game["tournament"], game["dealKey"]) for game in games}) == len(games)  # a key is its run's
    assert len(set(deals(games))) == len(games)


@pytest.mark.fast
def test_a_dial_in_bot_gets_fresh_deals_in_a_duplicate() -> None:
    entries = [{"name": "alpha", "command": "builtin:random"},
               {"name": "lab-b", "dial_in": True, "token_sha256": "0" * 64}]
    asked = spec_from_dict({"variant": "block", "games": 3, "bots": entries})  # duplicate by default
    assert (asked.duplicate, asked.games, asked.duplicate_off) == (False, 6, NOTICE.format(name="lab-b"))
    schedule = asked.schedule("m")
    assert [(g.seed, g.seats, g.rotation) for g in schedule] == [
        (f"m/0/{g}", (0, 1) if g % 2 == 0 else (1, 0), g % 2) for g in range(6)]
    assert schedule.group_size == 1 and schedule.processes_per_entrant() == 1
    by_address = spec_from_dict({"variant": "block", "games": 3, "bots": [
        entries[0], {"name": "remote", "address": "127.0.0.1:50051"}]})
    assert (by_address.duplicate, by_address.games) == (False, 6)
    assert by_address.duplicate_off == ("duplicate deals are off: bot 'remote' is played at an address outside the "
                                        "arena, which would remember every deal; each game gets a fresh deal")
    unasked = spec_from_dict({"variant": "block", "games": 3, "duplicate": False, "bots": entries})
    assert (unasked.duplicate, unasked.games, unasked.duplicate_off) == (False, 3, "")
    started = spec_from_dict({"variant": "block", "games": 3, "bots": [entries[0], {**entries[0], "name": "beta"}]})
    assert (started.duplicate, started.games, started.duplicate_off) == (True, 3, "")


@pytest.mark.parametrize("variant, players, seats", [("block", 2, 2), ("block", 3, 3), ("la_plaza_teams", 4, 2)])
@pytest.mark.fast
def test_a_dial_in_version_gets_as_many_fresh_league_games(
        tmp_path: Path, variant: str, players: int, seats: int) -> None:
    config = league_from_dict({"name": "test", "variant": variant, "players": players, "dial_in": True})
    started = [BotSpec(name=f"v{n}", command=("builtin:random",)) for n in range(seats + 1)]
    dialing = BotSpec(name="home-v1", dial_in=True, token_sha256="0" * 64)
    table = started[:seats]
    field = [dialing, *started[1:]]
    finals_lines = schedule_lines(config, [bot.name for bot in field], list(range(len(field))), 0)
    for bots, deal_sets, top in [(table, 1, ()), ([dialing, *table[1:]], 1, ()),
                                 ([dialing, *started[1:]], 3, finals_lines)]:
        spec = table_spec(league_tournament_file(config, "t", bots, tmp_path, deal_sets=deal_sets, top=top))
        schedule = spec.schedule("m")
        games = list(schedule)
        fresh = any(bot.dial_in for bot in bots)
        assert schedule.group_size == (1 if fresh else seats)
        assert len(games) == schedule.table_count() * deal_sets * seats  # as many games either way
        assert len({game.seed for game in games}) == (len(games) if fresh else deal_sets * schedule.table_count())
        assert spec.duplicate_off == (NOTICE.format(name="home-v1") if fresh else "")


def test_run_says_duplicates_are_off_for_a_bot_by_address(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('variant = "block"\n[[bots]]\nname = "alpha"\ncommand = "builtin:random"\n'
                    '[[bots]]\nname = "remote"\naddress = "127.0.0.1:1"\n[time]\nstartup_ms = 1\n')
    result = subprocess.run([sys.executable, "-m", "arena", "run", str(path), "--out", str(tmp_path / "run")],
                            capture_output=True, text=True, cwd=ROOT, timeout=GENEROUS_S)
    assert result.stdout.splitlines()[0] == ("note: duplicate deals are off: bot 'remote' is played at an address "
                                             "outside the arena, which would remember every deal; each game gets a "
                                             "fresh deal")


def test_a_remembering_bot_recognises_no_duplicate_deal(tmp_path: Path) -> None:
    token_file, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "remembered")))
    log = tmp_path / "remembering.log"
    bot = None
    try:
        path = tmp_path / "duplicate.toml"
        path.write_text(tournament(games=4, duplicate=True, bots=named("alpha") + dial_in_entry("lab-b", token),
                                   extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        submitted = server.cli("submit", str(path))
        assert submitted.returncode == 0, submitted.stderr
        first, note, _follow = submitted.stdout.splitlines()
        assert first.endswith("(block, 8 games), queued") or first.endswith("(block, 8 games), running"), first
        assert note == "note: " + NOTICE.format(name="lab-b")
        tournament_id = first.split()[1].rstrip(":")
        server.wait_line("^" + re.escape(f"arena: tournament duplicate deals off (id={tournament_id} note="
                                         f"{NOTICE.format(name='lab-b')})") + "$", GENEROUS_S)
        bot = subprocess.Popen([sys.executable, str(REMEMBERING_BOT), "--log", str(log), "--connect",
                                server.address, "--bot", "lab-b", "--token-file", str(token_file)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        stub = server.stub()

        def ended() -> bool:
            info = stub.GetStandings(apb.GetStandingsRequest(id=tournament_id), timeout=30).tournament
            return info.state not in (apb.TOURNAMENT_STATE_QUEUED, apb.TOURNAMENT_STATE_RUNNING)

        wait_for(ended, GENEROUS_S * 2, "the tournament to end")
        reply = stub.GetStandings(apb.GetStandingsRequest(id=tournament_id), timeout=30)
        assert reply.tournament.state == FINISHED, reply.tournament.error
        _, err = bot.communicate(timeout=GENEROUS_S)
        assert bot.returncode == 0, err
        folder = server.data / "tournaments" / tournament_id
        games = records(folder)
        assert len(games) == 8 and all(not game.get("faults") for game in games)
        assert sorted(game["seats"][0] for game in games) == ["alpha"] * 4 + ["lab-b"] * 4  # seats still rotate
        assert_every_game_had_its_own_deal(games, log)
        assert json.loads((folder / "standings.json").read_text())["group_size"] == 1  # each game its own unit
    finally:
        if bot is not None and bot.poll() is None:
            bot.kill()
            bot.communicate()
        server.stop()


TABLES = 3
"""Tables the dial-in version plays before the test looks (two games each)."""


@pytest.fixture
def league(tmp_path: Path):
    league = league_in(tmp_path, DIAL_IN_LEAGUE)
    yield league
    league.server.stop()


def test_a_remembering_bot_recognises_no_ladder_deal(league: League, tmp_path: Path) -> None:
    for author in ("lab-a", "home"):
        league.add_author(author)
    league.upload("home", bot_folder(tmp_path / "random-bot", RANDOM_BOT), "random")
    assert league.settled(league.token("home"), "random").state == lpb.VERSION_STATE_READY
    token_file = tmp_path / "lab-a-bot.token"
    added = league.league("dial-in", "--bot", "remembering", "--bot-token-file", str(token_file),
                          token=league.tokens["lab-a"])
    assert added.returncode == 0, added.stderr
    (version,) = league.versions(league.token("lab-a"))
    log = tmp_path / "remembering.log"
    relay = connect(league.server.address, "remembering-v1", token_file, sys.executable, str(REMEMBERING_BOT),
                    "--log", str(log))
    try:
        database = open_database(sqlite_url(league.root / "data"))
        league_id = database.league("test").id

        def played() -> bool:
            done = [t for t in database.tables_in(league_id, (DONE,)) if version.id in t.versions]
            return len(done) >= TABLES and relay.poll() is None

        wait_for(played, LADDER_S, f"the dial-in version to play {TABLES} tables")
        done = [t for t in database.tables_in(league_id, (DONE,)) if version.id in t.versions]
    finally:
        relay.kill()
        relay.communicate()
        league.server.stop()  # no table writes while its records are read
    assert len(done) >= TABLES
    rated = [t for t in database.rated_tables(league_id) if version.id in t.versions]  # the server is stopped
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in database.ratings(league_id, ONLINE)}
    assert [t.single_games for t in rated] == [True] * len(rated)  # each game rated as a result of its own
    assert stored[version.id][2] == 2 * len(rated) and stored == recompute(rated_with_seats(database, league_id))
    ended = {line["match"] for line in bot_lines(log, "DEALT")}
    games = [game for run in tables_folder(league).iterdir() if (run / "games.jsonl").exists()
             for game in records(run) if game["matchId"] in ended]  # not a game the relay's kill cut short
    assert len(games) >= 2 * len(done)
    assert_every_game_had_its_own_deal(games, log)
    for table in done:
        run = tables_folder(league) / str(table.id)
        assert json.loads((run / "standings.json").read_text())["group_size"] == 1
        assert sorted(game.get("rotation", 0) for game in records(run)) == [0, 1]  # both seats, each its own deal
