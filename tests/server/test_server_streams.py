"""Streams never starve quick calls: a real ``arena serve`` with watch streams that never read, and a burst of
``ListTournaments`` beside them; the streams beyond the limits (``--max-streams``, ``--max-streams-per-client``) are
refused with RESOURCE_EXHAUSTED naming the limit, and a slot comes back when its stream ends."""

from __future__ import annotations

import uuid
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.protocol import arena_pb2 as apb
from arena.server import streams
from support.waiting import wait_for
from support.servers import Server, bot_entry, named, random_bot, registry, submit, tournament

HOLD = "[time]\nmove_ms = 600000\n"
"""A game against the hanging bot lasts as long as the test: its tournament stays RUNNING, its watches open."""


def hanging_server(tmp_path: Path, hang_bot: Path, *flags: str) -> tuple[Server, str]:
    """A server with the flags given, and a tournament that stays running (alpha against the hanging bot)."""
    tag = uuid.uuid4().hex
    bots = random_bot("alpha", tag) + bot_entry("hanger", str(hang_bot), "--tag", tag)
    server = Server(tmp_path / "data", *flags, *registry(tmp_path, bots))
    info = submit(server.stub(), tournament(games=1, bots=named("alpha", "hanger"), extra=HOLD))
    return server, info.id


def open_watch(stub, tournament_id: str):
    """A watch stream that is never read: the call only. Returns it once the server has answered (its snapshot's
    headers arrived: the stream is open on the server), or ended (refused)."""
    call = stub.WatchTournament(apb.WatchTournamentRequest(id=tournament_id, moves=True), timeout=600)
    call.initial_metadata()
    return call


def refusal_of(call) -> tuple[grpc.StatusCode, str]:
    assert call.done(), "the stream is open, not refused"
    return call.code(), call.details()


def test_watchers_that_never_read_block_no_quick_call(tmp_path: Path, hang_bot: Path) -> None:
    """The audit's load: 190 watch streams that never read, then 200 ListTournaments at once. Every quick call is
    answered; the stream beyond --max-streams is refused, saying so."""
    server, tid = hanging_server(tmp_path, hang_bot, "--max-streams", "190", "--max-streams-per-client", "190")
    channels = [grpc.insecure_channel(server.address, [("grpc.use_local_subchannel_pool", 1)]) for _ in range(20)]
    try:
        watchers = [open_watch(server.stub(), tid) for _ in range(190)]
        assert not any(call.done() for call in watchers), [refusal_of(c) for c in watchers if c.done()][:3]
        code, details = refusal_of(open_watch(server.stub(), tid))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details == ("too many streams open on this server (190, arena serve --max-streams); try again when "
                           "one has ended")

        from arena.protocol import arena_pb2_grpc as apb_grpc

        stubs = [apb_grpc.ArenaStub(channel) for channel in channels]
        calls = [stubs[n % len(stubs)].ListTournaments.future(apb.ListTournamentsRequest(), timeout=300)
                 for n in range(200)]
        answers, failures = [], []
        for call in calls:
            try:
                answers.append(call.result())
            except grpc.RpcError as error:
                failures.append((error.code(), error.details()))
        assert failures == [], f"{len(failures)} of 200 quick calls failed, e.g. {failures[:3]}"
        assert all([t.id for t in answer.tournaments] == [tid] for answer in answers)
        assert not any(call.done() for call in watchers), "the streams stayed open meanwhile"
    finally:
        server.stop()
        for channel in channels:
            channel.close()


def test_a_client_gets_its_share_of_streams_and_slots_back(tmp_path: Path, hang_bot: Path) -> None:
    """--max-streams-per-client counts every stream of a client (health watches too); the refused stream says
    which limit; an ended stream's slot is free again."""
    server, tid = hanging_server(tmp_path, hang_bot, "--max-streams", "10", "--max-streams-per-client", "3")
    try:
        stub = server.stub()
        first = [open_watch(stub, tid), open_watch(stub, tid)]
        health = health_pb2_grpc.HealthStub(grpc.insecure_channel(server.address))
        health_watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=600)
        assert next(health_watch).status == health_pb2.HealthCheckResponse.SERVING
        code, details = refusal_of(open_watch(stub, tid))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details == ("too many streams open from ipv4:127.0.0.1 (3, arena serve --max-streams-per-client); "
                           "end one first")
        refused_health = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=600)
        with pytest.raises(grpc.RpcError) as error:
            next(refused_health)
        assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

        assert stub.ListTournaments(apb.ListTournamentsRequest(), timeout=30).tournaments[0].id == tid
        health_watch.cancel()
        again: list = []

        def reopened() -> bool:
            call = open_watch(stub, tid)
            again.append(call)
            return not call.done()
        wait_for(reopened, 60, "the ended stream's slot to be free again")
        assert not any(call.done() for call in first)
    finally:
        server.stop()


def test_a_watch_its_client_cancels_ends_its_handler(tmp_path: Path, hang_bot: Path) -> None:
    """The handler of a cancelled watch ends (grpc.aio cancels its task): its stream's slot, the only one, is
    free again while the tournament still runs, and the next watch gets the tournament's snapshot."""
    server, tid = hanging_server(tmp_path, hang_bot, "--max-streams", "1", "--max-streams-per-client", "1")
    try:
        stub = server.stub()
        first = stub.WatchTournament(apb.WatchTournamentRequest(id=tid, moves=True), timeout=600)
        assert next(first).events[0].snapshot.tournament.id == tid
        code, details = refusal_of(open_watch(stub, tid))
        assert (code, details) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams open on this server (1, "
                                   "arena serve --max-streams); try again when one has ended")
        first.cancel()
        again: list = []

        def reopened() -> bool:
            call = open_watch(stub, tid)
            again.append(call)
            return not call.done()
        wait_for(reopened, 60, "the cancelled watch's handler to end and free its slot")
        assert next(again[-1]).events[0].snapshot.tournament.state == apb.TOURNAMENT_STATE_RUNNING
    finally:
        server.stop()


@pytest.mark.fast
def test_the_cli_defaults_are_the_modules_limits() -> None:
    from arena.cli import build_parser

    args = build_parser().parse_args(["serve"])
    assert (args.max_streams, args.max_streams_per_client) == (streams.MAX_STREAMS, streams.MAX_STREAMS_PER_CLIENT)
    limits = streams.StreamLimits()
    assert limits.calls_in_flight() == streams.MAX_STREAMS + streams.UNARY_BACKLOG


@pytest.mark.parametrize("peer, client", [
    ("ipv4:127.0.0.1:50123", "ipv4:127.0.0.1"), ("ipv6:[::1]:50123", "ipv6:[::1]"), ("unix:/run/a.sock", "unix"),
    ("unix:", "unix"),
])
@pytest.mark.fast
def test_a_client_is_its_address_without_the_port(peer: str, client: str) -> None:
    class Context:
        def peer(self) -> str:
            return peer
    assert streams.client_of(Context()) == client  # type: ignore[arg-type]


@pytest.mark.fast
def test_streams_over_the_limits_are_refused_slots_freed_once() -> None:
    limits = streams.StreamLimits(total=3, per_client=2)
    a1, a2 = limits.acquire("a"), limits.acquire("a")
    with pytest.raises(streams.StreamRefused, match="too many streams open from a"):
        limits.acquire("a")
    b1 = limits.acquire("b")
    with pytest.raises(streams.StreamRefused, match=r"too many streams open on this server \(3"):
        limits.acquire("c")
    a1()
    a1()  # twice (the call's callback and the generator's end): one slot
    assert limits.open_now() == 2
    limits.acquire("c")
    with pytest.raises(streams.StreamRefused):
        limits.acquire("d")
    a2(), b1()
    assert limits.open_now() == 1
