"""Security claims, tested by attacks: a hostile bot (tests/bots/attack_bot.py) tries, for real, each thing a bot
must not do, beside well-behaved bots, and the test checks that it failed or was contained, that the other seats'
games are untouched, that the recorded faults are right, and that nothing is left running.

Where it is safe to run the same attack without the protection (``sandbox=False``), the test does, and asserts that
the attack then succeeds: that is what shows the test can fail.
"""

from __future__ import annotations

import importlib
import json
import shutil
import os
import socket
import stat
import sys
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
import trio

from arena.players import RandomPlayer
from arena.players.base import LocalPlayer
from arena.players.faults import FaultKind
from arena.players.process import BotProcess, BotSpec
from arena.referee import TimeControl, play_match
from arena.rules import new_game
from arena.sandbox import Limits, host
from arena.sandbox.syscalls import FILTER_NAME, refusal_line
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.paths import ROOT
from support.processes import bot_processes
from support.waiting import wait_for

ATTACK_BOT = str(ROOT / "tests" / "bots" / "attack_bot.py")
RANDOM_BOT = str(ROOT / "bots" / "python" / "random_bot.py")
ALLOWED_ENV = {"DOMINOES_BOT_LISTEN", "PATH", "HOME", "TMPDIR", "LANG", "PWD"}  # PWD: bubblewrap sets it

needs_cgroups = pytest.mark.skipif(host().cgroups is None, reason=f"no cgroup here: {host().cgroup_problem}")


def attacker(attack: str, *, sandbox: bool = True, limits: Limits = Limits(), **env: str) -> BotSpec:
    return BotSpec(name=f"attack-{attack}", command=(sys.executable, ATTACK_BOT, "--attack", attack), env=env,
                   sandbox=sandbox, limits=limits)


def victim(tag: str, number: int, sandbox: bool = True) -> BotSpec:
    return BotSpec(name=f"victim-{number}", command=(sys.executable, RANDOM_BOT, "--tag", tag), sandbox=sandbox)


def reports(log: Path, name: str) -> list[dict]:
    """What the attack bot said it got (``ATTACK <name> <json>`` lines of its log)."""
    prefix = f"ATTACK {name} "
    return [json.loads(line[len(prefix):]) for line in log.read_text(errors="replace").splitlines()
            if line.startswith(prefix)]


REPORT_WAIT_S = 300.0
"""A generous bound on an attack's own work (walking a filesystem on a busy machine), never a synchronisation."""


async def attack_report(log: Path, name: str, count: int = 1) -> list[dict]:
    """The attacker's reports once it has written ``count``. An attack may outlast the game (it runs beside it), and
    its line reaches the log through the arena's copy task: so the test waits for the line itself, never for a time."""
    with trio.move_on_after(REPORT_WAIT_S):
        while len(found := reports(log, name) if log.exists() else []) < count:
            await trio.sleep(0.05)
        return found
    raise AssertionError(f"the attacker wrote no {count} {name!r} reports within {REPORT_WAIT_S:g} s")


def attack_of(spec: BotSpec) -> str:
    return spec.command[spec.command.index("--attack") + 1]


async def play_beside_victims(spec: BotSpec, tmp_path: Path, *, seats: int = 3, move_ms: int = 2000,
                              victims_sandboxed: bool = True):
    """Seat 0 is the attacker, the other seats random Python bots tagged for the test; returns the record, the
    attacker's log, and the tag. The victims stay up until the attacker has reported (its attack may outlast the
    game); every process is stopped and checked gone before returning."""
    tag = f"victim-{uuid.uuid4().hex}"
    processes = [BotProcess(spec, tmp_path, startup_s=20)] + [
        BotProcess(victim(tag, n, victims_sandboxed), tmp_path, startup_s=20) for n in range(1, seats)]
    try:
        bots = [await p.ensure_running() for p in processes]
        record = await play_match(new_game("draw", seats), bots, seed=11, match_id=uuid.uuid4().hex,
                                  time_control=TimeControl(move_ms=move_ms))
        await attack_report(processes[0].log_path, attack_of(spec))
    finally:
        for process in processes:
            await process.stop()
    assert bot_processes(tag) == []
    return record, processes[0].log_path, tag


def faults_of(record, seats: set[int]) -> list[str]:
    return [str(f) for f in record.faults if f.seat in seats]


# --- what a bot can read -----------------------------------------------------------------------------------------


async def run_with_attacker(spec: BotSpec, run: Path, token: Path) -> dict:
    table = {"name": "secrets", "variant": "draw", "players": 2, "games": 1, "duplicate": True, "seed": "s3cr3t-seed",
             "concurrency": 2, "sandbox": spec.sandbox, "bots": [
                 {"name": "random", "command": [sys.executable, RANDOM_BOT]},
                 {"name": "attacker", "command": list(spec.command), "env": spec.env}]}
    tournament = spec_from_dict(table)
    await run_tournament(tournament, "# test\n", run)
    found: dict = {}
    for log in (run / "logs").glob("attacker*.log"):
        for report in reports(log, "secrets"):
            found.update(report["read"])
    return found


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unprotected"])
async def test_a_bot_cannot_read_the_seed_records_logs_or_a_token(sandbox: bool, tmp_path: Path) -> None:
    run = tmp_path / "run"
    token = tmp_path / "server.token"
    token.write_text("token-that-no-bot-may-read\n")
    token.chmod(0o600)
    paths = os.pathsep.join(str(p) for p in (run, run / "seed.secret", run / "games.jsonl", run / "logs", token))
    found = await run_with_attacker(attacker("secrets", sandbox=sandbox, ATTACK_PATHS=paths), run, token)
    leaked = {path: text[:80] for path, text in found.items()
              if "s3cr3t-seed" in text or "token-that-no-bot" in text or path.startswith(str(tmp_path))}
    if sandbox:
        assert leaked == {}
        assert (run / "seed.json").exists()  # the tournament itself ran to the end
        assert oct(run.stat().st_mode & 0o777) == "0o700"
    else:
        assert str(run / "seed.secret") in leaked and str(token) in leaked  # the attack works without the sandbox


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unprotected"])
async def test_a_bot_sees_only_its_folder_and_the_protocol(sandbox: bool, tmp_path: Path) -> None:
    """The attacker walks the checkout it comes from (it knows where: two folders above its file), with a run folder
    in the project's runs/: it sees the arena's environment and protocol files (by design) and its own folder
    (tests/bots), and nothing else: no other bot's folder under bots/, no test, no run."""
    runs = ROOT / "runs"
    made_runs = not runs.exists()
    run = runs / f"test-security-{uuid.uuid4().hex}"
    run.mkdir(parents=True)
    (run / "seed.secret").write_text("s3cr3t-seed\n")
    try:
        record, log = await one_match(attacker("project", sandbox=sandbox), tmp_path)
    finally:
        shutil.rmtree(run)
        if made_runs:
            runs.rmdir()
    (report,) = reports(log, "project")
    assert report["root"] == str(ROOT)
    seen = set(report["seen"])
    if sandbox:
        assert {path.split("/")[0] for path in seen} == {".venv", "arena", "proto", "tests"}
        assert {path for path in seen if path.startswith("tests/")} == {
            path for path in seen if path == "tests/bots" or path.startswith("tests/bots/")} != set()
        assert record.faults == []
    else:  # the same walk without the sandbox finds all of it
        assert {f"runs/{run.name}/seed.secret", "bots/python/random_bot.py", "tests/sandbox/test_security.py"} <= seen


# --- other processes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unprotected"])
async def test_a_bot_sees_no_other_process_and_kills_none(sandbox: bool, tmp_path: Path) -> None:
    record, log, tag = await play_beside_victims(attacker("procs", sandbox=sandbox, ATTACK_VICTIM="victim-"),
                                                 tmp_path, victims_sandboxed=sandbox)
    (report,) = reports(log, "procs")
    if sandbox:
        foreign = {pid: cmd for pid, cmd in report["seen"].items() if not cmd.startswith(host().bwrap or "?")}
        assert foreign == {}  # only its own processes, and bubblewrap's init (root's, out of its reach)
        assert report["environ_read"] == [] and report["signalable"] == [] and report["killed"] == []
        assert faults_of(record, {1, 2}) == [] and record.faults == []
    else:
        assert len(report["killed"]) == 2  # it can kill the other bots when nothing stops it ...
        assert {f.seat for f in record.faults} & {1, 2}  # ... and they forfeit


async def test_a_bot_cannot_read_the_arenas_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET", "do-not-leak")
    record, log, _ = await play_beside_victims(attacker("env", OWN_SETTING="1"), tmp_path, seats=2)
    (report,) = reports(log, "env")
    assert set(report["env"]) <= ALLOWED_ENV | {"OWN_SETTING"} and "OWN_SETTING" in report["env"]
    assert record.faults == []


def test_a_bot_inherits_only_its_standard_streams(tmp_path: Path) -> None:
    """Checked before the bot's own runtime opens anything: a fresh interpreter lists its descriptors at once."""
    from arena.sandbox import contain

    readable, writable = os.pipe()  # a descriptor the arena holds open while it starts the bot
    try:
        containment = contain([sys.executable, "-c", "import os; print(sorted(map(int, os.listdir('/proc/self/fd'))))"],
                              listen_env="DOMINOES_BOT_LISTEN")
        import subprocess

        out = subprocess.run(containment.argv, env=containment.env, cwd=containment.cwd, capture_output=True,
                             text=True, timeout=30, pass_fds=containment.pass_fds)  # bubblewrap's --info-fd
        containment.close()
    finally:
        os.close(readable)
        os.close(writable)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [0, 1, 2, 3]  # 3 is the listing's own


# --- the network and the other bots' sockets ---------------------------------------------------------------------


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unprotected"])
async def test_a_bot_reaches_no_port_and_no_other_bots_socket(sandbox: bool, tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        record, log, _ = await play_beside_victims(
            attacker("network", sandbox=sandbox, ATTACK_PORT=str(port)), tmp_path, victims_sandboxed=sandbox)
        (report,) = reports(log, "network")
        if sandbox:
            assert report["connected"] == []
            with pytest.raises(BlockingIOError):
                listener.accept()
            assert record.faults == []
        else:
            assert f"127.0.0.1:{port}" in report["connected"]
            assert any(c.endswith("bot.sock") for c in report["connected"])  # the other bots' sockets


async def test_a_bot_cannot_redirect_the_arena_to_another_bot(tmp_path: Path) -> None:
    """A sandbox's socket is reached through its first process (/proc/<pid>/root/run/arena/bot.sock), a path easy
    to guess. The attacker is told the victim's (a bot that knows the layout) and puts a symlink to it where the
    arena looks for its own socket: the arena opens the socket itself, never a symlink, and refuses to start it."""
    from arena.players.faults import BotFailure

    tag = f"victim-{uuid.uuid4().hex}"
    target = BotProcess(victim(tag, 1), tmp_path, startup_s=20)
    try:
        await target.ensure_running()
        assert target._containment is not None and target._containment.sandbox_pid is not None
        victim_socket = f"/proc/{target._containment.sandbox_pid}/root/run/arena/bot.sock"
        assert stat.S_ISSOCK(os.stat(victim_socket).st_mode)
        process = BotProcess(attacker("redirect", ATTACK_TARGET=victim_socket), tmp_path, startup_s=20)
        try:
            with pytest.raises(BotFailure) as refused:
                await process.ensure_running()
        finally:
            await process.stop()
    finally:
        await target.stop()
    assert refused.value.kind is FaultKind.START_FAILED
    assert "the bot's /run/arena/bot.sock is not a socket (a symlink is refused)" in str(refused.value)
    assert process.hello is None


# --- leaving something behind ------------------------------------------------------------------------------------


async def test_a_stubborn_setsid_grandchild_dies_with_the_bot(tmp_path: Path) -> None:
    tag = f"grandchild-{uuid.uuid4().hex}"
    process = BotProcess(attacker("setsid", ATTACK_TAG=tag), tmp_path, startup_s=20)
    try:
        bot = await process.ensure_running()
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=3,
                                  match_id="setsid", time_control=TimeControl(move_ms=2000))
        assert len(await attack_report(process.log_path, "setsid")) == 1
        assert len(bot_processes(tag)) == 1  # the grandchild is alive while the bot is
    finally:
        await process.stop()
    assert record.faults == []
    wait_for(lambda: bot_processes(tag) == [], 10, "the grandchild to be gone")


@needs_cgroups
async def test_unsandboxed_a_setsid_grandchild_ends_too(tmp_path: Path) -> None:
    """With ``sandbox = false`` there is no PID namespace to take the grandchild down, and it left the bot's process
    group (setsid) and ignores SIGTERM: the bot's cgroup is what ends it."""
    tag = f"grandchild-{uuid.uuid4().hex}"
    process = BotProcess(attacker("setsid", sandbox=False, ATTACK_TAG=tag), tmp_path, startup_s=20)
    try:
        bot = await process.ensure_running()
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=3,
                                  match_id="setsid-unsandboxed", time_control=TimeControl(move_ms=2000))
        (report,) = await attack_report(process.log_path, "setsid")
        assert bot_processes(tag) == [report["grandchild"]]  # alive, in a session of its own, while the bot is
        assert os.getsid(report["grandchild"]) == report["grandchild"]
    finally:
        await process.stop()
    assert record.faults == []
    wait_for(lambda: bot_processes(tag) == [], 10, "the grandchild to be gone")


KILLED_ARENA = """
import os, sys, trio
from arena.players.process import BotProcess, BotSpec
from arena.sandbox import host

# No cgroup: the next arena to start would empty a dead arena's groups, which is a second line, not this one.
host().cgroups, host().cgroup_problem = None, "a test of --pdeathsig alone"

async def main():  # the tag comes in the environment: it names the bot's command line, not this one's
    process = BotProcess(BotSpec("victim", command=(sys.executable, sys.argv[1], "--tag", os.environ["ORPHAN_TAG"]),
                                 sandbox=False), startup_s=60)
    await process.ensure_running()
    print("ready", flush=True)
    await trio.sleep_forever()

trio.run(main)
"""


def test_unsandboxed_bots_die_with_a_sigkilled_arena(tmp_path: Path) -> None:
    """No exit handler runs in an arena killed with SIGKILL: the kernel ends its bots (``--pdeathsig KILL``)."""
    import signal
    import subprocess

    tag = f"orphan-{uuid.uuid4().hex}"
    arena = subprocess.Popen([sys.executable, "-c", KILLED_ARENA, RANDOM_BOT], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "ORPHAN_TAG": tag})
    try:
        assert arena.stdout is not None and arena.stdout.readline() == "ready\n"
        assert len(bot_processes(tag)) == 1
    finally:
        arena.send_signal(signal.SIGKILL)
        arena.wait()
    wait_for(lambda: bot_processes(tag) == [], 10, "the bot of the killed arena to be gone")


# --- limits ------------------------------------------------------------------------------------------------------


async def one_match(spec: BotSpec, tmp_path: Path, move_ms: int = 5000):
    process = BotProcess(spec, tmp_path, startup_s=20)
    try:
        bot = await process.ensure_running()
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=4,
                                  match_id=uuid.uuid4().hex, time_control=TimeControl(move_ms=move_ms))
        cgroup = process._containment.cgroup if process._containment else None  # type: ignore[union-attr]
    finally:
        await process.stop()
    if cgroup is not None:
        assert not any(d.exists() for d in cgroup.dirs.values())  # the bot's group is gone with it
    return record, process.log_path


@needs_cgroups
async def test_exceeding_memory_is_a_limit_fault(tmp_path: Path) -> None:
    record, log = await one_match(attacker("memory", limits=Limits(memory_mb=128)), tmp_path, move_ms=20_000)
    assert [(f.kind, f.seat) for f in record.faults] == [(FaultKind.RESOURCE_LIMIT, 0)]
    assert "went over its memory 128 MiB limit" in record.faults[0].message
    progress = reports(log, "memory_progress")
    assert progress and progress[-1]["mib"] <= 128


@needs_cgroups
async def test_exceeding_processes_is_a_limit_fault(tmp_path: Path) -> None:
    record, log = await one_match(attacker("pids", limits=Limits(pids=48)), tmp_path)
    assert [(f.kind, f.seat) for f in record.faults] == [(FaultKind.RESOURCE_LIMIT, 0)]
    assert "went over its processes 48 limit" in record.faults[0].message
    (report,) = reports(log, "pids")
    assert report["started"] < 48 and report["error"]


async def test_an_overlong_log_is_cut_and_play_goes_on(tmp_path: Path) -> None:
    record, log = await one_match(attacker("log", limits=Limits(log_mb=1), ATTACK_LOG_MB="20"), tmp_path)
    assert record.faults == []
    assert log.stat().st_size < 1024 * 1024 + 4096
    text = log.read_text(errors="replace")
    assert "the log is cut here: the bot wrote more than its log limit of 1 MiB" in text
    assert "bytes of output dropped" in text


async def test_a_bot_writes_only_to_its_own_small_tmp(tmp_path: Path) -> None:
    record, log = await one_match(attacker("tmp", limits=Limits(tmp_mb=8)), tmp_path)
    assert record.faults == []
    (report,) = reports(log, "tmp")
    assert 0 < report["written"] <= 8 * 1024 * 1024
    assert report["writable"] == []
    assert not (ROOT / "tests" / "bots" / "attack-was-here").exists()


def disk_use(folder: Path) -> int:
    """Bytes the filesystem holds for everything under ``folder`` (blocks, not apparent sizes)."""
    return sum(entry.stat(follow_symlinks=False).st_blocks * 512 for entry in folder.rglob("*")) + \
        folder.stat().st_blocks * 512


async def test_no_write_of_a_bot_grows_the_hosts_disk(tmp_path: Path) -> None:
    """Every place a bot can write is a capped tmpfs of its sandbox: its /tmp (tmp_mb) and its socket folder (a few
    KiB). The attacker tries to write 200 MiB into its socket folder, its /tmp and every folder of its filesystem
    in which it can create a file; its folder on the host (where its socket folder used to be, and wrote 2,000 MB
    once) keeps the few bytes the arena put there."""
    from arena.sandbox.contain import LISTEN_DIR_INSIDE, SOCKET_DIR_BYTES

    process = BotProcess(attacker("disk", limits=Limits(tmp_mb=8), ATTACK_DISK_MB="200"), tmp_path, startup_s=20)
    try:
        bot = await process.ensure_running()
        assert process._containment is not None
        private = process._containment.private_dir
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=4,
                                  match_id="disk", time_control=TimeControl(move_ms=5000))
        (report,) = await attack_report(process.log_path, "disk")  # it has written all it could
        on_host = disk_use(private)
    finally:
        await process.stop()
    assert sorted(report["writable"]) == [LISTEN_DIR_INSIDE, "/tmp"]
    assert sorted(report["written"]) == [LISTEN_DIR_INSIDE, "/tmp"]
    assert report["written"][LISTEN_DIR_INSIDE] <= SOCKET_DIR_BYTES
    assert 0 < report["written"]["/tmp"] <= 8 * 1024 * 1024
    assert on_host < 64 * 1024, f"the bot's folder on the host holds {on_host} bytes"
    assert record.faults == []


async def test_only_tmp_and_the_socket_folder_are_writable(tmp_path: Path) -> None:
    """What the bot's kernel says of its mounts, so it holds for an arena that is not root too (where the bot's user
    owns what bubblewrap made, and file modes would not stop it): every mount is read-only but its /tmp and its
    socket folder, each a tmpfs of its stated size. Left writable, as they store nothing: the device files in /dev
    (/dev/null) and /dev/pts."""
    from arena.sandbox.contain import LISTEN_DIR_INSIDE

    devices = {f"/dev/{name}" for name in ("null", "zero", "full", "random", "urandom", "tty")}
    record, log = await one_match(attacker("mounts", limits=Limits(tmp_mb=8)), tmp_path)
    (report,) = reports(log, "mounts")
    mounts = {m["point"]: m for m in report["mounts"]}
    writable = {point for point, m in mounts.items() if "rw" in m["options"]}
    stores_nothing = {point for point in writable
                      if (point in devices and mounts[point]["fstype"] == "devtmpfs")
                      or (point == "/dev/pts" and mounts[point]["fstype"] == "devpts")}
    assert writable - stores_nothing == {"/tmp", LISTEN_DIR_INSIDE}
    assert {"/", "/usr", "/proc", "/dev", str(ROOT / "tests" / "bots")} <= set(mounts)  # ro, as they are not above
    assert mounts["/tmp"]["fstype"] == mounts[LISTEN_DIR_INSIDE]["fstype"] == "tmpfs"
    assert "size=8192k" in mounts["/tmp"]["super"] and "size=64k" in mounts[LISTEN_DIR_INSIDE]["super"]
    assert record.faults == []


HOG_CPUS = 0.5
"""The CPU limit of the hog below: half a core, well under what its spinners take of an idle two-core machine (two
cores) or of a busy one (about one)."""
HOG_WINDOW_S = 3.0
"""How long the hog's CPU time is measured (a measurement's span, not a synchronisation)."""


def sandbox_cpu_s(sandbox_pid: int) -> float:
    """The CPU time used so far by the processes of a sandbox (its first process and every descendant), read from
    ``/proc`` (the kernel's own accounting, not the cgroup under test)."""
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
            ticks[int(entry.name)] = int(fields[11]) + int(fields[12])  # utime + stime
    total, todo = 0, [sandbox_pid]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


@needs_cgroups
async def test_a_cpu_hog_is_capped_and_neighbours_play_in_time(tmp_path: Path) -> None:
    """A bot that spins 8 processes, started beside a game of two others, never in it (its own decisions would time
    out in its own crowd, and end the game): over the game and at least a window of seconds it gets no more CPU than
    its limit (the kernel's count, summed over its sandbox), and the two others keep their time."""
    hog = BotProcess(attacker("cpu", limits=Limits(cpus=HOG_CPUS), ATTACK_SPINNERS="8", ATTACK_AT_START="1"),
                     tmp_path, startup_s=20)
    tag = f"victim-{uuid.uuid4().hex}"
    victims = [BotProcess(victim(tag, n), tmp_path, startup_s=20) for n in (1, 2)]
    try:
        await hog.ensure_running()
        assert await attack_report(hog.log_path, "cpu") == [{"spinners": 8}]
        sandbox_pid = hog._containment.sandbox_pid
        bots = [await process.ensure_running() for process in victims]
        used, started = sandbox_cpu_s(sandbox_pid), trio.current_time()
        record = await play_match(new_game("draw", 2), bots, seed=11, match_id=uuid.uuid4().hex,
                                  time_control=TimeControl(move_ms=3000))
        await trio.sleep_until(started + HOG_WINDOW_S)
        share = (sandbox_cpu_s(sandbox_pid) - used) / (trio.current_time() - started)
    finally:
        for process in (hog, *victims):
            await process.stop()
    assert share <= HOG_CPUS * 1.15 + 0.02, f"the hog took {share:.2f} CPU, over its limit of {HOG_CPUS}"
    assert record.faults == [] and record.result is not None and record.result.rounds >= 1
    assert bot_processes(tag) == []


# --- duplicate deals and a bot's memory --------------------------------------------------------------------------


async def test_no_bot_process_sees_a_duplicate_deal_twice(tmp_path: Path) -> None:
    """Each bot process reports the matches it plays; through the records, no process played two games of one
    duplicate deal set (it would know the other seats' hands from the first)."""
    table = {"name": "memory", "variant": "block", "players": 2, "games": 3, "duplicate": True, "seed": "memo",
             "concurrency": 2, "options": {"target": 50},
             "bots": [{"name": name, "command": [sys.executable, ATTACK_BOT, "--attack", "deals"]}
                      for name in ("a", "b")]}
    run = tmp_path / "run"
    summary = await run_tournament(spec_from_dict(table), "# test\n", run)
    assert summary.played_now == 6
    deal_of = {json.loads(line)["matchId"]: json.loads(line)["dealKey"] for line in (run / "games.jsonl").open()}
    logs = sorted((run / "logs").glob("*.log"))
    assert [log.name for log in logs] == ["a.0.log", "a.1.log", "b.0.log", "b.1.log"]  # a process per rotation
    for log in logs:
        deal_sets = [deal_of[r["match"]] for r in reports(log, "deals")]
        assert len(deal_sets) == 3 and len(set(deal_sets)) == 3, f"{log.name} played {deal_sets}"


# --- files both sandboxes of one bot see ---------------------------------------------------------------------------

LOCK_CHANNELS = ["flock", "posix", "ofd", "posix-wide"]
"""The sender holds a lock, the receiver started after it asks: ``posix-wide`` sets high bits in fcntl's command."""
WATCH_CHANNELS = ["lease", "inotify", "fanotify", "dnotify"]
"""The receiver watches, the sender started after it opens the file."""
CONTAIN = importlib.import_module("arena.sandbox.contain")
"""The module (the package's ``contain`` is its function): its SYSCALL_FILTER is what the unfiltered runs remove."""


def channel_folder(tmp_path: Path) -> Path:
    """A bot folder of its own: the attack bot and the file its two processes share, which nothing else opens (so
    a watch on it hears the other process, not the test suite)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    for name in ("attack_bot.py", "testbot.py"):
        shutil.copy(ROOT / "tests" / "bots" / name, folder / name)
    (folder / "hand.txt").write_text("6|6 6|5 5|5\n")
    for path in (*folder.iterdir(), folder):
        path.chmod(0o755 if path.is_dir() else 0o644)  # readable by the user of its own each bot gets as root
    return folder


def channel_bot(folder: Path, channel: str, role: str, number: int, tag: str) -> BotSpec:
    """One process of the bot ``channel``, as a tournament names the processes of one entrant."""
    return BotSpec(name=f"channel.{number}", command=(sys.executable, str(folder / "attack_bot.py"), "--attack",
                                                       "channel", "--tag", tag),
                   env={"ATTACK_AT_START": "1", "ATTACK_CHANNEL": channel, "ATTACK_ROLE": role,
                        "ATTACK_FILE": str(folder / "hand.txt")})


async def pass_a_bit(folder: Path, channel: str, logs: Path) -> tuple[dict[str, list[dict]], dict[str, BotProcess]]:
    """Start the bot's two processes in the channel's order, each once the other has reported, and return what
    each reported (a receiver that got its watch reports again once it hears the sender, or gives up) and the
    processes, stopped."""
    tag = f"channel-{uuid.uuid4().hex}"
    order = ("send", "receive") if channel in LOCK_CHANNELS else ("receive", "send")
    processes = {role: BotProcess(channel_bot(folder, channel, role, n, tag), logs, startup_s=20)
                 for n, role in enumerate(order)}
    said: dict[str, list[dict]] = {}
    try:
        for role in order:
            await processes[role].ensure_running()
            said[role] = await attack_report(processes[role].log_path, "channel")
        if said["receive"] == [{"watching": True}]:
            said["receive"] = await attack_report(processes["receive"].log_path, "channel", count=2)
    finally:
        for process in processes.values():
            await process.stop()
    assert bot_processes(tag) == []
    return said, processes


@pytest.mark.parametrize("filtered", [True, False], ids=["filtered", "unfiltered"])
@pytest.mark.parametrize("channel", LOCK_CHANNELS + WATCH_CHANNELS)
async def test_two_sandboxes_share_no_bit_through_a_file(
        channel: str, filtered: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes playing two rotations of one duplicate deal would tell each other their hands a bit at a time
    through a lock or a watch on a file of their own read-only folder. Under the seccomp filter every such call
    fails with EPERM and the bit does not pass; without it (``unfiltered``), the bit passes, which shows the test
    can fail. Each sandboxed bot's log starts with the line naming the refused calls."""
    if not filtered:
        if channel == "lease" and host().root:
            pytest.skip("as root each bot runs as a user of its own, which owns no shared file: no lease without "
                        "the filter either (the filtered run asserts EPERM, the filter's own errno)")
        monkeypatch.setattr(CONTAIN, "SYSCALL_FILTER", None)
    said, processes = await pass_a_bit(channel_folder(tmp_path), channel, tmp_path / "logs")
    if channel in LOCK_CHANNELS:
        expected = ({"send": [{"sent": False, "errno": "EPERM"}], "receive": [{"received": None, "errno": "EPERM"}]}
                    if filtered else {"send": [{"sent": True}], "receive": [{"received": True}]})
    else:
        expected = ({"receive": [{"watching": False, "errno": "EPERM"}], "send": [{"sent": True}]}
                    if filtered else {"receive": [{"watching": True}, {"received": True}], "send": [{"sent": True}]})
    assert said == expected
    for process in processes.values():
        head = process.log_path.read_text().splitlines()[:2]
        assert (head[1] == refusal_line()) is filtered, head
        report = process.containment_report
        assert report is not None and report["sandbox"].endswith(f" with {FILTER_NAME}") is filtered, report


# --- bots in other languages, sandboxed ----------------------------------------------------------------------------

GO_BOT = ROOT / "bots" / "go" / "bin" / "bot"


@pytest.mark.skipif(not GO_BOT.exists(), reason="the Go kit is not built (bash bots/build.sh go)")
@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed on this machine")
async def test_go_and_node_bots_play_sandboxed(tmp_path: Path) -> None:
    specs = [BotSpec("go", command=(str(GO_BOT), "--policy", "heaviest")),
             BotSpec("node", command=("node", str(ROOT / "bots" / "node" / "bot.js")))]
    processes = [BotProcess(spec, tmp_path, startup_s=20) for spec in specs]
    try:
        bots = [await p.ensure_running() for p in processes]
        reports_ = [p.containment_report for p in processes]
        record = await play_match(new_game("mexican_train", 2), bots, seed=8, match_id="kits",
                                  time_control=TimeControl(move_ms=5000))
    finally:
        for process in processes:
            await process.stop()
    assert record.faults == [] and record.result is not None
    assert all(r is not None and r["sandbox"].startswith("bubblewrap") for r in reports_)
    if host().root:
        assert all(isinstance(r["user"], int) and r["user"] >= 1_000_000 for r in reports_)


# --- where the sandbox cannot be made ------------------------------------------------------------------------------


def arena_cli(*args: str, path: str, **env: str) -> "subprocess.CompletedProcess[str]":
    import subprocess

    return subprocess.run([sys.executable, "-m", "arena", *args], env={"PATH": path, "HOME": "/tmp", **env},
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_no_bubblewrap_refuses_bots_naming_the_opt_out(tmp_path: Path) -> None:
    bot = f"{sys.executable} {RANDOM_BOT}"
    refused = arena_cli("play", bot, "builtin:random", path=str(tmp_path))  # a PATH without bwrap
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "error: cannot sandbox the bots: bubblewrap (bwrap) is not installed: install the Debian or Ubuntu package "
        "bubblewrap (apt-get install bubblewrap; bash scripts/setup.sh does it when run as root); or run the bots "
        "without a sandbox: sandbox = false in the tournament file, --no-sandbox on play, check-bot and replay "
        "--against"]
    allowed = arena_cli("play", "--no-sandbox", bot, "builtin:random", path=str(tmp_path))
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stderr.startswith("warning: bots run without a sandbox (--no-sandbox): each can read and do "
                                     "whatever the arena's user can")
    assert "result: " in allowed.stdout


def test_no_libseccomp_refuses_bots_naming_the_opt_out(tmp_path: Path) -> None:
    """A sandbox without its seccomp filter is refused as one without bubblewrap is. pyseccomp raises this very
    RuntimeError at import on a machine without libseccomp; a module of that name that does only that stands in."""
    (tmp_path / "pyseccomp.py").write_text('raise RuntimeError("Unable to find libseccomp")\n')
    bot = f"{sys.executable} {RANDOM_BOT}"
    refused = arena_cli("play", bot, "builtin:random", path=os.environ["PATH"], PYTHONPATH=str(tmp_path))
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "error: cannot sandbox the bots: the seccomp filter cannot be built (Unable to find libseccomp): install "
        "libseccomp2 (apt-get install libseccomp2) and pyseccomp (bash scripts/setup.sh); or run the bots without a "
        "sandbox: sandbox = false in the tournament file, --no-sandbox on play, check-bot and replay --against"]
    allowed = arena_cli("play", "--no-sandbox", bot, "builtin:random", path=os.environ["PATH"],
                        PYTHONPATH=str(tmp_path))
    assert allowed.returncode == 0, allowed.stderr
    assert "result: " in allowed.stdout


def test_without_bubblewrap_a_server_refuses_to_start(tmp_path: Path) -> None:
    refused = arena_cli("serve", "--data", str(tmp_path / "data"), "--bots", str(ROOT / "bots" / "registry.toml"),
                        "--listen", "127.0.0.1:0", path=str(tmp_path))
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[-1] == (
        "error: cannot sandbox the bots: bubblewrap (bwrap) is not installed: install the Debian or Ubuntu package "
        "bubblewrap (apt-get install bubblewrap; bash scripts/setup.sh does it when run as root); an arena server "
        "runs bots only in their sandbox")


async def test_without_a_cgroup_rlimits_hold_memory_and_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback: the same memory attack against a data-segment rlimit. The bot's allocation fails inside it (a
    crash of its own, not a kill the arena can name), and bots.json / check-bot say the limits are rlimits."""
    monkeypatch.setattr(host(), "cgroups", None)
    monkeypatch.setattr(host(), "cgroup_problem", "no cgroup in this test")
    process = BotProcess(attacker("memory", limits=Limits(memory_mb=512)), tmp_path, startup_s=20)
    try:
        bot = await process.ensure_running()
        report = process.containment_report
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(1))], seed=4,
                                  match_id="rlimit", time_control=TimeControl(move_ms=20_000))
    finally:
        await process.stop()
    assert report is not None and report["limits_by"] == "rlimits (no cgroup in this test)"
    assert [(f.kind, f.seat) for f in record.faults] == [(FaultKind.BOT_ERROR, 0)]  # its MemoryError, as gRPC says
    assert "MemoryError" in record.faults[0].message or "UNKNOWN" in record.faults[0].message
    progress = reports(process.log_path, "memory_progress")
    assert progress and progress[-1]["mib"] < 512
