"""The benchmarks of games played by the referee and what surrounds them: the rules engine's random playouts
(``arena bench engine``), referee decisions/s against a bot beside plain gRPC ping-pong (``protocol``), quick
tournaments' games/s and memory (``tournament``), record sizes and costs (``records``), the Parquet export
(``export``), the balance of balanced schedules (``schedule``) and fast-bot tournaments on worker processes
(``workers``). Speed goals are checked here, never by timed tests."""

from __future__ import annotations

import functools
import random
import resource
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from arena import guest
from arena.rules import new_game
from arena.tournament.schedule import Schedule


def bench_engine(variant: str, players: int | None, seconds: float, seed: int = 1,
                 options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Random playouts of whole hands: deal from a seed, then uniformly random legal actions to the end.

    ``moves`` counts every applied action (placements, draws, passes); ``placements`` only tiles put down.
    """
    game = new_game(variant, players, options)
    rng = random.Random(seed)
    rand = rng.random
    hands = moves = placements = 0
    started = time.perf_counter()
    deadline = started + seconds
    while True:
        for _ in range(50):
            state = game.new_round(game.deal(seed, hands, hands % game.players))
            legal_actions = state.legal_actions
            apply = state.apply
            while state._result is None:
                actions = legal_actions()
                apply(actions[int(rand() * len(actions))])
                moves += 1
            placements += len(state.layout.tiles)
            hands += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - started
    return {
        "variant": variant,
        "players": game.players,
        "options": game.options,
        "seconds": round(elapsed, 3),
        "hands": hands,
        "moves": moves,
        "placements": placements,
        "hands_per_s": round(hands / elapsed, 1),
        "moves_per_s": round(moves / elapsed, 1),
        "placements_per_s": round(placements / elapsed, 1),
        "us_per_move": round(elapsed / moves * 1e6, 3),
    }


# --- arena bench protocol ----------------------------------------------------------------------------------------


def typical_act_request() -> Any:
    """A mid-game Draw decision request, the size a bot usually receives."""
    from arena.protocol import bot_pb2
    from arena.protocol.convert import observation_pb, options_pb

    game = new_game("draw", 2)
    match = game.new_match(seed=3)
    rng = random.Random(3)
    for _ in range(8):
        actions = match.legal_actions()
        match.apply(actions[rng.randrange(len(actions))])
    seat = match.turn
    return bot_pb2.ActRequest(match_id="bench", variant=game.name, options=options_pb(game.options), seat=seat,
                              observation=observation_pb(match.observation(seat), game.side_of))


def cpu_seconds() -> float:
    """The CPU this process has used, user and system, every thread counted (``getrusage``): the arena's side of a
    call, whatever thread spent it; the bot's own CPU is its process's, not counted."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


ActCall = Callable[[], Awaitable[Any]]
"""One Act call with a fixed request, awaited from trio. The floors' channels are new, not yet connected: their calls
wait for the connection (``wait_for_ready``), as the referee's first call waits in the handshake, so that a loaded
machine's slow first connection is not a failed call (the referee's channel is connected by the Hello)."""


def sync_act(address: str) -> tuple[ActCall, Callable[[], object]]:
    """Act over grpcio's synchronous channel, each call's future awaited from trio (the transport the referee used
    before grpc.aio: every reply crosses from one of grpcio's threads); the call and the channel's close."""
    from arena.players.grpc_trio import await_call
    from arena.players.remote import channel_options

    channel = grpc.insecure_channel(address, options=channel_options(address))
    act = channel.unary_unary("/dominoes.v1.Bot/Act", request_serializer=None, response_deserializer=None)
    request = typical_act_request().SerializeToString()
    return (lambda: await_call(act.future(request, timeout=10, wait_for_ready=True))), channel.close


async def sync_ping_pong(call: ActCall, concurrency: int, seconds: float) -> dict[str, Any]:
    """:func:`ping_pong` of synchronous calls under a plain ``trio.run`` of its own, on a worker thread while the
    guest's loop waits: the old transport as it ran, not slowed by a loop it never had."""
    import trio

    return await trio.to_thread.run_sync(lambda: trio.run(ping_pong, call, concurrency, seconds))


def aio_act(address: str) -> tuple[ActCall, Callable[[], object]]:
    """Act over grpc.aio on the guest's loop (:func:`arena.guest.await_unary`), as the referee calls a bot: the
    transport's floor; the call and the channel's close."""
    import grpc.aio

    from arena.players.remote import channel_options

    channel = grpc.aio.insecure_channel(address, options=channel_options(address))
    act = channel.unary_unary("/dominoes.v1.Bot/Act", request_serializer=None, response_deserializer=None)
    request = typical_act_request().SerializeToString()
    return (lambda: guest.await_unary(act(request, timeout=10, wait_for_ready=True))), lambda: asyncio_task(channel.close(None))


def asyncio_task(coroutine: Any) -> None:
    """Run a coroutine on the guest's loop, unawaited (a channel's close: :func:`arena.guest.run` lets it end)."""
    import asyncio

    asyncio.get_running_loop().create_task(coroutine)


async def ping_pong(call: ActCall, concurrency: int, seconds: float) -> dict[str, Any]:
    """``call()`` as fast as the bot answers, ``concurrency`` in flight for ``seconds`` (:func:`_in_flight_for`: only
    calls answered within the window count), with this process's CPU a call."""
    calls = 0

    async def loop(worker: int) -> None:
        nonlocal calls
        while True:
            await call()
            calls += 1

    cpu = cpu_seconds()
    elapsed = await _in_flight_for(loop, concurrency, seconds)
    cpu = cpu_seconds() - cpu
    return {"concurrency": concurrency, "calls": calls, "seconds": elapsed, "cpu_s": cpu,
            "calls_per_s": round(calls / elapsed, 1)}


async def _in_flight_for(loop: Any, concurrency: int, seconds: float) -> float:
    """Run ``concurrency`` copies of ``loop(worker)`` for ``seconds``, then cancel them; the seconds they ran.

    Every part of ``arena bench protocol`` is measured over windows of the same length with all ``concurrency`` in
    flight the whole time: waiting for the matches in play to finish would count a tail with fewer games in flight
    (at 64 a Draw match can outlast a five-second window, so much of the old measure was that tail)."""
    import trio

    started = time.perf_counter()
    with trio.move_on_after(seconds):
        async with trio.open_nursery() as nursery:
            for worker in range(concurrency):
                nursery.start_soon(loop, worker)
    return time.perf_counter() - started


async def referee_rate(client: Any, concurrency: int, seconds: float) -> dict[str, Any]:
    """Whole Draw matches through the referee with the bot at both seats: every decision the referee asks is a call
    to the bot (the same process serves both seats here, which a tournament never does; it measures the referee).
    ``matches`` counts the matches finished within the window; ``cpu_s`` is this process's CPU over it."""
    from arena.players.base import Decision, DecisionRequest
    from arena.referee import TimeControl, play_match

    decisions = 0

    class Counted:
        name = client.name

        async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
            nonlocal decisions
            decision: Decision = await client.act(request, timeout_s)
            decisions += 1
            return decision

        async def round_ended(self, *args: Any) -> None:
            return None

        async def match_ended(self, *args: Any) -> None:
            return None

    game = new_game("draw", 2)
    matches = 0

    async def loop(worker: int) -> None:
        nonlocal matches
        n = 0
        while True:
            await play_match(game, [Counted(), Counted()], seed=f"{worker}/{n}",
                             match_id=f"bench-{worker}-{n}", time_control=TimeControl(move_ms=10_000))
            n += 1
            matches += 1

    cpu = cpu_seconds()
    elapsed = await _in_flight_for(loop, concurrency, seconds)
    cpu = cpu_seconds() - cpu
    return {"concurrency": concurrency, "matches": matches, "decisions": decisions, "seconds": elapsed,
            "cpu_s": cpu, "decisions_per_s": round(decisions / elapsed, 1)}


async def start_times_ms(spec: Any, starts: int) -> list[float]:
    """Milliseconds from exec to a finished handshake, for ``starts`` fresh starts of the bot."""
    import tempfile
    from pathlib import Path

    from arena.players.process import BotProcess

    times = []
    for _ in range(starts):
        process = BotProcess(spec, Path(tempfile.mkdtemp(prefix="arena-")))
        try:
            started = time.perf_counter()
            await process.ensure_running()
            times.append((time.perf_counter() - started) * 1000)
        finally:
            await process.stop()
    return times


async def bench_protocol(bot_command: list[str], seconds: float, concurrencies: list[int],
                         sandboxes: tuple[bool, ...] = (False, True), starts: int = 7,
                         repeats: int = 1) -> dict[str, Any]:
    """Referee decisions/s next to synchronous and grpc.aio ping-pong against the same bot process, with this
    process's CPU a call and a decision, and the bot's start time, without and with the sandbox, in one run.

    With ``repeats`` above 1 each concurrency's three windows (:data:`PARTS_MEASURED`) are measured that many
    times, alternating, and each ratio is that of the summed counts over the summed seconds: on a machine shared
    with other jobs the speed drifts by a factor of two within a minute, and alternating short windows exposes every
    part to the same drift instead of giving one of them a slow minute. Each round's ratio is listed too."""
    import statistics
    import tempfile
    from pathlib import Path

    from arena.players.process import BotProcess, BotSpec

    runs: list[dict[str, Any]] = []
    for sandbox in sandboxes:
        spec = BotSpec("bench-bot", command=tuple(bot_command), sandbox=sandbox)
        start_ms = await start_times_ms(spec, starts)
        process = BotProcess(spec, Path(tempfile.mkdtemp(prefix="arena-")))
        results: list[dict[str, Any]] = []
        try:
            client = await process.ensure_running()
            for concurrency in concurrencies:
                results.append(await _alternated(client, concurrency, seconds, repeats))
        finally:
            await process.stop()
        runs.append({"sandbox": sandbox, "start_ms_median": round(statistics.median(start_ms), 1),
                     "start_ms": [round(t, 1) for t in start_ms], "results": results})
    summary: dict[str, Any] = {"bot": " ".join(bot_command), "seconds_each": seconds, "repeats": repeats,
                               "runs": runs}
    if len(runs) == 2:
        bare, boxed = runs
        summary["sandbox_added_start_ms"] = round(boxed["start_ms_median"] - bare["start_ms_median"], 1)
        summary["sandboxed_to_bare_decisions"] = {
            str(b["concurrency"]): round(s["referee_decisions_per_s"] / b["referee_decisions_per_s"], 3)
            for b, s in zip(bare["results"], boxed["results"], strict=True)}
    return summary


PARTS_MEASURED = ("sync", "aio", "referee")
"""The three halves of ``arena bench protocol``'s windows, in the order each repeat measures them."""


async def _alternated(client: Any, concurrency: int, seconds: float, repeats: int) -> dict[str, Any]:
    """``repeats`` rounds of three windows at ``concurrency`` in flight: synchronous ping-pong, grpc.aio ping-pong
    (the same request to the same bot process) and the referee. The rates over all the windows, this process's CPU
    a call and a decision, and the referee's ratios to both floors (with more than one round, each round's ratio to
    aio ping-pong too)."""
    sync_call, sync_close = sync_act(client.address)
    aio_call, aio_close = aio_act(client.address)
    totals = {part: {"count": 0, "seconds": 0.0, "cpu_s": 0.0} for part in PARTS_MEASURED}
    matches = 0
    pairs = []
    try:
        for _ in range(repeats):
            windows = {"sync": await sync_ping_pong(sync_call, concurrency, seconds),
                       "aio": await ping_pong(aio_call, concurrency, seconds),
                       "referee": await referee_rate(client, concurrency, seconds)}
            for part, window in windows.items():
                total = totals[part]
                total["count"] += window.get("calls", window.get("decisions", 0))
                total["seconds"] += window["seconds"]
                total["cpu_s"] += window["cpu_s"]
            matches += windows["referee"]["matches"]
            pairs.append(round(windows["referee"]["decisions_per_s"] / windows["aio"]["calls_per_s"], 3))
    finally:
        sync_close()
        aio_close()
    rate = {part: t["count"] / t["seconds"] for part, t in totals.items()}
    cpu_us = {part: t["cpu_s"] / max(1, t["count"]) * 1e6 for part, t in totals.items()}
    result: dict[str, Any] = {
        "concurrency": concurrency,
        "sync_ping_pong_calls_per_s": round(rate["sync"], 1),
        "aio_ping_pong_calls_per_s": round(rate["aio"], 1),
        "referee_decisions_per_s": round(rate["referee"], 1),
        "matches": matches,
        "ratio_to_aio": round(rate["referee"] / rate["aio"], 3),
        "ratio_to_sync": round(rate["referee"] / rate["sync"], 3),
        "cpu_us_per_sync_call": round(cpu_us["sync"], 1),
        "cpu_us_per_aio_call": round(cpu_us["aio"], 1),
        "cpu_us_per_decision": round(cpu_us["referee"], 1),
        "cpu_ratio_to_aio": round(cpu_us["referee"] / cpu_us["aio"], 3),
    }
    if repeats > 1:
        result["round_ratios_to_aio"] = pairs
    return result


# --- arena bench tournament --------------------------------------------------------------------------------------


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM), in MiB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def quick_tournament_text(games: int, concurrency: int, bot: list[str], sandbox: bool = True) -> str:
    """Two random bots, Block to 1 point (one or two rounds a game), ``games`` games in all."""
    import json

    return (f'name = "bench"\nvariant = "block"\ngames = {max(1, games // 2)}\nduplicate = true\n'
            f'concurrency = {concurrency}\nseed = "bench"\nsandbox = {str(sandbox).lower()}\n[options]\ntarget = 1\n'
            f'[[bots]]\nname = "a"\ncommand = {json.dumps(bot)}\n[[bots]]\nname = "b"\ncommand = {json.dumps(bot)}\n')


def bench_tournament_once(games: int, concurrency: int, bot: list[str], sandbox: bool = True) -> dict[str, Any]:
    """One quick tournament in this process: games/s and peak memory."""
    import tempfile
    import tomllib
    from pathlib import Path

    from arena.tournament.runner import run_tournament
    from arena.tournament.spec import spec_from_dict

    text = quick_tournament_text(games, concurrency, bot, sandbox)
    spec = spec_from_dict(tomllib.loads(text))
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        started = time.perf_counter()
        summary = guest.run(lambda: run_tournament(spec, text, Path(folder) / "run"))
        elapsed = time.perf_counter() - started
    return {"games": summary.played_now, "concurrency": concurrency, "sandbox": sandbox, "seconds": round(elapsed, 2),
            "games_per_s": round(summary.played_now / elapsed, 1), "peak_rss_mib": round(peak_rss_mib(), 1)}


def bench_tournament(sizes: list[int], concurrencies: list[int], bot: list[str],
                     sandboxes: tuple[bool, ...] = (False, True)) -> dict[str, Any]:
    """Each size, concurrency and sandbox setting in a fresh process, so each peak memory is its own."""
    import json
    import subprocess
    import sys

    results = []
    for sandbox in sandboxes:
        for concurrency in concurrencies:
            for games in sizes:
                code = ("import json, sys; from arena.bench.referee import bench_tournament_once; "
                        f"print(json.dumps(bench_tournament_once({games}, {concurrency}, {bot!r}, {sandbox})))")
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
                if out.returncode != 0:
                    raise RuntimeError(f"the {games}-game run at concurrency {concurrency} failed:\n"
                                       f"{out.stderr[-2000:]}")
                results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    by = {(r["concurrency"], r["games"]): r for r in results if r["sandbox"] == sandboxes[-1]}
    ratios = {}
    if len(sizes) >= 2:
        small, large = min(sizes), max(sizes)
        ratios = {str(c): round(by[(c, large)]["peak_rss_mib"] / by[(c, small)]["peak_rss_mib"], 3)
                  for c in concurrencies}
    return {"bot": " ".join(bot), "results": results, "peak_memory_ratio_large_to_small": ratios}


# --- arena bench records -----------------------------------------------------------------------------------------


async def write_local_records(path: Any, variant: str, players: int | None, games: int, seed: str = "bench") -> int:
    """Play ``games`` matches between in-process random players and write their records; returns bytes written."""
    from arena.players import RandomPlayer
    from arena.players.base import LocalPlayer
    from arena.records.format import to_json_line
    from arena.records.jsonform import game_record_dict
    from arena.referee import play_match

    game = new_game(variant, players)
    written = 0
    with open(path, "w") as f:
        for i in range(games):
            seats = [LocalPlayer(RandomPlayer(f"{seed}/{i}/{s}")) for s in range(game.players)]
            record = await play_match(game, seats, seed=f"{seed}/0/{i}", match_id=f"{seed}-{i}")
            line = to_json_line(game_record_dict(record, index=i, tournament=seed, deal_key=f"0/{i}", rotation=0,
                                                 side_of=game.side_of)) + "\n"
            f.write(line)
            written += len(line.encode())
    return written


def bench_records(games: int, verify_games: int, jobs: int | None, run: str | None = None) -> dict[str, Any]:
    """Record size per game in both formats (the readable ``games.jsonl``, the compact ``games.jsonl.zst``) for
    every variant (default player count, and Mexican Train with four), what writing (fsync included) and reading a
    game costs in each, and ``--verify`` speed on 2-player Draw games in each. In-process players think for
    microseconds, which compress better than real bots' think times: ``run`` (a run folder or record file) measures
    the sizes and costs on real records instead, e.g. the demo's."""
    import tempfile
    from pathlib import Path

    import trio

    from arena.records.replay import locate, verify_run
    from arena.records.store import iter_records
    from arena.rules import VARIANTS

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arena-records-") as folder:
        if run is not None:
            records = list(iter_records(locate(run).records))
            out["run"] = {"path": str(run), "games": len(records), **_formats(Path(folder), "run", records)}
        else:
            out["bytes_per_game"], out["ms_per_game"] = {}, {}
            for name, players in [(v, None) for v in VARIANTS] + [("mexican_train", 4)]:
                label = name if players is None else f"{name}_{players}p"
                plain = Path(folder) / f"{label}.jsonl"
                trio.run(write_local_records, plain, name, players, games)
                measured = _formats(Path(folder), label, list(iter_records(plain)))
                out["bytes_per_game"][label] = measured.pop("bytes_per_game")
                out["ms_per_game"][label] = measured
        draw = Path(folder) / "draw-verify.jsonl"
        trio.run(write_local_records, draw, "draw", 2, verify_games)
        compact = _formats(Path(folder), "draw-verify", list(iter_records(draw)), keep=True)["path"]
        out["verify"] = {}
        for form, path in (("jsonl", draw), ("compact", Path(compact))):
            started = time.perf_counter()
            report = verify_run(path, jobs=jobs)
            elapsed = time.perf_counter() - started
            out["verify"][form] = {"variant": "draw", "players": 2, "target": 100, "games": report.games,
                                   "moves": report.moves, "mismatches": len(report.mismatches),
                                   "seconds": round(elapsed, 2), "games_per_s": round(report.games / elapsed, 1)}
    return out


def _formats(folder: Any, label: str, records: list[dict[str, Any]], keep: bool = False) -> dict[str, Any]:
    """Write ``records`` in both formats with the arena's writer (each game fsynced) and read them back: bytes a
    game, and milliseconds a game to write and to read, in each."""
    from arena.records.store import RecordWriter, iter_records

    sizes: dict[str, Any] = {}
    costs: dict[str, Any] = {}
    for form, suffix in (("jsonl", ".written.jsonl"), ("compact", ".jsonl.zst")):
        path = folder / f"{label}{suffix}"
        writer = RecordWriter(path)
        started = time.perf_counter()
        for record in records:
            writer.write(record)
        written = time.perf_counter() - started
        writer.close()
        started = time.perf_counter()
        count = sum(1 for _ in iter_records(path))
        read = time.perf_counter() - started
        assert count == len(records)
        sizes[form] = round(path.stat().st_size / len(records))
        costs[form] = {"write_ms": round(written / len(records) * 1000, 3),
                       "read_ms": round(read / len(records) * 1000, 3)}
    sizes["ratio"] = round(sizes["jsonl"] / sizes["compact"], 1)
    result: dict[str, Any] = {"bytes_per_game": sizes, **costs}
    if keep:
        result["path"] = str(folder / f"{label}.jsonl.zst")
    return result


def bench_export(games: int, variant: str = "draw", players: int | None = None) -> dict[str, Any]:
    """``arena export --parquet`` of ``games`` random games: decision rows and games per second (the whole export:
    reading, re-simulating, writing), and the bytes on disk beside the records'."""
    import tempfile
    from pathlib import Path

    import trio

    from arena.records.dataset import DECISIONS_FILE, GAMES_FILE, write_dataset

    with tempfile.TemporaryDirectory(prefix="arena-export-") as folder:
        records = Path(folder) / f"{variant}.jsonl"
        written = trio.run(write_local_records, records, variant, players, games)
        report = write_dataset([(".", records)], Path(folder) / "out")
        sizes = {name: (Path(folder) / "out" / name).stat().st_size for name in (GAMES_FILE, DECISIONS_FILE)}
    return {"variant": variant, "games": report.games, "decisions": report.decisions,
            "seconds": round(report.seconds, 2), "decisions_per_s": round(report.decisions / report.seconds),
            "games_per_s": round(report.games / report.seconds, 1), "cpu_seconds": round(report.cpu_seconds, 2),
            "decisions_per_cpu_s": round(report.decisions / report.cpu_seconds), "records_bytes": written,
            "parquet_bytes": sum(sizes.values()), "parquet_bytes_by_file": sizes}


SCHEDULE_CASES: tuple[tuple[str, int, int, int, bool, int], ...] = (
    ("mexican_train", 6, 20, 200, False, 1),
    ("mexican_train", 8, 50, 1000, False, 1),
    ("mexican_train", 12, 12, 100, False, 1),
    ("mexican_train", 6, 20, 200, True, 1),
    ("mexican_train", 4, 10, 60, False, 3),
    ("draw", 2, 20, 400, False, 1),
    ("la_plaza_teams", 4, 9, 100, False, 1),
)
"""(variant, seats, entrants, tables, duplicate, deal sets per table) of ``arena bench schedule``."""


def bench_schedule(cases: tuple[tuple[str, int, int, int, bool, int], ...] = SCHEDULE_CASES,
                   seed: str = "bench") -> list[dict[str, Any]]:
    """The balance of balanced schedules (:meth:`Schedule.balance`) beside as many tables drawn uniformly at random
    (each a random sample of entrants in a random order, the same deal sets and rotations), with the time to draw
    them; also how many tables a round robin of the same entrants would play."""
    results = []
    for variant, seats, entrants, tables, duplicate, games in cases:
        game = new_game(variant, seats)
        started = time.perf_counter()
        schedule = Schedule(entrants, game, games, duplicate, seed, tables=tables)
        schedule.table_count()
        drawn = list(schedule.tables())
        seconds = time.perf_counter() - started
        uniform = _uniform_schedule(entrants, game, games, duplicate, seed, tables=tables)
        round_robin = Schedule(entrants, game, 1, duplicate, "").table_count()
        results.append({
            "variant": variant, "seats": seats, "entrants": entrants, "tables": len(drawn), "duplicate": duplicate,
            "deal_sets_per_table": games, "round_robin_tables": round_robin,
            "draw_seconds": round(seconds, 3), "balanced": schedule.balance(), "uniform_random": uniform.balance(),
        })
    return results


def _uniform_schedule(entrants: int, game: Any, games: int, duplicate: bool, seed: str, tables: int) -> Any:
    """The baseline: a balanced schedule's games on tables of distinct entrants drawn uniformly at random."""
    class Uniform(Schedule):
        @functools.cached_property
        def _balanced_layouts(self) -> list[tuple[int, ...]]:
            rng = random.Random(self.master_seed)
            return [tuple(rng.sample(range(self.entrants), self.sides)) for _ in range(self.balanced_tables)]

    return Uniform(entrants, game, games, duplicate, seed, tables=tables)


# --- arena bench workers -----------------------------------------------------------------------------------------


def workers_tournament_text(games: int, concurrency: int, bot: list[str]) -> str:
    """Two fast bots, Draw to 100 (about 195 decisions a game: the referee's work dominates), sandboxed."""
    import json

    return (f'name = "bench-workers"\nvariant = "draw"\ngames = {max(1, games // 2)}\nduplicate = true\n'
            f'concurrency = {concurrency}\nseed = "bench"\nsandbox = true\n'
            f'[[bots]]\nname = "a"\ncommand = {json.dumps(bot)}\n[[bots]]\nname = "b"\ncommand = {json.dumps(bot)}\n')


def bench_workers_once(games: int, concurrency: int, workers: int, bot: list[str]) -> dict[str, Any]:
    """One fast-bot tournament on ``workers`` referee processes (1: this process alone); its rate counts the games
    from the first recorded to the last, so the bots' start-up in each worker is not a game."""
    import tempfile
    import tomllib
    from pathlib import Path

    from arena.tournament.runner import run_tournament
    from arena.tournament.spec import spec_from_dict
    from arena.tournament.workers import workers_factory

    text = workers_tournament_text(games, concurrency, bot)
    spec = spec_from_dict(tomllib.loads(text))
    finished: list[float] = []
    backend = workers_factory(workers) if workers > 1 else None
    with tempfile.TemporaryDirectory(prefix="arena-bench-workers-") as folder:
        started = time.perf_counter()
        summary = guest.run(lambda: run_tournament(spec, text, Path(folder) / "run", backend=backend,
                                                   on_game=lambda _: finished.append(time.perf_counter())))
        elapsed = time.perf_counter() - started
    steady = (len(finished) - 1) / (finished[-1] - finished[0]) if len(finished) > 1 else 0.0
    played = max(1, summary.played_now)
    own, children = _cpu_seconds()
    return {"workers": workers, "games": summary.played_now, "concurrency": concurrency, "seconds": round(elapsed, 2),
            "games_per_s": round(steady, 2), "games_per_s_with_startup": round(summary.played_now / elapsed, 2),
            "cpu_ms_per_game": {"this_process": round(own * 1000 / played, 2),
                                "children": round(children * 1000 / played, 2)}}


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user and system) of this process, and of its children that ended: with workers, the workers
    (the sandboxed bots' time is not among them: their sandbox reaps them, out of this count). CPU time, unlike a
    rate, hardly depends on what else the machine runs, so the scaling model is read from it."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


async def _played_records(games: int) -> list[Any]:
    """Draw games to 100 between in-process random players: real referee records to feed the writer."""
    from arena.players import RandomPlayer
    from arena.players.base import LocalPlayer
    from arena.referee import play_match

    game = new_game("draw", None)
    return [await play_match(game, [LocalPlayer(RandomPlayer(f"w/{i}/{s}")) for s in range(game.players)],
                             seed=f"w/0/{i}", match_id=f"w-{i}") for i in range(games)]


def bench_writer_cost(games: int = 200) -> dict[str, Any]:
    """The parent's serial work per game (what no number of workers shares out), ms per game over ``games`` Draw
    games to 100: in one process (the record's dict, its compact unit, the append with its fsync, the standings), and
    with workers, where a worker makes the dict, the unit and the outcome and the parent unpickles the record's head
    (no rounds), the unit and the outcome from the pipe, appends, fsyncs and updates the standings; and the ceiling of
    games/s the parent's part sets."""
    import pickle
    import tempfile
    import tomllib
    from pathlib import Path

    import trio

    from arena.records.store import RecordWriter, record_unit
    from arena.tournament.backend import PreparedRecord, record_message
    from arena.tournament.schedule import ScheduledGame
    from arena.tournament.spec import spec_from_dict
    from arena.tournament.standings import Standings, outcome_of

    spec = spec_from_dict(tomllib.loads(workers_tournament_text(games, 1, ["bot"])))
    records = trio.run(_played_records, games)
    game = new_game("draw", None)
    scheduled = [ScheduledGame(i, (0, 1), f"w/0/{i}", f"0/{i}", 0) for i in range(games)]
    for record in records:
        record.seats = ("a", "b")
    costs: dict[str, float] = {}

    def timed(name: str, work: Any) -> Any:
        started = time.perf_counter()
        result = work()
        costs[name] = (time.perf_counter() - started) * 1000 / games
        return result

    messages = timed("record_dict", lambda: [record_message(spec, game, s, r)
                                             for s, r in zip(scheduled, records, strict=True)])
    units = timed("compact_unit", lambda: [record_unit(m, True) for m in messages])
    pickled = [pickle.dumps(PreparedRecord.of(m, True), protocol=pickle.HIGHEST_PROTOCOL) for m in messages]
    timed("unpickle_prepared", lambda: [pickle.loads(p) for p in pickled])
    with tempfile.TemporaryDirectory(prefix="arena-bench-writer-") as folder:
        writer = RecordWriter(Path(folder) / "games.jsonl.zst")
        def append_all() -> None:
            for m, u in zip(messages, units, strict=True):
                writer.write(m, u)

        timed("append_fsync", append_all)
        writer.close()
    outcomes = timed("outcome", lambda: [outcome_of(m) for m in messages])
    standings = Standings(group_size=1)
    def add_all() -> None:
        for o in outcomes:
            standings.add(o)

    timed("standings", add_all)
    one = (costs["record_dict"] + costs["compact_unit"] + costs["append_fsync"] + costs["outcome"]
           + costs["standings"])
    parent = costs["unpickle_prepared"] + costs["append_fsync"] + costs["standings"]
    return {"games": games, "pickled_bytes_per_game": round(sum(map(len, pickled)) / games),
            "ms_per_game": {name: round(value, 3) for name, value in costs.items()},
            "one_process_serial_ms_per_game": round(one, 3),
            "parent_serial_ms_per_game": round(parent, 3), "ceiling_games_per_s": round(1000 / parent, 1)}


def bench_workers(games: int, concurrency: int, workers: list[int], bot: list[str], repeats: int = 2) -> dict[str, Any]:
    """Games/s of the same fast-bot tournament on each worker count, each in a fresh process (the best of
    ``repeats``), their CPU time per game, the machine's load around them (a loaded machine shares its cores out:
    read the rates with it), and the parent's serial cost per game (:func:`bench_writer_cost`), which bounds what
    any number of workers can reach."""
    import json
    import os
    import subprocess
    import sys

    load_before = os.getloadavg()[0]
    best: dict[int, dict[str, Any]] = {}
    for _ in range(repeats):  # interleaved, so that a burst of load elsewhere hits every count alike; best kept
        for count in workers:
            code = ("import json; from arena.bench.referee import bench_workers_once; "
                    f"print(json.dumps(bench_workers_once({games}, {concurrency}, {count}, {bot!r})))")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"the run on {count} workers failed:\n{out.stderr[-2000:]}")
            row = json.loads(out.stdout.strip().splitlines()[-1])
            if count not in best or row["games_per_s"] > best[count]["games_per_s"]:
                best[count] = row
    rows = [best[count] for count in workers]
    base = rows[0]["games_per_s"] if rows else 0
    for row in rows:
        row["speedup"] = round(row["games_per_s"] / base, 2) if base else None
    return {"bot": " ".join(bot), "cores": os.cpu_count(), "repeats": repeats,
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)], "runs": rows,
            "writer": bench_writer_cost()}
