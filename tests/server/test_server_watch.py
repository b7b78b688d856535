"""What ``arena watch`` and ``arena status`` show of a served tournament: a line per game and the full standings at
the end; with ``--moves``, moves numbered per game from 1 with their rounds; and the entrants given up on, kept
and shown by the server (watch, status, server.json, its log).

Real server processes, real bot processes over real gRPC, the CLI through subprocess; no sleeps (output lines,
watch streams and files are waited on with deadlines)."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from arena.cli.server import WatchView
from arena.protocol import arena_pb2 as apb
from arena.tournament.standings import Standings, outcome_of

from support.paths import ROOT
from support.servers import (
    BackgroundWatch, FINISHED, Server, bot_entry, index, named, random_bot, records, registry, submit, tournament,
    watch,
)
from support.tables import rendered



def test_watch_prints_each_game_then_the_standings(tmp_path: Path) -> None:
    from support.servers import Server, bot_entry, named, registry, tournament

    tag = uuid.uuid4().hex
    watched = str(ROOT / "tests" / "bots" / "watched_bot.py")
    bots = (bot_entry("slow", watched, "--mode", "slow", "--delay", "0.1", "--tag", tag)
            + bot_entry("quick", str(ROOT / "bots" / "python" / "random_bot.py"), "--tag", tag))
    server = Server(tmp_path / "data", *registry(tmp_path, bots))
    try:
        path = tmp_path / "t.toml"
        path.write_text(tournament(games=3, name="watched", bots=named("slow", "quick")))
        submitted = server.cli("submit", str(path))
        assert submitted.returncode == 0, submitted.stderr
        tournament_id = re.match(r"submitted (\w+):", submitted.stdout).group(1)
        out = server.cli("watch", tournament_id)
        status = server.cli("status", tournament_id)
    finally:
        server.stop()
    assert out.returncode == 0, out.stdout + out.stderr
    recorded = int(re.match(rf"tournament {tournament_id}: 'watched' \(block\), \w+; (\d)/6 games recorded",
                            out.stdout).group(1))
    game_lines = [line for line in out.stdout.splitlines() if line.startswith("game ")]
    assert len(game_lines) == 6 - recorded, out.stdout
    assert all(re.fullmatch(r"game \d finished \(\d/6\): (slow|quick) \d+, (slow|quick) \d+; winner \w+", line)
               for line in game_lines), game_lines
    assert "started" not in out.stdout and "standings after" not in out.stdout
    header = next(line for line in out.stdout.splitlines() if "rank" in line and "entrant" in line)
    assert re.search(r"scored\s*┃\s*conceded", header), header
    assert "pairwise (W-D-L of the" in out.stdout
    pairwise = [line for line in out.stdout.splitlines() if re.match(r"│ (slow|quick) +│", line)]
    cells = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]] for line in pairwise}
    assert sorted(cells) == ["quick", "slow"], out.stdout
    for name, row in cells.items():
        wins, draws, losses = map(int, next(c for c in row if c != "·").split("-"))
        assert wins + draws + losses == 6, (name, row)
    for name in ("slow", "quick"):  # the same games, wins and points as the server's own standings
        watch_row = re.search(rf"│\s*\d+\s*│ {name}\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│", out.stdout)
        status_row = re.search(rf"│\s*\d+\s*│ {name}\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│\s*(\d+)\s*│", status.stdout)
        assert watch_row and status_row and watch_row.groups() == status_row.groups(), (out.stdout, status.stdout)
    assert out.stdout.rstrip().splitlines()[-1].startswith(f"tournament {tournament_id} finished: 6/6 games")


# --- a server with a bot that dies for good ----------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose registry has alpha and beta (random bots) and dying: a bad bot that crashes after 3 decisions,
    run from a folder of its own so a test can delete its program (its restarts then fail)."""
    folder = tmp_path_factory.mktemp("hardening-server")
    dying = folder / "dying"
    dying.mkdir()
    for name in ("bad_bot.py", "testbot.py"):
        shutil.copy(ROOT / "tests" / "bots" / name, dying / name)
    tag = uuid.uuid4().hex
    bots = (random_bot("alpha", tag) + random_bot("beta", tag)
            + bot_entry("dying", str(dying / "bad_bot.py"), "--mode", "exit_mid", "--tag", tag))
    running = Server(folder / "data", *registry(folder, bots))
    running.dying = dying / "bad_bot.py"
    yield running
    running.stop()


def lines_of_watch(events: list[apb.TournamentEvent]) -> list[str]:
    """What `arena watch --moves` prints for these events (its WatchView, its lines captured)."""
    lines: list[str] = []
    view = WatchView(moves=True)
    view.out = lines.append  # type: ignore[method-assign]
    for ev in events:
        view.show(ev)
    return lines


def move_rounds(record: dict) -> list[int]:
    """The round (from 1) of each of the game's moves, in order."""
    return [r + 1 for r, rnd in enumerate(record["rounds"]) for _ in rnd.get("moves", ())]


def test_watch_numbers_moves_from_1_and_status_prints_the_table(server: Server) -> None:
    """Matches of several rounds: every game watched from its start shows moves 1 to N with each move's round, N
    being the record's move count; a game joined late shows the end of that sequence. `arena status ID` then prints
    the table `arena run` would, from the same records."""
    stub = server.stub()
    text = tournament(games=2, concurrency=1).replace("target = 1", "target = 40")
    info = submit(stub, text)
    events = watch(stub, info.id, moves=True)
    assert events[-1].finished.tournament.state == FINISHED, events[-1]
    stored = {index(r): r for r in records(server.data / "tournaments" / info.id)}
    assert sorted(stored) == [0, 1, 2, 3]
    shown: dict[int, list[tuple[int, int]]] = {}
    for line in lines_of_watch(events):
        move = re.match(r"  game (\d+) round (\d+) move (\d+): seat \d \((alpha|beta)\): ", line)
        if move:
            game, round_number, number = map(int, move.groups()[:3])
            shown.setdefault(game, []).append((number, round_number))
    started = {e.game_started.index for e in events if e.HasField("game_started")}
    assert {1, 2, 3} <= started, "concurrency 1: games 1 to 3 start after the watch"
    assert any(len(stored[g]["rounds"]) > 1 for g in started), "some match has several rounds"
    for game, record in stored.items():
        rounds = move_rounds(record)
        expected = list(zip(range(1, len(rounds) + 1), rounds))
        if game in started:
            assert shown.get(game) == expected, (game, lines_of_watch(events)[:8])
        else:
            assert shown.get(game, []) == expected[len(expected) - len(shown.get(game, [])):], game

    status = server.cli("status", info.id)
    assert status.returncode == 0, status.stderr
    local = Standings(group_size=2)
    for record in stored.values():
        local.add(outcome_of(record))
    assert rendered(local.table("standings after 4 games")) in status.stdout, status.stdout


def test_the_server_shows_the_given_up_entrants(server: Server) -> None:
    """dying passes the check before the first game; its program is deleted after a game is recorded, so its
    restarts fail until its pool gives up on it: the tournament finishes with forfeits, and the server says so in
    the watch, in status, in server.json and in its log."""
    stub = server.stub()
    info = submit(stub, tournament(games=6, concurrency=1, bots=named("dying", "alpha")))
    live = BackgroundWatch(stub, info.id)
    live.wait_games(1, 120)
    server.dying.unlink()
    live.join(180)
    final = live.events[-1].finished.tournament
    assert final.state == FINISHED and final.games_done == 12, final
    assert len(final.given_up) == 1, final
    line = final.given_up[0]
    assert line.startswith("bot 'dying' failed to start 3 times in a row and was given up: its later games were "
                           "forfeits; last failure: the bot did not start: "), line
    server.wait_line(rf"^arena: entrant given up \(id={info.id} detail=bot 'dying' failed to start 3 times ", 30)
    status = server.cli("status", info.id)
    assert status.returncode == 0, status.stderr
    assert f"warning: {line}" in status.stdout.splitlines()
    saved = json.loads((server.data / "tournaments" / info.id / "server.json").read_text())
    assert saved["given_up"] == [line]
    watched = server.cli("watch", info.id)
    assert watched.stdout.splitlines()[-1] == f"warning: {line}"
