"""The league's page data (arena/league/play/pages.py) on known tables, on SQLite and PostgreSQL: a bot's rating history
ends exactly at the ratings the database holds and is read in the same number of queries however many tables there
are; its results by opponent and by seat count what was played; a table's game is shown only once the table is
done; the finals' page lists the games of complete deal sets only, and neither their ranking nor their scores before
the league's timeline publishes them; the finals' seed is never read before the finals ended and their run folder
revealed it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
import trio

from arena.league.clock import utc_now
from arena.league.rules.config import league_from_dict
from arena.league.rules.model import ONLINE, Seat
from arena.league.storage.db import AsyncDatabase, Database
from arena.league.rules.errors import NotFound, StateError
from arena.league.play.finals import Finals
from arena.league.play.pages import FinalsPage, bot_history, finals_page, finished_table_game
from arena.league.intake.pipeline import Served
from arena.league.rules.rating import deal_set_totals, rate_deal_set
from arena.league.core import LeagueCore
from arena.league.play.table_run import FINALS, RECORD
from arena.records.run_folder import RunFolder, SeedCommitment, commitment_of
from support.league import a_bot, database, database_url, league  # noqa: F401 - the fixtures, on both databases
from support.records import run_of, won_by
from support.charts import path_xs
from arena.web.league import history_json, rating_chart


def versions_of(database: Database, league_id: int, names: str) -> dict[str, int]:
    found = {}
    for name in names:
        bot = a_bot(database, league_id, f"author-{name}", name)
        found[name] = database.add_version(bot.id, (name.encode().hex() * 64)[:64])[0].id
    return found


def play(database: Database, league_id: int, sides: list[int], games: list[list[tuple[int, float]]]) -> int:
    """A done table of these versions with these games (per seat its version and points), rated as the ladder
    rates it; its id."""
    table = database.queue_tables(league_id, [(sides, "test")])[0]
    played = [(str(key), [Seat(version, 0, points) for version, points in seats]) for key, seats in enumerate(games)]
    totals = deal_set_totals([seats for _, seats in played], sides)
    assert database.finish_table(table.id, RECORD.format(id=table.id), played,
                                 lambda before: rate_deal_set(before, totals))
    return table.id


def counted(database: Database, call) -> tuple[object, int]:
    statements: list[str] = []

    def count(_connection, _cursor, statement, *_rest) -> None:
        statements.append(statement)

    sa.event.listen(database.engine, "before_cursor_execute", count)
    try:
        return call(), len(statements)
    finally:
        sa.event.remove(database.engine, "before_cursor_execute", count)


def test_a_bots_history_loads_in_fixed_queries(database: Database, league) -> None:
    v = versions_of(database, league.id, "abc")
    a, b, c = v["a"], v["b"], v["c"]
    bot_a = database.bot(league.id, "a").id
    a2 = database.add_version(bot_a, "f" * 64)[0].id  # a's second version
    play(database, league.id, [a, b], [[(a, 1.0), (b, 0.0)], [(b, 0.5), (a, 0.5)]])  # a wins the deal set
    play(database, league.id, [b, c], [[(b, 1.0), (c, 0.0)], [(c, 1.0), (b, 0.0)]])  # not a's
    first, queries = counted(database, lambda: bot_history(database, league.id, bot_a))
    play(database, league.id, [c, a], [[(c, 0.5), (a, 0.5)], [(a, 0.5), (c, 0.5)]])  # a tie
    play(database, league.id, [a2, b], [[(a2, 0.0), (b, 1.0)], [(b, 1.0), (a2, 0.0)]])  # a-v2 loses
    history, more = counted(database, lambda: bot_history(database, league.id, bot_a))
    assert queries == more == 6 and len(first.recent) == 2

    stored = {r.version_id: (r.mu, r.sigma) for r in database.ratings(league.id, ONLINE)}
    assert {name: [p.table_id for p in points] for name, points in history.ratings.items()} == {
        "a-v1": [1, 3], "a-v2": [4]}
    assert (history.ratings["a-v1"][-1].mu, history.ratings["a-v1"][-1].sigma) == stored[a]
    assert (history.ratings["a-v2"][-1].mu, history.ratings["a-v2"][-1].sigma) == stored[a2]
    assert {name: (t.played, t.won, t.drawn, t.lost, t.points) for name, t in history.by_opponent.items()} == {
        "b-v1": (2, 1, 0, 1, 1.5), "c-v1": (1, 0, 1, 0, 1.0)}
    assert {seat: (t.played, t.won, t.drawn, t.lost, t.points) for seat, t in history.by_seat.items()} == {
        0: (3, 1, 1, 1, 1.5), 1: (3, 0, 2, 1, 1.0)}
    assert [(g.table_id, g.game_key, g.seats) for g in history.recent] == [
        (4, "1", ["b-v1", "a-v2"]), (4, "0", ["a-v2", "b-v1"]), (3, "1", ["a-v1", "c-v1"]),
        (3, "0", ["c-v1", "a-v1"]), (1, "1", ["b-v1", "a-v1"]), (1, "0", ["a-v1", "b-v1"])]


def test_the_rating_chart_follows_the_rating_order_not_the_tables_numbers(database: Database, league) -> None:
    """Three tables queued 1, 2, 3 end (and are rated) 3, 1, 2: the bot's points keep the rating order, each with its
    table's sequence and the bot's count of deal sets, and the chart's line only moves right."""
    v = versions_of(database, league.id, "ab")
    tables = database.queue_tables(league.id, [([v["a"], v["b"]], "test")] * 3)
    games = [[(v["a"], 1.0), (v["b"], 0.0)], [(v["b"], 0.0), (v["a"], 1.0)]]
    for table in (tables[2], tables[0], tables[1]):
        played = [(str(k), [Seat(version, 0, points) for version, points in seats]) for k, seats in enumerate(games)]
        totals = deal_set_totals([seats for _, seats in played], [v["a"], v["b"]])
        assert database.finish_table(table.id, RECORD.format(id=table.id), played,
                                     lambda before, totals=totals: rate_deal_set(before, totals))
    history = bot_history(database, league.id, database.bot(league.id, "a").id)
    points = history.ratings["a-v1"]
    assert [(p.table_id, p.sequence, p.deal_set) for p in points] == [
        (tables[2].id, 1, 1), (tables[0].id, 2, 2), (tables[1].id, 3, 3)]
    chart = rating_chart(history_json(history, "ladder")["ratings"])
    assert path_xs(chart, "a-v1") == sorted(set(path_xs(chart, "a-v1"))) and len(path_xs(chart, "a-v1")) == 3


def test_a_tables_game_is_shown_only_once_the_table_is_done(database: Database, league, tmp_path: Path) -> None:
    v = versions_of(database, league.id, "ab")
    queued = database.queue_tables(league.id, [([v["a"], v["b"]], "test")])[0]
    playing = database.start_table(database.queue_tables(league.id, [([v["a"], v["b"]], "test")])[0].id)
    for table in (queued, playing):
        with pytest.raises(StateError, match=f"table {table.id} is {table.state}: its games are shown once it is done"):
            finished_table_game(database, tmp_path, league.id, table.id, "0")
    other = database.ensure_league("other", "Other", "draw")
    with pytest.raises(NotFound, match=f"no table number {queued.id} in this league"):
        finished_table_game(database, tmp_path, other.id, queued.id, "0")
    with pytest.raises(NotFound, match="no table number 99"):
        finished_table_game(database, tmp_path, league.id, 99, "0")


def test_the_finals_seed_shows_once_revealed(database: Database, league, tmp_path: Path) -> None:
    v = versions_of(database, league.id, "ab")
    folder = tmp_path / "finals"
    assert finals_page(database, league.id, folder).state == "not frozen"
    database.freeze(league.id, [v["a"], v["b"]])
    page = finals_page(database, league.id, folder)
    assert (page.state, page.field, page.commitment, page.seed) == ("frozen", ["a-v1", "b-v1"], "", "")

    folder.mkdir()
    run = RunFolder(folder)
    seed = SeedCommitment("12345678987654321", "ab" * 16)
    run.publish(seed)  # the run started: the commitment is public, the seed secret
    database.set_finals(league.id, {"state": "playing", "deal_sets": 1, "tables": 0, "scheduled": 2,
                                    "started_at": 1.0})
    page = finals_page(database, league.id, folder)
    assert (page.state, page.commitment, page.seed, page.nonce) == ("playing", seed.commitment, "", "")
    run.reveal(seed)  # revealed on disk, the secret not yet removed: still not shown
    database.set_finals(league.id, {"state": "done", "deal_sets": 1, "tables": 0, "scheduled": 2,
                                    "started_at": 1.0, "ended_at": 2.0, "ranking": []})
    assert finals_page(database, league.id, folder).seed == ""
    run.secret_file.unlink()
    database.set_finals(league.id, {"state": "playing", "deal_sets": 1, "tables": 0, "scheduled": 2,
                                    "started_at": 1.0})
    assert finals_page(database, league.id, folder).seed == ""  # the finals' own state says not ended yet
    database.set_finals(league.id, {"state": "done", "deal_sets": 1, "tables": 0, "scheduled": 2,
                                    "started_at": 1.0, "ended_at": 2.0, "ranking": []})
    page = finals_page(database, league.id, folder)
    assert (page.seed, page.nonce) == (seed.seed, seed.nonce)
    assert commitment_of(page.seed, page.nonce) == page.commitment


def served_finals_page(database: Database, league_id: int, folder: Path, duplicate: bool, **keys: object
                       ) -> FinalsPage:
    """The finals' page as the server's league core gives it (its finals' run folder ``folder``), for a league of
    two players with or without duplicate deals (and the league file's other ``keys``)."""
    served = Served(league_from_dict({"name": "ladder", "variant": "block", "duplicate": duplicate, **keys}),
                    league_id)
    finals = Finals(AsyncDatabase(database), served, folder.parent, lambda version: None, None)
    assert finals.run_folder == folder
    core = LeagueCore(AsyncDatabase(database), None, None, {"ladder": served}, None, finals={"ladder": finals})
    return trio.run(core.finals_page, "ladder")


def test_the_finals_page_lists_complete_deal_sets_only(database: Database, league, tmp_path: Path) -> None:
    """Deal set 0's two rotations are recorded, deal set 1's second is not yet: none of deal set 1 is listed (its
    other rotation deals the same tiles), unless the league plays without duplicate deals (each game a deal set)."""
    v = versions_of(database, league.id, "ab")
    database.freeze(league.id, [v["a"], v["b"]])
    database.set_finals(league.id, {"state": "playing", "deal_sets": 2, "tables": 0, "scheduled": 4,
                                    "started_at": 1.0})
    games = [won_by("a-v1", "b-v1", "0", 0), won_by("b-v1", "a-v1", "0", 1), won_by("a-v1", "b-v1", "1", 2)]
    folder = run_of(tmp_path / FINALS, games)
    shown = [(game["index"], game["deal_set"], game["seats"])
             for game in served_finals_page(database, league.id, folder, duplicate=True).results]
    assert shown == [(0, "0", games[0]["seats"]), (1, "0", games[1]["seats"])]
    without = served_finals_page(database, league.id, folder, duplicate=False).results
    assert [game["index"] for game in without] == [0, 1, 2]


def test_the_finals_page_withholds_ranking_and_scores_until_the_timeline_publishes_them(
        database: Database, league, tmp_path: Path) -> None:
    """Ended finals: before the timeline's ``results`` a spectator sees neither their ranking nor a game's scores,
    only when they are published; from that moment, both."""
    v = versions_of(database, league.id, "ab")
    database.freeze(league.id, [v["a"], v["b"]])
    ranking = [{"rank": "1", "version": "a-v1", "version_id": v["a"], "rating": 10.0, "low": 0.0, "high": 20.0,
                "deal_sets": 1, "tied_with": []}]
    database.set_finals(league.id, {"state": "done", "deal_sets": 1, "tables": 0, "scheduled": 2, "group_size": 2,
                                    "started_at": 1.0, "ended_at": 2.0, "ranking": ranking})
    folder = run_of(tmp_path / FINALS, [won_by("a-v1", "b-v1", "0", 0), won_by("a-v1", "b-v1", "0", 1)])
    later = utc_now() + timedelta(hours=1)
    withheld = served_finals_page(database, league.id, folder, True, timeline={"results": later})
    assert (withheld.state, withheld.ranking, withheld.results) == ("done", [], [])
    assert withheld.results_at == later.timestamp()
    published = served_finals_page(database, league.id, folder, True,
                                   timeline={"results": utc_now() - timedelta(seconds=1)})
    assert published.ranking == ranking and [game["index"] for game in published.results] == [0, 1]
    assert published.results_at == 0.0
    without = served_finals_page(database, league.id, folder, True)  # no timeline: shown as soon as they end
    assert without.ranking == ranking and len(without.results) == 2
