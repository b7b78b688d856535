"""The ladder's leaderboard (arena/league/play/leaderboard.py): rebuilt from a database of known tables it is exactly the
maximum-likelihood fit of their results (SQLite and PostgreSQL); versions rated after the last refit follow the
fitted ones; refits run on a worker thread, warm-started, and coalesce (one running, one more when results came).

The board of a real ladder (real bots in their sandbox) and its rebuild at a restart are in
tests/league/play/test_ladder.py; through the server, the CLI and gRPC in tests/league/play/test_ladder_server.py.
"""

from __future__ import annotations

import functools
import threading
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import trio

from arena.league.rules.model import ONLINE, LadderTable, Rating, Seat
from arena.league.storage.db import AsyncDatabase, Database, open_database
from arena.league.play.leaderboard import Leaderboard, board_of, board_order, places_of_table, rated_results
from arena.league.play.pages import bot_history
from arena.league.rules.rating import deal_set_totals, rate_deal_set, recompute, table_updates
from arena.league.play.table_run import RECORD
from arena.tournament.likelihood import Places, Tally, fit, leaderboard
from support.league import a_bot, database, database_url, league, rated_with_seats  # noqa: F401 - the fixtures


REFITS_S = 120
"""Generous: two fits of four results, on a busy 2-core machine; only a refit that never comes takes longer."""


class Log:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def error(self, event: str, **values: Any) -> None:
        self.events.append((event, values))


def versions_of(database: Database, league_id: int, names: str) -> dict[str, int]:
    """One bot (of its own author) with one version per letter of ``names``: name to version id."""
    found = {}
    for name in names:
        bot = a_bot(database, league_id, f"author-{name}", name)
        found[name] = database.add_version(bot.id, (name.encode().hex() * 64)[:64])[0].id
    return found


def play(database: Database, league_id: int, sides: list[int], games: list[list[tuple[int, float]]]) -> None:
    """A table of these versions, done with these games (each: per seat its version and its side's points), its
    online rating updated as the ladder does."""
    finish(database, database.queue_tables(league_id, [(sides, "test")])[0], games)


def finish(database: Database, table: LadderTable, games: list[list[tuple[int, float]]]) -> Places:
    """A queued table done with these games, rated as the ladder rates it; its result for the leaderboard."""
    played = [(str(key), [Seat(version, 0, points) for version, points in seats]) for key, seats in enumerate(games)]
    totals = deal_set_totals([seats for _, seats in played], table.versions)
    assert database.finish_table(table.id, RECORD.format(id=table.id), played,
                                 lambda before: rate_deal_set(before, totals))
    places = places_of_table(table.versions, [seats for _, seats in played])
    assert places is not None
    return places


async def test_the_rebuilt_board_is_the_fit_of_the_tables_results(database: Database, league) -> None:
    v = versions_of(database, league.id, "abcd")
    a, b, c, d = v["a"], v["b"], v["c"], v["d"]
    play(database, league.id, [a, b], [[(a, 1.0), (b, 0.0)], [(b, 0.5), (a, 0.5)]])  # a 1.5, b 0.5
    play(database, league.id, [b, c], [[(b, 0.5), (c, 0.5)], [(c, 0.5), (b, 0.5)]])  # a tie
    play(database, league.id, [a, c, d], [[(a, 1.0), (c, 0.0), (d, 0.0)], [(c, 0.5), (d, 0.5), (a, 0.0)],
                                          [(d, 0.0), (a, 1.0), (c, 0.0)]])  # a 2, then c and d tied at 0.5
    play(database, league.id, [c, a], [[(c, 1.0), (a, 0.0)], [(a, 0.0), (c, 1.0)]])
    play(database, league.id, [d, b], [[(d, 1.0), (b, 0.0)], [(b, 0.0), (d, 1.0)]])
    play(database, league.id, [a, d], [[(a, 1.0), (d, 0.0)], [(d, 0.0), (a, 1.0)]])
    failed = database.queue_tables(league.id, [([a, b], "failed"), ([c, d], "still queued")])
    database.fail_table(failed[0].id, "a bot could not start")  # neither this one nor the queued one counts
    s = {name: str(version) for name, version in v.items()}
    expected_places = [((s["a"],), (s["b"],)), ((s["b"], s["c"]),), ((s["a"],), (s["c"], s["d"])),
                       ((s["c"],), (s["a"],)), ((s["d"],), (s["b"],)), ((s["a"],), (s["d"],))]
    assert rated_results(database, league.id) == [tuple(tuple(sorted(g)) for g in p) for p in expected_places]
    tally = Tally()
    for places in expected_places:
        tally.add(places)
    expected = fit(tally.evidence())

    board = Leaderboard(Log())
    await board.rebuild(AsyncDatabase(database), league.id)
    assert (board.tally.results, board.fitted, board.current) == (6, None, False)
    await board.refit()
    assert board.current and board.fitted_results == 6
    assert board.fitted.names == expected.names
    assert np.array_equal(board.fitted.theta, expected.theta)
    assert np.array_equal(board.fitted.covariance, expected.covariance)
    online = database.ratings(league.id, ONLINE)
    entries = board.board(online)
    assert [(e.version_id, e.position, e.best, e.worst, e.elo, e.low, e.high, e.deal_sets, e.tied_with)
            for e in entries] == [(int(r.entrant), i, r.best, r.worst, r.elo, r.low, r.high, r.deal_sets,
                                   tuple(int(n) for n in r.tied_with))
                                  for i, r in enumerate(leaderboard(expected), 1)]
    assert [e.deal_sets for e in sorted(entries, key=lambda e: e.version_id)] == [4, 3, 3, 3]
    assert {e.version_id: e.online for e in entries} == {r.version_id: r for r in online}
    assert all(e.fitted and e.low < e.elo < e.high for e in entries)
    assert entries[0].version_id == a and entries[0].rank == f"1-{entries[0].worst}"  # a few deal sets: wide


async def test_deal_sets_rated_out_of_order_are_counted_per_version(database: Database, league) -> None:
    """Two tables of a and b, the second queued rated first and refitted, then the first rated before the next
    refit: the watch's line for it says each version's online rating and its 2 deal sets (that rating's count, as
    LadderStanding.deal_sets promises), while the leaderboard's columns and their "fit of 1 deal sets" are the
    last refit's."""
    from arena.cli.league import watch_line
    from arena.league.core import standing_rows

    v = versions_of(database, league.id, "ab")
    a, b = v["a"], v["b"]
    first, second = database.queue_tables(league.id, [([a, b], "first"), ([b, a], "second")])
    board = Leaderboard(Log())
    board.add(finish(database, second, [[(b, 1.0), (a, 0.0)], [(a, 0.5), (b, 0.5)]]))
    await board.refit()
    board.add(finish(database, first, [[(a, 1.0), (b, 0.0)], [(b, 0.0), (a, 1.0)]]))  # no refit yet
    assert (board.fitted_results, board.tally.results, board.current) == (1, 2, False)
    online = database.ratings(league.id, ONLINE)
    rows = standing_rows(database, league.id, board.board(online), games=False)  # as watch_ladder reads them
    assert sorted((row.version_id, row.deal_sets) for row in rows) == [(a, 2), (b, 2)]
    rating = {r.version_id: r for r in online}
    assert [watch_line(row, board.fitted_results) for row in rows] == [
        f"{row.bot}-v1: online {rating[row.version_id].mu:.2f} (sigma {rating[row.version_id].sigma:.2f}, 2 deal "
        f"sets); leaderboard rank {row.rank_best}-{row.rank_worst}, rating {row.rating:.0f} ({row.rating_low:.0f} "
        f"to {row.rating_high:.0f}; fit of 1 deal sets)" for row in rows]


async def test_fresh_deals_rate_game_by_game_also_after_a_restart(database_url: str) -> None:
    """A duplicate table (a 1.5, b 0.5: one deal set), then a table of fresh deals, as a dial-in version's is, rated
    as the ladder rates it: b wins its first game and a its second. Summed, that second table would be one tied
    result; rated game by game it is two updates, each exactly a single-game rate call, and after a restart (the
    database opened again) the recompute, the bot's rating history and the rebuilt board say the same: 3 units of
    the fit, 3 deal sets counted per version."""
    database = open_database(database_url)
    league_id = database.ensure_league("ladder", "Ladder", "draw").id
    v = versions_of(database, league_id, "ab")
    a, b = v["a"], v["b"]
    play(database, league_id, [a, b], [[(a, 1.0), (b, 0.0)], [(b, 0.5), (a, 0.5)]])
    fresh = database.queue_tables(league_id, [([a, b], "test")])[0]
    played = [("0", [Seat(b, 0, 1.0), Seat(a, 0, 0.0)]), ("1", [Seat(a, 0, 1.0), Seat(b, 0, 0.0)])]
    seats = [game for _, game in played]
    assert table_updates(seats, [a, b], True) == [[0.0, 1.0], [1.0, 0.0]]
    updates = [functools.partial(rate_deal_set, totals=totals) for totals in table_updates(seats, [a, b], True)]
    assert database.finish_table(fresh.id, RECORD.format(id=fresh.id), played, *updates, single_games=True)
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in database.ratings(league_id, ONLINE)}
    database.close()

    (a1, b1) = rate_deal_set([None, None], [1.5, 0.5])
    (a2, b2) = rate_deal_set([Rating(a, ONLINE, *a1, 1), Rating(b, ONLINE, *b1, 1)], [0.0, 1.0])
    (a3, b3) = rate_deal_set([Rating(a, ONLINE, *a2, 2), Rating(b, ONLINE, *b2, 2)], [1.0, 0.0])
    assert stored == {a: (*a3, 3), b: (*b3, 3)}
    summed = rate_deal_set([Rating(a, ONLINE, *a1, 1), Rating(b, ONLINE, *b1, 1)], [1.0, 1.0])
    assert (a3, b3) != tuple(summed)  # the one tied result it would have been

    again = open_database(database_url)  # a restart: everything from the database alone
    try:
        assert [t.single_games for t in again.rated_tables(league_id)] == [False, True]
        assert recompute(rated_with_seats(again, league_id)) == stored
        history = bot_history(again, league_id, again.version(a).bot_id)
        assert [(p.mu, p.sigma) for p in history.ratings["a-v1"]] == [a1, a2, a3]
        assert rated_results(again, league_id) == [((str(a),), (str(b),)), ((str(b),), (str(a),)),
                                                   ((str(a),), (str(b),))]
        board = Leaderboard(Log())
        await board.rebuild(AsyncDatabase(again), league_id)
        await board.refit()
        assert (board.tally.results, board.fitted_results) == (3, 3)
        assert sorted((e.version_id, e.deal_sets) for e in board.board(again.ratings(league_id, ONLINE))) == [
            (a, 3), (b, 3)]
    finally:
        again.close()


@pytest.mark.fast
def test_a_table_result_places_sides_by_points_ties_as_ties() -> None:
    seats = [[Seat(7, 0, 1.0), Seat(8, 0, 0.0), Seat(9, 0, 0.0)], [Seat(8, 0, 0.5), Seat(9, 0, 0.5), Seat(7, 0, 0)]]
    assert places_of_table([7, 8, 9], seats) == (("7",), ("8", "9"))
    assert places_of_table([8, 7], [[Seat(8, 0, 0.5), Seat(7, 0, 0.5)]]) == (("7", "8"),)
    assert places_of_table([5, 5], [[Seat(5, 0, 1.0), Seat(5, 0, 0.0)]]) is None  # nothing to compare


@pytest.mark.fast
def test_thirds_tie_in_places_and_online_updates() -> None:
    """Four sides (Mexican Train's points are thirds): 7 scores 2/3 + 1 + 1/3 and 8 scores 2/3 + 2/3 + 2/3, both 2;
    as floats the first sum is 1.9999999999999998, which would rank 8 above 7. They tie, and rate as a tie."""
    third, two_thirds = 1 / 3, 2 / 3
    games = [[Seat(7, 0, two_thirds), Seat(8, 0, two_thirds), Seat(9, 0, 0.0), Seat(10, 0, third)],
             [Seat(7, 0, 1.0), Seat(8, 0, two_thirds), Seat(9, 0, third), Seat(10, 0, 0.0)],
             [Seat(7, 0, third), Seat(8, 0, two_thirds), Seat(9, 0, 1.0), Seat(10, 0, 0.0)]]
    assert two_thirds + 1.0 + third != two_thirds + two_thirds + two_thirds  # the float noise this guards against
    totals = deal_set_totals(games, [7, 8, 9, 10])
    assert totals == [2.0, 2.0, 4 / 3, 1 / 3]
    assert places_of_table([7, 8, 9, 10], games) == (("7", "8"), ("9",), ("10",))
    (mu7, sigma7), (mu8, sigma8), *_ = rate_deal_set([None] * 4, totals)
    assert (mu7, sigma7) == (mu8, sigma8)


SIXTHS = [[(7, 0.0), (8, 1 / 3), (9, 1.0), (10, 2 / 3)], [(7, 0.0), (8, 1 / 3), (9, 2 / 3), (10, 1.0)],
          [(7, 1 / 6), (8, 1 / 6), (9, 2 / 3), (10, 1.0)], [(7, 1.0), (8, 1 / 3), (9, 2 / 3), (10, 0.0)]]
"""A four-player deal set (four games) where 7 and 8 both score 7/6: 7 as 0 + 0 + 1/6 (tied last with 8) + 1, 8 as
1/3 + 1/3 + 1/6 + 1/3; 9 scores 3 and 10 8/3. Neither the float sums nor the exact sums of the floats agree."""


@pytest.mark.fast
def test_sixths_tie_even_where_float_sums_round_apart() -> None:
    """The stored points are floats: added as floats, 7's 7/6 is 1.1666666666666667 and 8's 1.1666666666666665;
    added as the exact values of those floats they round apart too. Each point is read back as the sixth it
    stands for, so 7 and 8 tie, in the places and in the online update."""
    games = [[Seat(version, 0, points) for version, points in game] for game in SIXTHS]
    seven, eight = ([points for game in SIXTHS for version, points in game if version == v] for v in (7, 8))
    assert sum(seven) != sum(eight)  # the noise this guards against, added as floats
    assert float(sum(map(Fraction, seven))) != float(sum(map(Fraction, eight)))  # and as the floats' exact values
    totals = deal_set_totals(games, [7, 8, 9, 10])
    assert totals == [7 / 6, 7 / 6, 3.0, 8 / 3]
    assert places_of_table([7, 8, 9, 10], games) == (("9",), ("10",), ("7", "8"))
    (mu7, sigma7), (mu8, sigma8), *_ = rate_deal_set([None] * 4, totals)
    assert (mu7, sigma7) == (mu8, sigma8)


@pytest.mark.fast
def test_unlinked_versions_are_never_told_apart() -> None:
    """Two groups of six versions that never met: in each, every version beat the next 9 deal sets to 1. The prior
    alone centres each group on 0, so the 95% interval of 1's difference from 16 ([+463, +2985] Elo) excludes 0
    and says nothing: 1 is told apart from every version of its own group and from none of the other."""
    first, second = (1, 2, 3, 4, 5, 6), (11, 12, 13, 14, 15, 16)
    tally = Tally()
    for chain in (first, second):
        for better, worse in zip(chain, chain[1:]):
            for _ in range(9):
                tally.add(((str(better),), (str(worse),)))
            tally.add(((str(worse),), (str(better),)))
    result = fit(tally.evidence())
    assert result.component_count == 2 and result.difference("1", "16")[1] > 0  # the intervals alone: apart
    assert not any(result.told_apart(str(x), str(y)) for x in first for y in second)
    assert all(result.told_apart(str(x), str(y)) for chain in (first, second) for x in chain for y in chain if x != y)
    entries = board_of(result, [])
    assert [(e.version_id, e.rank, set(e.tied_with)) for e in entries] == [
        (1, "1-7", set(second)), (11, "1-7", set(first)), (12, "2-8", set(first)), (2, "2-8", set(second)),
        (13, "3-9", set(first)), (3, "3-9", set(second)), (14, "4-10", set(first)), (4, "4-10", set(second)),
        (15, "5-11", set(first)), (5, "5-11", set(second)), (16, "6-12", set(first)), (6, "6-12", set(second))]


@pytest.mark.fast
def test_versions_since_the_refit_follow_by_online_rating() -> None:
    tally = Tally()
    for _ in range(3):
        tally.add((("1",), ("2",)))
    result = fit(tally.evidence())
    online = [Rating(3, ONLINE, 40.0, 5.0, 1), Rating(1, ONLINE, 30.0, 4.0, 3), Rating(4, ONLINE, 28.0, 6.0, 1),
              Rating(2, ONLINE, 20.0, 4.0, 3)]
    entries = board_of(result, online)
    assert [(e.version_id, e.position, e.fitted) for e in entries] == [(1, 1, True), (2, 2, True), (3, 3, False),
                                                                       (4, 4, False)]
    assert [(e.best, e.worst, e.rank) for e in entries[2:]] == [(3, 4, "3-4"), (3, 4, "3-4")]
    assert entries[2].elo is None and entries[2].deal_sets == 1 and entries[2].online == online[0]
    assert board_of(None, online)[0].version_id == 3  # before the first fit: the online order


@pytest.mark.fast
async def test_refits_run_on_a_thread_warm_started_and_coalesced() -> None:
    """The fit is wrapped to see where it runs and with what: held on its thread while three more results come,
    it is followed by exactly one more refit, of all four, started from the first fit."""
    calls: list[tuple[threading.Thread, int, Any, Any]] = []
    entered, release = threading.Event(), threading.Event()

    def held_fit(evidence, previous):
        entered.set()
        release.wait()
        result = fit(evidence, previous)
        calls.append((threading.current_thread(), int(evidence.deal_sets.sum()), previous, result))
        return result

    board = Leaderboard(Log(), held_fit)
    loop_thread = threading.current_thread()
    with trio.fail_after(REFITS_S):  # a refit lost fails the test instead of hanging it
        async with trio.open_nursery() as nursery:
            await nursery.start(board.run)
            try:
                board.add((("x",), ("y",)))
                await trio.to_thread.run_sync(entered.wait, abandon_on_cancel=True)  # the first refit runs, held
                entered.clear()
                for places in ((("y",), ("z",)), (("x", "z"),), (("z",), ("x",))):
                    board.add(places)  # the loop is not blocked: results are counted while the fit runs
                assert (board.tally.results, board.fitted) == (4, None)
                refitted = board.refitted
                release.set()
                await refitted.wait()
                while not board.current:
                    refitted = board.refitted
                    await refitted.wait()
            finally:
                entered.set()  # neither waiting thread outlives the test, whatever stopped it
                release.set()
            nursery.cancel_scope.cancel()
    assert len(calls) == 2  # coalesced: three results during a refit make one more refit, not three
    (first_thread, first_sets, first_previous, first), (second_thread, second_sets, second_previous, second) = calls
    assert first_thread is not loop_thread and second_thread is not loop_thread
    assert (first_sets, second_sets) == (2, 8)  # deal sets over entrants: one result of two, then four of two
    assert first_previous is None and second_previous is first  # warm-started from the previous fit
    assert board.fitted is second and board.fitted_results == 4


@pytest.mark.fast
async def test_a_failed_fit_keeps_the_previous_board_and_says_why() -> None:
    from arena.tournament.likelihood import FitError

    def failing(evidence, previous):
        raise FitError("the rating fit did not converge in 200 Newton steps")

    log = Log()
    board = Leaderboard(log, failing)
    board.add((("x",), ("y",)))
    await board.refit()
    assert board.fitted is None and not board.current
    assert log.events == [("leaderboard_refit_failed", {"deal_sets": 1, "error":
                                                        "the rating fit did not converge in 200 Newton steps"})]


@pytest.mark.fast
def test_bench_ladder_prints_json_and_refuses_bad_checkpoints(capsys, tmp_path) -> None:
    """A short `arena bench ladder` (its parts are the existing benches; the seeded league makes the counts exact):
    the matchmaker's decisions, the refits per checkpoint, the ladder's own refit path (a worker thread, warm from
    the last checkpoint's fit: the same Newton steps as the ratings bench's warm refit), games recorded in the
    database given, and the rank correlations of both ratings; bad options refused in one line, status 2."""
    import json

    from arena import cli
    from arena.league.storage.db import sqlite_url

    url = sqlite_url(tmp_path / "bench")
    assert cli.main(["bench", "ladder", "--versions", "40", "--deal-sets", "2000,500", "--hours", "0.1",
                     "--games", "20", "--database", url]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"versions", "matchmaking", "refit", "leaderboard_refit", "rank_correlation", "database"}
    assert report["versions"] == 40 and report["matchmaking"]["decisions_per_second"] > 0
    assert [r["deal_sets"] for r in report["refit"]] == [500, 2000]
    assert [r["deal_sets"] for r in report["rank_correlation"]] == [500, 2000]
    refit = report["leaderboard_refit"]
    assert (refit["deal_sets"], refit["errors"]) == (3000, [])  # the last checkpoint and the warm games after it
    assert refit["newton_steps"] == report["refit"][-1]["warm_newton_steps"]
    assert report["rank_correlation"][-1]["leaderboard_spearman"] > 0.9
    assert (report["database"]["database"], report["database"]["games"]) == ("sqlite", 20)
    for bad, message in ((["--deal-sets", "10,x"], "--deal-sets must be deal-set counts"),
                         (["--versions", "1"], "expected at least 2 --versions")):
        assert cli.main(["bench", "ladder", *bad]) == 2
        assert message in capsys.readouterr().err


def test_standings_take_four_queries_at_any_size(database: Database, league) -> None:
    """GetLadderStandings' rows (arena.league.core.standing_rows): each version's bot, number, author, games and
    place, the names it is tied with, in four queries for a board of 3 versions as for one of 8."""
    from collections import Counter

    import sqlalchemy as sa

    from arena.league.core import standing_rows

    queries, name_of, games = [], {}, Counter()
    for names in ("abc", "defghijk"):
        v = versions_of(database, league.id, names)
        name_of.update({version: name for name, version in v.items()})
        ids = list(v.values())
        for x, y in zip(ids, ids[1:]):
            play(database, league.id, [x, y], [[(x, 1.0), (y, 0.0)], [(y, 0.0), (x, 1.0)]])
            games.update({x: 2, y: 2})
        tally = Tally()
        for places in rated_results(database, league.id):
            tally.add(places)
        board = board_of(fit(tally.evidence()), database.ratings(league.id, ONLINE))
        statements: list[str] = []

        def count(_connection, _cursor, statement, *_rest) -> None:
            statements.append(statement)

        sa.event.listen(database.engine, "before_cursor_execute", count)
        try:
            rows = standing_rows(database, league.id, board)
        finally:
            sa.event.remove(database.engine, "before_cursor_execute", count)
        queries.append(len(statements))
        assert len(rows) == len(board) == len(name_of)
        assert [(r.version_id, r.bot, r.number, r.author, r.games, r.rank, list(r.tied_with)) for r in rows] == [
            (e.version_id, name_of[e.version_id], 1, f"author-{name_of[e.version_id]}", games[e.version_id],
             e.position, [f"{name_of[t]}-v1" for t in e.tied_with]) for e in board]
    assert queries == [4, 4]


async def test_the_board_shows_each_bots_active_version_and_history_keeps_the_replaced(database: Database,
                                                                                         league) -> None:
    """One team, two bots: alpha-v1 beats beta three deal sets to none and is replaced by alpha-v2, which loses to
    beta once. The whole board ranks alpha-v1 first; the standings show exactly two rows, beta then alpha-v2
    (ranks counted among them, their form from their own deal sets), and alpha's page keeps alpha-v1's rating."""
    from arena.league.core import bot_standing_rows
    from support.filled_league import ready

    alpha = a_bot(database, league.id, "team", "alpha")
    beta = a_bot(database, league.id, "team", "beta")
    old, b = ready(database, alpha.id, 1), ready(database, beta.id, 2)
    for _ in range(3):
        play(database, league.id, [old, b], [[(old, 1.0), (b, 0.0)], [(b, 0.0), (old, 1.0)]])
    new = ready(database, alpha.id, 3)  # alpha's newest ready version: its active one
    play(database, league.id, [new, b], [[(new, 0.0), (b, 1.0)], [(b, 1.0), (new, 0.0)]])
    board = Leaderboard(Log())
    await board.rebuild(AsyncDatabase(database), league.id)
    await board.refit()
    whole = board.board(database.ratings(league.id, ONLINE))
    assert [e.version_id for e in whole] == [old, b, new]

    rows = bot_standing_rows(database, league.id, whole, board.form)
    assert [(r.rank, r.bot, r.number, r.author, r.version_id, r.deal_sets, r.games, r.state, r.form)
            for r in rows] == [(1, "beta", 1, "team", b, 4, 8, "ready", (0.0, 0.0, 0.0, 1.0)),
                               (2, "alpha", 2, "team", new, 1, 2, "ready", (0.0,))]
    by_id = {e.version_id: e for e in whole}
    assert [(r.rating, r.rating_low, r.rating_high) for r in rows] == [
        (by_id[v].elo, by_id[v].low, by_id[v].high) for v in (b, new)]  # the fit over every version
    apart = not by_id[new].tied_with or b not in by_id[new].tied_with
    assert [(r.rank_best, r.rank_worst, r.tied_with) for r in rows] == (
        [(1, 1, ()), (2, 2, ())] if apart else [(1, 2, ("alpha-v2",)), (1, 2, ("beta-v1",))])

    history = bot_history(database, league.id, alpha.id)
    online = {r.version_id: r for r in database.ratings(league.id, ONLINE)}
    assert [(p.mu, p.sigma) for p in history.ratings["alpha-v1"]][-1] == (online[old].mu, online[old].sigma)
    assert len(history.ratings["alpha-v1"]) == 3 and len(history.ratings["alpha-v2"]) == 1

    database.transition(new, "retired")  # alpha-v1, its newest ready version, is active again
    assert [(r.bot, r.number) for r in bot_standing_rows(database, league.id, whole, board.form)] == [
        ("alpha", 1), ("beta", 1)]
    database.transition(old, "retired")  # alpha has no active version: no row
    assert [r.bot for r in bot_standing_rows(database, league.id, whole, board.form)] == ["beta"]


def test_bot_rows_take_six_queries_at_any_size(database: Database, league) -> None:
    """The board's rows of each bot's active version (arena.league.core.bot_standing_rows): the bots and all their
    versions, then the four of standing_rows, for 3 bots as for 8 (never a query per bot)."""
    import sqlalchemy as sa

    from arena.league.core import bot_standing_rows
    from arena.league.rules.board import Form
    from support.filled_league import ready

    queries, made = [], 0
    for count in (3, 8):
        ids = []
        for _ in range(count):
            made += 1
            ids.append(ready(database, a_bot(database, league.id, f"author-{made}", f"bot{made}").id, made))
        for x, y in zip(ids, ids[1:]):
            play(database, league.id, [x, y], [[(x, 1.0), (y, 0.0)], [(y, 0.0), (x, 1.0)]])
        tally = Tally()
        for places in rated_results(database, league.id):
            tally.add(places)
        board = board_of(fit(tally.evidence()), database.ratings(league.id, ONLINE))
        statements: list[str] = []

        def count_it(_connection, _cursor, statement, *_rest) -> None:
            statements.append(statement)

        sa.event.listen(database.engine, "before_cursor_execute", count_it)
        try:
            rows = bot_standing_rows(database, league.id, board, Form())
        finally:
            sa.event.remove(database.engine, "before_cursor_execute", count_it)
        queries.append(len(statements))
        assert len(rows) == made
    assert queries == [6, 6]


async def test_the_finals_are_seeded_by_the_board_as_it_stood_at_the_freeze(database: Database, league) -> None:
    """c beat a and a beat b, whole deal sets: the board then is c, a, b (d, never rated, last in the field's
    order). Before any table ended, nothing is ranked: the field's order as given."""
    v = versions_of(database, league.id, "abcd")
    a, b, c, d = v["a"], v["b"], v["c"], v["d"]
    before = datetime.now(UTC) - timedelta(hours=1)
    play(database, league.id, [a, b], [[(a, 1.0), (b, 0.0)], [(b, 0.0), (a, 1.0)]])
    play(database, league.id, [c, a], [[(c, 1.0), (a, 0.0)], [(a, 0.0), (c, 1.0)]])
    after = datetime.now(UTC) + timedelta(hours=1)
    assert board_order(database, league.id, [d, b, a, c], after) == [c, a, b, d]
    assert board_order(database, league.id, [d, b, a, c], before) == [d, b, a, c]
    assert board_order(database, league.id, [b, c], after) == [c, b]  # only the field, in the board's order


def test_no_table_is_queued_once_the_league_is_frozen(database: Database, league) -> None:
    """The ladder looks at the phase, then chooses and queues: a freeze in between must not let a table in."""
    v = versions_of(database, league.id, "ab")
    assert len(database.queue_tables(league.id, [([v["a"], v["b"]], "before")])) == 1
    database.freeze(league.id, [v["a"], v["b"]])
    assert database.queue_tables(league.id, [([v["a"], v["b"]], "after"), ([v["b"], v["a"]], "after")]) == []
    assert [t.reason for t in database.tables_in(league.id, ["queued"])] == ["before"]
