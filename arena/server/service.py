"""The Arena's gRPC service (proto/dominoes/v1/arena.proto): the grpc.aio handlers of :class:`~arena.server.core.Arena`.

Each handler is a coroutine on the loop that trio runs in as a guest (:mod:`arena.guest`), on the thread of the
referee: it asks the trio side for what it needs directly (:func:`arena.guest.from_loop` for a quick look,
:func:`arena.guest.await_trio` for what waits), and does slow work (checking a submission's programs, reading
records) on a worker thread, so that a slow disk never stalls the games. A watch stream waits for its events
without a thread or a poll (:meth:`arena.server.events.Watcher.wait`); grpc.aio cancels its task when its client
cancels or the server stops. Refusals become status codes with their one line (:mod:`arena.server.status`, shared
with the league's service).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio

from arena import guest
from arena.protocol import arena_pb2 as apb
from arena.protocol import arena_pb2_grpc as apb_grpc
from arena.server.admission import NothingToRun
from arena.server.core import ApiError, Arena, Refusal
from arena.server.events import Watcher, game_summary, record_message
from arena.server.status import REFUSALS, abort_with, handled
from arena.server.tournaments import Tournament

Context = grpc.aio.ServicerContext[Any, Any]
CANCELLED_BY_SERVER = "cancelled by the server"


class ArenaServicer(apb_grpc.ArenaServicer):
    """The grpc.aio handlers; each runs on the loop, on the trio side's own thread."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    @handled
    async def SubmitTournament(self, request: apb.SubmitTournamentRequest, context: Context) -> Any:
        spec_message = request.spec if request.HasField("spec") else None
        try:  # parses the file, and looks for every bot's program on disk: a worker thread's work
            spec, text = await asyncio.to_thread(self.arena.admission.admit, spec_message, request.toml)
        except NothingToRun as error:
            raise ApiError(Refusal.FAILED_PRECONDITION, str(error)) from None
        notes = [spec.duplicate_off] if spec.duplicate_off else []
        return apb.SubmitTournamentReply(tournament=guest.from_loop(self.arena.submit, spec, text), notes=notes)

    @handled
    async def ListTournaments(self, request: apb.ListTournamentsRequest, context: Context) -> Any:
        return apb.ListTournamentsReply(tournaments=guest.from_loop(self.arena.list_infos))

    @handled
    async def GetStandings(self, request: apb.GetStandingsRequest, context: Context) -> Any:
        return guest.from_loop(self.arena.standings, request.id)

    @handled
    async def CancelTournament(self, request: apb.CancelTournamentRequest, context: Context) -> Any:
        return apb.CancelTournamentReply(tournament=await guest.await_trio(self.arena.cancel, request.id))

    @handled
    async def ListGames(self, request: apb.ListGamesRequest, context: Context) -> Any:
        t, info = guest.from_loop(self.arena.game_access, request.id)
        return await asyncio.to_thread(list_games, t, info, request.offset, min(request.limit or 100, 1000))

    @handled
    async def GetGame(self, request: apb.GetGameRequest, context: Context) -> Any:
        t, info = guest.from_loop(self.arena.game_access, request.id)
        record = await asyncio.to_thread(read_game, t, info, request.index)
        waiting = guest.from_loop(t.withheld_for, request.index)
        if waiting:
            raise ApiError(Refusal.FAILED_PRECONDITION, t.withheld_message(request.index, waiting))
        withheld = not info.master_seed
        return apb.GetGameReply(record=record_message(record, withheld), seed_withheld=withheld)

    async def WatchTournament(self, request: apb.WatchTournamentRequest, context: Context
                              ) -> AsyncIterator[apb.WatchReply]:
        """The tournament's events in batches, until it ends (the status its watcher ends with), the server stops,
        or the client goes away (grpc.aio then cancels this task)."""
        cancel = cancel_soon(context, asyncio.current_task())
        try:
            watcher: Watcher = guest.from_loop(self.arena.subscribe, request.id, request.moves, cancel)
        except REFUSALS as error:
            await abort_with(context, error)
        try:
            async for reply in replies(watcher, context):
                yield reply
        finally:
            watcher.close()


async def replies(watcher: Watcher, context: Context) -> AsyncIterator[apb.WatchReply]:
    """What the watcher is given, a batch a reply, until its ending (a status other than OK aborts the call) or
    its close."""
    while True:
        await watcher.wait()
        events, ending = watcher.take()
        if events:
            yield apb.WatchReply(events=events)
        if ending is not None and len(watcher) == 0:
            if ending.code != grpc.StatusCode.OK:
                await context.abort(ending.code, ending.details)
            return
        if watcher.done:
            return


def cancel_soon(context: Context, task: asyncio.Task[Any] | None) -> Any:
    """What ends a stream's call from the server's side: its handler's task cancelled, and CANCELLED sent to the
    client. grpc.aio ends the call only with a status, and sends it after the messages the client has not read
    yet; so the status is sent by a task of its own, which nothing waits for."""
    def cancel() -> None:
        if task is not None:
            task.cancel()
        asyncio.ensure_future(_abort(context))
    return cancel


async def _abort(context: Context) -> None:
    try:
        await context.abort(grpc.StatusCode.CANCELLED, CANCELLED_BY_SERVER)
    except Exception:  # noqa: BLE001, S110 (grpc.aio's AbortError, or the call over already: ended either way)
        pass


def list_games(t: Tournament, info: apb.TournamentInfo, offset: int, limit: int) -> apb.ListGamesReply:
    """A page of the tournament's recorded games (read from its records: on a worker thread)."""
    t.records.refresh()
    indices = t.records.indices()
    revealed = bool(info.master_seed)  # as GetGame: a game's seed only once the master seed is revealed
    games = []
    for index in indices[offset:offset + limit]:
        record = t.records.read(index)
        if record is not None:
            summary = game_summary(record)
            if revealed and isinstance(record.get("seed"), str):
                summary.seed = record["seed"]
            games.append(summary)
    return apb.ListGamesReply(games=games, games_done=len(indices), games_total=info.games_total)


def read_game(t: Tournament, info: apb.TournamentInfo, index: int) -> dict[str, Any]:
    """The record of game ``index``, or the refusal saying why there is none (read on a worker thread)."""
    t.records.refresh()
    record = t.records.read(index)
    if record is not None:
        return record
    if index >= info.games_total:
        raise ApiError(Refusal.NOT_FOUND, f"tournament {t.id} has games 0 to {info.games_total - 1}, not {index}")
    unreadable = t.records.unreadable(index)
    if unreadable is not None:
        number, problem = unreadable
        raise ApiError(Refusal.DATA_LOSS, f"game {index} of tournament {t.id}: its record, line {number} of "
                                          f"{t.records.path.name}, is unreadable: {problem}")
    raise ApiError(Refusal.NOT_FOUND, f"game {index} of tournament {t.id} is not recorded (yet)")


def add_to_server(server: grpc.aio.Server, servicer: ArenaServicer) -> None:
    apb_grpc.add_ArenaServicer_to_server(servicer, server)


__all__ = ["ArenaServicer", "add_to_server"]
