"""One author, one seat: at league tables of three or more sides no two versions of one author sit together (they
could share what they see against the others), unless the league file allows it (``same_author_tables = true``);
two-sided tables are not concerned. The matchmaker over simulated hours (pure: no database, no processes), the
league file's key, the finals' tournament file and the tables it draws, and a ladder played in-process (a real
database, sandboxed bots) whose versions carry their authors to the matchmaker."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.league.rules.config import ConfigError, FinalsSettings, league_from_dict
from arena.league.files import load_league
from arena.league.rules.lifecycle import DONE
from arena.league.storage.db import AsyncDatabase, sqlite_url
from arena.league.rules.errors import LeagueError
from arena.league.play.finals import Finals, schedule_lines
from arena.league.play.ladder import Ladder, version_states
from arena.league.rules.matchmaking import MatchmakingRules, Plan, VersionState, choose_tables
from arena.bench.matchmaking import simulate, summary
from arena.league.intake.pipeline import BuiltBots, Served
from arena.league.play.table_run import authors_apart, league_tournament_file, table_spec
from arena.players.process import BotSpec
from support.ladder import EXAMPLES, Log, done_tables, play_until, setup

MEXICAN_TRAIN = {"variant": "mexican_train", "players": 4}


def config(game: dict = MEXICAN_TRAIN, **top: object):
    return league_from_dict({"name": "authors", **game, **top})


def shared_tables(ladder) -> int:
    """The simulated ladder's tables that seated two versions of one author."""
    return sum(1 for _, table in ladder.played
               if len({ladder.authors[v] for v in table.versions}) < len(table.versions))


# --- the matchmaker ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sides", "deal_sets", "shared_without"), [(3, {"min": 23, "max": 25}, 50),
                                                                     (4, {"min": 32, "max": 34}, 94)])
@pytest.mark.fast
def test_a_k_sided_ladder_never_seats_an_author_twice(sides: int, deal_sets: dict, shared_without: int) -> None:
    """30 versions of 10 authors (three each), 4 tables at once for a simulated hour: 243 tables over 240 calls,
    none with two versions of one author, every version covered as evenly as without the rule; the same hour
    without the rule seats two of one author at 50 tables (3 sides) or 94 (4 sides)."""
    rules = MatchmakingRules(sides=sides, authors_apart=True)
    ladder = simulate(30, rules, concurrency=4, deal_set_seconds=60, authors=10)
    assert (len(ladder.played), ladder.calls, shared_tables(ladder)) == (243, 240, 0)
    assert summary(ladder, rules)["deal_sets_per_version"] == deal_sets
    free = MatchmakingRules(sides=sides, authors_apart=False)
    assert shared_tables(simulate(30, free, concurrency=4, deal_set_seconds=60, authors=10)) == shared_without


@pytest.mark.parametrize(("versions", "authors", "sides", "tables", "deal_sets"), [
    (12, 4, 4, 242, {"min": 79, "max": 83}),   # as many authors as seats: one version of each at every table
    (30, 3, 3, 243, {"min": 23, "max": 26}),
    (50, 8, 8, 243, {"min": 34, "max": 43}),
])
@pytest.mark.fast
def test_as_many_authors_as_seats_fill_every_table(versions: int, authors: int, sides: int, tables: int,
                                                   deal_sets: dict) -> None:
    rules = MatchmakingRules(sides=sides, authors_apart=True)
    ladder = simulate(versions, rules, concurrency=4, deal_set_seconds=60, authors=authors)
    assert (len(ladder.played), shared_tables(ladder)) == (tables, 0)
    assert summary(ladder, rules)["deal_sets_per_version"] == deal_sets


@pytest.mark.fast
def test_versions_of_seated_authors_are_passed_over() -> None:
    """x anchors (it has played least); its nearest are x2 (its own author's) and y, y2 (one other author's):
    the table is x, y and the nearest of a third author, z."""
    versions = [VersionState("x", 20.0, 2.0, author="ann"), VersionState("x2", 20.1, 2.0, recent=5, author="ann"),
                VersionState("y", 20.5, 2.0, recent=5, author="bob"),
                VersionState("y2", 20.6, 2.0, recent=5, author="bob"),
                VersionState("z", 30.0, 2.0, recent=5, author="cy")]
    apart = MatchmakingRules(sides=3, coverage=0, load_penalty=0, authors_apart=True)
    assert [t.versions for t in choose_tables(versions, 1, apart).tables] == [("x", "y", "z")]
    together = MatchmakingRules(sides=3, coverage=0, load_penalty=0)
    assert [t.versions for t in choose_tables(versions, 1, together).tables] == [("x", "x2", "y")]


@pytest.mark.fast
def test_fewer_authors_than_sides_make_no_table_and_say_why() -> None:
    versions = [VersionState(f"v{i}", 20.0 + i, 2.0, author=f"a{i % 2}") for i in range(5)]
    assert choose_tables(versions, 2, MatchmakingRules(sides=3, authors_apart=True)) == Plan(
        (), "waiting for authors: 5 versions ready of 2 authors, and a table seats 3 versions of 3 different authors")
    assert len(choose_tables(versions, 2, MatchmakingRules(sides=3)).tables) == 2  # allowed: two tables
    assert len(choose_tables(versions, 2, MatchmakingRules(sides=2, authors_apart=True)).tables) == 2


@pytest.mark.fast
def test_a_version_without_an_author_is_an_authors_only_one() -> None:
    versions = [VersionState(f"v{i}", 20.0 + i, 2.0) for i in range(3)]
    plan = choose_tables(versions, 1, MatchmakingRules(sides=3, authors_apart=True))
    assert [sorted(t.versions) for t in plan.tables] == [["v0", "v1", "v2"]]


# --- the league file ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "top", "apart"), [
    (MEXICAN_TRAIN, {}, True),                                    # four sides: kept apart by default
    ({"variant": "block", "players": 3}, {}, True),
    (MEXICAN_TRAIN, {"same_author_tables": True}, False),         # the league allows it
    (MEXICAN_TRAIN, {"same_author_tables": False}, True),
    ({"variant": "draw"}, {}, False),                             # two players: head to head
    ({"variant": "la_plaza_teams"}, {}, False),                   # two teams: two sides
])
@pytest.mark.fast
def test_three_or_more_sides_keep_authors_apart_unless_allowed(game: dict, top: dict, apart: bool) -> None:
    league = config(game, **top)
    assert league.same_author_tables is top.get("same_author_tables", False)
    assert authors_apart(league) is apart


@pytest.mark.parametrize(("value", "shown"), [('"no"', "'no'"), ("0", "0"), ("[]", "[]")])
@pytest.mark.fast
def test_a_bad_same_author_tables_is_one_line(tmp_path: Path, value: str, shown: str) -> None:
    path = tmp_path / "league.toml"
    path.write_text(f'name = "authors"\nvariant = "draw"\nsame_author_tables = {value}\n')
    with pytest.raises(ConfigError) as caught:
        load_league(path)
    assert str(caught.value) == f"{path}: key 'same_author_tables' must be true or false, got {shown}"


@pytest.mark.fast
def test_the_ladders_rules_follow_the_league(tmp_path: Path) -> None:
    """What the ladder hands the matchmaker: the rule for a four-player league, not for one that allows it."""

    def rules(league) -> MatchmakingRules:
        return Ladder(None, Served(league, 1), tmp_path, lambda version: None, None).rules  # type: ignore[arg-type]

    assert rules(config()) == MatchmakingRules(sides=4, authors_apart=True)
    assert rules(config(same_author_tables=True)) == MatchmakingRules(sides=4, authors_apart=False)
    assert rules(config({"variant": "draw"})) == MatchmakingRules(sides=2, authors_apart=False)


# --- the finals --------------------------------------------------------------------------------------------------

FIELD = ["ann-a-v1", "ann-b-v2", "bob-v1", "cy-v3", "dee-v1", "ann-c-v1"]
AUTHORS = [1, 1, 2, 3, 4, 1]


def finals_tables(league, seed: str) -> list[tuple[str, ...]]:
    """The finals' tables (names per side) as their tournament file draws them under ``seed``."""
    bots = [BotSpec(name=name, command=("builtin:random",)) for name in FIELD]
    text = league_tournament_file(league, "finals", bots, Path("finals"), deal_sets=1,
                                  top=schedule_lines(league, FIELD, AUTHORS, 0))
    return [tuple(FIELD[e] for e in table) for table in table_spec(text).schedule(seed).tables()]


@pytest.mark.fast
def test_the_finals_keep_authors_apart() -> None:
    assert schedule_lines(config(), FIELD, AUTHORS, 0) == [
        'format = "balanced"', "tables = 6", 'apart = [["ann-a-v1", "ann-b-v2", "ann-c-v1"]]']
    assert schedule_lines(config(same_author_tables=True), FIELD, AUTHORS, 9) == ['format = "balanced"', "tables = 9"]
    assert schedule_lines(config({"variant": "draw"}), FIELD, AUTHORS, 0) == []  # a round robin: pairs meet


@pytest.mark.parametrize("seed", [f"finals-{i}" for i in range(6)])
@pytest.mark.fast
def test_the_finals_tables_seat_each_author_at_most_once(seed: str) -> None:
    ann = {name for name, author in zip(FIELD, AUTHORS) if author == 1}
    tables = finals_tables(config(), seed)
    assert len(tables) == 6 and all(len(ann & set(table)) == 1 for table in tables)  # ann at every table, once
    allowed = finals_tables(config(same_author_tables=True), seed)
    assert any(len(ann & set(table)) > 1 for table in allowed)


@pytest.mark.fast
async def test_the_finals_file_groups_the_versions_by_author(tmp_path: Path) -> None:
    """From the database: the frozen field's versions, with their bots' authors, become the file's ``apart``."""
    bots = {name: EXAMPLES / "random_bot.py" for name in ("ann-a", "bob", "ann-b", "cy", "dee")}
    sync, served, work, ids = setup(sqlite_url(tmp_path / "data"), tmp_path, bots, MEXICAN_TRAIN,
                                    authors={"ann-a": "ann", "ann-b": "ann"})
    frozen = sync.freeze(served.league_id, list(ids.values()))
    database = AsyncDatabase(sync)
    finals = Finals(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    spec, text, _names = await finals.tournament(frozen, FinalsSettings(deal_sets=1), frozen.field)
    assert spec.apart == (("ann-a-v1", "ann-b-v1"),) and 'apart = [["ann-a-v1", "ann-b-v1"]]' in text
    assert all(len({"ann-a-v1", "ann-b-v1"} & {spec.bots[e].name for e in table}) == 1
               for table in spec.schedule("seed").tables())
    await database.close()


@pytest.mark.fast
def test_finals_with_fewer_authors_than_sides_refuse_to_start() -> None:
    with pytest.raises(LeagueError) as caught:
        schedule_lines(config(), FIELD[:5], [1, 1, 2, 2, 3], 0)
    assert str(caught.value) == ("the field has 5 versions of 3 authors and a table seats 4 versions of 4 different "
                                 "authors (same_author_tables = false): no finals can be played")
    assert schedule_lines(config(same_author_tables=True), FIELD[:5], [1, 1, 2, 2, 3], 0) == [
        'format = "balanced"', "tables = 5"]


# --- the ladder, played ------------------------------------------------------------------------------------------

THREE_PLAYER_BLOCK = {"variant": "block", "players": 3, "options": {"target": 1}}


async def test_three_player_tables_seat_authors_once(tmp_path: Path) -> None:
    """ann's two bots, bob's and cy's at three-player Block (SQLite, sandboxed example bots, two tables at once):
    the database's versions reach the matchmaker with their authors, and every table played seats one of ann's
    versions with bob's and cy's."""
    bots = {"ann-a": EXAMPLES / "random_bot.py", "ann-b": EXAMPLES / "greedy_bot.py",
            "bob": EXAMPLES / "random_bot.py", "cy": EXAMPLES / "greedy_bot.py"}
    sync, served, work, ids = setup(sqlite_url(tmp_path / "data"), tmp_path, bots, THREE_PLAYER_BLOCK,
                                    authors={"ann-a": "ann", "ann-b": "ann"}, concurrency=2, coverage=2, placement=1)
    authors = {a.name: str(a.id) for a in sync.authors()}
    assert {state.id: state.author for state in version_states(sync, served.league_id, 1)} == {
        str(ids["ann-a"]): authors["ann"], str(ids["ann-b"]): authors["ann"], str(ids["bob"]): authors["author-bob"],
        str(ids["cy"]): authors["author-cy"]}
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log())
    await play_until(ladder, database, lambda db: done_tables(3)(db, served.league_id))
    done = sync.tables_in(served.league_id, [DONE])
    ann = {ids["ann-a"], ids["ann-b"]}
    assert len(done) >= 3 and all(len(ann & set(t.versions)) == 1 for t in done)
    assert all({ids["bob"], ids["cy"]} <= set(t.versions) for t in done)
    await database.close()
