"""Tournaments on a Ray cluster of three nodes started on this machine (``ray.cluster_utils.Cluster``): the same
tournament through Ray (one actor a node, or two: ``--workers 2``) and in-process deals and plays the same games; a
node killed mid-run costs only its games in flight, played again elsewhere, none lost and none recorded twice; an
actor killed on a live node is replaced in its slot; a driver killed with kill -9 resumes; a bot missing on one node
stops the run before any game, naming the node and the bot. Every bot is a real sandboxed process."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest
import trio

from arena.league.rules.lifecycle import DONE
from arena.league.rules.model import ONLINE
from arena.league.storage.db import AsyncDatabase, sqlite_url
from arena.league.play.ladder import RECORD, Ladder
from arena.league.intake.pipeline import BuiltBots
from arena.league.rules.rating import recompute
from arena.records.replay import verify_run
from arena.tournament import phases
from arena.tournament.errors import EntrantsCannotPlay
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.ladder import EXAMPLES, STOPPED_BY_THE_ARENA, STUCK, Log, done_tables, play_until, setup
from support.league import rated_with_seats
from support.paths import ROOT
from support.processes import bot_processes, kill_descendants
from support.siblings import ENTRANTS, deal_seen_alive, games_of, learned, observe
from support.siblings import tournament_text as tournament_text_of_siblings
from support.waiting import wait_for

ray = pytest.importorskip("ray", reason="the Ray backend's tests need the ray extra (pip install -e '.[ray]'; "
                                        "scripts/test.sh installs it)")
from ray._private import ray_constants  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from arena.cluster import ray_backend, ray_factory  # noqa: E402
from support.ray_cluster import NODE, local_cluster  # noqa: E402

GREEDY_BOT = ROOT / "bots" / "python" / "greedy_bot.py"
SLEEPY_BOT = ROOT / "arena" / "bench" / "sleepy_bot.py"
ONLY_ON_PATH = "ray-test-only-on-path-bot"
"""A bot program found on the PATH of the cluster's usual nodes, and not on the PATH of a node added to miss it."""


@pytest.fixture(scope="module")
def path_folder() -> Iterator[Path]:
    """A folder holding the program :data:`ONLY_ON_PATH` (readable by a bot's own user when the arena is root)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-ray-path-"))
    folder.chmod(0o755)
    program = folder / ONLY_ON_PATH
    program.write_text(f"#!{sys.executable}\nfrom arena.botkit import serve\nserve(lambda request: 0, name='first')\n")
    program.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(path_folder: Path) -> Iterator[Cluster]:
    """A head and two more nodes on this machine, this test process their driver."""
    with local_cluster(2, {"PATH": f"{path_folder}{os.pathsep}{os.environ.get('PATH', '')}"}) as started:
        yield started


def tournament_text(out: Path, bots: list[list[str]], games: int, concurrency: int, move_ms: int = 5000,
                    duplicate: bool = True) -> str:
    """Block to one point (a game is a round or two) between the given bot commands, duplicate deals by default."""
    entries = "".join(f'[[bots]]\nname = "bot{number}"\ncommand = {json.dumps(command)}\n'
                      for number, command in enumerate(bots))
    return (f'name = "ray"\nvariant = "block"\ngames = {games}\nduplicate = {str(duplicate).lower()}\nconcurrency = {concurrency}\n'
            f'seed = "ray-test"\noutput = "{out}"\n[options]\ntarget = 1\n[time]\nmove_ms = {move_ms}\n{entries}')


def sleepy(tag: str, sleep_ms: int = 10) -> list[str]:
    return [sys.executable, str(SLEEPY_BOT), "--sleep-ms", str(sleep_ms), "--tag", tag]


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "games.jsonl").read_text().splitlines()]


def index(record: dict[str, Any]) -> int:
    """A record's schedule index (an int64: a string in protobuf's JSON mapping; absent when 0)."""
    return int(record.get("index", 0))


def arena(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def assert_verifies(run: Path, games: int) -> None:
    report = verify_run(run, jobs=1)
    assert (report.games, report.mismatches, report.seed_checked) == (games, [], True)


def events(run: Path, name: str) -> list[dict[str, Any]]:
    """The run's ``arena.log`` events called ``name``."""
    lines = [json.loads(line) for line in (run / "arena.log").read_text().splitlines()]
    return [line for line in lines if line["event"] == name]


def live_node_ids() -> list[str]:
    return [node["NodeID"] for node in ray.nodes() if node["Alive"]]


def play(record: dict[str, Any]) -> list[Any]:
    """What a game was, without what differs from run to run (timings, match ids)."""
    return [(round_["deal"], [(m.get("seat", 0), m["action"], m.get("forced", False)) for m in round_["moves"]])
            for round_ in record["rounds"]]


@pytest.mark.parametrize("actors", [1, 2])
def test_ray_and_in_process_play_the_same_games(cluster: Cluster, tmp_path: Path, actors: int) -> None:
    # The greedy bot is deterministic, so the same deals give the same moves: every game must match exactly.
    bot = [sys.executable, str(GREEDY_BOT)]
    text = tournament_text(tmp_path / "ray", [bot, bot, bot], games=3, concurrency=6)
    path = tmp_path / "t.toml"
    path.write_text(text)

    workers = ("--workers", str(actors)) if actors > 1 else ()
    through_ray = arena("run", str(path), "--backend", "ray", "--address", cluster.address, *workers)
    assert through_ray.returncode == 0, through_ray.stdout + through_ray.stderr
    assert "records: " in through_ray.stdout and "(18 games)" in through_ray.stdout
    local = tmp_path / "local"
    assert arena("run", str(path), "--out", str(local)).returncode == 0

    remote_games, local_games = records(tmp_path / "ray"), records(local)
    assert sorted(index(g) for g in remote_games) == list(range(18))
    assert len(local_games) == 18
    by_index = {index(g): g for g in local_games}
    for game in remote_games:
        twin = by_index[index(game)]
        assert (game["seed"], game["seats"], game["result"]) == (twin["seed"], twin["seats"], twin["result"])
        assert play(game) == play(twin)
    assert_verifies(tmp_path / "ray", 18)
    bots = json.loads((tmp_path / "ray" / "bots.json").read_text())
    assert [len(set(b["nodes"])) for b in bots] == [3, 3, 3], "every entrant started on every node, named once"
    assert [len(b["nodes"]) for b in bots] == [3, 3, 3]
    assert all(b["starts"] >= 3 * actors for b in bots), f"each actor started each entrant, summed: {bots}"
    nodes = live_node_ids()
    expected = {f"node-{node[:8]}" + (f"-{slot}" if actors > 1 else "") for node in nodes for slot in range(actors)}
    folders = {folder.name: folder for folder in (tmp_path / "ray" / "logs").iterdir()}
    assert set(folders) == expected, "a log folder of its own for each actor"
    assert all(list(folder.glob("bot*.log")) for folder in folders.values()), "each actor started its own bots"
    stopped = events(tmp_path / "ray", "actor_stopped")
    assert len({event["node"] for event in stopped}) == len(stopped) == 3 * actors
    assert all(event["games"] >= 1 for event in stopped), f"every actor played: {stopped}"
    assert sum(event["games"] for event in stopped) == 18
    if actors > 1:  # the events name the actor, not only the node
        assert {event["node"].rsplit(" actor ", 1)[1] for event in stopped} == {str(s) for s in range(actors)}


async def test_a_killed_node_loses_and_doubles_nothing(cluster: Cluster, tmp_path: Path) -> None:
    doomed = cluster.add_node(**NODE)  # in the main thread (Ray sets a signal handler); nothing else runs yet
    cluster.wait_for_nodes()
    tag = uuid.uuid4().hex
    text = tournament_text(tmp_path / "run", [sleepy(tag), sleepy(tag)], games=16, concurrency=8)
    spec = spec_from_dict(tomllib.loads(text))
    backends = []

    def keep(setup: Any) -> Any:
        backend = ray_factory(8)(setup)
        backends.append(backend)
        return backend

    recorded = []
    kill_now = trio.Event()

    def doomed_is_playing() -> bool:
        return any(actor.node_id == doomed.node_id and actor.in_flight for actor in backends[0].actors)

    def on_game(record: dict[str, Any]) -> None:
        # Mid-run and while the node has games in flight (its actor starts in the background: on a busy machine it
        # may have played nothing yet when the sixth game is recorded).
        recorded.append(index(record))
        if len(recorded) >= 6 and not kill_now.is_set() and doomed_is_playing():
            # Its actor's process first, here and now, so the games it holds cannot finish while the node is
            # being removed (a raylet's death reaches its workers only later).
            kill_descendants(doomed.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid)
            kill_now.set()

    async with trio.open_nursery() as nursery:
        async def kill_the_node() -> None:
            await kill_now.wait()
            # Not graceful: its raylet, its actor and everything they started are killed at once.
            await trio.to_thread.run_sync(lambda: cluster.remove_node(doomed, allow_graceful=False))

        nursery.start_soon(kill_the_node)
        summary = await run_tournament(spec, text, tmp_path / "run", backend=keep, on_game=on_game)
        nursery.cancel_scope.cancel()  # a run that never saw the node playing ends here, and fails below
    assert kill_now.is_set(), "the node was killed while it played"
    backend = backends[0]
    lost_label = next(actor.label for actor in backend.actors if actor.node_id == doomed.node_id)
    assert backend.replayed, "the killed node had games in flight"
    assert {label for _, label in backend.replayed} == {lost_label}
    assert summary.played_now == 32
    indices = [index(g) for g in records(tmp_path / "run")]
    assert sorted(indices) == list(range(32)), "every game exactly once"
    assert sorted(recorded) == list(range(32))
    for number, _ in backend.replayed:  # played again in full, on another node, with the seed of its schedule slot
        game = next(g for g in records(tmp_path / "run") if index(g) == number)
        assert game["seed"] == f"ray-test/0/{number // 2}" and not game.get("faults")
    assert_verifies(tmp_path / "run", 32)
    wait_for(lambda: not bot_processes(tag), 20, "every bot to stop, the lost node's too")


@pytest.mark.parametrize("actors", [1, 2])
async def test_an_actor_killed_on_a_live_node_is_replaced(cluster: Cluster, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, actors: int) -> None:
    # Look for missing actors at every game: the game the dead actor held is sent again after its loss is noted, so
    # its replacement is started then, however fast the run.
    monkeypatch.setattr(ray_backend, "NODE_REFRESH_S", 0.0)
    tag = uuid.uuid4().hex
    text = tournament_text(tmp_path / "run", [sleepy(tag), sleepy(tag)], games=10, concurrency=6)
    backends = []

    def keep(setup: Any) -> Any:
        backends.append(ray_factory(6, actors)(setup))
        return backends[-1]

    killed = []

    def on_game(record: dict[str, Any]) -> None:
        if not killed:  # at the first recorded game, the first node's last actor, its process only: the node lives on
            actors_of_first_node = [a for a in backends[0].actors if a.node_id == backends[0].actors[0].node_id]
            killed.append(actors_of_first_node[-1])
            ray.kill(killed[0].handle)

    summary = await run_tournament(spec_from_dict(tomllib.loads(text)), text, tmp_path / "run", backend=keep,
                                   on_game=on_game, concurrency=6)
    backend, victim = backends[0], killed[0]
    assert victim.place.slot == actors - 1
    assert victim.lost and backend.replayed and {label for _, label in backend.replayed} == {victim.label}
    slots = Counter((actor.node_id, actor.place.slot) for actor in backend.actors)
    assert slots == {(node, slot): 1 + ((node, slot) == (victim.node_id, victim.place.slot))
                     for node in live_node_ids() for slot in range(actors)}, (
        "the dead actor's slot got a new actor, and no other slot one more")
    assert summary.played_now == 20 and sorted(index(g) for g in records(tmp_path / "run")) == list(range(20))
    assert_verifies(tmp_path / "run", 20)


def sleepy_run(tmp_path: Path, tag: str) -> tuple[Path, Path]:
    """A run of 24 games between two sleepy bots, 6 at once, to be cut in the middle: its folder and its file."""
    out, path = tmp_path / "run", tmp_path / "t.toml"
    path.write_text(tournament_text(out, [sleepy(tag), sleepy(tag)], games=12, concurrency=6))
    return out, path


def test_a_driver_killed_with_kill_9_resumes(cluster: Cluster, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    out, path = sleepy_run(tmp_path, tag)
    driver = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--backend", "ray", "--address",
                               cluster.address], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    records_file = out / "games.jsonl"
    try:
        wait_for(lambda: records_file.exists() and records_file.read_bytes().count(b"\n") >= 4, 120, "four games")
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    wait_for(lambda: not bot_processes(tag), 30, "the bots to stop with the driver's actors")
    complete = records_file.read_bytes().count(b"\n")
    assert 4 <= complete < 24, "the run must be interrupted in the middle"

    resumed = arena("run", str(path), "--resume", "--backend", "ray", "--address", cluster.address)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{complete} games were already recorded" in resumed.stdout
    assert sorted(index(g) for g in records(out)) == list(range(24)), "every game exactly once"
    assert_verifies(out, 24)


def test_ctrl_c_resume_keeps_the_actors_per_node(cluster: Cluster, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    out, path = sleepy_run(tmp_path, tag)
    driver = subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--backend", "ray", "--address",
                               cluster.address, "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT)
    records_file = out / "games.jsonl"
    try:
        wait_for(lambda: records_file.exists() and records_file.read_bytes().count(b"\n") >= 2, 120, "two games")
        driver.send_signal(signal.SIGINT)  # as a terminal's Ctrl-C
        stdout, stderr = driver.communicate(timeout=120)
    finally:
        driver.kill()
    assert driver.returncode == 130, stdout + stderr
    line = next(line for line in stdout.splitlines() if line.startswith("interrupted: "))
    resume = shlex.split(line.split("continue with: ", 1)[1])
    assert resume[-6:] == ["--backend", "ray", "--address", cluster.address, "--workers", "2"], line
    wait_for(lambda: not bot_processes(tag), 30, "every actor's bots to stop")
    recorded = records_file.read_bytes().count(b"\n")
    resumed = subprocess.run(resume, capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"{recorded} games were already recorded" in resumed.stdout
    assert sorted(index(g) for g in records(out)) == list(range(24)), "every game exactly once"
    assert len(events(out, "actor_stopped")) == 2 * 2 * 3, "both runs played on two actors a node"
    assert_verifies(out, 24)


async def test_a_bot_missing_on_a_node_stops_the_run(cluster: Cluster, tmp_path: Path) -> None:
    # The node's PATH lacks the folder of the bot's program, which every other node has; both its actors find it
    # missing, and it is said once.
    lacking = cluster.add_node(**NODE, env_vars={"PATH": os.environ["PATH"]})
    try:
        cluster.wait_for_nodes()
        text = tournament_text(tmp_path / "run", [[ONLY_ON_PATH], [sys.executable, str(GREEDY_BOT)]], games=2,
                               concurrency=2)
        with pytest.raises(EntrantsCannotPlay) as caught:
            await run_tournament(spec_from_dict(tomllib.loads(text)), text, tmp_path / "run",
                                 backend=ray_factory(2, 2))
        address = ray.nodes()[0]["NodeManagerAddress"]
        assert caught.value.problems == (
            ("bot0", f"on node {address} ({lacking.node_id[:8]}): the bot did not start: cannot run "
                     f"'{ONLY_ON_PATH}': it is not on the PATH"),)
        assert not (tmp_path / "run" / "games.jsonl").read_bytes(), "no game was played"
    finally:
        await trio.to_thread.run_sync(lambda: cluster.remove_node(lacking))


STUCK_MOVE_MS = 90_000
"""The stuck bot's clock: long enough that a game ended by it (a timeout) is told apart from one cut at once by a
withdrawal by the fault recorded, however busy the machine is."""


def nodes_asking(run: Path, name: str) -> set[str]:
    """The nodes (their log folders) on which the stuck bot of entrant ``name`` was asked for a decision."""
    return {log.parent.name for log in (run / "logs").glob(f"node-*/{name}*.log")
            if "ASKED" in log.read_text(errors="replace")}


async def test_a_withdrawal_cuts_games_on_every_node(cluster: Cluster, tmp_path: Path) -> None:
    """A bot that never answers, in two games in flight on two nodes: withdrawing its entrant stops its bots on every
    node at once, so each game ends with the fault a withdrawal gives on one machine
    (docs/explanation/league-ladder.md#leaving-mid-table), not with a timeout when its clock runs out."""
    stuck = tmp_path / "stuck" / "stuck_bot.py"
    stuck.parent.mkdir()
    stuck.write_text(STUCK)
    run = tmp_path / "run"
    # Two deals of their own, so both games play at once (the rotations of a duplicate deal never do).
    text = tournament_text(run, [[sys.executable, str(stuck)], [sys.executable, str(GREEDY_BOT)]], games=2,
                           concurrency=2, move_ms=STUCK_MOVE_MS, duplicate=False)
    backends = []

    def keep(setup: Any) -> Any:
        backends.append(ray_factory(2)(setup))
        return backends[-1]

    async with trio.open_nursery() as nursery:
        async def withdraw_once_stuck() -> None:
            await trio.to_thread.run_sync(wait_for, lambda: len(nodes_asking(run, "bot0")) == 2, 120,
                                          "both games to wait on the stuck bot, each on its own node")
            await backends[0].withdraw("bot0", "withdrawn by the test")

        nursery.start_soon(withdraw_once_stuck)
        summary = await run_tournament(spec_from_dict(tomllib.loads(text)), text, run, backend=keep)
    assert summary.played_now == 2
    for record in records(run):
        stuck_seat = record["seats"].index("bot0")
        assert [(f.get("seat", 0), f["kind"], f["message"]) for f in record["faults"]] == [
            (stuck_seat, *STOPPED_BY_THE_ARENA)], "cut at once by the withdrawal, not ended by the bot's clock"
    assert_verifies(run, 2)


@pytest.mark.parametrize("lanes_stopped", [True, False])
async def test_no_process_outlives_its_deals_rotation(
        cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lanes_stopped: bool) -> None:
    """The phases of a duplicate run on three nodes (arena/tournament/phases.py): every actor stops its lane's bots
    before the next phase opens, checked from outside as on one machine (tests/sandbox/test_duplicate_deals.py): the
    sibling bot's processes write their start, requests and stop. With the actors' lanes never stopped, processes that
    saw a deal outlive their phase and the check finds them."""
    monkeypatch.setattr(phases, "MAX_BLOCK", 4)  # blocks of 4 deal sets: 4 phases in a run of 8
    if not lanes_stopped:
        async def kept(self: Any, lane: int) -> None:
            return None

        monkeypatch.setattr(ray_backend.RayBackend, "stop_lane", kept)
    run = tmp_path / "run"
    text = tournament_text_of_siblings("flock", run, deal_sets=8)
    summary = await run_tournament(spec_from_dict(tomllib.loads(text)), text, run, backend=ray_factory(4))
    assert summary.played_now == 16
    games = games_of(records(run))
    seen = observe(run / "logs", ENTRANTS)
    assert set(seen.acts) == set(games)
    assert learned(seen, games) == []  # the filter holds on every node either way
    if lanes_stopped:
        assert deal_seen_alive(seen, games) == []
    else:
        assert deal_seen_alive(seen, games), "the check sees processes that outlive their phase"


def test_watchers_see_every_move_of_a_ray_server(cluster: Cluster, tmp_path: Path) -> None:
    from support.servers import FINISHED, Server, kinds, random_pair, submit, tournament, watch

    tag = uuid.uuid4().hex
    server = Server(tmp_path / "data", "--backend", "ray", "--address", cluster.address,
                    *random_pair(tmp_path, tag))
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=2, concurrency=4))
        events = watch(stub, info.id, moves=True)
        assert kinds(events)[-1] == "finished" and events[-1].finished.tournament.state == FINISHED
        stored = records(server.data / "tournaments" / info.id)
        assert sorted(index(g) for g in stored) == [0, 1, 2, 3]
        seen = Counter(e.move.game for e in events if e.HasField("move"))
        assert seen == {index(g): sum(len(r["moves"]) for r in g["rounds"]) for g in stored}, (
            "every move of a game played on a node reaches the watchers when the game ends")
        assert_verifies(server.data / "tournaments" / info.id, 4)
    finally:
        server.stop()
    wait_for(lambda: not bot_processes(tag), 20, "every bot to stop with the server")


async def test_a_ladder_table_on_ray_is_rated_once(cluster: Cluster, tmp_path: Path) -> None:
    """The ladder on the Ray backend (what ``arena serve --league ... --backend ray`` gives it): a table chosen by
    the matchmaker is played by the cluster's actors (real sandboxed bots on its nodes), its records verify, and it
    is rated once, as a table played here is."""
    bots = {"rand": EXAMPLES / "random_bot.py", "greedy": EXAMPLES / "greedy_bot.py"}
    sync, served, work, ids = setup(sqlite_url(tmp_path / "data"), tmp_path, bots, concurrency=1,
                                    coverage=1, placement=1)
    database = AsyncDatabase(sync)
    ladder = Ladder(database, served, tmp_path / "league", BuiltBots(work, served.config.limits), Log(),
                    backend=ray_factory(2))
    await play_until(ladder, database, lambda db: done_tables(1)(db, served.league_id))
    table = sync.tables_in(served.league_id, [DONE])[0]
    folder = ladder.table_folder(table)
    entrants = json.loads((folder / "bots.json").read_text())
    assert sorted(e["name"] for e in entrants) == ["greedy-v1", "rand-v1"]
    assert all(e["nodes"] and e["starts"] >= 1 for e in entrants)  # played by the cluster's actors, not here
    assert "node_ready" in (folder / "arena.log").read_text()
    report = verify_run(folder, jobs=1)
    assert (report.games, report.mismatches, report.seed_checked) == (2, [], True)
    assert [key for key, _ in sync.games_of_record(served.league_id, RECORD.format(id=table.id))] == ["0", "1"]
    done = sync.tables_in(served.league_id, [DONE])  # another table may have ended meanwhile: each rated once
    stored = {r.version_id: (r.mu, r.sigma, r.games) for r in sync.ratings(served.league_id, ONLINE)}
    assert stored == recompute(rated_with_seats(sync, served.league_id))
    assert {v: games for v, (_, _, games) in stored.items()} == {v: len(done) for v in ids.values()}
    assert sync.game_count(served.league_id) == 2 * len(done)
    await database.close()


def test_unworkable_cluster_options_are_one_line(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "t.toml"
    path.write_text(tournament_text(tmp_path / "run", [[sys.executable, str(GREEDY_BOT)]] * 2, games=1,
                                    concurrency=1))
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{probe.getsockname()[1]}"
    cases = [
        (("--backend", "ray", "--address", closed),
         f"error: cannot reach the Ray cluster at '{closed}': Connection refused; is its head running "
         f"(ray start --head)?\n"),
        (("--backend", "ray", "--address", "head-without-port"),
         "error: expected --address HOST:PORT (the head's GCS port, 6379 by default) or auto, got "
         "'head-without-port'\n"),
        (("--address", closed), f"error: --address is for --backend ray, got --backend local\n"),
    ]
    for options, message in cases:
        result = arena("run", str(path), *options, timeout=60)
        assert (result.returncode, result.stderr) == (2, message)
        assert not (tmp_path / "run").exists(), "nothing was started"


@pytest.mark.parametrize(("counts", "error"), [
    ("0", "error: --workers must be worker counts from 1 to 64, comma-separated, got '0'"),
    ("1,x", "error: --workers must be worker counts from 1 to 64, comma-separated, got '1,x'"),
])
def test_bench_cluster_refuses_bad_counts(counts: str, error: str) -> None:
    result = arena("bench", "cluster", "--workers", counts, timeout=60)
    assert (result.returncode, result.stderr) == (2, error + "\n")


@pytest.mark.fast
def test_a_failed_call_names_its_innermost_errors() -> None:
    # A node's check that raised inside its trio loop: Ray's error, whose text starts "+ Exception Group Traceback",
    # holding a nursery's group (leaves nested, one repeated).
    from ray.exceptions import RayActorError, RayTaskError

    missing = FileNotFoundError(2, "No such file or directory", "/tmp/arena-bots-123-x")
    group = ExceptionGroup("Exceptions from Trio nursery", [missing, ExceptionGroup("inner", [ValueError("bad"),
                                                                                             missing])])
    failed = RayTaskError("GameActor.check", "+ Exception Group Traceback (most recent call last):\n  | ...", group,
                          proctitle="ray::GameActor.check", pid=1, ip="10.0.0.7").as_instanceof_cause()
    assert str(failed).startswith("+ Exception Group Traceback")
    assert ray_backend.cause_line(failed) == ("FileNotFoundError: [Errno 2] No such file or directory: "
                                              "'/tmp/arena-bots-123-x'; ValueError: bad")
    many = ExceptionGroup("many", [KeyError(str(number)) for number in range(5)])
    assert ray_backend.cause_line(many) == "KeyError: '0'; KeyError: '1'; KeyError: '2'; and 2 more"
    # An actor that failed in its creation: the cause only as a traceback's text (with the colours of a terminal).
    died = RayActorError("a1", "The actor died because of an error raised in its creation task, \x1b[36mray::"
                         "GameActor.__init__()\x1b[39m (pid=1, ip=10.0.0.7)\n  File \"x.py\", line 3, in __init__\n"
                         "    raise OSError(28, 'full')\nOSError: [Errno 28] No space left on device", True)
    assert ray_backend.cause_line(died) == "OSError: [Errno 28] No space left on device"
    assert ray_backend.cause_line(RuntimeError("first\nlast")) == "RuntimeError: first (last)"
    assert ray_backend.cause_line(RuntimeError()) == "RuntimeError"


@pytest.mark.fast
def test_actors_log_apart_and_the_idlest_node_plays_next() -> None:
    def actor(node: str, slot: int, per_node: int = 2) -> Any:
        place = ray_backend.ActorPlace(f"{node}1fc48e74ab", f"10.0.0.7 ({node}1fc48e7)", slot, per_node)
        return ray_backend._Actor(place, handle=None)

    alone = actor("a", 0, per_node=1)  # one actor a node: named and logged as before there were several
    assert (alone.label, alone.place.logs_folder) == ("10.0.0.7 (a1fc48e7)", "node-a1fc48e7")
    second = actor("a", 1)
    assert (second.label, second.place.logs_folder) == ("10.0.0.7 (a1fc48e7) actor 1", "node-a1fc48e7-1")

    a0, a1, b0, b1 = actor("a", 0), actor("a", 1), actor("b", 0), actor("b", 1)
    everyone = [a0, a1, b0, b1]
    a0.in_flight = 1
    assert ray_backend.least_busy(everyone) is b0, "an idle node before a busy node's second actor"
    b0.in_flight = 1
    assert ray_backend.least_busy(everyone) is a1
    a1.in_flight = 1
    assert ray_backend.least_busy(everyone) is b1
    b1.in_flight, a0.in_flight = 1, 0
    assert ray_backend.least_busy(everyone) is a0, "the fewest games in flight first"


def test_a_real_actor_failure_names_its_cause(cluster: Cluster) -> None:
    class Failing:  # as GameActor: a trio loop whose nursery raises, in a threaded actor
        def check(self) -> None:
            async def start(path: str) -> None:
                open(path)

            async def main() -> None:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(start, "/nonexistent/bot.log")

            trio.run(main)

        def alive(self) -> None:
            pass

    actor = ray.remote(Failing).options(num_cpus=0, max_concurrency=2).remote()
    try:
        with pytest.raises(ray.exceptions.RayTaskError) as caught:
            actor.check.remote().future().result(timeout=60)
        assert ray_backend.cause_line(caught.value) == ("FileNotFoundError: [Errno 2] No such file or directory: "
                                                        "'/nonexistent/bot.log'")
        ray.kill(actor)
        killed: list[Exception] = []

        def refused() -> bool:  # ray.kill returns before the actor is gone: it may answer a call or two still
            try:
                actor.alive.remote().future().result(timeout=60)
            except ray.exceptions.RayActorError as error:
                killed.append(error)
            return bool(killed)

        wait_for(refused, 60, "the killed actor to refuse its calls")
        assert ray_backend.cause_line(killed[0]) == (
            "ActorDiedError: The actor died unexpectedly before finishing this task. (The actor is dead because it "
            "was killed by `ray.kill`.)")
    finally:
        ray.kill(actor)


def test_the_package_imports_ray_only_when_used() -> None:
    code = ("import sys, arena.cli, arena.cluster as c; "
            "print(sorted(m for m in ('ray',) if m in sys.modules)); "
            "print(sorted(c.__all__)); print(all(getattr(c, name) is not None for name in c.__all__)); "
            "print('ray' in sys.modules, c.require_ray() is sys.modules['ray'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.splitlines() == [
        "[]",  # the command line starts without Ray
        "['ClusterError', 'RayBackend', 'add_backend_arguments', 'backend_from', 'connect', 'ray_factory', "
        "'require_ray']",
        "True",
        "False True",  # the backend's module loads Ray only when asked for it
    ], out.stderr


LOCAL_RAY_DRIVER = """
import sys
import ray
from arena.cluster import connect
connect(None)  # as `arena run/serve --backend ray` without --address
ray.get(ray.remote(lambda: 1).remote())  # a worker started and serving too
print("ready", flush=True)
sys.stdin.read()
"""


def descendants(pid: int) -> set[int]:
    """``pid`` and every process below it (Ray's GCS, raylet, agents and workers are started by the driver's Ray)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        current = todo.pop()
        found.add(current)
        todo.extend(children.get(current, []))
    return found


def listening_sockets() -> dict[int, str]:
    """Every listening TCP socket of this machine, by inode: its local address as /proc/net/tcp{,6} give it."""
    found = {}
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                found[int(fields[9])] = decode_address(fields[1], v6)
    return found


def decode_address(hex_address: str, v6: bool) -> str:
    """``0100007F:1F90`` (little-endian words) as ``127.0.0.1:8080``; v4-mapped v6 as its v4 address."""
    import ipaddress

    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    packed = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(packed)
    if v6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return f"{address}:{int(port, 16)}"


def sockets_of(pids: set[int]) -> set[int]:
    inodes = set()
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue
        inodes.update(int(link[8:-1]) for link in links if link.startswith("socket:["))
    return inodes


def test_the_arenas_ray_listens_on_loopback_only(cluster: Cluster) -> None:
    """Attack surface: a Ray's GCS, raylet, workers and agents run whatever code a caller sends them. The one the
    arena starts for itself (no --address) must not be reachable from the network at all; and it is a Ray of its
    own, even with another one running on this machine (the test's cluster, which ``ray.init()`` would join)."""
    import ipaddress

    errors = tempfile.TemporaryFile("w+")
    driver = subprocess.Popen([sys.executable, "-c", LOCAL_RAY_DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=errors, text=True, cwd=ROOT)
    try:
        assert driver.stdout is not None
        if driver.stdout.readline() != "ready\n":
            errors.seek(0)
            raise AssertionError(f"the driver did not start its Ray: {errors.read()[-2000:]}")
        pids = descendants(driver.pid)
        names = {(Path(f"/proc/{pid}/comm").read_text().strip() if Path(f"/proc/{pid}/comm").exists() else "?")
                 for pid in pids}
        assert {"gcs_server", "raylet"} <= names, names
        listening = listening_sockets()
        theirs = [listening[inode] for inode in sockets_of(pids) if inode in listening]
        assert len(theirs) >= 4, theirs  # the GCS, the raylet's, the workers' and the driver's own servers at least
        beyond_loopback = [a for a in theirs if not ipaddress.ip_address(a.rsplit(":", 1)[0]).is_loopback]
        assert beyond_loopback == [], f"Ray listens beyond loopback on {beyond_loopback} (all: {theirs})"
    finally:
        driver.stdin.close()
        driver.wait(timeout=120)
        errors.close()


@pytest.mark.fast
def test_a_local_ray_on_the_network_is_refused() -> None:
    """Fail closed: should Ray ever take another address than loopback for the Ray the arena starts itself (a Ray
    version that reads its switch differently), the arena stops it and says so rather than run on it."""
    stopped = []

    class FakeRay:
        class util:
            @staticmethod
            def get_node_ip_address() -> str:
                return "10.0.0.7"

        @staticmethod
        def shutdown() -> None:
            stopped.append(True)

    with pytest.raises(ray_backend.ClusterError) as refused:
        ray_backend.check_loopback_node(FakeRay)
    assert str(refused.value) == ("the local Ray took the address 10.0.0.7, not loopback: it would listen on the "
                                  "network; start a cluster (ray start --head) and pass --address instead")
    assert stopped == [True]
    FakeRay.util.get_node_ip_address = staticmethod(lambda: "127.0.0.1")
    ray_backend.check_loopback_node(FakeRay)
    assert stopped == [True], "a loopback node is kept"
