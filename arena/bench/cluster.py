"""``arena bench cluster``: what the Ray path costs and how it scales, measured on a Ray cluster started on this
machine (``ray.cluster_utils.Cluster``: every node a raylet of its own, as on separate machines, sharing these cores).

1. **In-process against Ray**: the same quick tournament (two random Python bots, Block to one point, every bot
   sandboxed) played by this machine's pools and by one Ray node, one game at a time and ``slots`` at once; the
   per-game overhead of the Ray path is the difference of the seconds per game one at a time (each side the best of
   ``REPEATS`` interleaved runs). Beside it, the round trip of an actor call carrying nothing, and carrying a real
   game record (what each game adds: the call and the record's pickling).
2. **Nodes**: games/s of a tournament between bots that sleep a fixed time per decision, on clusters of 1, 2, ...
   nodes, each node given ``slots`` games at once (the driver's concurrency is ``slots`` times the nodes): the bots
   barely use the CPU, so what grows is what a node brings, game slots, as on a real cluster where each node has
   cores of its own.
3. **Actors per node** (``--workers``, when given): games/s of a Draw tournament between fast bots (the referee's
   work dominates a game) on one node with 1, 2, ... actors (``arena run --backend ray --workers N``), the same
   games in flight for every count (``slots`` times the most actors), each count the best of ``ACTOR_REPEATS``
   interleaved runs, with the machine's load around them: one actor is one referee process, about one core.

Rates count the games from the first recorded to the last (the bots' start-up before the first game is not a game);
every configuration runs in a fresh process with a fresh cluster, so none inherits another's warm state.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

RANDOM_BOT = Path(__file__).resolve().parents[2] / "bots" / "python" / "random_bot.py"
SLEEPY_BOT = Path(__file__).resolve().parent / "sleepy_bot.py"
NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
ECHO_CALLS = 200
REPEATS = 3
"""Each in-process and Ray measurement is repeated, the best kept: other work on the machine only slows a run."""
ACTOR_REPEATS = 2
"""Runs per actor count (each a few hundred Draw games), interleaved, the best kept."""


def bench_cluster(games: int, quick_games: int, nodes: list[int], sleep_ms: int, slots: int,
                  sandbox: bool, actors: list[int] | None = None, fast_bot: list[str] | None = None) -> dict[str, Any]:
    """Every measurement, each in a fresh process (see the module's docstring): ``quick_games`` games between random
    bots in-process and through Ray, ``games`` between sleepy bots on each cluster size, and, given ``actors``,
    ``quick_games`` Draw games between ``fast_bot`` bots on one node with each actor count."""
    overhead = _in_fresh_process("overhead", quick_games, slots, sandbox)
    scaling = with_speedups([_in_fresh_process("nodes", games, slots, sandbox, count, sleep_ms) for count in nodes])
    result = {"in_process_vs_ray": overhead, "nodes": scaling}
    if actors:
        assert fast_bot is not None
        result["actors_per_node"] = bench_actors(quick_games, slots * max(actors), actors, fast_bot)
    return result


def with_speedups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's ``games_per_s`` against the first row's, as ``speedup``."""
    base = rows[0]["games_per_s"] if rows else 0
    for row in rows:
        row["speedup"] = round(row["games_per_s"] / base, 2) if base else None
    return rows


def bench_actors(games: int, concurrency: int, actors: list[int], bot: list[str]) -> dict[str, Any]:
    """Games/s on one node with each actor count (the best of :data:`ACTOR_REPEATS` interleaved runs, each in a
    fresh process), and the machine's load before and after (other work on its cores slows every count)."""
    load_before = os.getloadavg()[0]
    best: dict[int, dict[str, Any]] = {}
    for _ in range(ACTOR_REPEATS):
        for count in actors:
            row = _in_fresh_process("actors", games, concurrency, count, bot)
            if count not in best or row["games_per_s"] > best[count]["games_per_s"]:
                best[count] = row
    return {"bot": " ".join(bot), "cores": os.cpu_count(), "repeats": ACTOR_REPEATS,
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "runs": with_speedups([best[count] for count in actors])}


def _in_fresh_process(what: str, *args: Any) -> dict[str, Any]:
    code = (f"import json; from arena.bench.cluster import measure_{what}; "
            f"print(json.dumps(measure_{what}(*{args!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"the {what} measurement {args!r} failed:\n{out.stderr[-3000:]}")
    row: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])  # a measure_* function's JSON object
    return row


def measure_overhead(games: int, slots: int, sandbox: bool) -> dict[str, Any]:
    """Games/s in-process and through one Ray node, one game at a time and ``slots`` at once; the round trip of an
    actor call carrying a game record."""
    from ray.cluster_utils import Cluster

    from arena.bench.referee import quick_tournament_text
    from arena.cluster.ray_backend import connect, ray_factory

    bot = [sys.executable, str(RANDOM_BOT)]
    rates: dict[str, list[float]] = {}
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "num_cpus": 2, "include_dashboard": False})
    try:
        connect(cluster.address)
        for _ in range(REPEATS):  # interleaved, so that a burst of load elsewhere hits both sides alike
            for concurrency in (1, slots):
                text = quick_tournament_text(games, concurrency, bot, sandbox)
                rates.setdefault(f"in_process_{concurrency}", []).append(_rate(text, None))
                rates.setdefault(f"ray_{concurrency}", []).append(_rate(text, ray_factory(concurrency)))
        calls = _actor_round_trips_ms()
    finally:
        _shutdown(cluster)
    best = {name: max(values) for name, values in rates.items()}
    return {"games": games, "sandbox": sandbox, "repeats": REPEATS, "best_games_per_s": best, "all_games_per_s": rates,
            "overhead_ms_per_game": round(1000 / best["ray_1"] - 1000 / best["in_process_1"], 2),
            "actor_call_ms": calls[0], "actor_call_with_draw_record_ms": calls[1]}


def measure_nodes(games: int, slots: int, sandbox: bool, nodes: int, sleep_ms: int) -> dict[str, Any]:
    """Games/s on a cluster of ``nodes`` nodes, ``slots`` games at once on each, bots sleeping ``sleep_ms`` a
    decision."""
    from ray.cluster_utils import Cluster

    from arena.bench.referee import quick_tournament_text
    from arena.cluster.ray_backend import connect, ray_factory

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(wait=True, **NODE)
        connect(cluster.address)
        cluster.wait_for_nodes()
        bot = [sys.executable, str(SLEEPY_BOT), "--sleep-ms", str(sleep_ms)]
        concurrency = slots * nodes
        rate = _rate(quick_tournament_text(games, concurrency, bot, sandbox), ray_factory(concurrency))
    finally:
        _shutdown(cluster)
    return {"nodes": nodes, "games": games, "concurrency": concurrency, "sleep_ms": sleep_ms, "games_per_s": rate}


def measure_actors(games: int, concurrency: int, actors: int, bot: list[str]) -> dict[str, Any]:
    """Games/s of a Draw tournament between two fast sandboxed bots (``arena bench workers``'s) on a one-node
    cluster whose node holds ``actors`` actors, ``concurrency`` games at once."""
    from ray.cluster_utils import Cluster

    from arena.bench.referee import workers_tournament_text
    from arena.cluster.ray_backend import connect, ray_factory

    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "num_cpus": 2, "include_dashboard": False})
    try:
        connect(cluster.address)
        rate = _rate(workers_tournament_text(games, concurrency, bot), ray_factory(concurrency, actors))
    finally:
        _shutdown(cluster)
    return {"actors": actors, "games": games, "concurrency": concurrency, "games_per_s": rate}


def _rate(text: str, backend: Any) -> float:
    """Games/s of a tournament, from its first recorded game to its last."""
    from arena import guest
    from arena.tournament.runner import run_tournament
    from arena.tournament.spec import spec_from_dict

    spec = spec_from_dict(tomllib.loads(text))
    finished: list[float] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        guest.run(lambda: run_tournament(spec, text, Path(folder) / "run", backend=backend,
                                        on_game=lambda record: finished.append(time.perf_counter())))
    return round((len(finished) - 1) / (finished[-1] - finished[0]), 2)


def _actor_round_trips_ms() -> tuple[float, float]:
    """The median time of one call to an actor of this node carrying nothing, and carrying a Draw record (sent back,
    pickled both ways; the record of an in-process match between random players)."""
    import ray
    import trio
    from ray.actor import ActorHandle

    from arena.players import RandomPlayer
    from arena.players.base import LocalPlayer
    from arena.referee import play_match
    from arena.rules import new_game

    class Echo:
        """An actor that sends back what it is given: the bare cost of a call that carries a game record. Defined
        here, where Ray is imported: ``ray.method`` types ``echo.remote`` for the handle."""

        # Ray is an optional extra: where it is not installed its decorator has no types (unused where it is)
        @ray.method  # type: ignore[untyped-decorator, unused-ignore]
        def echo(self, value: Any) -> Any:
            return value

    game = new_game("draw", 2)
    seats = [LocalPlayer(RandomPlayer(f"bench/{s}")) for s in range(2)]
    record = trio.run(lambda: play_match(game, seats, seed="bench", match_id="bench"))
    echo = ray.remote(Echo).options(num_cpus=0).remote()
    medians = []
    for payload in (None, record):
        ray.get(echo.echo.remote(payload))
        times = []
        for _ in range(ECHO_CALLS):
            started = time.perf_counter()
            ray.get(echo.echo.remote(payload))
            times.append(time.perf_counter() - started)
        medians.append(round(statistics.median(times) * 1000, 3))
    assert isinstance(echo, ActorHandle)  # what an actor class's remote() makes (Ray types it with the class too)
    ray.kill(echo)
    return medians[0], medians[1]


def _shutdown(cluster: Any) -> None:
    import ray

    ray.shutdown()
    cluster.shutdown()


__all__ = ["bench_cluster", "bench_actors", "measure_overhead", "measure_nodes", "measure_actors"]
