"""Tournaments on a Ray cluster: the driver keeps the schedule, the seeds, resume and the single writer of the records;
Ray actors, N on every node (``--workers N``, 1 by default), play the games with their own bot processes and send
each record back as its game ends.

The driver's workers are the runner's (``arena/tournament/runner.py``): each asks the schedule for its next game and
awaits :meth:`RayBackend.play`, which sends that one game to the live actor with the fewest games in flight (among
equals, the one whose node has fewest), so a node plays as many games at once as the driver gives it, and the
runner's stop rules (a failed write, a decided SPRT) stop the flow of new games as they do on one machine. An actor
is one process, so its referee uses about one core of its node: N actors a node give a many-core node N referees,
each with every entrant's bots of its own (an :class:`ActorPlace` names each: its node and its slot). An actor is
a :class:`GameActor`: a trio loop in a thread of its own that lives as long as the actor (a :class:`NodeLoop`),
holding a :class:`~arena.tournament.local_backend.LocalBackend` (the entrants' bot processes on that node, sandboxed as
on one machine, kept alive from game to game: they die with the thread that started them, so the thread must outlive
every game); Ray calls its methods from its own threads, which hand each call to the trio loop: a thread per game in
flight, and threads of their own for the rest (a concurrency group), so a withdrawal stops the entrant's bots on
every node at once and its games in flight end with its fault, as on one machine.

Faults of the cluster: an actor that dies (its node lost, its process killed) fails the calls it had in flight with
a ``RayActorError``; each of those games is sent again, with the same seed and seats, to another live actor, and only
the call that returns is recorded (the driver records each schedule index once, so no game is recorded twice). An
actor that died on a node still alive is replaced in its slot; a node that joins later gets its N actors, each of
which plays once its entrants have all started there. A driver killed with
kill -9 loses only its games in flight; ``--resume`` replays them as on one machine. Every entrant is started on
every node before the first game: a bot missing on a node is a clear error naming the node and the bot.

What never crosses to the actors: the master seed is inside each game's seed string, as on one machine (a bot sees
neither), and the records are written by the driver only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import os
import re
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import structlog
import trio

from arena import guest
from arena.display import safe_name
from arena.futures import await_future
from arena.records.run_folder import RunFolder
from arena.referee import MatchRecord
from arena.tournament.backend import BackendFactory, BackendSetup, OnProgress, merge_bot_info, replay_progress
from arena.tournament.errors import RunError
from arena.tournament.local_backend import LocalBackend
from arena.tournament.schedule import ScheduledGame
from arena.tournament.spec import SpecError

T = TypeVar("T")

RAY_MISSING = "the Ray backend needs the ray extra: pip install -e '.[ray]' (or ARENA_WITH_RAY=1 bash scripts/setup.sh)"
LOCAL_OBJECT_STORE_BYTES = 128 * 1024 * 1024
"""The object store of a Ray started on this machine by ``--backend ray`` without ``--address``: records are a few
tens of kilobytes each, so a small store is plenty (and fits a container's small /dev/shm)."""
NODE_REFRESH_S = 10.0
"""How often, at most, the driver looks for nodes that joined the cluster, and live nodes short of an actor (to give
them their actors)."""
NO_NODE_WAIT_S = 60.0
"""How long the driver waits for a live node when every actor is gone, before it stops the run."""
REACH_S = 5.0
"""How long a cluster's head may take to accept a connection before ``--address`` is called unreachable."""
STOP_S = 30.0
"""How long the actors may take to stop their bots at the end of a run."""
CONTROL = "control"
"""The concurrency group of an actor's calls other than ``play`` (its check, withdrawals and stop): threads of their
own, so a withdrawal runs at once however many games hold the actor's other threads."""
CONTROL_THREADS = 4
"""The threads of :data:`CONTROL`: a withdrawal takes one only while it stops a bot's processes."""
LOOPBACK_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch that, set to 0, makes a node take the loopback address as its own (Ray's way of running on a laptop
without a firewall prompt): its GCS, raylet, workers and runtime-env agent then listen on 127.0.0.1 only, where by
default they listen on every interface. Read by Ray when ``ray`` is imported, in this process and in every process
Ray starts (they inherit the environment)."""


class ClusterError(RunError):
    """The cluster cannot play the run: Ray is missing, unreachable, or every node is gone."""


def require_ray() -> Any:
    """The ``ray`` module, or one clear error saying how to install it."""
    try:
        # the optional extra (`pip install dominoes-arena[ray]`): this is the one place it is loaded
        import ray  # noqa: PLC0415
    except ImportError:
        raise ClusterError(RAY_MISSING) from None
    return ray


def connect(address: str | None) -> None:
    """Join the Ray cluster at ``address`` (``auto``: the one this machine belongs to), or start a Ray of this
    machine alone when there is none, listening on loopback only. Called once, before trio starts (``ray.init``
    blocks)."""
    if address is None:
        os.environ[LOOPBACK_ONLY_ENV] = "0"  # before Ray is imported; its processes inherit it
    ray = require_ray()
    if ray.is_initialized():
        return
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning",
                               "configure_logging": False}
    if address is None:
        options["object_store_memory"] = LOCAL_OBJECT_STORE_BYTES
        keep_local_ray_on_loopback()
    else:
        check_reachable(address)
    try:
        # "local": a new Ray of its own, even when this machine already has one (ray.init() would join it, or the
        # one RAY_ADDRESS names, and that one may listen on the network)
        ray.init(address=address or "local", **options)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        raise ClusterError(f"cannot reach {where}: {str(error).splitlines()[0] if str(error) else error}") from None
    if address is None:
        check_loopback_node(ray)


def keep_local_ray_on_loopback() -> None:
    """A Ray this machine starts for itself is for this machine alone: its node takes 127.0.0.1 as its address, so
    its servers listen on loopback only (Ray's own code execution is then reachable from this machine only, not from
    the network with nothing but Ray's token in the way). Ray reads :data:`LOOPBACK_ONLY_ENV` when imported: when it
    was imported before :func:`connect` set it (a program that imported Ray first), the value it read is set too."""
    require_ray()._private.ray_constants.ENABLE_RAY_CLUSTER = False


def check_loopback_node(ray: Any) -> None:
    """Fail closed: a Ray started here whose node took another address than loopback listens beyond this machine
    (a Ray version that reads its switch differently); stop it rather than run."""
    node_ip = ray.util.get_node_ip_address()
    try:
        loopback = ipaddress.ip_address(node_ip).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        ray.shutdown()
        raise ClusterError(f"the local Ray took the address {node_ip}, not loopback: it would listen on the network; "
                           f"start a cluster (ray start --head) and pass --address instead")


def check_reachable(address: str) -> None:
    """A cluster's head that does not answer is one line at once (``ray.init`` would retry for minutes, printing
    warnings). ``auto`` and other schemes (``ray://``) are left to Ray."""
    if address == "auto" or "://" in address:
        return
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ClusterError(f"expected --address HOST:PORT (the head's GCS port, 6379 by default) or auto, got "
                           f"{address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_S).close()
    except OSError as error:
        raise ClusterError(f"cannot reach the Ray cluster at {address!r}: {error.strerror or error}; is its head "
                           f"running (ray start --head)?") from None


def ray_factory(concurrency: int, actors_per_node: int = 1) -> BackendFactory:
    """The factory :func:`~arena.tournament.runner.run_tournament` takes: games on ``actors_per_node`` actors on every
    node of the cluster joined by :func:`connect`, at most ``concurrency`` of them in flight (the driver's workers),
    on whichever actors."""
    if concurrency < 1:
        raise SpecError(f"expected a concurrency of at least 1, got {concurrency}")
    if actors_per_node < 1:
        raise SpecError(f"expected at least 1 actor per node, got {actors_per_node}")
    return lambda setup: RayBackend(setup, concurrency, actors_per_node)


def node_label(node_id: str, address: str) -> str:
    """How errors and logs name a node: its address and the start of its Ray id (two nodes may share a machine)."""
    return f"{address} ({node_id[:8]})"


@dataclasses.dataclass(frozen=True)
class ActorPlace:
    """Where one actor plays: its node and its slot among that node's ``per_node`` actors. The one owner of how an
    actor is named in the run's events and errors, and of its bots' log folder."""

    node_id: str
    node: str
    """The node's :func:`node_label`: what a bot that cannot start there is named by (every actor of the node says
    the same, and it is said once)."""
    slot: int
    per_node: int

    @property
    def label(self) -> str:
        """The actor in events and errors: its node, and its slot when the node has several actors."""
        return self.node if self.per_node == 1 else f"{self.node} actor {self.slot}"

    @property
    def logs_folder(self) -> str:
        """``node-<id8>`` for a node's one actor (as before there were several), ``node-<id8>-<slot>`` for each of
        several: every actor's bots write logs of their own."""
        folder = f"node-{self.node_id[:8]}"
        return folder if self.per_node == 1 else f"{folder}-{self.slot}"


def setup_for_actor(setup: BackendSetup, place: ActorPlace, cwd: Path) -> BackendSetup:
    """The run as an actor on another machine needs it: every path absolute (as the driver means it; the arena and
    the bots are installed at the same paths on every node), the bots' logs in a folder of that actor's own."""
    run = (cwd / setup.run).resolve()
    bots = tuple(dataclasses.replace(bot, cwd=str(cwd / (bot.cwd or ""))) if bot.command else bot
                 for bot in setup.spec.bots)
    return dataclasses.replace(
        setup, spec=dataclasses.replace(setup.spec, bots=bots), run=run,
        protected=tuple((cwd / p).resolve() for p in setup.protected),
        logs=(cwd / (setup.logs or RunFolder(run).bot_logs)) / place.logs_folder)


class NodeLoop:
    """An actor's trio loop, in a thread of its own that lives as long as the actor: the actor's own bot processes
    of every entrant on its node (a :class:`~arena.tournament.local_backend.LocalBackend`) and the actor's log. Calls reach
    it from any other thread through :meth:`call`.

    Apart from :class:`GameActor` because Ray makes an actor of any class with a coroutine method (even one Ray never
    calls, as this class's ``_main``) an asyncio actor, whose calls, sync methods too, all run on one event-loop
    thread, one after the other: a ``play`` in flight there held up every other call of its node, a withdrawal among
    them, so its games ran to their own clock, and a node played one game at a time."""

    def __init__(self, setup: BackendSetup) -> None:
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(setup,), name="arena-games", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            raise self._failed

    def _run(self, setup: BackendSetup) -> None:
        try:
            guest.run(self._main, setup)
        except BaseException as error:  # noqa: BLE001 - reported to the creator of the actor
            self._failed = error
            self._ready.set()

    async def _main(self, setup: BackendSetup) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stopped = trio.Event()
        self.backend = LocalBackend(setup)
        assert setup.logs is not None
        setup.logs.mkdir(parents=True, exist_ok=True)
        self._log_file = open(setup.logs / "node.log", "a")
        self.log = structlog.wrap_logger(
            structlog.WriteLogger(self._log_file),
            processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso"),
                        structlog.processors.JSONRenderer()])
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            self._log_file.close()

    def call(self, function: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``await function(*args)`` on the loop, from another thread: its result (or its exception)."""
        return trio.from_thread.run(function, *args, trio_token=self._token)

    def stop(self) -> None:
        """Stop every bot and end the loop; its thread is given :data:`STOP_S` to end."""
        async def stop_all() -> None:
            with trio.CancelScope(shield=True):
                await self.backend.stop()
            self._stopped.set()

        self.call(stop_all)
        self._thread.join(STOP_S)


class GameActor:
    """One of a node's players of games (made a Ray actor by :class:`RayBackend`): its own bot processes of every
    entrant, on a :class:`NodeLoop`. A threaded actor (no method of it is a coroutine): Ray calls each method from
    one of its own threads, so a node plays its games at once, and a withdrawal or a stop (in :data:`CONTROL`, a
    concurrency group of their own) runs while they are in flight."""

    def __init__(self, setup: BackendSetup, label: str) -> None:
        self.label = label
        """Its node's label: what goes wrong with a bot here goes wrong on every actor of the node alike."""
        self._loop = NodeLoop(setup)

    def check(self) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
        """Start every entrant once on this node: (name, why) per entrant that cannot play here, and the entrants'
        ``bots.json`` data."""
        problems = self._loop.call(self._loop.backend.check, self._loop.log)
        return [(name, f"on node {self.label}: {why}") for name, why in problems], self._loop.backend.info()

    def play(self, scheduled: ScheduledGame) -> MatchRecord:
        """Play one game to its end on this node's bots; the driver records it."""
        return self._loop.call(self._loop.backend.play, scheduled, None)

    def withdraw(self, name: str, why: str) -> None:
        """The entrant leaves the run: its bots on this node stopped at once (its games in flight here end with its
        fault), its games here forfeits from now on."""
        self._loop.call(self._loop.backend.withdraw, name, why)

    def stop_lane(self, lane: int) -> None:
        """Stop every entrant's bots of ``lane`` on this node (their phase of deal sets has ended), returning once
        they are gone."""
        self._loop.call(self._loop.backend.stop_lane, lane)

    def stop(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Stop every bot of this node and end the trio loop; the entrants' data and the given-up lines."""
        self._loop.stop()
        backend = self._loop.backend
        return backend.info(), [f"on node {self.label}: {line}" for line in backend.given_up()]


@dataclasses.dataclass
class _Actor:
    """The driver's view of one actor."""

    place: ActorPlace
    handle: Any
    in_flight: int = 0
    games: int = 0
    """The games it played to their end (noted in ``arena.log`` when it stops)."""
    ready: bool = False
    """Every entrant started there: it may be given games."""
    alive: bool = True
    lost: bool = False
    """It died mid-run (its node lost, or only its process): a node still alive gets a new actor in its slot."""
    why: str = ""
    """Why its actor could not start, or its check failed, when one did: one line, the innermost error."""
    ran: bool = False
    """Its actor started, and its check raised (not a missing arena or Ray's fault: the error says what)."""
    info: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Its entrants' ``bots.json`` data, as of its check (and of its stop, at the end)."""

    @property
    def label(self) -> str:
        return self.place.label

    @property
    def node_id(self) -> str:
        return self.place.node_id


class RayBackend:
    """Games on Ray actors, ``actors_per_node`` on every live node, each with its own bot processes (see the
    module's docstring)."""

    def __init__(self, setup: BackendSetup, concurrency: int, actors_per_node: int = 1) -> None:
        self.ray = require_ray()
        self.setup = setup
        self.concurrency = concurrency
        self.per_node = actors_per_node
        self.cwd = Path.cwd()
        self.actors: list[_Actor] = []
        self.replayed: list[tuple[int, str]] = []
        """(schedule index, actor's label) of every game sent again because the actor playing it was lost."""
        self._given_up: list[str] = []
        self._withdrawn: dict[str, str] = {}
        """The entrants withdrawn from the run (name to why): from every node, those that join later too."""
        self._log: Any = None
        self._refreshed = 0.0
        self._changed = trio.Event()
        self._add_missing_actors()

    def _add_missing_actors(self) -> list[_Actor]:
        """The actors every live node lacks: all of them at the start; later, those of nodes that joined, and one in
        the slot of each actor that died while its node lived on (counted by node and slot, so a node short of one
        gets that one, and a healthy node none). An actor that failed its check keeps its slot: no retry."""
        self._refreshed = time.monotonic()
        held = {(actor.node_id, actor.place.slot) for actor in self.actors if not actor.lost}
        added = []
        for entry in self.ray.nodes():
            if not entry.get("Alive"):
                continue
            node = node_label(entry["NodeID"], entry.get("NodeManagerAddress", "?"))
            for slot in range(self.per_node):
                if (entry["NodeID"], slot) not in held:
                    added.append(self._start_actor(ActorPlace(entry["NodeID"], node, slot, self.per_node)))
        self.actors.extend(added)
        return added

    def _start_actor(self, place: ActorPlace) -> _Actor:
        """A new actor pinned to its node (Ray starts it in the background: its check says when it is ready)."""
        pinned = self.ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy
        handle = self.ray.remote(concurrency_groups={CONTROL: CONTROL_THREADS})(GameActor).options(
            num_cpus=0, max_concurrency=self.concurrency, max_restarts=0,
            scheduling_strategy=pinned(place.node_id, soft=False),
        ).remote(setup_for_actor(self.setup, place, self.cwd), place.node)
        return _Actor(place, handle)

    async def _call(self, actor: _Actor, method: str, *args: Any) -> Any:
        """A method of the actor, awaited without blocking trio (a cancelled wait cancels the call too). Games are
        played by the actor's default threads, one per game the driver may have in flight; every other call by the
        threads of :data:`CONTROL`, which games never hold."""
        remote = getattr(actor.handle, method)
        if method != "play":
            remote = remote.options(concurrency_group=CONTROL)
        ref = remote.remote(*args)

        def cancel() -> None:
            with contextlib.suppress(Exception):  # best effort: a running call of a threaded actor goes on
                self.ray.cancel(ref)

        return await await_future(ref.future(), cancel)

    async def check(self, log: Any) -> list[tuple[str, str]]:
        """Every entrant started by every actor of every node before the first game; an actor that cannot start
        stops the run with one line naming its node (and the actor, when the node has several)."""
        self._log = log
        problems = await self._check_actors(self.actors)
        lost = [actor for actor in self.actors if not actor.ready]
        if lost and not problems:
            actor = lost[0]
            if actor.ran:
                raise ClusterError(f"starting the entrants failed on node {actor.label}: {actor.why}; no game was "
                                   f"played")
            raise ClusterError(f"the Ray actor could not start on node {actor.label}: {actor.why}; no game was "
                               f"played (is the arena installed at the same path on every node?)")
        ready = sum(actor.ready for actor in self.actors)
        if ready > self.concurrency:  # not refused: the cluster's size is known only now, and changes mid-run
            self._note("actors_idle", actors=ready, games_in_flight=self.concurrency,
                       why="more actors than games in flight: some hold their bots and play nothing; raise "
                           "--concurrency or lower --workers")
        return problems

    async def _check_actors(self, actors: list[_Actor]) -> list[tuple[str, str]]:
        """Each actor starts every entrant once; (name, why) per entrant that cannot play, each said once (every
        actor of a node finds the same), in the order of the file's entrants."""
        problems: list[tuple[str, str]] = []

        async def check_one(actor: _Actor) -> None:
            try:
                found, info = await self._call(actor, "check")
            except self.ray.exceptions.RayError as error:
                actor.alive, actor.why = False, cause_line(error)
                actor.ran = isinstance(error, self.ray.exceptions.RayTaskError)
                return
            problems.extend(found)
            if found:
                actor.alive = False
                self.ray.kill(actor.handle)
            else:
                actor.ready, actor.info = True, info

        async with trio.open_nursery() as nursery:
            for actor in actors:
                nursery.start_soon(check_one, actor)
        for actor in actors:
            if actor.ready:
                self._note("node_ready", node=actor.label, level="info")
        order = {safe_name(bot.name): number for number, bot in enumerate(self.setup.spec.bots)}
        return sorted(dict.fromkeys(problems), key=lambda problem: (order.get(problem[0], len(order)), problem[1]))

    async def play(self, scheduled: ScheduledGame, on_progress: OnProgress | None) -> MatchRecord:
        """Play the game on the least busy live actor; when that actor is lost mid-game, play it again on another."""
        while True:
            actor = await self._pick()
            actor.in_flight += 1
            try:
                record: MatchRecord = await self._call(actor, "play", scheduled)
            except self.ray.exceptions.RayActorError as error:
                self._lose(actor, error)
                self.replayed.append((scheduled.index, actor.label))
                self._note("game_replayed", index=scheduled.index, lost_on=actor.label)
                continue
            finally:
                actor.in_flight -= 1
            actor.games += 1
            replay_progress(record, on_progress)
            return record

    async def _pick(self) -> _Actor:
        """The ready actor with the fewest games in flight (waiting for one, up to a limit, when none is left)."""
        if time.monotonic() - self._refreshed > NODE_REFRESH_S:
            await self._welcome(self._add_missing_actors())
        with trio.move_on_after(NO_NODE_WAIT_S):
            while True:
                ready = [actor for actor in self.actors if actor.ready and actor.alive]
                if ready:
                    return least_busy(ready)
                await self._welcome(self._add_missing_actors())
                with trio.move_on_after(1.0):
                    await self._changed.wait()
        raise ClusterError(f"no node of the Ray cluster is left to play on (lost: "
                           f"{', '.join(dict.fromkeys(actor.place.node for actor in self.actors))}); the recorded "
                           f"games are safe: resume when the cluster is back")

    async def _welcome(self, actors: list[_Actor]) -> None:
        """Actors started mid-run (a node that joined, a replacement) play once every entrant started there (one that
        cannot is left out)."""
        if not actors:
            return
        for name, why in await self._check_actors(actors):
            self._note("node_left_out", bot=name, why=why)
        for actor in actors:
            if actor.why:
                self._note("node_left_out", node=actor.label, why=actor.why)
        for name, why in self._withdrawn.items():  # an actor started mid-run plays none of their games either
            await self._withdraw_on(actors, name, why)
        self._changed.set()
        self._changed = trio.Event()

    def _lose(self, actor: _Actor, error: BaseException) -> None:
        if actor.alive:
            actor.alive, actor.lost = False, True
            self._note("node_lost", node=actor.label, error=cause_line(error), in_flight=actor.in_flight)
            self.ray.kill(actor.handle)  # a node only unreachable for now must not come back with stale games

    def _note(self, event: str, level: str = "warning", **fields: Any) -> None:
        """An event of the cluster in the run's ``arena.log``."""
        if self._log is not None:
            with contextlib.suppress(OSError):  # a full disk is reported by the next write that matters
                getattr(self._log, level)(event, **fields)

    def info(self) -> list[dict[str, Any]]:
        """``bots.json``: each entrant as the first actor saw it, with its starts summed over every actor, and each
        node it started on named once."""
        played = [actor for actor in self.actors if actor.ready]
        return merge_info([actor.info for actor in played], [actor.place.node for actor in played])

    def given_up(self) -> list[str]:
        return list(dict.fromkeys(self._given_up))  # a node's actors give up on a broken bot alike: said once

    async def withdraw(self, name: str, why: str) -> None:
        """The entrant leaves the run on every live actor (and on any actor started later): its bots there are
        stopped at once, while its games are in flight (each actor runs this call in :data:`CONTROL`, beside its
        games), so each game in flight ends with its fault as on one machine, and its later games are forfeits."""
        self._withdrawn[name] = why
        await self._withdraw_on(self.actors, name, why)

    async def _withdraw_on(self, actors: list[_Actor], name: str, why: str) -> None:
        async def one(actor: _Actor) -> None:
            with contextlib.suppress(self.ray.exceptions.RayError):  # a lost actor's bots died with it
                await self._call(actor, "withdraw", name, why)

        async with trio.open_nursery() as nursery:
            for actor in actors:
                if actor.alive:
                    nursery.start_soon(one, actor)

    async def stop_lane(self, lane: int) -> None:
        """Every live actor stops its bots of ``lane`` (:mod:`arena.tournament.phases`); returns once all did. An
        actor whose call fails is lost (killed, its bots with it: they die with the thread that started them), never
        left playing with processes that may have seen the phase's deals."""
        async def one(actor: _Actor) -> None:
            try:
                await self._call(actor, "stop_lane", lane)
            except self.ray.exceptions.RayError as error:
                self._lose(actor, error)

        async with trio.open_nursery() as nursery:
            for actor in self.actors:
                if actor.alive:
                    nursery.start_soon(one, actor)

    async def stop(self) -> None:
        """Stop every live actor's bots (then the actor); an actor that does not answer in time is killed."""
        async def stop_one(actor: _Actor) -> None:
            with contextlib.suppress(self.ray.exceptions.RayError):  # a lost actor's bots died with it
                actor.info, given_up = await self._call(actor, "stop")
                self._given_up.extend(given_up)
            self._note("actor_stopped", node=actor.label, games=actor.games, level="info")

        with trio.move_on_after(STOP_S):
            async with trio.open_nursery() as nursery:
                for actor in self.actors:
                    if actor.alive:
                        nursery.start_soon(stop_one, actor)
        for actor in self.actors:
            self.ray.kill(actor.handle)


def least_busy(actors: list[_Actor]) -> _Actor:
    """The actor with the fewest games in flight; among equals, the one whose node has the fewest (a node's second
    actor shares that node's cores with its first: the next game goes to an idle node first)."""
    on_node: Counter[str] = Counter()
    for actor in actors:
        on_node[actor.node_id] += actor.in_flight
    return min(actors, key=lambda actor: (actor.in_flight, on_node[actor.node_id]))


def merge_info(infos: list[list[dict[str, Any]]], nodes: list[str]) -> list[dict[str, Any]]:
    """One ``bots.json`` entry per entrant from every actor's: the first actor's, with starts and restarts summed
    and each node named once."""
    return [{**entry, "nodes": list(dict.fromkeys(nodes))} for entry in merge_bot_info(infos)]


CAUSE_CHARS = 1000
"""The most of an error's text :func:`cause_line` keeps."""
CAUSES_SHOWN = 3
"""The most distinct leaves of an exception group :func:`cause_line` names."""
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RAISED = re.compile(r"^((?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt|Failure|Cancelled|Iteration|Group))"
                     r"(?::\s*(.*))?$")
"""A traceback's line naming the exception raised (``FileNotFoundError: [Errno 2] ...``)."""


def cause_line(error: BaseException) -> str:
    """What went wrong, on one line: the innermost exception's type and message. A Ray task's error is followed to
    the exception its task raised, an exception group (a trio nursery's) to its leaves (each distinct one named, in
    order), and an error that carries its cause only as a traceback's text (an actor that failed in its creation)
    to that traceback's last exception. The first line of such errors is ``+ Exception Group Traceback ...``, or
    Ray's header, which says nothing."""
    causes = list(dict.fromkeys(_describe(leaf) for leaf in _leaves(error, 0)))
    more = len(causes) - CAUSES_SHOWN
    line = "; ".join(causes[:CAUSES_SHOWN]) + (f"; and {more} more" if more > 0 else "")
    return line if len(line) <= CAUSE_CHARS else line[:CAUSE_CHARS - 1] + "…"


def _leaves(error: BaseException, depth: int) -> Iterator[BaseException]:
    ray_exceptions = sys.modules.get("ray.exceptions")  # no Ray loaded: no error of Ray's to follow
    task_error = ray_exceptions.RayTaskError if ray_exceptions is not None else ()
    if depth < 20 and isinstance(error, task_error):
        cause = error.cause
        if isinstance(cause, BaseException) and cause is not error:
            yield from _leaves(cause, depth + 1)
            return
    if depth < 20 and isinstance(error, BaseExceptionGroup) and error.exceptions:
        for inner in error.exceptions:
            yield from _leaves(inner, depth + 1)
        return
    yield error


def _describe(error: BaseException) -> str:
    """One exception as ``Type: message``; a message holding a traceback, as its last exception's line."""
    lines = [line.strip() for line in _ANSI.sub("", str(error)).splitlines() if line.strip()]
    if any(line.lstrip("|+ ").startswith(("File ", "Traceback ", "Exception Group Traceback ")) for line in lines):
        for line in reversed(lines):
            raised = _RAISED.match(line.lstrip("|+ "))
            if raised:
                return f"{raised[1]}: {raised[2]}" if raised[2] else raised[1]
    name = type(error).__name__
    if not lines:
        return name
    last = f" ({lines[-1]})" if len(lines) > 1 and not lines[-1].startswith(("File ", "^")) else ""
    return f"{name}: {lines[0]}{last}"


__all__ = ["RayBackend", "GameActor", "ClusterError", "connect", "ray_factory", "require_ray",
           "merge_info", "node_label", "ActorPlace", "setup_for_actor", "least_busy", "RAY_MISSING"]
