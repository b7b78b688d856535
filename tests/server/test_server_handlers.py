"""Every call of ``arena serve`` is served on the loop: each method handler the server registers (the Arena's, the
league's, the dial-in's, health and reflection), and each handler its interceptors hand on (the token's refusal, the
streams' limits), is a coroutine or async generator function, never a synchronous one that grpc.aio would run on a
thread pool. Checked on the real services and interceptors, registered as ``arena serve`` registers them."""

from __future__ import annotations

import asyncio
import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool

from arena.botkit import REFLECTION_V1
from arena.players.dial_in import REGISTRY
from arena.serve import ServeConfig, add_services, interceptors
from arena.server.auth import bearer, behaviour_of
from arena.server.core import Arena
from arena.server.dial_in import DialInServicer
from arena.server.league_service import LeagueServicer
from arena.server.service import ArenaServicer
from arena.server.streams import StreamLimits

pytestmark = pytest.mark.fast

TOKEN = "a-token-of-the-server-0123456789"
SERVICES = ("dominoes.v1.Arena", "dominoes.v1.DialInService", "dominoes.v1.LeagueService", "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection", REFLECTION_V1)


class Registered:
    """Stands for the grpc.aio server: keeps the handlers the services register (each generated registration
    gives its handlers generically too, as the dial-in's and reflection v1's give them only)."""

    def __init__(self) -> None:
        self.generic: list[Any] = []

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.generic.extend(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        pass

    def handler(self, path: str, metadata: tuple[tuple[str, str], ...] = ()) -> Any:
        details = Details(path, metadata)
        found = [h for h in (g.service(details) for g in self.generic) if h is not None]
        assert found, f"the server serves no {path}"
        return found[0]


@dataclass(frozen=True)
class Details:
    method: str
    invocation_metadata: tuple[tuple[str, str], ...]


def on_loop(handler: Any) -> bool:
    behaviour = behaviour_of(handler)
    return inspect.iscoroutinefunction(behaviour) or inspect.isasyncgenfunction(behaviour)


def served(tmp_path: Path) -> Registered:
    arena = Arena(tmp_path, concurrency=1, max_tournaments=1, log=None)
    registered = Registered()
    league: Any = None  # its handlers are looked at, never called: no league behind them
    add_services(registered, ArenaServicer(arena), LeagueServicer(league, tmp_path), DialInServicer(REGISTRY))
    return registered


def paths() -> list[str]:
    pool = descriptor_pool.Default()
    return [f"/{name}/{method.name}" for name in SERVICES for method in pool.FindServiceByName(name).methods]


async def intercepted(handler: Any, details: Details) -> Any:
    """The handler the server's interceptors (with a token) hand on for a call of ``details``."""
    async def found(_: Any) -> Any:
        return handler
    continuation: Any = found
    for interceptor in reversed(interceptors(ServeConfig(token=TOKEN), StreamLimits(), league=True, dial_in=True)):
        continuation = functools.partial(interceptor.intercept_service, continuation)
    return await continuation(details)


def test_the_check_tells_a_synchronous_handler() -> None:
    assert not on_loop(grpc.unary_unary_rpc_method_handler(lambda request, context: request))
    assert not on_loop(grpc.unary_stream_rpc_method_handler(lambda request, context: iter([request])))


def test_every_registered_handler_runs_on_the_loop(tmp_path: Path) -> None:
    registered = served(tmp_path)
    every = paths()
    assert len(every) > 40, every  # the Arena's 7, the league's 30-odd, the dial-in's, health's and reflection's
    synchronous = [path for path in every if not on_loop(registered.handler(path))]
    assert synchronous == []


def test_every_intercepted_handler_runs_on_the_loop(tmp_path: Path) -> None:
    """With the token and without it (the token's refusal, of the call's own kind), streams limited or not."""
    registered = served(tmp_path)

    async def handed_on() -> list[tuple[str, bool, Any]]:
        found = []
        for path in paths():
            for metadata in ((), bearer(TOKEN)):
                handler = registered.handler(path)
                found.append((path, bool(metadata), handler, await intercepted(handler, Details(path, metadata))))
        return [(path, token, after) for path, token, before, after in found
                if (after.request_streaming, after.response_streaming) !=
                (before.request_streaming, before.response_streaming) or not on_loop(after)]

    assert asyncio.run(handed_on()) == []
