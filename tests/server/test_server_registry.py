"""What an arena server agrees to run: the bots of its operator's registry (``arena serve --bots FILE``), named by
submissions; commands only with ``--allow-commands``; always sandboxed; limits only lowered; caps on entrants and on
bot processes; names fit for a terminal; secrets on disk private.

Real server processes, real bots over real gRPC (tests/support/servers.py); no sleeps: the tests wait on watch
streams and on calls that answer once something has happened."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
import uuid
from contextlib import redirect_stdout
from pathlib import Path
from typing import Iterator

import grpc
import pytest

from arena.protocol import arena_pb2 as apb
from arena.cli import server as server_cli
from support.paths import ROOT
from support.servers import (
    FINISHED, RANDOM_BOT, Server, WATCHED_BOT, bot_entry, named, random_bot, registry, self_signed, submit, tournament, watch,
)

CANCELLED = apb.TOURNAMENT_STATE_CANCELLED
LIMITS = "[limits]\nmemory_mb = 512\npids = 64\n"
"""The registry's [limits] in these tests: below the arena's defaults (1024 MiB, 128 processes)."""


def refusal(stub, text: str) -> grpc.RpcError:
    """The error a submission gets (it must be refused)."""
    with pytest.raises(grpc.RpcError) as refused:
        submit(stub, text)
    return refused.value


def containment(run: Path) -> dict[str, dict]:
    """Each entrant's sandbox and limits, as bots.json records them."""
    return {bot["name"]: bot["containment"] for bot in json.loads((run / "bots.json").read_text())}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def said(server: Server, pattern: str) -> bool:
    """Whether the server printed a line like ``pattern`` before it was listening (all read by then)."""
    return any(re.search(pattern, line) for line in server.output)


def serve_fails(*args: str) -> subprocess.CompletedProcess:
    """``arena serve`` that must not start (it exits before listening)."""
    return subprocess.run([sys.executable, "-m", "arena", "serve", "--listen", "127.0.0.1:0", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with a registry of two random bots, alpha and beta (beta with fewer processes of its own)."""
    folder = tmp_path_factory.mktemp("registered")
    tag = uuid.uuid4().hex
    bots = random_bot("alpha", tag) + random_bot("beta", tag) + "limits = { pids = 32 }\n"
    running = Server(folder / "data", *registry(folder, bots, LIMITS))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that also runs the commands submissions give (--allow-commands), with the same registry."""
    folder = tmp_path_factory.mktemp("open")
    tag = uuid.uuid4().hex
    running = Server(folder / "data", "--allow-commands", *registry(folder, random_bot("alpha", tag), LIMITS))
    yield running
    running.stop()


# --- registered bots ----------------------------------------------------------------------------------------------


def test_registered_bots_play_by_name_under_lowered_limits(registered: Server) -> None:
    stub = registered.stub()
    text = tournament(bots=named("alpha", "beta") + "limits = { memory_mb = 256 }\n", name="by name")
    info = submit(stub, text)
    events = watch(stub, info.id)
    assert events[-1].finished.tournament.state == FINISHED and events[-1].finished.tournament.games_done == 4
    run = registered.data / "tournaments" / info.id
    boxes = containment(run)
    assert boxes["alpha"]["sandbox"].startswith("bubblewrap") and boxes["beta"]["sandbox"].startswith("bubblewrap")
    assert (boxes["alpha"]["limits"]["memory_mb"], boxes["alpha"]["limits"]["pids"]) == (512, 64), "the registry's"
    assert (boxes["beta"]["limits"]["memory_mb"], boxes["beta"]["limits"]["pids"]) == (256, 32), "lowered by the " \
                                                                                                 "submission"
    assert (run / "tournament.toml").read_text() == text, "the submission as sent: names, not commands"
    assert mode(registered.data) == mode(registered.data / "tournaments") == mode(run) == 0o700


def test_an_unknown_name_is_refused_with_the_known_names(registered: Server) -> None:
    error = refusal(registered.stub(), tournament(bots=named("alpha", "gamma")))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == ("key 'bots[2].name': no bot named 'gamma' is registered on this server; registered: "
                               "alpha, beta")


def test_commands_addresses_and_no_sandbox_need_allow_commands(registered: Server) -> None:
    stub = registered.stub()
    command = named("alpha") + bot_entry("visitor", str(RANDOM_BOT))
    address = named("alpha") + '\n[[bots]]\nname = "remote"\naddress = "127.0.0.1:50051"\n'
    for text, key in [(command, "bots[2].command"), (address, "bots[2].address")]:
        error = refusal(stub, tournament(bots=text))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.details().startswith(f"key '{key}': bot ") and "runs only its operator's bots" in error.details()
        assert "registered here: alpha, beta" in error.details() and "--allow-commands" in error.details()
    error = refusal(stub, tournament(extra="sandbox = false"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith("key 'sandbox': this server runs every bot in its sandbox")
    error = refusal(stub, tournament(bots=named("alpha") + named("beta") + 'env = { LD_PRELOAD = "/x.so" }\n'))
    assert error.details().startswith("key 'bots[2].env': a bot without a command or an address is one of the "
                                      "server's registered bots")


def test_limits_above_the_registry_are_refused_by_name(registered: Server) -> None:
    stub = registered.stub()
    cases = [
        (named("alpha", "beta") + "limits = { pids = 33 }\n",
         "key 'bots[2].limits.pids': bot 'beta' may not go above its limits in this server's registry (pids 33 > 32)"),
        (named("alpha") + "limits = { memory_mb = 1024 }\n" + named("beta"),
         "key 'bots[1].limits.memory_mb': bot 'alpha' may not go above its limits in this server's registry "
         "(memory_mb 1024 > 512)"),
        ("[limits]\ncpus = 2.0\n" + named("alpha", "beta"),
         "key 'limits.cpus': bot 'alpha' may not go above its limits in this server's registry (cpus 2 > 1)"),
    ]
    for bots, message in cases:
        error = refusal(stub, tournament(bots=bots))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and error.details() == message


def test_names_must_be_short_and_printable(registered: Server, tmp_path: Path) -> None:
    stub = registered.stub()
    error = refusal(stub, tournament(name="evil\\u001b]0;owned\\u0007\\u001b[2J"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == ("key 'name' must hold printable characters only (no escape sequences or other "
                               "control characters), got 'evil\\x1b]0;owned\\x07\\x1b[2J'")
    error = refusal(stub, tournament(bots=named("alpha", "b" * 65)))
    assert error.details() == "key 'bots[2].name' must be at most 64 characters, got 65"
    path = tmp_path / "evil.toml"
    path.write_text(tournament(bots=named("alpha", "beta\\u001b[31m")))
    out = registered.cli("submit", str(path))
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "\x1b" not in out.stderr
    assert out.stderr.startswith("error: invalid argument: key 'bots[2].name' must hold printable characters only")


# --- --allow-commands ---------------------------------------------------------------------------------------------


def test_allow_commands_runs_commands_sandboxed(open_server: Server) -> None:
    stub = open_server.stub()
    tag = uuid.uuid4().hex
    info = submit(stub, tournament(bots=named("alpha") + random_bot("visitor", tag)))
    events = watch(stub, info.id)
    assert events[-1].finished.tournament.state == FINISHED
    boxes = containment(open_server.data / "tournaments" / info.id)
    assert boxes["visitor"]["sandbox"].startswith("bubblewrap"), "a submitted command runs in a sandbox"
    assert boxes["visitor"]["limits"]["memory_mb"] == 512, "with the registry's [limits], not the arena's defaults"

    cases = [
        (tournament(bots=named("alpha") + random_bot("visitor", tag) + "limits = { memory_mb = 513 }\n"),
         "key 'bots[2].limits.memory_mb': bot 'visitor' may not go above this server's [limits] (memory_mb 513 > "
         "512)"),
        (tournament(bots=named("alpha") + random_bot("visitor", tag), extra="sandbox = false"),
         "key 'sandbox': this server runs every bot in its sandbox; a submission cannot turn it off"),
        (tournament(bots=named("alpha") + '\n[[bots]]\nname = "ghost"\ncommand = "no-such-bot-program-xyz"\n'),
         "key 'bots[2].command': bot 'ghost': program 'no-such-bot-program-xyz' is not found on the arena server"),
        (tournament(bots=named("alpha") + random_bot("peeker", tag) + f'folder = "{open_server.data.parent}"\n'),
         f"key 'bots[2]': bot 'peeker': the bot's folder {open_server.data.parent} holds {open_server.data}, which no bot "
         f"may see"),
        (tournament(bots=named("alpha", "beta")),
         "key 'bots[2].name': no bot named 'beta' is registered on this server; registered: alpha"),
    ]
    for text, message in cases:
        error = refusal(stub, text)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and error.details().startswith(message), error


def test_without_a_registry_only_allow_commands_runs_anything(tmp_path: Path) -> None:
    closed = Server(tmp_path / "closed")
    try:
        assert said(closed, r"^arena: no bots \(advice=every submission with a bot to run here is refused: pass "
                            r"--bots FILE")
        error = refusal(closed.stub(), tournament(bots=random_bot("a", "x") + random_bot("b", "x")))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error.details().startswith("this arena server has no bots to run: its operator starts it with --bots "
                                          "FILE")
    finally:
        closed.stop()
    commands = Server(tmp_path / "commands", "--allow-commands")
    try:
        stub = commands.stub()
        error = refusal(stub, tournament(bots=named("alpha") + random_bot("b", "x")))
        assert error.details() == ("key 'bots[1].name': bot 'alpha' has no command or address, and this server has "
                                   "no registry of bots to name (its operator starts it with --bots FILE)")
        tag = uuid.uuid4().hex
        info = submit(stub, tournament(games=1, bots=random_bot("a", tag) + random_bot("b", tag)))
        assert watch(stub, info.id)[-1].finished.tournament.state == FINISHED
    finally:
        commands.stop()


# --- caps ---------------------------------------------------------------------------------------------------------


def test_the_caps_refuse_with_their_numbers(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    bots = (random_bot("alpha", tag) + random_bot("beta", tag) + random_bot("gamma", tag)
            + bot_entry("hanger", str(WATCHED_BOT), "--mode", "hang", "--tag", tag))
    server = Server(tmp_path / "data", "--max-entrants", "2", "--max-bot-processes", "6", *registry(tmp_path, bots))
    try:
        stub = server.stub()
        error = refusal(stub, tournament(bots=named("alpha", "beta", "gamma")))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.details() == ("key 'bots': this tournament has 3 entrants; this server takes at most 2 per "
                                   "tournament (arena serve --max-entrants)")
        # 2 entrants in 4 seats: each holds 2 seats in each of its 2 process lanes (the run's phases), 4 each.
        error = refusal(stub, tournament(extra="players = 4", bots=named("alpha", "beta")))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.details() == ("this tournament needs 8 bot processes (2 entrants x 4 each); this server runs "
                                   "at most 6 at once (arena serve --max-bot-processes)")

        hanging = submit(stub, tournament(games=1, bots=named("alpha", "hanger"),
                                          extra="[time]\nmove_ms = 600000\n"))
        error = refusal(stub, tournament(bots=named("alpha", "beta")))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error.details().startswith("this tournament needs 4 bot processes (2 entrants x 2 each), and 4 of this "
                                          "server's 6 are taken by queued or running tournaments")
        cancelled = stub.CancelTournament(apb.CancelTournamentRequest(id=hanging.id), timeout=60).tournament
        assert cancelled.state == CANCELLED
        info = submit(stub, tournament(bots=named("alpha", "beta")))
        assert watch(stub, info.id)[-1].finished.tournament.state == FINISHED, "room again once one has ended"
    finally:
        server.stop()


# --- secrets on disk ----------------------------------------------------------------------------------------------


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(uuid.uuid4().hex + uuid.uuid4().hex + "\n")
    token.chmod(0o644)
    refused = serve_fails("--data", str(tmp_path / "data"), "--token-file", str(token))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr == (f"error: {token}: the token file is open to other users (mode 0644); make it private "
                              f"with `chmod 600 {token}`\n")


def test_a_tls_key_others_can_read_is_refused(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    key.chmod(0o640)
    refused = serve_fails("--data", str(tmp_path / "data"), "--tls-cert", str(cert), "--tls-key", str(key))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr == (f"error: {key}: the TLS key is open to other users (mode 0640); make it private "
                              f"with `chmod 600 {key}`\n")


def test_the_data_folder_is_made_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    server = Server(data, *registry(tmp_path, random_bot("alpha", "x")))
    try:
        assert said(server, r"^arena: data folder made private \(folder=\S+ mode_was=0o755 mode=0o700\)$")
        assert mode(data) == mode(data / "tournaments") == 0o700
    finally:
        server.stop()
    fresh = tmp_path / "fresh" / "data"
    server = Server(fresh, *registry(tmp_path, random_bot("alpha", "x")))
    server.stop()
    assert mode(fresh) == mode(fresh / "tournaments") == 0o700


# --- the registry file --------------------------------------------------------------------------------------------


def test_a_bad_registry_file_is_one_line_and_status_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    good = random_bot("alpha", "x")
    cases = [
        (None, "no such registry file (--bots)"),
        ("[[bots]\n", "not valid TOML"),
        ("colour = 1\n" + good, "unknown key 'colour' at the top level; valid keys: bots, limits"),
        ("[limits]\nmemory_mb = 1\n" + good, "key 'limits.memory_mb' must be an integer from 16 to"),
        ("", "key 'bots' must list at least one [[bots]] table"),
        ('[[bots]]\nname = "alpha"\n', "bot 'alpha' needs exactly one of 'command' or 'address'"),
        (good + good, "key 'bots[2].name' must be unique, got 'alpha' twice"),
        ('[[bots]]\nname = "alpha"\ncommand = "no-such-bot-program-xyz"\n',
         "key 'bots[1].command': bot 'alpha': program 'no-such-bot-program-xyz' is not found on the arena server"),
        (bot_entry("a\\u001b[2J", str(RANDOM_BOT)), "key 'bots[1].name' must hold printable characters only"),
        (good + f'folder = "{tmp_path}"\n', f"bot 'alpha': the bot's folder {tmp_path} holds {data}, which no bot may see"),
    ]
    for number, (text, message) in enumerate(cases):
        path = tmp_path / f"bots-{number}.toml"
        if text is not None:
            path.write_text(text)
        out = serve_fails("--data", str(data), "--bots", str(path))
        assert out.returncode == 2 and out.stderr.count("\n") == 1, (text, out.stderr)
        assert out.stderr.startswith(f"error: {path}: ") and message in out.stderr, (text, out.stderr)


# --- what the CLI prints ------------------------------------------------------------------------------------------


@pytest.mark.fast
def test_server_names_print_without_control_codes_or_markup() -> None:
    evil = "evil\x1b]0;owned\x07\x1b[2J\x9b31m[bold red]loud[/]"
    info = apb.TournamentInfo(id="abc", name=evil, variant="block", players=2, state=FINISHED, entrants=[evil, "b"],
                              error=evil, games_total=1, games_done=1)
    standings = apb.Standings(games=1, rating="elo", entrants=[apb.EntrantStanding(rank=1, name=evil, games=1)])
    game = apb.GameSummary(index=0, seats=[evil, "b"], side_of_seat=[0, 1])
    events = [apb.TournamentEvent(snapshot=apb.Snapshot(tournament=info)),
              apb.TournamentEvent(game_started=apb.GameStarted(index=0, seats=[evil, "b"])),
              apb.TournamentEvent(game_finished=apb.GameFinished(game=game, games_done=1, games_total=1)),
              apb.TournamentEvent(standings=apb.StandingsUpdated(standings=standings, games_done=1, games_total=1)),
              apb.TournamentEvent(finished=apb.TournamentFinished(tournament=info, standings=standings))]
    out = io.StringIO()
    with redirect_stdout(out):
        server_cli.print_info(info)
        view = server_cli.WatchView(moves=True)
        for event in events:
            view.show(event)
    text = out.getvalue()
    assert not any(c in text for c in "\x1b\x07\x9b"), text
    assert "[bold red]loud[/]" in text, "markup is shown as text, not applied (the standings table too)"
    assert text.count("evil]0;owned[2J31m[bold red]loud[/]") >= 5


@pytest.mark.fast
def test_the_shipped_registry_and_server_demo_agree() -> None:
    """bots/registry.toml loads, and tournaments/server-demo.toml is accepted against it with the registered bots."""
    from arena.server.admission import Admission
    from arena.server.registry import load_registry

    admission = Admission(registry=load_registry(ROOT / "bots" / "registry.toml", cwd=ROOT), cwd=ROOT)
    spec, _ = admission.admit(None, (ROOT / "tournaments" / "server-demo.toml").read_text())
    assert [b.name for b in spec.bots] == ["py-random", "py-greedy"]
    assert spec.bots[1].command == ("python", "bots/python/greedy_bot.py")
    assert spec.bots[1].limits.memory_mb == 512 and spec.sandbox
