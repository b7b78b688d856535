"""The arena as a gRPC server: real server processes (``arena serve --listen 127.0.0.1:0``, the port read from its
"listening on" line), real bot processes, and real clients (the CLI through subprocess, and a grpc stub).

Each server runs the bots of its registry (``--bots FILE``); tournaments name them. What a server refuses to run is
in test_server_registry.py.

No sleeps synchronise anything: the tests wait on watch streams, on the server's output lines, and on files, each
with a deadline."""

from __future__ import annotations

import json
import os
import re
import resource
import secrets
import shlex
import signal
import subprocess
import sys
import time
import tomllib
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import grpc
import pytest
from google.protobuf import json_format

from arena.protocol import arena_pb2 as apb
from arena.protocol import arena_pb2_grpc as apb_grpc
from arena.protocol import tournament_pb2 as tpb
from arena.protocol import types_pb2
from arena.records.jsonform import index_of
from arena.records.schema import RecordFormatError, parse_record
from arena.records.store import ReadReport, iter_records
from arena.rules import Kind
from arena.records.format import full_tiles
from arena.server.events import Watcher, event, standings_pb
from arena.server.submission import dict_from_message, message_from_dict, parse_submission, toml_text
from support.paths import ROOT
from support.processes import bot_processes
from support.waiting import wait_for
from support.servers import (
    BackgroundWatch, FINISHED, Server, WATCHED_BOT, bot_entry, gated_bot, index, kinds, named, open_gate, random_bot,
    random_pair, records, registry, self_signed, submit, tournament, watch,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """One server for the tests that need no restart; at most 2 games in flight over all its tournaments. Its
    registry: alpha and beta (random), and slow and quick (tagged ``server.slow_tag``)."""
    folder = tmp_path_factory.mktemp("server")
    tag, slow_tag = uuid.uuid4().hex, uuid.uuid4().hex
    bots = (random_bot("alpha", tag) + random_bot("beta", tag) + random_bot("quick", slow_tag)
            + bot_entry("slow", str(WATCHED_BOT), "--mode", "slow", "--delay", "0.3", "--tag", slow_tag)
            + gated_bot(folder / "gated", slow_tag, "--gate-unit", "seat"))
    running = Server(folder / "data", "--concurrency", "2", *registry(folder, bots))
    running.slow_tag = slow_tag
    running.gate = folder / "gated" / "gate"
    yield running
    running.stop()


# --- submitting and watching ----------------------------------------------------------------------------------------


def test_submit_watch_status_games_and_fetch(server: Server, tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    # The gated bot answers nothing until the watch (a new process) has printed its first line: the games after
    # the first two are all still to come when it attaches, however slow the machine.
    open_gate(server.gate, "")
    path.write_text(tournament(games=3, name="cli run", bots=named("gated", "quick"),
                               extra="[time]\nmove_ms = 600000\n"))
    submitted = server.cli("submit", str(path))
    assert submitted.returncode == 0, submitted.stderr
    tournament_id = re.match(r"submitted (\w+): 'cli run' \(block, 6 games\)", submitted.stdout).group(1)

    watching = subprocess.Popen([sys.executable, "-m", "arena", "watch", tournament_id, "--moves", "--server",
                                 server.address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})  # its first line comes at once
    first = watching.stdout.readline()
    open_gate(server.gate, "0 1")
    rest, errors = watching.communicate(timeout=300)
    watched = subprocess.CompletedProcess(watching.args, watching.returncode, first + rest, errors)
    assert watched.returncode == 0, watched.stderr
    recorded = int(re.match(rf"tournament {tournament_id}: 'cli run' \(block\), \w+; (\d)/6 games recorded",
                            watched.stdout).group(1))
    assert len(re.findall(r"^game \d+ finished \(\d/6\)", watched.stdout, re.M)) == 6 - recorded
    assert re.search(r"^  game \d+ round 1 move 1: seat \d \((gated|quick)\): lead \[\d\|\d\]$", watched.stdout, re.M)
    assert f"tournament {tournament_id} finished: 6/6 games; master seed" in watched.stdout

    status = server.cli("status", tournament_id)
    assert status.returncode == 0 and "block with 2 players; finished" in status.stdout, status.stderr
    assert "entrants: gated, quick" in status.stdout
    listing = server.cli("status")
    assert listing.returncode == 0 and tournament_id in listing.stdout
    games = server.cli("games", tournament_id)
    assert games.returncode == 0 and "6 of 6 games recorded" in games.stdout, games.stderr

    stored = {index(r): r for r in records(server.data / "tournaments" / tournament_id)}
    assert sorted(stored) == list(range(6))
    fetched = server.cli("fetch", tournament_id, "4")
    assert fetched.returncode == 0, fetched.stderr
    assert json.loads(fetched.stdout) == stored[4], "the record exactly as stored"


def test_watchers_get_public_information_only(server: Server) -> None:
    stub = server.stub()
    # Draw has draws; with duplicate deals the two games of a deal set run at the same time and deal the same tiles.
    info = submit(stub, tournament(variant="draw", games=3, concurrency=2, duplicate=True))
    events = watch(stub, info.id, moves=True)
    assert kinds(events)[0] == "snapshot" and kinds(events)[-1] == "finished"
    assert events[-1].finished.tournament.state == FINISHED
    stored = {index(r): r for r in records(server.data / "tournaments" / info.id)}

    finished_at = {e.game_finished.game.index: n for n, e in enumerate(events) if e.HasField("game_finished")}
    moves: dict[tuple[int, int], list[dict]] = {}
    draws = 0
    for n, e in enumerate(events):
        if e.HasField("move"):
            m = e.move
            if m.action.kind == types_pb2.ACTION_KIND_DRAW:
                draws += 1
                assert not m.action.HasField("tile"), "a draw's tile is never sent"
            others = {m.game - m.game % 2, m.game - m.game % 2 + 1} - {m.game}
            assert all(finished_at[g] < n for g in others), "moves come after the other games dealt the same tiles"
            action = full_tiles(json_format.MessageToDict(m.action), m.action.DESCRIPTOR)  # records write tiles in full
            action.pop("text")
            moves.setdefault((m.game, m.round_index), []).append({"seat": m.seat, "action": action})
        if e.HasField("round_finished"):
            r = e.round_finished
            assert all(finished_at[g] < n for g in {r.game - r.game % 2, r.game - r.game % 2 + 1} - {r.game})
            recorded = stored[r.game]["rounds"][r.result.round_index]["result"]
            assert full_tiles(json_format.MessageToDict(r.result), r.result.DESCRIPTOR)["hands"] == recorded["hands"]
    assert draws > 0
    for g, record in stored.items():
        for number, rnd in enumerate(record["rounds"]):
            public = [{"seat": m.get("seat", 0), "action": {"kind": "ACTION_KIND_DRAW"}
                       if m["action"]["kind"] == "ACTION_KIND_DRAW" else m["action"]} for m in rnd.get("moves", [])]
            assert moves[(g, number)] == public, "every move, in order, as every seat saw it"

    # Without duplicate deals nobody else holds these tiles: moves are live, before their game finishes.
    single = submit(stub, tournament(variant="draw", games=2, duplicate=False))
    events = watch(stub, single.id, moves=True)
    first_move = min(n for n, e in enumerate(events) if e.HasField("move"))
    assert first_move < min(n for n, e in enumerate(events) if e.HasField("game_finished"))


SAMPLES = 4
"""Samples of the live view per seat (each replays the game so far)."""


class Sampling:
    """A random player that, at each of its decisions while a tile drawn in this round is still in its drawer's hand,
    samples the live view of the game as the web serves it (``game_view``: the viewer's data cut by ``public_view``)."""

    def __init__(self, seed: int, live_game, sample) -> None:
        from arena.players import RandomPlayer
        from arena.players.base import LocalPlayer

        self.player = LocalPlayer(RandomPlayer(seed))
        self.name = self.player.name
        self.live_game, self.sample = live_game, sample
        self.sampled = 0

    async def act(self, request, timeout_s: float):
        round_index = request.observation.round_index
        moves = self.live_game.rounds[round_index] if round_index < len(self.live_game.rounds) else []
        drawn = {(m.seat, m.action.tile) for m in moves if m.action.kind == Kind.DRAW}
        placed = {m.action.tile for m in moves if m.action.kind == Kind.PLACE}
        held = {(seat, tile) for seat, tile in drawn if tile not in placed}
        if held and self.sampled < SAMPLES:
            self.sampled += 1
            await self.sample(round_index, held)
        return await self.player.act(request, timeout_s)

    async def round_ended(self, *args: Any) -> None:
        return None

    async def match_ended(self, *args: Any) -> None:
        return None


@pytest.mark.fast
async def test_a_seats_drawn_tiles_never_reach_the_live_view() -> None:
    """Sampled only while some seat holds a tile it drew in the round being played (the view before any draw would
    prove nothing): the full viewer data then names the tile in that seat's own view ("draw [a|b]"), and the live
    view the web serves holds no hand, no seat's own view, no seed and no draw with its tile."""
    from types import SimpleNamespace

    from arena.records.html import viewer_data
    from arena.referee import play_match
    from arena.rules import new_game
    from arena.server.events import move_event
    from arena.rules.tiles import NAMES
    from arena.tournament.schedule import ScheduledGame
    from arena.web.access import Access
    from arena.web.data import game_view
    from arena.web.live import LiveGames

    game = new_game("draw", 2, {"target": 30})
    scheduled = ScheduledGame(0, (0, 1), "live/0/0", "0/0", 0)
    t = SimpleNamespace(id="t1", name="live", spec=SimpleNamespace(game=lambda: game), in_progress={0: None},
                        done=set(), deal_set=lambda index: range(index, index + 1))
    live = LiveGames()
    progress = live.game_started(t, scheduled, ("alpha", "beta"))
    live_game = live.get(t, 0)
    samples: list[dict] = []

    async def sample(round_index: int, held: set[tuple[int, int]]) -> None:
        full = viewer_data(live_game.record())
        for seat, tile in held:
            assert f"draw {NAMES[tile]}" in full["seen"][seat].values(), "the data to cut holds the drawn tile"
        view = await game_view(t, 0, Access.FULL, live)
        assert view["live"] is True and view["hands"] is None and view["seed"] == ""
        assert view["seen"] == [{}, {}]
        assert "draw [" not in json.dumps(view), "a draw is shown without its tile"
        now = [m["t"] for m in view["moves"] if m["r"] == round_index]
        assert not any(NAMES[tile] in text for text in now for _, tile in held)
        assert "result" not in view["rounds"][round_index], "the round's hands are not revealed before its end"
        draws = [move_event(0, round_index, n, n, m) for n, m in enumerate(live_game.rounds[round_index])
                 if m.action.kind == Kind.DRAW]
        assert draws and not any(e.move.action.HasField("tile") for e in draws), "nor do the watch's move events"
        samples.append(view)

    players = [Sampling(1, live_game, sample), Sampling(2, live_game, sample)]
    record = await play_match(game, players, seed=scheduled.seed, match_id="live", on_progress=progress)
    assert record.result is not None and len(samples) == 2 * SAMPLES


def test_fifty_watchers_and_a_stuck_one_slow_no_game(server: Server) -> None:
    stub = server.stub()
    text = tournament(games=12, concurrency=2)

    alone = submit(stub, text)
    baseline = watch(stub, alone.id)[-1].finished.tournament
    assert baseline.state == FINISHED
    baseline_s = baseline.finished_at - baseline.started_at

    watched = submit(stub, text)
    channels = [grpc.insecure_channel(server.address) for _ in range(5)]
    stuck_channel, stuck = stuck_watch(server, watched.id)
    watchers = [BackgroundWatch(apb_grpc.ArenaStub(channels[i % 5]), watched.id, moves=i % 2 == 0)
                for i in range(50)]
    for w in watchers:
        w.join(120)
    try:
        for w in watchers:
            assert w.error is None, w.error
            assert kinds(w.events)[-1] == "finished" and w.events[-1].finished.tournament.state == FINISHED
        done = watchers[0].events[-1].finished.tournament
        with_watchers_s = done.finished_at - done.started_at
        assert with_watchers_s <= 1.5 * baseline_s + 1.5, (with_watchers_s, baseline_s)
        assert done.games_done == 24
    finally:
        stuck.cancel()
        stuck_channel.close()
        for channel in channels:
            channel.close()


def stuck_watch(server: Server, tournament_id: str) -> tuple[grpc.Channel, Any]:
    """A client that opens a watch of every move and never reads (its receive window is tiny)."""
    channel = grpc.insecure_channel(server.address, [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)])
    return channel, apb_grpc.ArenaStub(channel).WatchTournament(apb.WatchTournamentRequest(id=tournament_id, moves=True))


def test_a_stuck_watcher_is_cut_off_then_cancelled(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", "--watch-buffer", "16", *random_pair(tmp_path, uuid.uuid4().hex))
    channel = None
    try:
        info = submit(server.stub(), tournament(games=20))
        channel, stuck = stuck_watch(server, info.id)
        server.wait_line(rf"^arena: watcher cut \(id={info.id} status=RESOURCE_EXHAUSTED\)$", 60)
        server.wait_line(rf"^arena: watch stream cancelled \(id={info.id} ", 30)
        with pytest.raises(grpc.RpcError) as error:
            for _ in stuck:
                pass
        assert error.value.code() == grpc.StatusCode.CANCELLED
    finally:
        server.stop()
        if channel is not None:
            channel.close()


def test_tournaments_share_the_servers_concurrency_limit(server: Server) -> None:
    stub = server.stub()
    first = submit(stub, tournament(games=4, concurrency=4, name="one"))
    second = submit(stub, tournament(games=4, concurrency=4, name="two"))
    for info in (first, second):
        assert watch(stub, info.id)[-1].finished.tournament.state == FINISHED
    spans = []
    for info in (first, second):
        games = records(server.data / "tournaments" / info.id)
        assert sorted(index(g) for g in games) == list(range(8))
        spans += [(g["startedAt"], g["startedAt"] + g["durationS"]) for g in games]
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans], key=lambda e: (e[0], e[1]))
    in_flight = peak = 0
    for _, step in edges:
        in_flight += step
        peak = max(peak, in_flight)
    assert peak <= 2, "the server runs at most --concurrency 2 games at once over all tournaments"
    listed = {t.id: t for t in stub.ListTournaments(apb.ListTournamentsRequest(), timeout=10).tournaments}
    assert listed[first.id].state == listed[second.id].state == FINISHED


def test_a_playing_deal_set_is_withheld_and_cancel_stops_play(server: Server) -> None:
    """The gated bot answers in seat 0 only: game 0 (gated in seat 0) is played and recorded, and game 1, the same
    deals with the seats swapped, waits at the gated bot's first decision for as long as the test looks."""
    stub = server.stub()
    open_gate(server.gate, "0")
    info = submit(stub, tournament(games=3, concurrency=1, bots=named("gated", "quick"),
                                   extra="[time]\nmove_ms = 600000\n"))
    live = BackgroundWatch(stub, info.id)
    live.wait_games(1, 60)  # game 0 is recorded; game 1 (same deals, seats swapped) is held by the gate
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetGame(apb.GetGameRequest(id=info.id, index=0), timeout=10)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "shares its deals with game(s) 1" in refused.value.details()
    fetch = server.cli("fetch", info.id, "0")
    assert fetch.returncode == 1 and fetch.stderr.startswith("error: failed precondition: game 0 shares")
    with pytest.raises(grpc.RpcError) as missing:
        stub.GetGame(apb.GetGameRequest(id=info.id, index=99), timeout=10)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND

    cancelled = server.cli("cancel", info.id)
    assert cancelled.returncode == 0 and "cancelled" in cancelled.stdout, cancelled.stderr
    live.join(30)
    assert live.error is None and live.events[-1].finished.tournament.state == apb.TOURNAMENT_STATE_CANCELLED
    wait_for(lambda: not bot_processes(server.slow_tag), 20, "the bots to stop")
    reply = stub.GetGame(apb.GetGameRequest(id=info.id, index=0), timeout=10)
    assert reply.seed_withheld and reply.record.seed == "" and reply.record.index == 0
    again = server.cli("cancel", info.id)
    assert again.returncode == 1 and again.stderr.strip() == (
        f"error: failed precondition: tournament {info.id} is already cancelled")


# --- bad submissions and bad calls ----------------------------------------------------------------------------------


def test_bad_submissions_are_refused_naming_the_problem(server: Server, tmp_path: Path) -> None:
    stub = server.stub()
    good = tournament()
    good_message = message_from_dict(tomllib.loads(good))
    unknown_variant = tpb.TournamentSpec()
    unknown_variant.CopyFrom(good_message)
    unknown_variant.variant = "chess"
    other_games = tpb.TournamentSpec()
    other_games.CopyFrom(good_message)
    other_games.games = 5
    ghost = good.replace('name = "alpha"\n', 'name = "alpha"\ncommand = "no-such-bot-program-xyz --fast"\n', 1)
    cases = [
        (apb.SubmitTournamentRequest(toml="name = \n"), "the tournament file is not valid TOML"),
        (apb.SubmitTournamentRequest(toml=good.replace("games = 2", "games = 0")),
         "key 'games' must be an integer >= 1, got 0"),
        (apb.SubmitTournamentRequest(spec=unknown_variant), "key 'variant': unknown variant 'chess'; valid variants"),
        (apb.SubmitTournamentRequest(toml=ghost),
         "key 'bots[1].command': bot 'alpha' is given by a command, but this server runs only its operator's bots"),
        (apb.SubmitTournamentRequest(toml=good.replace('name = "beta"', 'name = "gamma"')),
         "key 'bots[2].name': no bot named 'gamma' is registered on this server; registered: alpha, beta, gated, "
         "quick, slow"),
        (apb.SubmitTournamentRequest(spec=tpb.TournamentSpec(variant="block")),
         "key 'bots' must list at least 2 bots that can run, got 0"),
        (apb.SubmitTournamentRequest(spec=other_games, toml=good),
         "the spec message and the TOML text describe different tournaments (key 'games': 5 in the message, 2 in "
         "the TOML)"),
        (apb.SubmitTournamentRequest(), "expected a tournament"),
    ]
    for request, message in cases:
        with pytest.raises(grpc.RpcError) as refused:
            stub.SubmitTournament(request, timeout=10)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value
        assert message in refused.value.details()

    path = tmp_path / "ghost.toml"
    path.write_text(ghost)
    out = server.cli("submit", str(path))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: invalid argument: key 'bots[1].command'")
    missing = server.cli("submit", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"error: {tmp_path / 'nope.toml'}: no such " \
                                                                 f"tournament file"
    unknown = server.cli("status", "0123456789")
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: not found: no tournament '0123456789'")
    usage = subprocess.run([sys.executable, "-m", "arena", "fetch", "x"], capture_output=True, text=True, cwd=ROOT)
    assert usage.returncode == 2
    nobody = subprocess.run([sys.executable, "-m", "arena", "status", "--server", "unix:" + str(tmp_path / "none")],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert nobody.returncode == 1 and nobody.stderr.startswith("error: cannot reach the arena server at unix:")
    assert "Traceback" not in out.stderr + missing.stderr + unknown.stderr + nobody.stderr


# --- security -------------------------------------------------------------------------------------------------------


def test_a_set_token_is_required_and_tls_protects_the_wire(tmp_path: Path) -> None:
    refused = subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "0.0.0.0:0", "--data",
                              str(tmp_path / "d0")], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: refusing to listen on 0.0.0.0:0 without a token")

    token = secrets.token_urlsafe(32)
    token_file, wrong_file = tmp_path / "token", tmp_path / "wrong"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    wrong_file.write_text(secrets.token_urlsafe(32))
    cert, key = self_signed(tmp_path)
    server = Server(tmp_path / "data", "--token-file", str(token_file), "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        stub = server.stub(credentials=grpc.ssl_channel_credentials(cert.read_bytes()))
        request = apb.ListTournamentsRequest()
        for metadata, problem in [((), "missing token"), ((("authorization", "Bearer " + wrong_file.read_text()),),
                                                          "wrong token"),
                                  ((("authorization", token),), "wrong token")]:
            with pytest.raises(grpc.RpcError) as error:
                stub.ListTournaments(request, timeout=10, metadata=metadata)
            assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED and problem in error.value.details()
            with pytest.raises(grpc.RpcError) as error:
                watch(stub, "anything", metadata=metadata, seconds=10)
            assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as error:
            stub.SubmitTournament(apb.SubmitTournamentRequest(toml=tournament()), timeout=10)
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert not list((tmp_path / "data" / "tournaments").iterdir()), "nothing happens without the token"
        assert stub.ListTournaments(request, timeout=10, metadata=(("authorization", "Bearer " + token),)) is not None

        tls = ("--tls-ca", str(cert))
        good = server.cli("status", "--token-file", str(token_file), *tls)
        assert good.returncode == 0 and "no tournaments yet" in good.stdout, good.stderr
        bad = server.cli("status", "--token-file", str(wrong_file), *tls)
        assert bad.returncode == 1 and bad.stderr.strip() == "error: unauthenticated: wrong token"
        plain = server.cli("status", "--token-file", str(token_file), timeout=60)
        assert plain.returncode == 1 and plain.stderr.startswith("error: cannot reach the arena server")
    finally:
        server.stop()


def test_the_printed_follow_command_works_with_a_token(tmp_path: Path) -> None:
    """The hint repeats the arena as it was called (here ``python -m arena``, not a bare ``arena`` the PATH may
    lack), the server and the token file: without ``--token-file`` the server refuses the watch."""
    token_file = tmp_path / "token"
    token_file.write_text(secrets.token_urlsafe(32) + "\n")
    token_file.chmod(0o600)
    spec = tmp_path / "t.toml"
    spec.write_text(tournament(games=1))
    server = Server(tmp_path / "data", "--token-file", str(token_file), *random_pair(tmp_path, uuid.uuid4().hex))
    try:
        submitted = server.cli("submit", str(spec), "--token-file", str(token_file))
        assert submitted.returncode == 0, submitted.stderr
        tid = re.match(r"submitted (\S+):", submitted.stdout).group(1)
        hint = submitted.stdout.splitlines()[-1]
        assert hint == (f"follow it: {shlex.quote(sys.executable)} -m arena watch {tid} --server {server.address} "
                        f"--token-file {token_file}")
        followed = subprocess.run(shlex.split(hint.removeprefix("follow it: ")), capture_output=True, text=True,
                                  timeout=120, cwd=tmp_path)
        assert followed.returncode == 0, followed.stderr
        assert f"tournament {tid} finished: 2/2 games" in followed.stdout
    finally:
        server.stop()


# --- stopping and resuming -----------------------------------------------------------------------------------------


def bot_logs(run: Path, name: str) -> str:
    """Everything the processes of one entrant wrote (run/logs/NAME.K.log)."""
    return "".join(path.read_text(errors="replace") for path in sorted((run / "logs").glob(f"{name}*.log")))


def test_sigterm_cancels_games_and_stops_the_bots(tmp_path: Path, hang_bot: Path) -> None:
    tag = uuid.uuid4().hex
    bots = random_bot("alpha", tag) + bot_entry("hanger", str(hang_bot), "--tag", tag)
    server = Server(tmp_path / "data", *registry(tmp_path, bots))
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=1, bots=named("alpha", "hanger"), extra="[time]\nmove_ms = 60000\n"))
        run = tmp_path / "data" / "tournaments" / info.id
        live = BackgroundWatch(stub, info.id)
        wait_for(lambda: "asked" in bot_logs(run, "hanger"), 60, "the hanging bot to be asked")
        took = server.stop()
        assert took < 8, f"stopping took {took:.1f} s"
        assert server.process.returncode == 0
        assert "cancelled" in bot_logs(run, "hanger"), "the bot saw its call cancelled"
        live.join(10)
        assert live.error is not None and live.error.code() == grpc.StatusCode.UNAVAILABLE
        assert live.error.details() == "server shutting down"
        wait_for(lambda: not bot_processes(tag), 10, "the bots to stop")
        facts = json.loads((tmp_path / "data" / "tournaments" / info.id / "server.json").read_text())
        assert facts["state"] == "running", "an interrupted tournament resumes at the next start"
    finally:
        server.stop(signal.SIGKILL)


def test_a_restart_plays_every_game_once(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    data = tmp_path / "data"
    bots = random_pair(tmp_path, tag)
    server = Server(data, *bots)
    try:
        stub = server.stub()
        info = submit(stub, tournament(games=40, concurrency=2))
        live = BackgroundWatch(stub, info.id)
        live.wait_games(5, 60)
        assert server.stop() < 8
        live.join(10)
        assert live.error is not None and live.error.code() == grpc.StatusCode.UNAVAILABLE
        assert live.error.details() == "server shutting down"
        wait_for(lambda: not bot_processes(tag), 10, "the bots to stop")
    finally:
        server.stop(signal.SIGKILL)
    folder = data / "tournaments" / info.id
    before = (folder / "games.jsonl").read_bytes()
    done = before.count(b"\n")
    assert before.endswith(b"\n") and 5 <= done < 80, "interrupted in the middle, every record whole"

    again = Server(data, *bots)  # the tournament names alpha and beta: resuming resolves them again
    try:
        running = rf"tournament running \(id={info.id} name=t games_recorded={done}\)$"
        if not any(re.search(running, line) for line in again.output):  # else it came after "listening on"
            again.wait_line(running, 60)
        stub = again.stub()
        events = watch(stub, info.id)
        assert events[0].snapshot.tournament.games_done >= done
        assert events[-1].finished.tournament.state == FINISHED
        assert events[-1].finished.tournament.games_done == 80
        games = records(folder)
        assert sorted(index(g) for g in games) == list(range(80)), "every game exactly once"
        assert (folder / "games.jsonl").read_bytes().startswith(before), "the records before the stop are kept"
        assert sum(e.games for e in events[-1].finished.standings.entrants) == 160
        assert sum(e["games"] for e in json.loads((folder / "standings.json").read_text())["entrants"]) == 160
        listed = stub.ListTournaments(apb.ListTournamentsRequest(), timeout=10).tournaments
        assert [(t.id, t.state) for t in listed] == [(info.id, FINISHED)]
    finally:
        again.stop()
    assert not bot_processes(tag)


# --- the watcher's buffer, without a server ----------------------------------------------------------------------


def moves(n: int) -> list[apb.TournamentEvent]:
    return [event(move=apb.MoveEvent(game=0, move_number=i)) for i in range(n)]


@pytest.mark.fast
def test_a_full_buffer_drops_moves_first_and_says_so() -> None:
    watcher = Watcher("t", moves=True, capacity=10)
    watcher.push([event(game_started=apb.GameStarted(index=0))] + moves(20))
    events, ending = watcher.take()
    assert ending is None
    assert kinds(events) == ["dropped", "game_started"] + ["move"] * 9
    assert events[0].dropped.moves == 11 and [e.move.move_number for e in events[2:]] == list(range(11, 20))


@pytest.mark.fast
def test_a_full_buffer_keeps_the_newest_standings_then_ends() -> None:
    watcher = Watcher("t", moves=False, capacity=4)
    watcher.push(moves(5))  # not asked for: never queued
    watcher.push([event(standings=apb.StandingsUpdated(games_done=i)) for i in range(6)])
    events, ending = watcher.take()
    assert ending is None and kinds(events) == ["dropped", "standings"]
    assert events[0].dropped.standings == 5 and events[1].standings.games_done == 5
    watcher.push([event(game_finished=apb.GameFinished(games_done=i)) for i in range(5)])
    events, ending = watcher.take()
    assert events == [] and ending is not None
    assert ending.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "watcher too slow" in ending.details
    watcher.push(moves(1))
    assert watcher.take() == ([], ending), "nothing more after the end"


@pytest.mark.fast
def test_the_spec_message_and_the_file_are_one_schema() -> None:
    text = tournament(extra='seed = 7\n[time]\nmove_ms = 500\n', bots=random_bot("alpha", "x") + random_bot(
        "beta", "x")) + '[bots.env]\nK = "v w"\n'
    message = message_from_dict(tomllib.loads(text))
    from_file, _ = parse_submission(None, text)
    from_message, kept = parse_submission(message, "")
    assert from_file == from_message
    assert parse_submission(None, kept)[0] == from_file, "the TOML kept for a message describes the same tournament"
    assert dict_from_message(message)["duplicate"] is True and toml_text({"name": 'a "b"'}).endswith('"a \\"b\\""\n')
    assert not tpb.TournamentSpec().HasField("duplicate"), "unset means the file's default (true)"


@pytest.mark.parametrize("grace_ms", [0, 40])
@pytest.mark.fast
def test_the_grace_crosses_the_spec_message_even_zero(grace_ms: int) -> None:
    """``TimeControlSpec.grace_ms`` has presence: a submitted 0 is no grace (not the default 250), and unset is 250."""
    text = tournament(extra=f"[time]\ngrace_ms = {grace_ms}\n", bots=random_bot("alpha", "x") + random_bot("beta", "x"))
    message = message_from_dict(tomllib.loads(text))
    assert message.time.HasField("grace_ms") and message.time.grace_ms == grace_ms
    from_message, kept = parse_submission(message, "")
    assert from_message.time.grace_ms == grace_ms and parse_submission(None, kept)[0] == from_message
    assert parse_submission(message, text)[0] == from_message, "the message and its TOML agree"
    message.time.ClearField("grace_ms")
    assert parse_submission(message, "")[0].time.grace_ms == 250


# --- a write error leaves the tournament resumable; unreadable lines are logged and named -------------------


def corrupt_in_place(path: Path) -> tuple[int, int, str]:
    """Overwrite the first complete line that names its game in its first bytes with garbage of the same length
    (the file keeps its size and inode, as a server reading it expects); (line number, game, problem)."""
    lines = path.read_bytes().split(b"\n")
    offset = 0
    for number, line in enumerate(lines[:-1], 1):
        prefix = re.match(rb'\{"recordVersion":1,"index":"(\d+)",', line)
        if prefix:
            bad = prefix.group(0) + b"#" * (len(line) - len(prefix.group(0)))
            with open(path, "r+b") as f:
                f.seek(offset)
                f.write(bad)
            with pytest.raises(RecordFormatError) as problem:
                parse_record(bad)
            return number, int(prefix.group(1)), str(problem.value)
        offset += len(line) + 1
    raise AssertionError(f"no line of {path} names its game")


def alpha_and_beta(tmp_path: Path) -> tuple[str, Path, tuple[str, ...]]:
    """A tag for the bots' processes, a data folder, and ``arena serve``'s arguments for two random bots."""
    tag = uuid.uuid4().hex
    return tag, tmp_path / "data", registry(tmp_path, random_bot("alpha", tag) + random_bot("beta", tag))


def fail_by_a_file_size_limit(server: Server, limit: int) -> tuple[Any, apb.TournamentInfo, apb.TournamentInfo]:
    """Limit the running server's files to ``limit`` bytes (RLIMIT_FSIZE: its writes get EFBIG, as on a full disk),
    submit 40 games and watch them until the tournament ends FAILED and resumable: (stub, submitted, failed)."""
    resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, (limit, limit))
    stub = server.stub()
    info = submit(stub, tournament(games=20, concurrency=2))
    failed = watch(stub, info.id)[-1].finished.tournament
    assert failed.state == apb.TOURNAMENT_STATE_FAILED and failed.resumable, failed
    return stub, info, failed


def test_a_write_error_fails_resumably(tmp_path: Path) -> None:
    """The server's files may not grow past 30,000 bytes (RLIMIT_FSIZE, set on the running server: its writes get
    EFBIG, as on a full disk): the tournament ends FAILED, resumable, saying what is safe. A line then broken by
    hand: GetGame on its game names the line. The restarted server (no limit) logs the broken line, resumes, and
    finishes with every game recorded exactly once, the safe lines kept as they were."""
    tag, data, bots = alpha_and_beta(tmp_path)
    first = Server(data, *bots)
    try:
        stub, info, failed = fail_by_a_file_size_limit(first, 30_000)
        folder = data / "tournaments" / info.id
        kept = (folder / "games.jsonl").read_bytes()
        safe = kept.count(b"\n")
        assert 0 < safe < 40 and len(kept) == 30_000
        assert failed.error == (f"cannot write {folder}/games.jsonl: File too large; {safe} of 40 games are recorded "
                                f"and safe in {folder} (standings.json holds their standings); raise the file size "
                                f"limit (ulimit -f), then restart the server: it resumes this tournament")
        status = first.cli("status", info.id)
        assert "resumable: its recorded games are safe; the server resumes it at its next start" in status.stdout

        line, game, problem = corrupt_in_place(folder / "games.jsonl")
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetGame(apb.GetGameRequest(id=info.id, index=game), timeout=30)
        assert refused.value.code() == grpc.StatusCode.DATA_LOSS
        assert refused.value.details() == (f"game {game} of tournament {info.id}: its record, line {line} of "
                                           f"games.jsonl, is unreadable: {problem}")
        first.stop()
    finally:
        first.stop(signal.SIGKILL)
    before = (folder / "games.jsonl").read_bytes()
    complete = before[:before.rfind(b"\n") + 1]

    again = Server(data, *bots)
    try:
        again.wait_line(rf"^arena: record line skipped \(id={info.id} file=games.jsonl line={line} "
                        rf"problem={re.escape(problem)}\)$", 30)
        stub = again.stub()
        finished = watch(stub, info.id)[-1].finished.tournament
        assert finished.state == FINISHED and not finished.resumable and finished.error == "", finished
        assert finished.games_done == 40
        after = (folder / "games.jsonl").read_bytes()
        assert after.startswith(complete), "the safe lines (and the broken one) are kept as they were"
        report = ReadReport()
        indices = Counter(index_of(record) for record in iter_records(folder / "games.jsonl", report))
        assert indices == Counter(range(40)), "every game exactly once, the broken line's game played again"
        assert [number for number, _ in report.bad_lines] == [line]
        assert stub.GetGame(apb.GetGameRequest(id=info.id, index=game), timeout=30).record.index == game
        saved = json.loads((folder / "server.json").read_text())
        assert (saved["state"], saved["resumable"]) == ("finished", False)
    finally:
        again.stop()
    assert not bot_processes(tag)


def test_a_restart_replays_a_one_entrant_record(tmp_path: Path) -> None:
    """A well-formed record whose parts do not fit together (one entrant on both sides: a line edited by hand or
    copied in) passes the store's check; the restarted server's standings refuse it as the runner's resume does,
    and the tournament finishes with that game played again. (The server's standings used to raise on it, which
    failed the whole tournament.)"""
    tag, data, bots = alpha_and_beta(tmp_path)
    info, path = stopped_after_a_write_error(data, bots)
    record = changed_first_record(path, lambda r: r.update(seats=[r["seats"][0]] * len(r["seats"])))
    game, entrant = index_of(record), record["seats"][0]

    again = Server(data, *bots)
    try:
        problem = (f"game {game} is not a complete record (expected entrants on at least two different sides, got "
                   f"seats {(entrant, entrant)!r})")
        again.wait_line(rf"^arena: record line skipped \(id={info.id} file=games.jsonl line=-1 "
                        rf"problem={re.escape(problem)}\)$", 30)
        finished = watch(again.stub(), info.id)[-1].finished.tournament
        assert finished.state == FINISHED and finished.error == "" and finished.games_done == 40, finished
        indices = Counter(index_of(r) for r in iter_records(path, ReadReport()))
        assert indices == Counter([*range(40), game]), "the refused line kept as it was, its game played again"
    finally:
        again.stop()
    assert not bot_processes(tag)


def test_a_restart_leaves_misfits_out_of_the_standings(tmp_path: Path) -> None:
    """A line of another game in a run folder (here a seat renamed to an entrant the tournament does not have) is a
    well-formed record that resume refuses, since it does not fit the schedule, and plays its game again. The
    server's live and final standings are the runner's: no phantom entrant, the game counted once. (The server
    counted the folder's records by itself and kept the line's result.)"""
    tag, data, bots = alpha_and_beta(tmp_path)
    info, path = stopped_after_a_write_error(data, bots)
    record = changed_first_record(path, lambda r: r["seats"].__setitem__(1, "gamma"))
    again = Server(data, *bots)
    try:
        stub = again.stub()
        finished = watch(stub, info.id)[-1].finished.tournament
        assert finished.state == FINISHED and finished.games_done == 40, finished
        standings = stub.GetStandings(apb.GetStandingsRequest(id=info.id), timeout=30).standings
        assert standings.games == 40
        assert sorted(e.name for e in standings.entrants) == ["alpha", "beta"]
        written = json.loads((path.parent / "standings.json").read_text())
        assert standings == standings_pb(written), "the server's final standings are the runner's"
        indices = Counter(index_of(r) for r in iter_records(path, ReadReport()))
        assert indices == Counter([*range(40), index_of(record)]), "the line kept, its game played again"
    finally:
        again.stop()
    assert not bot_processes(tag)


def stopped_after_a_write_error(data: Path, bots: tuple[str, ...]) -> tuple[apb.TournamentInfo, Path]:
    """A server's tournament of 40 games that failed resumably at a write error, the server stopped: the
    tournament and its record file."""
    first = Server(data, *bots)
    try:
        _, info, _ = fail_by_a_file_size_limit(first, 20_000)
        first.stop()
    finally:
        first.stop(signal.SIGKILL)
    return info, data / "tournaments" / info.id / "games.jsonl"


def changed_first_record(path: Path, change: Callable[[dict], Any]) -> dict:
    """The record of the file's first line changed by ``change`` in place, well-formed still (the store takes it):
    what a line edited by hand or copied from another run is."""
    lines = path.read_text().split("\n")
    record = json.loads(lines[0])
    change(record)
    lines[0] = json.dumps(record, separators=(",", ":"))
    path.write_text("\n".join(lines))
    parse_record(lines[0])
    return record


def test_a_cancelled_failed_tournament_is_not_resumed(tmp_path: Path) -> None:
    tag, data, bots = alpha_and_beta(tmp_path)
    first = Server(data, *bots)
    try:
        stub, info, failed = fail_by_a_file_size_limit(first, 20_000)
        cancelled = stub.CancelTournament(apb.CancelTournamentRequest(id=info.id), timeout=30).tournament
        assert cancelled.state == apb.TOURNAMENT_STATE_CANCELLED and not cancelled.resumable
        assert cancelled.error == f"cancelled by request after it failed: {failed.error}"
        with pytest.raises(grpc.RpcError) as again:
            stub.CancelTournament(apb.CancelTournamentRequest(id=info.id), timeout=30)
        assert again.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        first.stop()
    finally:
        first.stop(signal.SIGKILL)
    games = (data / "tournaments" / info.id / "games.jsonl").read_bytes()
    restarted = Server(data, *bots)
    try:
        stub = restarted.stub()
        state = stub.GetStandings(apb.GetStandingsRequest(id=info.id), timeout=30).tournament
        assert state.state == apb.TOURNAMENT_STATE_CANCELLED and not state.resumable
        assert (data / "tournaments" / info.id / "games.jsonl").read_bytes() == games, "not resumed"
    finally:
        restarted.stop()
    assert not bot_processes(tag)
