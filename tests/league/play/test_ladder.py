"""The ladder in-process, with real bot processes in their sandbox and a real database (SQLite and PostgreSQL):
tables chosen by the matchmaker are played as tournament runs in their own folders, rated once, their records
verify; a version whose bot cannot start is suspended after three failed starts in a row; a table found unfinished
at a start is resumed from its run folder and rated once; the leaderboard lists every version with its interval, is
the fit of the recorded tables, is refitted off the trio thread and is rebuilt the same at a restart.

The real server (``arena serve --league``, real gRPC, the CLI, kill -9) is tests/league/play/test_ladder_server.py.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.league.rules.config import league_from_dict
from arena.league.rules.lifecycle import DONE, PLAYING, SUSPENDED, TABLE_FAILED
from arena.league.rules.model import ONLINE, Seat
from arena.league.storage.db import AsyncDatabase
from arena.league.play.ladder import RECORD, Ladder, version_states
from arena.league.intake.pipeline import BuiltBots, Served
from arena.league.play.leaderboard import board_of, rated_results
from arena.league.rules.rating import deal_set_totals, rate_deal_set, recompute
from arena.league.play.table_run import rotations
from arena.tournament.likelihood import Tally, fit
from arena.records.replay import verify_run
from support.ladder import (BLOCK, EXAMPLES, PATIENT, QUICK_SEARCH, STOPPED_BY_THE_ARENA, STUCK, Log, asked,
                            done_tables, league_config, play_until, setup, until_table_done)
from support.league import database_url, rated_with_seats  # noqa: F401 - the fixture, on both databases


async def test_tables_are_verified_runs_rated_once(database_url: str, tmp_path: Path) -> None:
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py",
            "search": QUICK_SEARCH}
    sync, served, work, ids = setup(database_url, tmp_path, bots, concurrency=2, coverage=2, placement=1)
    database = AsyncDatabase(sync)
    log = Log()
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), log)
    await play_until(ladder, database, lambda db: done_tables(4)(db, served.league_id))
    league_id = served.league_id
    done = sync.tables_in(league_id, [DONE])
    assert {v for t in done for v in t.versions} == set(ids.values())  # every version played
    assert done[0].reason == "placement" and all(len(set(t.versions)) == 2 for t in done)
    for table in done:
        folder = tmp_path / "league" / "tables" / str(table.id)
        report = verify_run(folder, jobs=1)
        assert (report.games, report.mismatches, report.seed_checked) == (2, [], True)
        played = sync.games_of_record(league_id, RECORD.format(id=table.id))
        assert [key for key, _ in played] == ["0", "1"]  # both rotations of the deal set, once each
        assert [sorted(s.version_id for s in seats) for _, seats in played] == [sorted(table.versions)] * 2
        assert all(seat.points in (0.0, 0.5, 1.0) for _, seats in played for seat in seats)
    assert sorted(t.sequence for t in done) == list(range(1, len(done) + 1))
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(league_id, ONLINE)}
    assert stored == recompute(rated_with_seats(sync, league_id))  # every result applied once, in order
    assert sum(games for _, _, games in stored.values()) == 2 * len(done)
    assert sync.game_count(league_id) == 2 * len(done)
    assert all(sync.version(v).start_failures == 0 for v in ids.values())
    started = [values for event, values in log.events if event == "ladder_table_started"]
    assert started and all(values["reason"] for values in started)
    await database.close()


async def test_three_failed_starts_suspend_a_version(database_url: str, tmp_path: Path) -> None:
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py",
            "broken": "raise SystemExit('this bot never starts')\n"}
    sync, served, work, ids = setup(database_url, tmp_path, bots, concurrency=1, coverage=4, placement=1)
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    broken = ids["broken"]
    await play_until(ladder, database, lambda db: db.version(broken).state == SUSPENDED)
    version = sync.version(broken)
    assert version.reason.startswith("failed to start 3 times in a row; last: ")
    assert "this bot never starts" in version.reason
    failed = sync.tables_in(served.league_id, [TABLE_FAILED])
    assert len(failed) == 3 and all(broken in t.versions for t in failed)
    assert all(t.error.startswith(f"version {broken} cannot play: ") for t in failed)
    assert all(sync.version(ids[name]).start_failures == 0 for name in ("rand", "greedy"))
    assert broken not in {int(s.id) for s in version_states(sync, served.league_id, 1)}  # out of the matchmaking
    assert sync.ratings(served.league_id, ONLINE) == [r for r in sync.ratings(served.league_id, ONLINE)
                                                      if r.version_id != broken]  # never rated
    await database.close()


async def test_a_complete_table_left_playing_is_rated_once_on_restart(database_url: str, tmp_path: Path) -> None:
    """A server killed after a table's last game was recorded, before its results' transaction: the next start only
    reads the run (nothing is played again) and rates it once; rating it again changes nothing."""
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py"}
    sync, served, work, ids = setup(database_url, tmp_path, bots, concurrency=1, coverage=1, placement=1)
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    (tmp_path / "league" / "tables").mkdir(parents=True)
    table = sync.queue_tables(served.league_id, [((ids["rand"], ids["greedy"]), "placement")])[0]
    assert await ladder.run_table(table)  # played to its end, as the dead server did; nothing in the database
    assert sync.table(table.id).state == PLAYING and sync.game_count(served.league_id) == 0
    records = ladder.table_folder(table) / "games.jsonl"
    played = records.read_bytes()
    fresh = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())  # the next start
    await play_until(fresh, database, lambda db: db.table(table.id).state == DONE)
    assert records.read_bytes() == played  # read, not played again
    assert [key for key, _ in sync.games_of_record(served.league_id, RECORD.format(id=table.id))] == ["0", "1"]
    assert sync.table(table.id).sequence == 1
    before = ({r.version_id: r for r in sync.ratings(served.league_id, ONLINE)}, sync.game_count(served.league_id))
    assert not await fresh.ingest(sync.table(table.id))  # a second time: refused whole
    after = ({r.version_id: r for r in sync.ratings(served.league_id, ONLINE)}, sync.game_count(served.league_id))
    assert after == before
    assert {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(served.league_id, ONLINE)} == recompute(
        rated_with_seats(sync, served.league_id))
    await database.close()


async def refitted(ladder: Ladder) -> None:
    """Until the ladder's leaderboard holds every deal set counted (waiting on its refits, no sleeps)."""
    while not ladder.leaderboard.current:
        event = ladder.leaderboard.refitted
        if ladder.leaderboard.current:
            break
        await event.wait()


async def test_a_restart_rebuilds_the_full_board(database_url: str, tmp_path: Path) -> None:
    """Random, greedy and search (real bots in their sandbox) on the ladder: the board, refitted on a worker thread
    as tables end, lists every version with an interval, is exactly the fit of the recorded tables' results, is
    ordered by it; a new ladder on the same database (a restart) rebuilds the very same board before playing."""
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py",
            "search": QUICK_SEARCH}
    sync, served, work, ids = setup(database_url, tmp_path, bots, concurrency=2, coverage=2, placement=1)
    database = AsyncDatabase(sync)
    threads: list[threading.Thread] = []

    def watched_fit(evidence, previous):
        threads.append(threading.current_thread())
        return fit(evidence, previous)

    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log(),
                    fitter=watched_fit)
    await play_until(ladder, database, lambda db: done_tables(5)(db, served.league_id))
    await ladder.leaderboard.refit()  # the refits in flight were cancelled with the ladder: bring it up to date
    league_id = served.league_id
    done = sync.tables_in(league_id, [DONE])
    assert ladder.leaderboard.current and ladder.leaderboard.fitted_results == len(done) >= 5
    assert threads and threading.current_thread() not in threads  # every fit ran off the trio thread
    online = sync.ratings(league_id, ONLINE)
    board = ladder.leaderboard.board(online)
    assert {e.version_id for e in board} == set(ids.values())  # every version, each with an interval
    assert all(e.fitted and e.low < e.elo < e.high and e.online is not None for e in board)
    assert [round(e.elo, 3) for e in board] == sorted((round(e.elo, 3) for e in board), reverse=True)  # ORDER_DIGITS
    assert [e.position for e in board] == [1, 2, 3] and all(e.best <= e.position <= e.worst for e in board)
    assert sum(e.deal_sets for e in board) == 2 * len(done)
    tally = Tally()
    for places in rated_results(sync, league_id):
        tally.add(places)
    rebuilt = board_of(fit(tally.evidence()), online)
    assert [(e.version_id, e.best, e.worst, e.deal_sets, e.tied_with) for e in board] == [
        (e.version_id, e.best, e.worst, e.deal_sets, e.tied_with) for e in rebuilt]
    assert [e.elo for e in board] == pytest.approx([e.elo for e in rebuilt], abs=1e-3)

    fresh = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())  # restart
    async with trio.open_nursery() as nursery:
        await nursery.start(fresh.run)
        await refitted(fresh)
        nursery.cancel_scope.cancel()
    assert fresh.leaderboard.tally.results == len(done)  # the recorded tables, no more (none ended meanwhile)
    again = fresh.leaderboard.board(online)
    assert [(e.version_id, e.best, e.worst, e.deal_sets, e.tied_with, e.online) for e in again] == [
        (e.version_id, e.best, e.worst, e.deal_sets, e.tied_with, e.online) for e in board]
    assert [x for e in again for x in (e.elo, e.low, e.high)] == pytest.approx(
        [x for e in board for x in (e.elo, e.low, e.high)], abs=1e-3)
    await database.close()


async def test_placement_counts_deal_sets_not_games_or_tables(database_url: str, tmp_path: Path) -> None:
    """x and y played two deal sets together (two done tables of two games each: four games), and have a failed
    table and a queued one besides (four tables). With the league file's ``placement = 2`` their placement is
    done; with 3 it is not, and the next table is a placement table (four games and four tables are not three deal
    sets)."""
    sync, served, work, ids = setup(database_url, tmp_path, {name: EXAMPLES / "random_bot.py" for name in "xy"},
                                    placement=3)
    x, y = ids["x"], ids["y"]
    for _ in range(2):
        table = sync.queue_tables(served.league_id, [((x, y), "placement")])[0]
        played = [("0", [Seat(x, 10, 1.0), Seat(y, 0, 0.0)]), ("1", [Seat(y, 5, 0.5), Seat(x, 5, 0.5)])]
        totals = deal_set_totals([seats for _, seats in played], [x, y])
        assert sync.finish_table(table.id, RECORD.format(id=table.id), played,
                                 lambda before: rate_deal_set(before, totals))
    failed, _queued = sync.queue_tables(served.league_id, [((x, y), "placement"), ((x, y), "placement")])
    sync.fail_table(failed.id, "a bot could not start")
    assert {int(s.id): (s.recent, s.total, s.placed) for s in version_states(sync, served.league_id, 3)} == {
        x: (3, 2, False), y: (3, 2, False)}
    database = AsyncDatabase(sync)
    reasons = {}
    for placement in (2, 3):
        league = Served(league_config(BLOCK, placement=placement), served.league_id)
        ladder = Ladder(database, league, tmp_path / "league", BuiltBots(work, league.config.limits), Log())
        reasons[placement] = [table.reason for table in (await ladder.plan(1)).tables]
    assert reasons == {2: ["coverage: 3 of 4 deal sets in the last hour"], 3: ["placement"]}


@pytest.mark.parametrize("variant", ["draw", "block", "la_plaza", "la_plaza_teams", "all_fives", "mexican_train"])
@pytest.mark.fast
def test_a_table_is_a_tournament_file(variant: str, tmp_path: Path) -> None:
    """Every variant's table (its options, time, limits, bots with awkward names and values) is a valid tournament
    file whose schedule is that one table under every rotation, one deal set."""
    from arena.league.rules.model import LadderTable
    from arena.league.play.table_run import rotations, table_file, table_spec
    from arena.players.process import BotSpec

    config = league_from_dict({"name": "t", "variant": variant})
    sides = rotations(config)
    bots = [BotSpec(name=f'b"{n}\u00e9\U0001f600', command=("python3", f"/x/{n}.py"), folder=f"/x/{n}",
                    env={"K": "v\x7f\n"}) for n in range(sides)]
    table = LadderTable(7, 1, tuple(range(sides)), "placement", "queued", None, None, None, None, None)  # type: ignore
    spec = table_spec(table_file(config, table, bots, tmp_path / "t7"))
    assert [b.name for b in spec.bots] == [b.name for b in bots] and spec.bots[0].env == {"K": "v\x7f\n"}
    assert (spec.variant, spec.players, dict(spec.options)) == (config.variant, config.players, dict(config.options))
    assert spec.sandbox and spec.limits == config.limits and spec.output == str(tmp_path / "t7")
    schedule = spec.schedule("seed")
    assert schedule.table_count() == 1 and schedule.total() == sides
    layouts = {tuple(g.seats) for g in schedule}
    assert len(layouts) == sides and all(len(set(seats)) == sides for seats in layouts)


MANY_SEATS = {"mexican_train": {"variant": "mexican_train", "players": 4, "options": {"rounds": 1}},
              "la_plaza_teams": {"variant": "la_plaza_teams", "options": {"target": 1}}}
"""A k-player ladder (Mexican Train, 4 seats, one round) and a team ladder (La Plaza, 2 teams of 2, to one point)."""


def seatings(folder: Path) -> list[tuple[int, str, str, tuple[str, ...], tuple[int, ...]]]:
    """The run's games as (index, deal key, match seed, entrant per seat, side per seat), in schedule order."""
    from arena.records.store import ReadReport, iter_records
    from arena.records.run_folder import RunFolder
    from arena.tournament.standings import outcome_of

    games = []
    for record in iter_records(RunFolder(folder).records, ReadReport()):
        outcome = outcome_of(record)
        games.append((outcome.index, outcome.deal_key, str(record.get("seed")), outcome.seats, outcome.side_of))
    return sorted(games)


@pytest.mark.parametrize("variant", sorted(MANY_SEATS))
async def test_k_player_and_team_ladders_rotate_and_rate_sides_once(
        variant: str, database_url: str, tmp_path: Path) -> None:
    """Five versions (real bots in their sandbox) on a ladder of more than two seats: every table seats distinct
    versions, one per side (a team's two seats are its one version); its run is one deal set (one deal key, one
    match seed) under every rotation of the sides; the database's results are the run's own standings; each side's
    online rating moved once per table (the recompute from the records agrees); the records verify."""
    game = MANY_SEATS[variant]
    bots = {f"{kind}{n}": EXAMPLES / f"{kind}_bot.py" for n, kind in enumerate(
        ["random", "greedy", "random", "greedy", "random"])}
    sync, served, work, ids = setup(database_url, tmp_path, bots, game, concurrency=1, coverage=1, placement=1)
    sides = rotations(served.config)
    seats = served.config.players
    assert (sides, seats) == ((4, 4) if variant == "mexican_train" else (2, 4))
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    await play_until(ladder, database, lambda db: done_tables(3)(db, served.league_id))
    league_id = served.league_id
    done = sync.tables_in(league_id, [DONE])
    assert len(done) >= 3 and {v for t in done for v in t.versions} == set(ids.values())  # every version played
    names = {v: f"{bot}-v1" for bot, v in ids.items()}
    for table in done:
        assert len(table.versions) == sides == len(set(table.versions))  # distinct versions, one per side
        folder = tmp_path / "league" / "tables" / str(table.id)
        report = verify_run(folder, jobs=1)
        assert (report.games, report.mismatches, report.seed_checked) == (sides, [], True)
        games = seatings(folder)
        assert [index for index, *_ in games] == list(range(sides))
        assert len({key for _, key, *_ in games}) == 1 and len({seed for _, _, seed, *_ in games}) == 1
        side_names = [names[v] for v in table.versions]
        held = [tuple(layout[seat] for seat in sorted(range(seats), key=lambda s: side_of[s]))
                for _, _, _, layout, side_of in games]
        if variant == "la_plaza_teams":  # each version holds both seats of its side; the teams swap
            assert [layout for *_, layout, _ in games] == [
                (a, b, a, b) for a, b in (side_names, side_names[::-1])]
            assert all(side_of == (0, 1, 0, 1) for *_, side_of in games)
        else:  # every rotation of the four versions round the table, each once
            assert [layout for *_, layout, _ in games] == [
                tuple(side_names[(seat + r) % sides] for seat in range(sides)) for r in range(sides)]
        assert all(len(set(h)) == sides for h in held)
        played = sync.games_of_record(league_id, RECORD.format(id=table.id))
        assert [key for key, _ in played] == [str(i) for i in range(sides)]
        assert all(sorted(s.version_id for s in seats_) == sorted(table.versions * (seats // sides))
                   for _, seats_ in played)
        standings = json.loads((folder / "standings.json").read_text())
        points = {row["name"]: float(row["match_points"]) for row in standings["entrants"]}
        assert deal_set_totals([s for _, s in played], table.versions) == [points[n] for n in side_names]
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(league_id, ONLINE)}
    assert stored == recompute(rated_with_seats(sync, league_id))  # every table's update applied once, in order
    assert {v: games for v, (_, _, games) in stored.items()} == {
        v: sum(v in t.versions for t in done) for v in ids.values()}
    assert sync.game_count(league_id) == sides * len(done)
    await database.close()


@pytest.mark.parametrize("leaving", ["retired", "suspended"])
async def test_leaving_mid_table_forfeits_and_the_table_rates_once(
        leaving: str, database_url: str, tmp_path: Path) -> None:
    """Greedy against a bot that never answers (ten minutes a move): while the first game of their table waits on it
    (the second rotation waits for the first: the run's phases), its version is retired by the operator, or
    suspended; the ladder withdraws it as a tournament lets an entrant go: its bots stopped, the game in flight ends
    with its fault, the next is a forfeit without a start, its side forfeiting both; the table is recorded and rated
    once, the records verify, and the withdrawal is no failed start."""
    from arena.league.authors import retire_version
    from arena.league.rules.permissions import OPERATOR
    from arena.tournament.standings import outcome_of
    from arena.records.store import ReadReport, iter_records
    from arena.records.run_folder import RunFolder
    from support.waiting import wait_for

    bots = {"greedy": EXAMPLES / "greedy_bot.py", "stuck": STUCK}
    sync, served, work, ids = setup(database_url, tmp_path, bots, PATIENT, concurrency=1, coverage=1, placement=1)
    database = AsyncDatabase(sync)
    log = Log()
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), log)
    stuck, greedy = ids["stuck"], ids["greedy"]
    folder = tmp_path / "league" / "tables" / "1"
    async with trio.open_nursery() as nursery:
        await nursery.start(ladder.run)
        await trio.to_thread.run_sync(wait_for, asked(folder, 1), 300, "the first game to wait on the stuck bot")
        assert sync.table(1).state == PLAYING
        if leaving == "retired":  # as the League service's RetireVersion does
            version = retire_version(sync, OPERATOR, stuck)
        else:
            version = sync.transition(stuck, SUSPENDED, "suspended by the operator")
        ladder.withdraw(stuck, f"version {stuck} {version.reason}")
        await until_table_done(ladder, sync, 1)  # without the withdrawal the games wait ten minutes on the bot
        nursery.cancel_scope.cancel()
    table = sync.table(1)
    assert (set(table.versions), table.sequence) == ({greedy, stuck}, 1)
    records = list(iter_records(RunFolder(folder).records, ReadReport()))
    assert sorted(outcome_of(r).index for r in records) == [0, 1]
    for record in records:
        outcome = outcome_of(record)
        stuck_seat = outcome.seats.index("stuck-v1")
        assert outcome.winner == outcome.side_of[1 - stuck_seat]  # greedy's side won
        faults = [(f.get("seat", 0), f["kind"], f["message"]) for f in record["faults"]]
        if outcome.index == 0:  # in flight when the version left
            assert faults == [(stuck_seat, *STOPPED_BY_THE_ARENA)]
        else:  # after: no start
            assert faults == [(stuck_seat, "start_failed",
                               f"the bot did not start: withdrawn from the run: version {stuck} {version.reason}")]
    report = verify_run(folder, jobs=1)
    assert (report.games, report.mismatches, report.seed_checked) == (2, [], True)
    played = sync.games_of_record(served.league_id, RECORD.format(id=1))
    assert [(key, sorted((s.version_id, s.points) for s in seats)) for key, seats in played] == [
        (str(i), sorted([(greedy, 1.0), (stuck, 0.0)])) for i in range(2)]
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(served.league_id, ONLINE)}
    assert stored == recompute(rated_with_seats(sync, served.league_id)) and {v[2] for v in stored.values()} == {1}
    assert stored[greedy][0] > stored[stuck][0]
    assert sync.version(stuck).state == version.state and sync.version(stuck).start_failures == 0
    assert [values["table"] for event, values in log.events if event == "ladder_version_withdrawn"] == [1]
    bots_json = json.loads((folder / "bots.json").read_text())
    assert [b["withdrawn"] for b in bots_json] == [
        f"version {stuck} {version.reason}" if b["name"] == "stuck-v1" else None for b in bots_json]
    await database.close()


async def test_leaving_before_the_start_fails_the_table(database_url: str, tmp_path: Path) -> None:
    """A table queued (or left queued by a dead server) whose version was retired before it played a game: it
    fails with why, nothing is played or rated."""
    from arena.league.authors import retire_version
    from arena.league.rules.permissions import OPERATOR

    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py"}
    sync, served, work, ids = setup(database_url, tmp_path, bots, concurrency=1, coverage=1, placement=1)
    database = AsyncDatabase(sync)
    table = sync.queue_tables(served.league_id, [((ids["rand"], ids["greedy"]), "placement")])[0]
    retire_version(sync, OPERATOR, ids["greedy"])
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    await play_until(ladder, database, lambda db: db.table(table.id).state == TABLE_FAILED)
    assert sync.table(table.id).error == f"version {ids['greedy']} retired by the operator before its table started"
    assert not (ladder.table_folder(table) / "games.jsonl").exists()
    assert sync.game_count(served.league_id) == 0 and sync.ratings(served.league_id, ONLINE) == []
    assert sync.version(ids["rand"]).start_failures == 0
    await database.close()


async def test_without_duplicates_each_game_is_rated_alone(database_url: str, tmp_path: Path) -> None:
    """``duplicate = false``: a table is as many single games as there are rotations (two here), each with a deal
    of its own (its own deal key and match seed), the seats still rotated; read from its run, the table is rated
    game by game (two updates per version, two units of the board's fit), and its records verify."""
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py"}
    sync, served, work, ids = setup(database_url, tmp_path, bots, {**BLOCK, "duplicate": False}, concurrency=1,
                                    coverage=1, placement=1)
    assert served.config.duplicate is False and rotations(served.config) == 2
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    await play_until(ladder, database, lambda db: done_tables(2)(db, served.league_id))
    league_id = served.league_id
    done = sync.tables_in(league_id, [DONE])
    names = {v: f"{bot}-v1" for bot, v in ids.items()}
    for table in done:
        folder = tmp_path / "league" / "tables" / str(table.id)
        report = verify_run(folder, jobs=1)
        assert (report.games, report.mismatches, report.seed_checked) == (2, [], True)
        games = seatings(folder)
        assert [index for index, *_ in games] == [0, 1]
        assert len({key for _, key, *_ in games}) == 2 and len({seed for _, _, seed, *_ in games}) == 2
        side_names = [names[v] for v in table.versions]
        assert [layout for *_, layout, _ in games] == [tuple(side_names), tuple(side_names[::-1])]
        played = sync.games_of_record(league_id, RECORD.format(id=table.id))
        assert [key for key, _ in played] == ["0", "1"]
        standings = json.loads((folder / "standings.json").read_text())
        points = {row["name"]: float(row["match_points"]) for row in standings["entrants"]}
        assert deal_set_totals([s for _, s in played], table.versions) == [points[n] for n in side_names]
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(league_id, ONLINE)}
    assert stored == recompute(rated_with_seats(sync, league_id))  # each game's update applied once, in order
    assert sync.game_count(league_id) == 2 * len(done)
    assert [table.single_games for table in sync.rated_tables(league_id)] == [True] * len(done)
    assert sum(games for _, _, games in stored.values()) == 4 * len(done)  # two sides, two games each table
    assert len(rated_results(sync, league_id)) == ladder.leaderboard.tally.results == 2 * len(done)
    await database.close()
