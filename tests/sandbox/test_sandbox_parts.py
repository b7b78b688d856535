"""The sandbox's parts on their own: limits from tables, the bot's folder, the cgroup files written for v1 and v2
(on a fake hierarchy, since a machine has one or the other), and what a limit's fault is read from."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import (Limits, LimitsError, SandboxError, bot_folder_of, contain, exceeds, host,
                           limits_from_table)
from arena.sandbox.cgroups import BotCgroup, CgroupParent, kill_members
from arena.tournament.spec import SpecError, spec_from_dict
from support.paths import ROOT



@pytest.mark.fast
def test_limits_are_read_checked_and_layered() -> None:
    base = limits_from_table({"memory_mb": 512, "cpus": 0.5})
    assert base == Limits(memory_mb=512, cpus=0.5)
    assert limits_from_table({"pids": 32}, base) == Limits(memory_mb=512, pids=32, cpus=0.5)
    with pytest.raises(LimitsError, match=r"key 'limits.memory_mb' must be an integer from 16 to 65536, got 'x'"):
        limits_from_table({"memory_mb": "x"})
    with pytest.raises(LimitsError, match="unknown key 'disk_mb' in \\[limits\\]; valid keys: memory_mb, pids"):
        limits_from_table({"disk_mb": 5})
    assert exceeds(Limits(memory_mb=4096), Limits()) == "memory_mb 4096 > 1024"
    assert exceeds(Limits(pids=8), Limits()) is None


@pytest.mark.fast
def test_a_tournament_file_sets_limits_for_all_and_one_bot() -> None:
    spec = spec_from_dict({"variant": "draw", "limits": {"memory_mb": 256}, "bots": [
        {"name": "a", "command": "python a.py", "limits": {"pids": 16}},
        {"name": "b", "command": "python b.py", "folder": "bots/b"}]})
    assert spec.sandbox is True and spec.limits == Limits(memory_mb=256)
    assert spec.bots[0].limits == Limits(memory_mb=256, pids=16) and spec.bots[1].limits == Limits(memory_mb=256)
    assert spec.bots[1].folder == "bots/b"
    assert spec_from_dict({"variant": "draw", "sandbox": False, "bots": [
        {"name": "a", "command": "x"}, {"name": "b", "command": "y"}]}).bots[0].sandbox is False
    with pytest.raises(SpecError, match="key 'bots\\[1\\].limits.cpus' must be a number from 0.05 to 64"):
        spec_from_dict({"variant": "draw", "bots": [{"name": "a", "command": "x", "limits": {"cpus": 0}},
                                                    {"name": "b", "command": "y"}]})


ABOVE_THE_MAXIMA = [("memory_mb", 1073741824, 65536), ("pids", 1_000_000, 4096), ("log_mb", 1 << 20, 1024),
                    ("tmp_mb", 1 << 20, 4096), ("cpus", 1e6, 64)]


@pytest.mark.parametrize("key,value,maximum", ABOVE_THE_MAXIMA, ids=[row[0] for row in ABOVE_THE_MAXIMA])
def test_a_limit_over_its_maximum_is_refused(key: str, value: float, maximum: float, tmp_path: Path) -> None:
    """A limit has a maximum (limits.BOUNDS), so a typo cannot turn it into no limit: refused with one line naming the
    key, the value and the maximum, wherever it is set, and the maximum itself is allowed."""
    from arena.sandbox.limits import BOUNDS
    from arena.server.registry import registry_from_dict

    assert BOUNDS[key][1] == maximum
    assert getattr(limits_from_table({key: maximum}), key) == maximum
    bots = [{"name": "a", "command": "x"}, {"name": "b", "command": "y"}]
    with pytest.raises(SpecError, match=f"^key 'limits.{key}' is {value!r}, above its maximum of {maximum:g}$"):
        spec_from_dict({"variant": "draw", "limits": {key: value}, "bots": bots})
    with pytest.raises(SpecError, match=fr"^key 'bots\[1\].limits.{key}' is {value!r}, above its maximum of {maximum:g}$"):
        spec_from_dict({"variant": "draw", "bots": [{**bots[0], "limits": {key: value}}, bots[1]]})
    with pytest.raises(Exception, match=f"key 'limits.{key}' is {value!r}, above its maximum of {maximum:g}"):
        registry_from_dict({"limits": {key: value}, "bots": bots})
    flag = "--" + key.replace("_", "-")
    refused = subprocess.run([sys.executable, "-m", "arena", "check-bot", flag, str(value), "--",
                              sys.executable, str(ROOT / "bots/python/random_bot.py")], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
    assert (refused.returncode, refused.stderr) == (
        2, f"error: key '{flag}' is {value!r}, above its maximum of {maximum:g}\n")


@pytest.mark.fast
def test_the_bots_folder_is_its_program_files_folder() -> None:
    assert bot_folder_of([sys.executable, "bots/python/random_bot.py"], ROOT, None) == ROOT / "bots/python"
    assert bot_folder_of(["node", "--no-warnings", "bots/node/bot.js"], ROOT, None) == ROOT / "bots/node"
    assert bot_folder_of(["sh", "-c", "true"], ROOT, None) is None
    assert bot_folder_of(["anything"], ROOT, "bots/go") == ROOT / "bots/go"


@pytest.mark.fast
def test_a_bot_whose_folder_holds_a_secret_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "demo"
    run.mkdir(parents=True)
    (tmp_path / "bot.py").write_text("pass\n")
    with pytest.raises(SandboxError, match=f"the bot's folder {tmp_path} holds {run}, which no bot may see"):
        contain([sys.executable, "bot.py"], listen_env="X", cwd=str(tmp_path), protected=[run])


@pytest.mark.fast
def test_a_missing_program_is_named() -> None:
    with pytest.raises(SandboxError, match="cannot run 'no-such-bot-program': it is not on the PATH"):
        contain(["no-such-bot-program"], listen_env="X")


def fake_v2(tmp_path: Path) -> Path:
    parent = tmp_path / "arena-bots-1"
    parent.mkdir()
    return parent


@pytest.mark.fast
def test_cgroup_v2_files_and_limit_events(tmp_path: Path) -> None:
    parent = fake_v2(tmp_path)
    child = parent / "bot-0"
    child.mkdir()
    for name in ("memory.swap.max", "memory.oom.group", "cpu.max", "cpu.weight", "memory.events", "pids.events"):
        (child / name).write_text("")
    group = CgroupParent(2, {"memory": parent, "pids": parent}).new_group(Limits(memory_mb=64, pids=10, cpus=0.5))
    assert (child / "memory.max").read_text() == str(64 * 1024 * 1024)
    assert (child / "memory.swap.max").read_text() == "0" and (child / "memory.oom.group").read_text() == "1"
    assert (child / "pids.max").read_text() == "10"
    assert (child / "cpu.max").read_text() == "50000 100000" and (child / "cpu.weight").read_text() == "100"
    assert group.procs_files == [str(child / "cgroup.procs")]
    assert group.over_limit() is None
    (child / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert group.over_limit() == "memory 64 MiB"
    (child / "memory.events").write_text("oom_kill 0\n")
    (child / "pids.events").write_text("max 3\n")
    assert group.over_limit() == "processes 10"


@pytest.mark.fast
def test_cgroup_v1_files_and_limit_events(tmp_path: Path) -> None:
    parents = {c: tmp_path / c / "arena-bots-1" for c in ("memory", "pids", "cpu")}
    for controller, parent in parents.items():
        (parent / "bot-0").mkdir(parents=True)
    (parents["memory"] / "bot-0" / "memory.memsw.limit_in_bytes").write_text("")
    group = CgroupParent(1, parents).new_group(Limits(memory_mb=32, pids=7, cpus=2))
    memory, pids, cpu = (parents[c] / "bot-0" for c in ("memory", "pids", "cpu"))
    assert (memory / "memory.limit_in_bytes").read_text() == (memory / "memory.memsw.limit_in_bytes").read_text() \
        == str(32 * 1024 * 1024)
    assert (pids / "pids.max").read_text() == "7"
    assert (cpu / "cpu.cfs_quota_us").read_text() == "200000" and (cpu / "cpu.shares").read_text() == "1024"
    assert len(group.procs_files) == 3
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert group.over_limit() == "memory 32 MiB"
    assert isinstance(group, BotCgroup)


@pytest.mark.fast
def test_leftovers_removed_meanwhile_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arena processes killed with SIGKILL (a Ray actor, every time one is killed) leave their work folder and their
    cgroup; the next arena process removes them. Several start at once (a Ray cluster's actors on one machine), and
    a folder or a group one of them lists may be gone by the time it looks inside: skipped, never an error (it once
    failed a tournament's start on a node with a FileNotFoundError)."""
    import tempfile
    import threading

    from arena.sandbox import cgroups
    from arena.sandbox import host as _  # noqa: F401 - the module, below (the package's ``host`` is the function)

    host_module = sys.modules["arena.sandbox.host"]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = 4_000_000  # above any pid_max: no such process
    gone = tmp_path / f"arena-bots-{dead}-gone"
    gone.symlink_to(tmp_path / "removed-meanwhile")  # listed, then not there when looked at
    host_module._remove_stale_work_folders()  # no FileNotFoundError
    gone.unlink()

    # The race itself, many times: threads cleaning the same leftovers at once.
    groups = tmp_path / "cgroup"
    for round_ in range(20):
        for number in range(20):
            (tmp_path / f"arena-bots-{dead + number}-{round_}" / "bot-0" / "listen").mkdir(parents=True)
            for child in ("bot-0", "bot-1"):
                (groups / f"arena-bots-{dead + number}" / child).mkdir(parents=True, exist_ok=True)
        start, errors = threading.Barrier(4), []

        def clean() -> None:
            start.wait()
            try:
                host_module._remove_stale_work_folders()
                cgroups._remove_stale(groups)
            except Exception as error:  # noqa: BLE001 - collected for the assertion
                errors.append(error)

        threads = [threading.Thread(target=clean) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert not list(tmp_path.glob("arena-bots-*-*")) and not list(groups.iterdir())


def test_a_pid_that_left_the_group_is_never_killed() -> None:
    """A bot's group is emptied by SIGKILL to each number read from ``cgroup.procs``; a member that ends between
    the read and the kill frees its number for any process of the machine. Here a decoy holds such a number: it is
    spared while the group no longer lists it, and killed once it does."""
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        kill_members([decoy.pid], lambda: [])  # read as a member's, then the group no longer holds that number
        decoy.terminate()  # a kill is sent before it returns: had the decoy had one, SIGKILL would be how it ended
        assert decoy.wait(timeout=30) == -signal.SIGTERM, "a process outside the group was killed"
    finally:
        decoy.kill()
        decoy.wait()
    member = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        kill_members([member.pid], lambda: [member.pid])
        assert member.wait(timeout=30) == -signal.SIGKILL
    finally:
        member.kill()
        member.wait()


@pytest.mark.fast
def test_a_bot_folder_inside_a_secret_is_refused_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "bots").mkdir(parents=True)
    (run / "bots" / "bot.py").write_text("pass\n")
    with pytest.raises(SandboxError, match=f"the bot's folder {run / 'bots'} lies inside {run}, which no bot may see"):
        contain([sys.executable, "bots/bot.py"], listen_env="X", cwd=str(run), protected=[run])


async def test_a_bot_under_tmp_starts_and_plays(tmp_path: Path) -> None:
    """The bot's private /tmp is mounted first, so a bot folder under the host's /tmp is bound on top of it."""
    import shutil

    from arena.players.process import BotProcess, BotSpec

    shutil.copy(ROOT / "bots" / "python" / "random_bot.py", tmp_path / "my_bot.py")
    process = BotProcess(BotSpec("tmp-bot", command=(sys.executable, str(tmp_path / "my_bot.py"))), tmp_path / "logs")
    if host().root:  # the bot runs as a user of its own, which must be able to read its folder
        from arena.players.faults import BotFailure

        tmp_path.chmod(0o700)
        with pytest.raises(BotFailure, match=f"the bot's folder {tmp_path} is not readable by other users \\(mode "
                                             f"700\\), and the bot runs as a user of its own: chmod o\\+rx"):
            await process.ensure_running()
        tmp_path.chmod(0o755)
    try:
        client = await process.ensure_running()
        assert client.hello is not None and client.hello.name == "py-random"
    finally:
        await process.stop()


@pytest.mark.fast
def test_an_http2_refusal_at_the_handshake_gets_a_hint() -> None:
    from arena.players.remote import http2_hint

    hint = http2_hint("INTERNAL: Received RST_STREAM with error code 1")
    assert hint.startswith("; hint: the bot's HTTP/2 layer refused the arena's request") and "--transport tcp" in hint
    assert http2_hint("UNAVAILABLE: failed to connect to all addresses") == ""


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_a_bot_on_the_tcp_transport_plays(sandbox: bool, tmp_path: Path) -> None:
    """transport = "tcp": the bot is told a loopback port; inside a sandbox a relay carries the arena's socket there
    (arena/sandbox/bridge.py), outside the arena connects to the port."""
    from arena.players import RandomPlayer
    from arena.players.base import LocalPlayer
    from arena.players.process import BotProcess, BotSpec
    from arena.referee import TimeControl, play_match
    from arena.rules import new_game

    spec = BotSpec("tcp-bot", command=(sys.executable, str(ROOT / "bots/python/random_bot.py")), sandbox=sandbox,
                   transport="tcp")
    process = BotProcess(spec, tmp_path, startup_s=20)
    try:
        bot = await process.ensure_running()
        address = bot.address
        record = await play_match(new_game("draw", 2), [bot, LocalPlayer(RandomPlayer(2))], seed=6, match_id="tcp",
                                  time_control=TimeControl(move_ms=5000))
    finally:
        await process.stop()
    assert record.faults == [] and record.result is not None
    assert address.startswith("unix:") if sandbox else address.startswith("127.0.0.1:")
