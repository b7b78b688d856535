"""Bots that dial in: a real ``arena serve``, a sandboxed local entrant, and a dial-in entrant that is
``arena connect`` in its own process over TLS, or a raw dial-in client written by hand (well-behaved or hostile).

Refusals of tokens, a tournament that fails naming who did not come, a connection cut mid-game (a crash fault, the
tournament goes on), protocol violations (recorded faults, the server and the other games unharmed), and the seat
scanner over everything sent to a dial-in bot."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import grpc
import grpc.aio
import pytest
import trio
from support.dial_in import (
    Lines,
    RawDialIn,
    connect,
    dial_in_entry,
    first_legal,
    records_by_match,
    write_token,
)
from support.hidden import hidden_at_moves, tiles_in
from support.paths import ROOT
from support.servers import (
    FINISHED,
    RANDOM_BOT,
    Server,
    named,
    random_bot,
    records,
    registry,
    self_signed,
    submit,
    tournament,
    watch,
)
from support.waiting import wait_for

from arena.protocol import arena_pb2 as apb
from arena.protocol import bot_pb2, dial_in_pb2
from arena.tournament.spec import SpecError, spec_from_dict

GENEROUS_S = 120
"""A deadline for what happens on a busy machine (two cores shared with other tests)."""
T = TypeVar("T")


def standing_of(stub, tid: str, bot: str, metadata: tuple = ()) -> apb.EntrantStanding:
    """``bot``'s line of the tournament's standings: its decisions and think time, measured on the arena's side."""
    standings = stub.GetStandings(apb.GetStandingsRequest(id=tid), timeout=30, metadata=metadata).standings
    return next(e for e in standings.entrants if e.name == bot)


def waiting_text(server: Server, tid: str) -> str:
    return "".join(server.output) + f" (tournament {tid})"


def state_of(stub, tid: str) -> apb.TournamentInfo:
    return stub.GetStandings(apb.GetStandingsRequest(id=tid), timeout=30).tournament


def run_folder(server: Server, tid: str) -> Path:
    return server.data / "tournaments" / tid


def finished(stub, tid: str) -> apb.TournamentInfo:
    """Follow the tournament to its end; its final state."""
    watch(stub, tid, seconds=GENEROUS_S * 2)
    return state_of(stub, tid)


@pytest.fixture
def two_tokens(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    return {name: write_token(tmp_path, name) for name in ("lab-a", "lab-b")}


# --- the tournament file ---------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_an_entry_keeps_a_name_and_token_hash_only() -> None:
    base = {"variant": "block", "bots": [{"name": "x", "command": "python bot.py"}]}
    good = {"name": "lab-b", "dial_in": True, "token_sha256": "a" * 64}
    spec = spec_from_dict({**base, "bots": [*base["bots"], good]})
    assert spec.bots[1].dial_in and spec.bots[1].token_sha256 == "a" * 64 and not spec.bots[1].command
    for entry, message in [
        ({"name": "lab-b", "dial_in": True}, "key 'bots[2].token_sha256' is missing"),
        ({**good, "token_sha256": "A" * 64}, "key 'bots[2].token_sha256' must be the SHA-256 of the bot's token as "
                                             "64 lowercase hex digits"),
        ({**good, "command": "python bot.py"}, "key 'bots[2].command': bot 'lab-b' dials in (dial_in = true), so "
                                               "the arena starts and calls nothing for it"),
        ({"name": "lab-b", "command": "python bot.py", "token_sha256": "a" * 64},
         "key 'bots[2].token_sha256' is for a bot that dials in (dial_in = true)"),
    ]:
        with pytest.raises(SpecError) as error:
            spec_from_dict({**base, "bots": [*base["bots"], entry]})
        assert str(error.value).startswith(message), str(error.value)


@pytest.mark.fast
def test_relay_latency_is_by_the_nearest_rank() -> None:
    from arena.players.relay import Latency

    latency = Latency()
    assert latency.quantile(0.5) is None and latency.report(0) == "served 0 decisions"
    for ms in (10, 1, 9, 2, 8, 3, 7, 4, 6, 5):
        latency.add(ms)
    assert (latency.quantile(0.5), latency.quantile(0.9), latency.quantile(1.0), latency.quantile(0.0)) == (5, 9, 10, 1)
    assert latency.report(10).startswith("served 10 decisions; round trip here (request received to reply sent): "
                                         "median 5.0 ms, p90 9.0 ms (")


@pytest.mark.fast
def test_one_late_reply_passes_a_second_breaks_the_protocol() -> None:
    """A decision that timed out (or was cancelled) is given up on: the bot is sent a Cancel of it, and its reply,
    when it comes, is late, not a protocol error (the fault is recorded already); the same reply again, or a reply
    to an id never sent, is one."""
    import trio

    from arena.players.dial_in import DialInConnection
    from arena.players.faults import BotFailure, FaultKind

    async def main() -> None:
        connection = DialInConnection("lab-a", "0" * 64, bot_pb2.HelloReply(name="a", protocol_version=1))
        with pytest.raises(BotFailure) as timed_out:
            await connection.decide(bot_pb2.ActRequest(), 0.01)
        assert timed_out.value.kind == FaultKind.TIMEOUT
        sent = connection.outbox.get_nowait()
        assert connection.outbox.get_nowait() == dial_in_pb2.PlayResponse(
            request_id=sent.request_id, cancel=dial_in_pb2.Cancel(reason="no reply within 10 ms"))
        late = dial_in_pb2.PlayRequest(request_id=sent.request_id, act=bot_pb2.ActReply(index=0))
        assert connection.received(late) and not connection.closed
        assert not connection.received(late) and connection.closed
        assert connection.why == (f"the bot broke the dial-in protocol: a reply to request {sent.request_id}, "
                                  f"which was never sent or was answered already")

    trio.run(main)


@pytest.mark.fast
def test_only_a_request_of_a_cancelled_game_is_withdrawn() -> None:
    """The arena gives up on a request before its deadline when the game waiting for it is cancelled: the bot is
    sent a Cancel saying so. A request answered in time is not withdrawn, and neither is one the stream's end failed
    (there is no stream left to tell)."""
    import trio
    import trio.testing

    from arena.players.dial_in import GAME_STOPPED, Close, DialInConnection
    from arena.players.faults import BotFailure, FaultKind

    def sent(connection: DialInConnection) -> list:
        """What the connection put on its outbox: (request id, what) per message, Close for the stream's end."""
        out = []
        while not connection.outbox.empty():
            message = connection.outbox.get_nowait()
            out.append(Close if isinstance(message, Close) else (message.request_id, message.WhichOneof("message")))
        return out

    async def main() -> None:
        connection = DialInConnection("lab-a", "0" * 64, bot_pb2.HelloReply(name="a", protocol_version=1))
        with trio.CancelScope() as game:
            game.cancel()
            await connection.decide(bot_pb2.ActRequest(), 600)
        first, withdrawn = connection.outbox.get_nowait(), connection.outbox.get_nowait()
        assert withdrawn == dial_in_pb2.PlayResponse(request_id=first.request_id,
                                                     cancel=dial_in_pb2.Cancel(reason=GAME_STOPPED))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.decide, bot_pb2.ActRequest(), 600)
            await trio.testing.wait_all_tasks_blocked()
            assert connection.received(dial_in_pb2.PlayRequest(request_id=2, act=bot_pb2.ActReply(index=0)))
        failed = []

        async def cut_off() -> None:
            try:
                await connection.decide(bot_pb2.ActRequest(), 600)
            except BotFailure as failure:
                failed.append(failure.kind)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(cut_off)
            await trio.testing.wait_all_tasks_blocked()
            connection.lost("the network dropped")
        assert failed == [FaultKind.CRASHED]
        assert sent(connection) == [(2, "act"), (3, "act"), Close]

    trio.run(main)


def test_connect_refuses_plain_text_beyond_loopback(tmp_path: Path) -> None:
    token_file, _ = write_token(tmp_path, "lab-b")
    result = subprocess.run([sys.executable, "-m", "arena", "connect", "--server", "192.0.2.1:50500", "--bot",
                             "lab-b", "--token-file", str(token_file), "--", sys.executable, str(RANDOM_BOT)],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert result.stderr == ("error: refusing to dial in to 192.0.2.1:50500 in plain text: beyond loopback the token "
                             "must travel over TLS; pass --tls-ca CERT (or --tls for the system's roots)\n")


def test_run_refuses_a_dial_in_bot(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(tournament(bots='\n[[bots]]\nname = "a"\ncommand = "python bot.py"\n'
                                    + dial_in_entry("lab-b", "x" * 40)))
    result = subprocess.run([sys.executable, "-m", "arena", "run", str(path)], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 2
    assert result.stderr == (f"error: bot 'lab-b' dials in (dial_in = true): a tournament with dial-in bots runs on "
                             f"an arena server, which they connect to (arena serve, then arena submit {path})\n")


def test_new_token_is_private_and_prints_its_hash(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "lab-b.token"
    result = subprocess.run([sys.executable, "-m", "arena", "new-token", str(path)], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    token = path.read_text().strip()
    assert result.stdout == f'token_sha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n'
    assert path.stat().st_mode & 0o077 == 0 and len(token) >= 32
    again = subprocess.run([sys.executable, "-m", "arena", "new-token", str(path)], capture_output=True, text=True,
                           cwd=ROOT, timeout=60)
    assert again.returncode == 2 and path.read_text().strip() == token


# --- the whole way: arena connect over TLS -----------------------------------------------------------------------------


def test_connect_over_tls_plays_a_verified_tournament(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    token_file, token = write_token(tmp_path, "lab-b")
    operator_file, operator = write_token(tmp_path, "operator")  # the server's own token: not the bot's business
    server = Server(tmp_path / "data", "--tls-cert", str(cert), "--tls-key", str(key), "--token-file",
                    str(operator_file), *registry(tmp_path, random_bot("alpha", "dial-tls")))
    relay = None
    try:
        stub = server.stub(credentials=grpc.ssl_channel_credentials(cert.read_bytes()))
        as_operator = (("authorization", f"Bearer {operator}"),)
        info = submit(stub, tournament(games=2, bots=named("alpha") + dial_in_entry("lab-b", token),
                                       extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"), metadata=as_operator)
        relay = connect(server.address, "lab-b", token_file, sys.executable, str(RANDOM_BOT), tls_ca=cert)
        watch(stub, info.id, seconds=GENEROUS_S * 2, metadata=as_operator)
        end = stub.GetStandings(apb.GetStandingsRequest(id=info.id), timeout=30, metadata=as_operator).tournament
        assert end.state == FINISHED, waiting_text(server, info.id)
        _, relay_err = relay.communicate(timeout=GENEROUS_S)
        assert relay.returncode == 0, relay_err
        assert "connected as lab-b" in relay_err
        # the latency report: the decisions the relay served are the ones the arena timed (its think ms, network
        # included, in the standings)
        lab_b = standing_of(stub, info.id, "lab-b", as_operator)
        assert lab_b.decisions > 0 and lab_b.HasField("think_ms_per_decision")
        report, last = relay_err.splitlines()[-2:]
        assert re.fullmatch(rf"served {lab_b.decisions} decisions; round trip here \(request received to reply "
                            rf"sent\): median \d+\.\d ms, p90 \d+\.\d ms \(the arena's think time for this bot, in "
                            rf"its standings, adds the network's round trip\)", report), report
        assert last == (f"the server ended the stream after {lab_b.decisions} decisions: no tournament or league on "
                        f"this server waits for this bot any more")
        games = records(run_folder(server, info.id))
        assert len(games) == info.games_total == 4
        assert all(sorted(g["seats"]) == ["alpha", "lab-b"] and not g.get("faults") for g in games)
        verify = subprocess.run([sys.executable, "-m", "arena", "replay", "--verify", str(run_folder(server, info.id))],
                                capture_output=True, text=True, cwd=ROOT, timeout=GENEROUS_S)
        said = " ".join(verify.stdout.split())
        assert verify.returncode == 0 and said.startswith("verified 4 games, ") and ": OK; deals checked against the " \
            "revealed master seed;" in said, verify.stdout + verify.stderr
    finally:
        if relay is not None and relay.poll() is None:
            relay.kill()
            relay.wait()
        server.stop()


def test_a_botkit_bot_dials_in_over_tls_and_plays(tmp_path: Path) -> None:
    """``python bots/python/random_bot.py --connect ADDR ...``: no ``arena connect``, the botkit relays itself (with
    the same code), against a sandboxed local bot."""
    from arena.botkit import DIAL_AGAIN
    from arena.players.relay import Backoff

    assert DIAL_AGAIN == Backoff.attempts
    cert, key = self_signed(tmp_path)
    token_file, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", "--tls-cert", str(cert), "--tls-key", str(key),
                    *registry(tmp_path, random_bot("alpha", "dial-botkit")))
    bot = None
    try:
        stub = server.stub(credentials=grpc.ssl_channel_credentials(cert.read_bytes()))
        info = submit(stub, tournament(games=2, bots=named("alpha") + dial_in_entry("lab-b", token),
                                       extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        bot = subprocess.Popen([sys.executable, str(RANDOM_BOT), "--connect", server.address, "--bot", "lab-b",
                                "--token-file", str(token_file), "--tls-ca", str(cert)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        _, err = bot.communicate(timeout=GENEROUS_S)
        assert bot.returncode == 0, err
        lab_b = standing_of(stub, info.id, "lab-b")
        assert err.splitlines()[0] == "connected as lab-b (arena 0.1.0); waiting for games"
        assert err.splitlines()[-2].startswith(f"served {lab_b.decisions} decisions; round trip here ")
        assert err.splitlines()[-1] == (f"the server ended the stream after {lab_b.decisions} decisions: no "
                                        f"tournament or league on this server waits for this bot any more")
        games = records(run_folder(server, info.id))
        assert len(games) == info.games_total == 4
        assert all(sorted(g["seats"]) == ["alpha", "lab-b"] and not g.get("faults") for g in games)
    finally:
        if bot is not None and bot.poll() is None:
            bot.kill()
            bot.wait()
        server.stop()


FAILING_ONCE = """import random
from arena.botkit import serve

calls = []


def choose(request):
    calls.append(request.match_id)
    if len(calls) == 1:
        raise RuntimeError("boom")
    return random.randrange(len(request.observation.legal_actions))


serve(choose, name="fails-once")
"""


def test_a_raising_policy_fails_one_decision(tmp_path: Path) -> None:
    """``--connect`` relays with the policy called in the bot's own process (no socket, no second gRPC call): a
    policy that raises fails that decision only (the arena's clock runs out on it: one recorded timeout), and the
    bot plays on to the end."""
    script = tmp_path / "fails_once.py"
    script.write_text(FAILING_ONCE)
    token_file, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "dial-policy")))
    bot = None
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=2, bots=named("alpha") + dial_in_entry("lab-b", token),
                                       extra=f"[time]\nmove_ms = 500\nstartup_ms = {GENEROUS_S * 1000}\n"))
        bot = subprocess.Popen([sys.executable, str(script), "--connect", server.address, "--bot", "lab-b",
                                "--token-file", str(token_file)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        _, err = bot.communicate(timeout=GENEROUS_S)
        assert bot.returncode == 0, err
        # The policy's first call fails: request 1, or another sent at the same moment (games play side by side,
        # and the relay hands requests to threads in whatever order they run).
        failed = [line for line in err.splitlines() if "did not answer" in line]
        assert len(failed) == 1 and re.fullmatch(r"the bot did not answer request \d+ \(match [0-9a-f]+\): the bot is "
                                                 r"unreachable or crashed: the policy raised RuntimeError: boom",
                                                 failed[0]), failed
        games = records(run_folder(server, info.id))
        faults = [(f["kind"], g["seats"][f.get("seat", 0)]) for g in games for f in g.get("faults", [])]
        assert len(games) == 4 and faults == [("timeout", "lab-b")]
    finally:
        if bot is not None and bot.poll() is None:
            bot.kill()
            bot.wait()
        server.stop()


def test_botkit_refuses_plain_text_and_unreadable_files(tmp_path: Path) -> None:
    token_file, _ = write_token(tmp_path, "lab-b")
    for extra, message in [
        (("--token-file", str(token_file)), "error: refusing to dial in to 192.0.2.1:50500 in plain text: beyond "
                                            "loopback the token must travel over TLS; pass --tls-ca CERT (or --tls "
                                            "for the system's roots)\n"),
        ((), "error: --connect needs --bot NAME (the entrant's name in the tournament file) and --token-file F (its "
             "token)\n"),
        (("--token-file", str(tmp_path / "none.token"), "--tls"),
         f"error: {tmp_path / 'none.token'}: cannot read the token file: No such file or directory\n"),
        (("--token-file", str(token_file), "--tls-ca", str(tmp_path / "none.pem")),
         f"error: {tmp_path / 'none.pem'}: cannot read the TLS root certificate: No such file or directory\n"),
    ]:
        result = subprocess.run([sys.executable, str(RANDOM_BOT), "--connect", "192.0.2.1:50500", "--bot", "lab-b",
                                 *extra], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert (result.returncode, result.stderr) == (1, message)


# --- requests the arena gives up on ------------------------------------------------------------------------------


PATIENT_BOT = ROOT / "tests" / "bots" / "patient_bot.py"


def marks(path: Path) -> list[str]:
    """What the patient bot wrote: ``asked`` per decision, ``cancelled`` per decision it saw given up on."""
    return path.read_text().split() if path.exists() else []


def test_the_server_cancels_a_request_it_gave_up_on(tmp_path: Path) -> None:
    """A dial-in client leaves its first request unanswered: past its deadline the server sends a Cancel of that id,
    with the timeout's reason, and records the timeout as before; the reply the client sends anyway, after the
    Cancel, is ignored, not a protocol error, and the same stream plays the next games."""
    _, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "dial-cancel")))
    asked: list[dial_in_pb2.PlayResponse] = []

    def silent_at_first(message: dial_in_pb2.PlayResponse) -> list:
        asked.append(message)
        return [] if len(asked) == 1 else first_legal(message)

    try:
        stub = server.stub()
        info = submit(stub, tournament(games=2, bots=named("alpha") + dial_in_entry("lab-b", token),
                                       extra=f"[time]\nmove_ms = 1000\nstartup_ms = {GENEROUS_S * 1000}\n"))
        client = RawDialIn(server.address, "lab-b", token, silent_at_first, cancelled=first_legal)
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        assert client.wait_ended(GENEROUS_S) == (grpc.StatusCode.OK, "")  # the farewell, not INVALID_ARGUMENT
        assert [(m.request_id, m.cancel.reason) for m in client.received if m.WhichOneof("message") == "cancel"] == [
            (asked[0].request_id, "no reply within 1250 ms")]
        games = records(run_folder(server, info.id))
        assert len(games) == 4
        assert [(f["kind"], g["seats"][f.get("seat", 0)], f["message"]) for g in games for f in g.get("faults", [])] == [
            ("timeout", "lab-b", "no reply within 1250 ms")]
    finally:
        server.stop()


@pytest.mark.parametrize("by", ["relay", "itself"])
def test_a_bot_stops_thinking_when_given_up_on_and_plays_on(tmp_path: Path, two_tokens, by: str) -> None:
    """The patient bot (a botkit bot) dialed in through ``arena connect`` (``relay``: its gRPC call cancelled, which
    ``cancelled()`` reports) or by itself (``itself``: the policy's ``cancelled()`` set, its answer dropped). A
    tournament cancelled while the bot thinks, its deadline ten minutes away: only the server's Cancel can stop it
    in time. Then a decision past its deadline: the timeout recorded as before, and over the same stream the next
    games play, with the decisions served counted as the arena counts them."""
    token_file, token_b = two_tokens["lab-b"]
    _, token_a = two_tokens["lab-a"]
    mark = tmp_path / "marks"
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", f"dial-cancel-{by}")))
    bot = None
    try:
        stub = server.stub()
        keeper = submit(stub, tournament(bots=dial_in_entry("lab-a", token_a) + dial_in_entry("lab-b", token_b),
                                         extra="[time]\nstartup_ms = 600000\n"))  # waits for lab-a all along
        vs_alpha = named("alpha") + dial_in_entry("lab-b", token_b)
        held = submit(stub, tournament(concurrency=1, bots=vs_alpha,  # one game at a time: one decision held
                                       extra=f"[time]\nmove_ms = 600000\nstartup_ms = {GENEROUS_S * 1000}\n"))
        patient = (sys.executable, str(PATIENT_BOT), "--hang-first", "2", "--mark", str(mark))
        if by == "relay":
            bot = Lines(connect(server.address, "lab-b", token_file, command=patient))
        else:
            bot = Lines(subprocess.Popen([*patient, "--connect", server.address, "--bot", "lab-b", "--token-file",
                                          str(token_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, cwd=ROOT))
        wait_for(lambda: marks(mark) == ["asked"], GENEROUS_S, "lab-b's decision in the held tournament")
        stub.CancelTournament(apb.CancelTournamentRequest(id=held.id), timeout=30)
        wait_for(lambda: marks(mark) == ["asked", "cancelled"], GENEROUS_S, "the bot told its decision was given up")
        assert re.fullmatch(r"the arena gave up on request 1 \(match [0-9a-f]{8}\): the game was stopped; the bot's "
                            r"decision was cancelled", bot.wait_line("the arena gave up on request 1 ", GENEROUS_S))

        quick = submit(stub, tournament(games=2, concurrency=1, bots=vs_alpha,
                                        extra=f"[time]\nmove_ms = 1000\nstartup_ms = {GENEROUS_S * 1000}\n"))
        assert finished(stub, quick.id).state == FINISHED, waiting_text(server, quick.id)
        wait_for(lambda: marks(mark).count("cancelled") == 2, GENEROUS_S, "the bot told its late decision was given up")
        games = records(run_folder(server, quick.id))
        assert len(games) == 4
        assert [(f["kind"], g["seats"][f.get("seat", 0)], f["message"]) for g in games for f in g.get("faults", [])] == [
            ("timeout", "lab-b", "no reply within 1250 ms")]
        decisions = standing_of(stub, quick.id, "lab-b").decisions  # the held game, cancelled, counts nothing
        assert marks(mark).count("asked") == decisions + 2  # and the two given up on

        stub.CancelTournament(apb.CancelTournamentRequest(id=keeper.id), timeout=30)
        assert bot.process.wait(GENEROUS_S) == 0, "\n".join(bot.rest(GENEROUS_S))
        lines = bot.rest(GENEROUS_S)
        assert sum(line.startswith("connected as lab-b ") for line in lines) == 1, lines  # one stream throughout
        assert lines[-2].startswith(f"served {decisions} decisions; round trip here "), lines
        assert lines[-1] == (f"the server ended the stream after {decisions} decisions: no tournament or league on "
                             f"this server waits for this bot any more")
    finally:
        if bot is not None and bot.process.poll() is None:
            bot.process.kill()
            bot.process.wait()
        server.stop()


@pytest.mark.fast
def test_the_relay_uncounts_a_reply_crossing_the_cancel() -> None:
    """A reply sent just as the server gave up on its request reaches the server too late (ignored there, not in
    the standings' decisions): the server's Cancel of it, coming after, takes it out of the relay's count and
    latency, so the two counts stay equal. A Cancel of a request never seen changes nothing."""
    from arena.players.relay import Relay

    relay = Relay(local=None, channel=None, bot="lab-b", metadata=(), say=lambda text: None)  # type: ignore[arg-type]
    relay._send(1, bot_pb2.ActReply(index=0), 2.5)
    relay._send(2, bot_pb2.ActReply(index=0), 7.5)
    relay._withdraw(1, "no reply within 550 ms")
    relay._withdraw(99, "no reply within 550 ms")
    assert relay.decisions == 1 and list(relay.latency.samples) == [7.5]
    assert [relay.outbox.get_nowait().request_id for _ in range(2)] == [1, 2]  # sent, as they were


# --- credentials --------------------------------------------------------------------------------------------------


JUNK = b"\xff\xff\xff\xff"
"""Bytes that are no PlayRequest."""
NOT_A_HELLO = dial_in_pb2.PlayRequest(request_id=1, act=bot_pb2.ActReply(index=0)).SerializeToString()


def test_bad_tokens_are_refused_and_the_absent_are_named(tmp_path: Path, two_tokens) -> None:
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "dial-tokens")))
    try:
        stub = server.stub()
        _, token_a = two_tokens["lab-a"]
        _, token_b = two_tokens["lab-b"]
        bots = named("alpha") + dial_in_entry("lab-a", token_a) + dial_in_entry("lab-b", token_b)
        waiting = submit(stub, tournament(bots=bots, extra="[time]\nstartup_ms = 600000\n"))  # waits all along
        bad_hello = dial_in_pb2.PlayRequest(hello=dial_in_pb2.DialInHello(
            bot="lab-b", hello=bot_pb2.HelloReply(name="b", protocol_version=7))).SerializeToString()
        for token, bot, first, code, message in [
            (None, "lab-b", None, grpc.StatusCode.UNAUTHENTICATED,
             "missing token: send the metadata 'authorization: Bearer <token>' (arena connect --token-file F)"),
            ("not-the-token-of-anyone", "lab-b", None, grpc.StatusCode.UNAUTHENTICATED,
             "wrong token: it is the token of no dial-in bot a tournament or league on this server waits for"),
            (None, "lab-b", JUNK, grpc.StatusCode.UNAUTHENTICATED,  # credentials before any message is read
             "missing token: send the metadata 'authorization: Bearer <token>' (arena connect --token-file F)"),
            ("not-the-token-of-anyone", "lab-b", NOT_A_HELLO, grpc.StatusCode.UNAUTHENTICATED,
             "wrong token: it is the token of no dial-in bot a tournament or league on this server waits for"),
            (token_a, "lab-b", None, grpc.StatusCode.PERMISSION_DENIED,
             "this token is another bot's: it does not let its holder play as 'lab-b'"),
            (token_b, "lab-b", NOT_A_HELLO, grpc.StatusCode.INVALID_ARGUMENT,
             "the first message of a dial-in stream must be the hello (PlayRequest.hello)"),
            (token_b, "lab-b", bad_hello, grpc.StatusCode.INVALID_ARGUMENT,
             "hello refused: the handshake failed: expected protocol version 1, got 7"),
        ]:
            client = RawDialIn(server.address, bot, token, first=first)
            assert client.wait_ended(GENEROUS_S) == (code, message)
            assert not client.acts()
        wrong = tmp_path / "wrong.token"
        wrong.write_text("x" * 40 + "\n")
        relay = connect(server.address, "lab-b", wrong, sys.executable, str(RANDOM_BOT))
        _, err = relay.communicate(timeout=GENEROUS_S)
        assert relay.returncode == 1
        assert err.splitlines()[-1].startswith("error: UNAUTHENTICATED: wrong token: it is the token of no dial-in "
                                               "bot a tournament or league on this server waits for (after 0 decisions")
        # lab-a comes with its own token; lab-b never does: a tournament with a short start time fails before any
        # game, naming lab-b only. (lab-a connects while the first tournament waits for it, so it is there in time.)
        present = RawDialIn(server.address, "lab-a", token_a)
        wait_for(lambda: any(m.WhichOneof("message") == "welcome" for m in present.received), GENEROUS_S,
                 "lab-a welcomed")
        short = submit(stub, tournament(bots=bots, extra="[time]\nstartup_ms = 3000\n"))
        stub.CancelTournament(apb.CancelTournamentRequest(id=waiting.id), timeout=30)
        end = finished(stub, short.id)
        assert end.state == apb.TOURNAMENT_STATE_FAILED
        assert "bot 'lab-b' cannot play: the bot did not start: bot 'lab-b' did not dial in within 3 s" in end.error
        assert "lab-a" not in end.error and end.games_done == 0
        assert present.wait_ended(GENEROUS_S)[0] == grpc.StatusCode.OK  # no tournament waits for it any more
        assert present.received[-1].farewell.reason == ("no tournament or league on this server waits for this bot "
                                                        "any more")
    finally:
        server.stop()


def in_process(token: str, client: Callable[[str], T]) -> T:
    """``client(address)``, run on a thread, against a dial-in service of its own in this process (a one-second
    hello timeout) whose registry waits for bot lab-b with ``token``; what it returned. The service is grpc.aio's in
    the loop of arena.guest.run, as ``arena serve`` serves it."""
    from arena import guest
    from arena.players.dial_in import DialInRegistry, token_digest
    from arena.players.process import BotSpec
    from arena.server.dial_in import DialInServicer, add_to_server

    registry = DialInRegistry()
    registry.expect([BotSpec("lab-b", dial_in=True, token_sha256=token_digest(token))])

    async def serve_on_loop() -> T:
        server = grpc.aio.server()
        add_to_server(server, DialInServicer(registry, hello_timeout_s=1.0))
        port = server.add_insecure_port("127.0.0.1:0")
        await guest.await_loop(server.start())
        try:
            return await trio.to_thread.run_sync(client, f"127.0.0.1:{port}")
        finally:
            await guest.await_loop(server.stop(None))

    return guest.run(serve_on_loop)


def ended(client: RawDialIn) -> tuple[grpc.StatusCode | None, str, list]:
    """How a raw stream ended, and what it was sent."""
    try:
        return (*client.wait_ended(GENEROUS_S), client.received)
    finally:
        client.close()


def test_a_stream_without_hello_times_out() -> None:
    """It would hold a gRPC thread for nothing. (In process, with a one-second hello timeout; the stream carries the
    token of the bot waited for, so it is let past the check of its credentials and then waits for its hello.)"""
    token = "some-token-of-16-chars"
    code, _, received = in_process(token, lambda address: ended(RawDialIn(address, "lab-b", token, silent=True)))
    assert code == grpc.StatusCode.CANCELLED and not received


def test_a_tokenless_stream_is_refused_unread() -> None:
    """Whatever such a stream sends (junk, a reply, a hello, nothing) it learns only that it is not let in: the
    token is checked before the first message is read, and a silent one holds no thread until the hello timeout."""
    token = "the-token-of-lab-b"
    cases = [(given, first, silent) for given in (None, "not-the-token-of-anyone")
             for first, silent in ((JUNK, False), (NOT_A_HELLO, False), (None, False), (None, True))]

    def refusals(address: str) -> list[tuple]:
        return [ended(RawDialIn(address, "lab-b", given, first=first, silent=silent))
                for given, first, silent in cases]

    missing = "missing token: send the metadata 'authorization: Bearer <token>' (arena connect --token-file F)"
    wrong = "wrong token: it is the token of no dial-in bot a tournament or league on this server waits for"
    assert in_process(token, refusals) == [(grpc.StatusCode.UNAUTHENTICATED, missing, [])] * 4 + [
        (grpc.StatusCode.UNAUTHENTICATED, wrong, [])] * 4


def test_a_botless_server_plays_only_dial_in_tournaments(tmp_path: Path, two_tokens) -> None:
    """Nothing runs on the server for a dial-in bot, so neither --bots nor --allow-commands is needed for them; a
    bot to run here still is."""
    server = Server(tmp_path / "data")  # no --bots, no --allow-commands
    try:
        stub = server.stub()
        _, token_a = two_tokens["lab-a"]
        _, token_b = two_tokens["lab-b"]
        for bots in (random_bot("local", "dial-closed") + dial_in_entry("lab-b", token_b),
                     named("alpha") + dial_in_entry("lab-b", token_b)):
            with pytest.raises(grpc.RpcError) as refused:
                submit(stub, tournament(bots=bots))
            assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert refused.value.details().startswith("this arena server has no bots to run: its operator starts "
                                                      "it with --bots FILE")
        info = submit(stub, tournament(games=2, bots=dial_in_entry("lab-a", token_a) + dial_in_entry("lab-b", token_b),
                                       extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        a, b = RawDialIn(server.address, "lab-a", token_a), RawDialIn(server.address, "lab-b", token_b)
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        games = records(run_folder(server, info.id))
        assert len(games) == info.games_total == 4
        assert all(sorted(g["seats"]) == ["lab-a", "lab-b"] and not g.get("faults") for g in games)
        assert a.wait_ended(GENEROUS_S)[0] == b.wait_ended(GENEROUS_S)[0] == grpc.StatusCode.OK
    finally:
        server.stop()


# --- a connection cut mid-game ---------------------------------------------------------------------------------------


def test_a_cut_connection_faults_and_the_bot_reconnects(tmp_path: Path) -> None:
    _, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "dial-cut")))
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=2, concurrency=1, variant="draw",
                                       bots=named("alpha") + dial_in_entry("lab-b", token),
                                       extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        asked = []

        def cut_at_the_third(message: dial_in_pb2.PlayResponse):
            asked.append(message)
            return None if len(asked) == 3 else first_legal(message)

        first = RawDialIn(server.address, "lab-b", token, cut_at_the_third)
        first.wait_ended(GENEROUS_S)
        cut_match = asked[2].act.match_id
        second = RawDialIn(server.address, "lab-b", token)
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        by_match = records_by_match(run_folder(server, info.id))
        assert len(by_match) == info.games_total == 4
        cut = by_match[cut_match]
        assert [f["kind"] for f in cut["faults"]] == ["crashed"]
        assert cut["seats"][cut["faults"][0]["seat"]] == "lab-b"
        assert "the dial-in stream ended" in cut["faults"][0]["message"]
        others = [r for match, r in by_match.items() if match != cut_match]
        assert all(not r.get("faults") for r in others)  # the games after the cut: played over the new stream
        assert {m.act.match_id for m in second.acts()} >= {r["matchId"] for r in others if r["startedAt"] >
                                                            cut["startedAt"]}
        assert second.wait_ended(GENEROUS_S)[0] == grpc.StatusCode.OK
    finally:
        server.stop()


def test_connect_dials_again_when_its_stream_is_cut(tmp_path: Path, two_tokens) -> None:
    """The server stops mid-game (every stream ends, UNAVAILABLE) and comes back on the same port, resuming the
    tournament; the same ``arena connect`` process dials again by itself and plays the rest. The game cut short is
    played again, with no fault of either bot's."""
    token_file, token_b = two_tokens["lab-b"]
    _, token_a = two_tokens["lab-a"]
    first = Server(tmp_path / "data")  # no bots to run: both entrants dial in
    address, second, relay = first.address, None, None
    asked: list[dial_in_pb2.PlayResponse] = []
    hold = threading.Event()

    def held_at_the_third(message: dial_in_pb2.PlayResponse) -> list:
        asked.append(message)
        if len(asked) == 3:
            hold.wait(GENEROUS_S)  # a decision in flight while the server stops
        return first_legal(message)

    try:
        info = submit(first.stub(), tournament(
            games=2, concurrency=1, bots=dial_in_entry("lab-a", token_a) + dial_in_entry("lab-b", token_b),
            extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        relay = connect(address, "lab-b", token_file, sys.executable, str(RANDOM_BOT))
        RawDialIn(address, "lab-a", token_a, held_at_the_third)
        wait_for(lambda: len(asked) >= 3, GENEROUS_S, "lab-a's third decision request")
        first.stop()
        hold.set()
        second = Server(tmp_path / "data", "--listen", address)
        RawDialIn(address, "lab-a", token_a)
        end = finished(second.stub(), info.id)
        assert end.state == FINISHED, waiting_text(second, info.id)
        _, err = relay.communicate(timeout=GENEROUS_S)
        assert relay.returncode == 0, err
        assert err.count("connected as lab-b (arena ") == 2, err
        assert re.search(r"^the stream ended \(UNAVAILABLE: server shutting down\); served \d+ decisions.*; dialing "
                         r"again in 0\.5 s \(attempt 1 of 10\)$", err, re.MULTILINE), err
        assert err.splitlines()[-1].endswith(" decisions: no tournament or league on this server waits for this bot "
                                             "any more")
        games = records(run_folder(second, info.id))
        assert len(games) == info.games_total == 4
        assert all(sorted(g["seats"]) == ["lab-a", "lab-b"] and not g.get("faults") for g in games), games
    finally:
        if relay is not None and relay.poll() is None:
            relay.kill()
            relay.wait()
        first.stop()
        if second is not None:
            second.stop()


def test_connect_gives_up_when_no_server_answers(tmp_path: Path) -> None:
    token_file, _ = write_token(tmp_path, "lab-b")
    with socket.socket() as placeholder:  # a port nobody listens on
        placeholder.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{placeholder.getsockname()[1]}"
    relay = connect(address, "lab-b", token_file, sys.executable, str(RANDOM_BOT), extra=("--reconnect", "2"))
    _, err = relay.communicate(timeout=GENEROUS_S)
    assert relay.returncode == 1, err
    lines = err.splitlines()
    assert [line.split("; dialing again in ")[1] for line in lines if "; dialing again in " in line] == [
        "0.5 s (attempt 1 of 2)", "1 s (attempt 2 of 2)"]
    assert lines[-2] == "served 0 decisions"
    assert lines[-1].startswith("error: UNAVAILABLE: ") and lines[-1].endswith(
        " (gave up after 2 attempts in a row without a welcome) (after 0 decisions; bot log: "
        + lines[-1].rsplit("bot log: ", 1)[1]), lines[-1]


def test_connect_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    token_file, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data")
    try:
        submit(server.stub(), tournament(bots=dial_in_entry("lab-a", token + "-a") + dial_in_entry("lab-b", token),
                                         extra="[time]\nstartup_ms = 600000\n"))  # waits for lab-a all along
        relay = Lines(connect(address=server.address, bot="lab-b", token_file=token_file, command=(
            sys.executable, str(RANDOM_BOT))))
        relay.wait_line("connected as lab-b (arena ", GENEROUS_S)
        relay.process.send_signal(signal.SIGINT)
        code = relay.process.wait(GENEROUS_S)
        rest = relay.rest(GENEROUS_S)
        assert code == 130, "\n".join(rest)
        assert rest[-1] == "interrupted: served 0 decisions"
    finally:
        server.stop()


def test_connect_stops_at_a_foreign_token_or_when_replaced(tmp_path: Path) -> None:
    token_file, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data")
    copies: list[Lines] = []
    try:
        submit(server.stub(), tournament(bots=dial_in_entry("lab-a", token + "-a") + dial_in_entry("lab-b", token),
                                         extra="[time]\nstartup_ms = 600000\n"))  # waits for lab-a all along
        other = tmp_path / "lab-a.token"
        other.write_text(token + "-a\n")
        impostor = connect(server.address, "lab-b", other, sys.executable, str(RANDOM_BOT))  # lab-a's token
        _, err = impostor.communicate(timeout=GENEROUS_S)
        assert impostor.returncode == 1 and "dialing again" not in err, err
        assert err.splitlines()[-1].startswith("error: PERMISSION_DENIED: this token is another bot's: it does not "
                                               "let its holder play as 'lab-b' (after 0 decisions; ")
        for _ in range(2):
            copies.append(Lines(connect(server.address, "lab-b", token_file, command=(sys.executable,
                                                                                    str(RANDOM_BOT)))))
            copies[-1].wait_line("connected as lab-b (arena ", GENEROUS_S)
        first, second = copies
        assert first.process.wait(GENEROUS_S) == 1
        rest = first.rest(GENEROUS_S)
        assert rest[-1].startswith("error: ABORTED: replaced by a new stream of the same bot (after 0 decisions; ")
        assert not any("dialing again" in line for line in rest), rest
        assert second.process.poll() is None  # still connected, unchallenged
        second.process.send_signal(signal.SIGINT)
        assert second.process.wait(GENEROUS_S) == 130
    finally:
        for copy in copies:
            if copy.process.poll() is None:
                copy.process.kill()
                copy.process.wait()
        server.stop()


# --- hostile dial-in clients ---------------------------------------------------------------------------------------


def garbage(message: dial_in_pb2.PlayResponse) -> list:
    return [b"\xff\xff\xff\xff garbage, no PlayRequest"]


def unknown_id(message: dial_in_pb2.PlayResponse) -> list:
    return [dial_in_pb2.PlayRequest(request_id=message.request_id + 1000, act=bot_pb2.ActReply(index=0))]


def flood(message: dial_in_pb2.PlayResponse) -> list:
    return first_legal(message) * 5000


def second_hello(message: dial_in_pb2.PlayResponse) -> list:
    from support.dial_in import hello

    return [hello("lab-b")]


def nothing_set(message: dial_in_pb2.PlayResponse) -> list:
    return [dial_in_pb2.PlayRequest(request_id=message.request_id)]


HOSTILE = {
    "garbage": (garbage, "malformed_reply", "the bot broke the dial-in protocol: 28 bytes that are not a PlayRequest",
                "28 bytes that are not a PlayRequest"),
    "unknown_id": (unknown_id, "malformed_reply", "the bot broke the dial-in protocol: a reply to request",
                   "which was never sent or was answered already"),
    "flood": (flood, "malformed_reply", "the bot broke the dial-in protocol: a reply to request",
              "which was never sent or was answered already"),
    "second_hello": (second_hello, "malformed_reply",
                     "the bot broke the dial-in protocol: a second hello: the hello is sent once, first",
                     "a second hello"),
    "nothing_set": (nothing_set, "malformed_reply",
                    "the bot broke the dial-in protocol: a message with neither hello nor act set",
                    "a message with neither hello nor act set"),
}


@pytest.mark.parametrize("behaviour", list(HOSTILE))
def test_a_hostile_client_faults_and_the_rest_goes_on(tmp_path: Path, behaviour: str) -> None:
    answer, kind, fault_text, status_text = HOSTILE[behaviour]
    _, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "dial-hostile")
                                                  + random_bot("beta", "dial-hostile")))
    try:
        stub = server.stub()
        bots = named("alpha", "beta") + dial_in_entry("lab-b", token)
        info = submit(stub, tournament(games=1, duplicate=False, concurrency=3, bots=bots,
                                       extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        hostile = RawDialIn(server.address, "lab-b", token, answer)
        code, details = hostile.wait_ended(GENEROUS_S)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and status_text in details, (code, details)
        assert stub.ListTournaments(apb.ListTournamentsRequest(), timeout=30).tournaments  # the server is alive
        polite = RawDialIn(server.address, "lab-b", token)  # the bot, fixed, comes back for its other games
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        games = records(run_folder(server, info.id))
        assert len(games) == 3
        faulted = [g for g in games if g.get("faults")]
        assert len(faulted) >= 1
        for game in faulted:
            assert [(f["kind"], game["seats"][f.get("seat", 0)]) for f in game["faults"]] == [(kind, "lab-b")]
            assert fault_text in game["faults"][0]["message"], game["faults"][0]["message"]
        assert all(not g.get("faults") for g in games if "lab-b" not in g["seats"])  # alpha v beta untouched
        assert polite.wait_ended(GENEROUS_S)[0] == grpc.StatusCode.OK
    finally:
        server.stop()


# --- hidden information --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["draw", "all_fives"])
def test_nothing_sent_to_the_bot_holds_a_hidden_tile(tmp_path: Path, variant: str) -> None:
    _, token = write_token(tmp_path, "lab-b")
    server = Server(tmp_path / "data", *registry(tmp_path, random_bot("alpha", "dial-scan")))
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=2, variant=variant, bots=named("alpha") + dial_in_entry("lab-b", token),
                                       extra=f"[time]\nstartup_ms = {GENEROUS_S * 1000}\n"))
        spy = RawDialIn(server.address, "lab-b", token)
        assert finished(stub, info.id).state == FINISHED, waiting_text(server, info.id)
        spy.wait_ended(GENEROUS_S)
        by_match = records_by_match(run_folder(server, info.id))
        scanned = 0
        hidden_of = {match: hidden_at_moves(record) for match, record in by_match.items()}
        for message in spy.received:
            which = message.WhichOneof("message")
            if which == "act":
                seat, hidden = hidden_of[message.act.match_id][message.act.move_number]
                assert message.act.seat == seat
                assert by_match[message.act.match_id]["seats"][seat] == "lab-b"
                leaked = hidden & set(tiles_in(message))
                assert not leaked, f"hidden tiles {leaked} sent to lab-b at move {message.act.move_number}"
                scanned += 1
        assert scanned > 10
    finally:
        server.stop()


# --- the benchmark ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("by", ["relay", "itself"])
def test_bench_protocol_dial_in_measures_both_paths(by: str) -> None:
    """Numbers only, no speed asserted (the docs quote a real run): the shape of the report, every measurement
    made, and the relay (``arena connect``, or the botkit bot's own ``--connect``) told farewell at the end (the
    command returns)."""
    result = subprocess.run([sys.executable, "-m", "arena", "bench", "protocol", "--dial-in", by, "--seconds", "0.3",
                             "--concurrency", "1,4"], capture_output=True, text=True, cwd=ROOT, timeout=GENEROUS_S)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert sorted(report) == ["bot", "dial_in", "dial_in_against_local", "dial_in_by", "local", "seconds_each"]
    assert report["dial_in_by"] == {"relay": "arena connect", "itself": "the bot itself (--connect)"}[by]
    for side in ("local", "dial_in"):
        assert [r["concurrency"] for r in report[side]] == [1, 4]
        for row in report[side]:
            assert sorted(row) == ["calls_per_s", "concurrency", "referee_decisions_per_s", "round_trip_ms_median",
                                   "round_trip_ms_p90"]
            assert row["calls_per_s"] > 0 and row["referee_decisions_per_s"] > 0
            assert 0 < row["round_trip_ms_median"] <= row["round_trip_ms_p90"]
    assert [sorted(r) for r in report["dial_in_against_local"]] == [
        ["added_round_trip_ms_median", "concurrency", "decisions_per_s_dial_in_to_local"]] * 2
