"""``arena bench protocol --dial-in [relay|itself]``: the dial-in path (``arena connect`` relaying a local bot over one
stream, or a botkit bot dialing in by itself) against the same program called directly, at each concurrency: decisions per second through the referee, and the
round trip of one fixed decision request (median and p90), whose difference is the latency the dial-in path adds.

Both sides run on this machine: the server's dial-in service on a loopback port (plain text), ``arena connect`` in a
process of its own, and the bot not sandboxed (the sandbox's cost is ``arena bench protocol``'s other numbers). It
serves the dial-in service the way ``arena serve`` does.
"""

from __future__ import annotations

import math
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import trio

from arena import guest
from arena.bench.referee import aio_act, referee_rate, typical_act_request
from arena.players.dial_in import REGISTRY, DialInBot, token_digest
from arena.players.process import BotProcess, BotSpec
from arena.players.remote import RemoteBot
from arena.server.dial_in import DialInServicer, add_to_server

BOT = "bench-dial-in"
CONNECT_S = 60.0
"""How long ``arena connect`` has to start the bot and dial in."""


async def round_trips(call: Callable[[], Awaitable[Any]], concurrency: int, seconds: float) -> dict[str, Any]:
    """``call()`` as fast as it completes, ``concurrency`` at once, for ``seconds``: calls per second and the median
    and p90 of one call's round trip (nearest rank), in ms."""
    times: list[float] = []
    deadline = time.perf_counter() + seconds

    async def loop() -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await call()
            times.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(concurrency):
            nursery.start_soon(loop)
    elapsed = time.perf_counter() - started
    times.sort()
    return {"calls_per_s": round(len(times) / elapsed, 1),
            "round_trip_ms_median": round(times[max(0, math.ceil(0.5 * len(times)) - 1)], 3),
            "round_trip_ms_p90": round(times[max(0, math.ceil(0.9 * len(times)) - 1)], 3)}


async def measure(client: Any, call: Callable[[], Awaitable[Any]], concurrencies: list[int],
                  seconds: float) -> list[dict[str, Any]]:
    """The round trips of ``call`` and the referee's decisions per second with ``client``, per concurrency."""
    results = []
    for concurrency in concurrencies:
        trips = await round_trips(call, concurrency, seconds)
        referee = await referee_rate(client, concurrency, seconds)
        results.append({"concurrency": concurrency, **trips, "referee_decisions_per_s": referee["decisions_per_s"]})
    return results


async def local_side(bot_command: list[str], concurrencies: list[int], seconds: float) -> list[dict[str, Any]]:
    """The bot called directly (Bot.Act over its Unix socket), as a tournament calls a bot it starts."""
    process = BotProcess(BotSpec(BOT, command=tuple(bot_command), sandbox=False),
                         Path(tempfile.mkdtemp(prefix="arena-bench-")))
    try:
        client = await process.ensure_running()
        assert isinstance(client, RemoteBot)  # a bot the arena starts is called over its socket
        call, close = aio_act(client.address)
        try:
            return await measure(client, call, concurrencies, seconds)
        finally:
            close()
    finally:
        await process.stop()


async def dial_in_side(bot_command: list[str], concurrencies: list[int], seconds: float, itself: bool = False
                       ) -> list[dict[str, Any]]:
    """The same program behind ``arena connect`` (or, ``itself``, a botkit bot dialing in by itself with
    ``--connect``), dialed in to a dial-in service on a loopback port."""
    folder = Path(tempfile.mkdtemp(prefix="arena-bench-dial-in-"))
    token = secrets.token_urlsafe(32)
    (folder / "bot.token").write_text(token + "\n")
    (folder / "bot.token").chmod(0o600)
    spec = BotSpec(BOT, dial_in=True, token_sha256=token_digest(token))
    REGISTRY.expect([spec])
    server, port = await dial_in_server()
    dial = ["--server" if not itself else "--connect", f"127.0.0.1:{port}", "--bot", BOT, "--token-file",
            str(folder / "bot.token"), "--reconnect", "0"]
    command = [*bot_command, *dial] if itself else [sys.executable, "-m", "arena", "connect", *dial, "--", *bot_command]
    relay = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    process = BotProcess(spec, folder, CONNECT_S)
    request = typical_act_request()
    try:
        client = await process.ensure_running()
        assert isinstance(client, DialInBot)
        return await measure(client, lambda: client.connection.decide(request, 10), concurrencies, seconds)
    finally:
        await process.stop()
        REGISTRY.forget([spec])  # the relay is told farewell and exits
        try:
            await trio.to_thread.run_sync(relay.wait, 30)
        except subprocess.TimeoutExpired:  # it never dialed in (the bot did not start, say)
            relay.kill()
            relay.wait()
        await guest.await_loop(server.stop(None))


async def dial_in_server() -> tuple[grpc.aio.Server, int]:
    """The dial-in service on a loopback port, started, as ``arena serve`` serves it (grpc.aio's, in the loop of
    :func:`arena.guest.run`): the server and its port."""
    server = grpc.aio.server()
    add_to_server(server, DialInServicer(REGISTRY))
    port = server.add_insecure_port("127.0.0.1:0")
    await guest.await_loop(server.start())
    return server, port


async def bench_dial_in(bot_command: list[str], seconds: float, concurrencies: list[int], itself: bool = False
                        ) -> dict[str, Any]:
    """Both sides, and what the dial-in path adds at each concurrency (``itself``: the bot's own ``--connect``
    instead of ``arena connect``)."""
    local = await local_side(bot_command, concurrencies, seconds)
    dialed = await dial_in_side(bot_command, concurrencies, seconds, itself)
    added = [{"concurrency": d["concurrency"],
              "added_round_trip_ms_median": round(d["round_trip_ms_median"] - lo["round_trip_ms_median"], 3),
              "decisions_per_s_dial_in_to_local": round(d["referee_decisions_per_s"] / lo["referee_decisions_per_s"],
                                                        3)}
             for lo, d in zip(local, dialed, strict=True)]
    return {"bot": " ".join(bot_command), "seconds_each": seconds,
            "dial_in_by": "the bot itself (--connect)" if itself else "arena connect", "local": local, "dial_in": dialed,
            "dial_in_against_local": added}
