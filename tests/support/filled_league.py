"""A league database with something in every table, written through the storage API as a server writes it: authors
(one revoked), bots, versions in several states (ready with how they run, failed with a reason, deleted, dial-in),
ladder tables rated with their games, seats and online ratings (one table failed), challenges (done with the SPRT's
verdict, failed), a board rating, a team's webhook and feed token, the notices of it all and their deliveries
(one delivered after a retry), and the league frozen with its finals failed (a frozen league's server plays
nothing: its rows stay as copied); a second league beside it. What ``arena league copy-database`` is tested on."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from arena.league.authors import create_author
from arena.league.rules.config import SignupSettings
from arena.league.play.ladder import RECORD
from arena.league.rules.lifecycle import BUILDING, CHECKING, FAILED, READY
from arena.league.rules.model import Rating, Runnable, Seat
from arena.league.storage.db import Database, create_engine
from arena.league.storage.tables import METADATA

LEAGUE = "test"
"""The league's name and variant, those of the test league file (support.league.GAME)."""
VARIANT = "block"


def sha(n: int) -> str:
    return f"{n:064x}"


def ready(database: Database, bot_id: int, n: int) -> int:
    """A ready version of the bot, with its build log, check report and how it runs."""
    version, _ = database.add_version(bot_id, sha(n))
    runnable = Runnable(("python3", "bot.py"), f"{version.id}/src", "grpc")
    database.transition(version.id, BUILDING)
    database.transition(version.id, CHECKING, build_log=f"built {n}\n", runnable=runnable)
    database.transition(version.id, READY, check_report={"games": 2, "ok": True, "note": f"checked {n}"})
    return version.id


def rate(mu_shift: float):
    """An online rating update: every side's rating moved by ``mu_shift`` (the first side up, the others down)."""
    def update(before):
        return [((old.mu if old else 25.0) + (mu_shift if side == 0 else -mu_shift),
                 (old.sigma if old else 8.3) * 0.9) for side, old in enumerate(before)]
    return update


def fill_league(database: Database) -> dict[str, int]:
    """Every table of the league's schema given rows; the ids of the versions, by bot name."""
    league = database.ensure_league(LEAGUE, "Test league", VARIANT)
    other = database.ensure_league("other", "Another league", "draw")
    ann, _ = create_author(database, "ann")
    bob, _ = create_author(database, "bob")
    gone, _ = create_author(database, "gone")
    database.revoke_author(gone.id)
    database.add_invite(league.id, "c" * 64, 3, 24)
    signed = database.sign_up(league.id, LEAGUE, SignupSettings(mode="invite"), "Signed", "lead", "d" * 64,
                              "10.0.0.1", "c" * 64)
    helper = database.add_member(signed.id, "helper", "e" * 64)
    database.revoke_member(helper.id)
    database.record_audit(league.id, signed.id, helper.id, "Signed/helper", "upload", "bot 'x' version 1")
    database.record_audit(None, None, None, "the operator", "add-author", "team 'ann'")
    database.set_webhook(league.id, ann.id, "https://hooks.example.org/arena", "f" * 43)
    database.feed_token(bob.id, "b" * 43)
    rand = database.add_bot(league.id, ann.id, "rand")
    greedy = database.add_bot(league.id, bob.id, "greedy")
    search = database.add_bot(league.id, ann.id, "search")
    elsewhere = database.add_bot(other.id, bob.id, "elsewhere")
    ids = {"rand": ready(database, rand.id, 1), "greedy": ready(database, greedy.id, 2),
           "search": ready(database, search.id, 3)}
    old = ready(database, rand.id, 4)
    database.mark_deleted([old], "versions_kept: 1")
    broken, _ = database.add_version(greedy.id, sha(5))
    database.transition(broken.id, BUILDING)
    database.transition(broken.id, FAILED, "the build failed: exit status 1", build_log="error: no bot.py\n")
    database.add_dial_in_version(search.id, sha(6))
    ready(database, elsewhere.id, 7)

    pairs = [("rand", "greedy"), ("greedy", "search"), ("search", "rand"), ("rand", "greedy")]
    tables = database.queue_tables(league.id, [([ids[a], ids[b]], f"{a} against {b}: fewest games")
                                               for a, b in pairs])
    for number, table in enumerate(tables[:3]):
        database.start_table(table.id)
        first, second = (ids[name] for name in pairs[number])
        played = [(f"g{deal}-{seat}", [Seat(first, 10 + deal, 1.0), Seat(second, deal, 0.0)] if seat == 0
                   else [Seat(second, 7, 0.5), Seat(first, 7, 0.5)]) for deal in range(2) for seat in range(2)]
        assert database.finish_table(table.id, RECORD.format(id=table.id), played, rate(1.5 + number),
                                     single_games=number == 2)
    database.start_table(tables[3].id)
    database.fail_table(tables[3].id, "rand-v1 could not start: exit status 1")
    database.set_rating(Rating(ids["rand"], "bt", 0.4, 0.2, 8))

    won = database.add_challenge(league.id, ann.id, ids["search"], ids["greedy"], 20)
    database.start_challenge(won.id)
    database.end_challenge(won.id, {"verdict": "stronger", "llr": 2.99, "deal_sets": 14, "score": 0.71})
    lost = database.add_challenge(league.id, None, ids["rand"], ids["search"], 10)
    database.end_challenge(lost.id, None, "rand-v1 could not start")

    database.freeze(league.id, list(ids.values()))
    database.set_finals(league.id, {"state": "failed", "deal_sets": 2, "tables": 0, "scheduled": 0,
                                    "group_size": 2, "started_at": 1700000000.0,
                                    "error": "rand-v1 cannot play: its folder is gone"})
    first = database.deliveries_of(ann.id)[0]
    database.delivery_tried(first.id, "answered 500 Internal Server Error", datetime(2030, 1, 1, tzinfo=UTC))
    database.delivery_tried(first.id, None, None)
    return ids


def rows_of(url: str) -> dict[str, list[tuple]]:
    """Every table's rows in primary-key order, moments as aware UTC datetimes (SQLite's come back naive): what
    two databases holding the same league agree on."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {table.name: [tuple(in_utc(value) for value in row) for row in connection.execute(
                sa.select(table, *sql_nulls(table)).order_by(*table.primary_key.columns))]
                for table in METADATA.sorted_tables}
    finally:
        engine.dispose()


def sql_nulls(table: sa.Table) -> list:
    """Whether each JSON column holds SQL NULL (the JSON ``null`` reads back as ``None`` too, so only SQL tells)."""
    return [column.is_(None).label(f"{column.name}_is_null") for column in table.columns
            if isinstance(column.type, sa.JSON)]


def in_utc(value):
    if not isinstance(value, datetime):
        return value
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
