"""The Arena's gRPC service (proto/dominoes/v1/arena.proto): the grpcio handlers of :class:`~arena.server.core.Arena`.

Each handler runs on a gRPC thread, asks the trio side for what it needs with ``trio.from_thread.run_sync`` (quick,
never blocking trio), and does slow work (reading records) on its own thread. Refusals become status codes with
their one line (:mod:`arena.server.status`, shared with the league's service).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar, TypeVarTuple

import grpc
import grpc.aio
import trio

from arena.protocol import arena_pb2 as apb
from arena.protocol import arena_pb2_grpc as apb_grpc
from arena.server.admission import NothingToRun
from arena.server.core import ApiError, Arena, Refusal
from arena.server.events import game_summary, record_message
from arena.server.status import handled, status_of

Args = TypeVarTuple("Args")
Result = TypeVar("Result")


class ArenaServicer(apb_grpc.ArenaServicer):
    """The grpcio handlers; each runs on a gRPC thread and reaches the trio side through ``trio.from_thread``."""

    def __init__(self, arena: Arena, trio_token: trio.lowlevel.TrioToken) -> None:
        self.arena = arena
        self.trio_token = trio_token

    def _trio(self, function: Callable[[*Args], Result], *args: *Args) -> Result:
        return trio.from_thread.run_sync(function, *args, trio_token=self.trio_token)

    @handled
    def SubmitTournament(self, request: apb.SubmitTournamentRequest, context: grpc.ServicerContext) -> Any:
        try:
            spec, text = self.arena.admission.admit(request.spec if request.HasField("spec") else None, request.toml)
        except NothingToRun as error:
            raise ApiError(Refusal.FAILED_PRECONDITION, str(error)) from None
        notes = [spec.duplicate_off] if spec.duplicate_off else []
        return apb.SubmitTournamentReply(tournament=self._trio(self.arena.submit, spec, text), notes=notes)

    @handled
    def ListTournaments(self, request: apb.ListTournamentsRequest, context: grpc.ServicerContext) -> Any:
        return apb.ListTournamentsReply(tournaments=self._trio(self.arena.list_infos))

    @handled
    def GetStandings(self, request: apb.GetStandingsRequest, context: grpc.ServicerContext) -> Any:
        return self._trio(self.arena.standings, request.id)

    @handled
    def CancelTournament(self, request: apb.CancelTournamentRequest, context: grpc.ServicerContext) -> Any:
        info = trio.from_thread.run(self.arena.cancel, request.id, trio_token=self.trio_token)
        return apb.CancelTournamentReply(tournament=info)

    @handled
    def ListGames(self, request: apb.ListGamesRequest, context: grpc.ServicerContext) -> Any:
        t, info = self._trio(self.arena.game_access, request.id)
        limit = min(request.limit or 100, 1000)
        t.records.refresh()
        indices = t.records.indices()
        revealed = bool(info.master_seed)  # as GetGame: a game's seed only once the master seed is revealed
        games = []
        for index in indices[request.offset:request.offset + limit]:
            record = t.records.read(index)
            if record is not None:
                summary = game_summary(record)
                if revealed and isinstance(record.get("seed"), str):
                    summary.seed = record["seed"]
                games.append(summary)
        return apb.ListGamesReply(games=games, games_done=len(indices), games_total=info.games_total)

    @handled
    def GetGame(self, request: apb.GetGameRequest, context: grpc.ServicerContext) -> Any:
        t, info = self._trio(self.arena.game_access, request.id)
        index = request.index
        t.records.refresh()
        record = t.records.read(index)
        if record is None:
            if index >= info.games_total:
                raise ApiError(Refusal.NOT_FOUND,
                               f"tournament {t.id} has games 0 to {info.games_total - 1}, not {index}")
            unreadable = t.records.unreadable(index)
            if unreadable is not None:
                number, problem = unreadable
                raise ApiError(Refusal.DATA_LOSS,
                               f"game {index} of tournament {t.id}: its record, line {number} of "
                               f"{t.records.path.name}, is unreadable: {problem}")
            raise ApiError(Refusal.NOT_FOUND, f"game {index} of tournament {t.id} is not recorded (yet)")
        waiting = self._trio(t.withheld_for, index)
        if waiting:
            raise ApiError(Refusal.FAILED_PRECONDITION, t.withheld_message(index, waiting))
        withheld = not info.master_seed
        return apb.GetGameReply(record=record_message(record, withheld), seed_withheld=withheld)

    def WatchTournament(self, request: apb.WatchTournamentRequest, context: grpc.ServicerContext) -> Iterator[apb.WatchReply]:
        try:
            watcher = self._trio(self.arena.subscribe, request.id, request.moves, context)
        except (ApiError, trio.RunFinishedError, trio.Cancelled) as error:
            found = status_of(error)
            assert found is not None
            context.abort(*found)
        context.add_callback(watcher.close)
        try:
            while True:
                events, ending = watcher.take(timeout=1.0)
                if events:
                    yield apb.WatchReply(events=events)
                if ending is not None and len(watcher) == 0:
                    if ending.code != grpc.StatusCode.OK:
                        context.abort(ending.code, ending.details)
                    return
                if watcher.done or not context.is_active():
                    return
        finally:
            watcher.close()


def add_to_server(server: grpc.Server | grpc.aio.Server, servicer: ArenaServicer) -> None:
    apb_grpc.add_ArenaServicer_to_server(servicer, server)


__all__ = ["ArenaServicer", "add_to_server"]
