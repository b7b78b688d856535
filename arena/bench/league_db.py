"""How fast the league's database records game results: ``python -m arena.bench.league_db URL [N]``.

Each game is committed on its own (index row and seat rows in one transaction), as the league records a game when
it ends, so the rate is what a running league can sustain, on SQLite or PostgreSQL. A measurement, not a test:
``arena bench league-db [--database URL] [--games N]`` prints it as JSON.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import Any

from arena.league.rules.errors import NotFound
from arena.league.rules.model import Seat
from arena.league.storage.db import Database, open_database

BENCH_LEAGUE = "bench-results"


def results_write_rate(url: str, n: int = 1000) -> dict[str, Any]:
    """Record ``n`` two-seat games, one transaction each, into the database at ``url``; the rate."""
    if n < 1:
        raise ValueError(f"expected at least one game, got {n}")
    database = open_database(url)
    try:
        league, versions = _entrants(database)
        started = time.perf_counter()
        run = f"runs/{BENCH_LEAGUE}/{time.time_ns()}.jsonl"
        for number in range(n):
            winner = number % 2
            database.record_game(league, run, f"g{number}", [
                Seat(versions[0], 100 if winner == 0 else 40, 1.0 if winner == 0 else 0.0),
                Seat(versions[1], 100 if winner == 1 else 40, 1.0 if winner == 1 else 0.0)])
        seconds = time.perf_counter() - started
    finally:
        database.close()
    result = {"database": database.dialect, "games": n, "seconds": round(seconds, 4),
              "games_per_second": round(n / seconds, 1)}
    return result


def _entrants(database: Database) -> tuple[int, tuple[int, int]]:
    """The bench's league and two versions playing each other, made once per database."""
    league = database.ensure_league(BENCH_LEAGUE, "Database write-rate benchmark", "draw")
    try:
        author = database.author(BENCH_LEAGUE)
    except NotFound:
        author = database.add_author(BENCH_LEAGUE, hashlib.sha256(b"bench, no token").hexdigest())
    ids = []
    for name in ("bench-a", "bench-b"):
        try:
            bot = database.bot(league.id, name)
        except NotFound:
            bot = database.add_bot(league.id, author.id, name)
        version, _ = database.add_version(bot.id, hashlib.sha256(name.encode()).hexdigest())
        ids.append(version.id)
    return league.id, (ids[0], ids[1])


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2 or (len(argv) == 2 and not argv[1].isdigit()):
        print("usage: python -m arena.bench.league_db DATABASE_URL [GAMES]", file=sys.stderr)
        return 2
    print(json.dumps(results_write_rate(argv[0], int(argv[1]) if len(argv) == 2 else 1000)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
