"""League builds (issue 22, item 5): a version is built by its kit's recipe in the build sandbox, offline, within its
limits; a hostile build step can neither reach the network, read the server's secrets, write outside its build
folder, fork or write without end, nor outlive its build. Real processes, the real sandbox, real bots' handshakes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest
import trio

from arena.league.build import BuildLimits, KitCache, build_version, prepare_kits
from arena.league.manifest import parse_manifest
from arena.players.process import BotProcess, BotSpec
from arena.sandbox import host
from arena.sandbox.build import BuildJob, run_build

from support.league import ATTACK, tree_digest
from support.processes import bot_processes

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(host().bwrap_problem is not None or host().cgroups is None,
                                reason="builds need bubblewrap and cgroups")


def example(kit: str, tmp_path: Path) -> tuple[Path, object]:
    """A copy of bots/<kit>/ as an upload would carry it (without what the project's own build made)."""
    source = tmp_path / "source"
    shutil.copytree(REPO / "bots" / kit, source, ignore=shutil.ignore_patterns("bin", "gen", "node_modules"))
    return source, parse_manifest((source / "bot.toml").read_bytes())


async def handshake(result) -> str:
    """Start the built bot the way the league will (its command in its folder, sandboxed) and return its name."""
    spec = BotSpec("built", command=result.command, cwd=str(result.folder), folder=str(result.folder),
                   protocol=result.protocol)
    process = BotProcess(spec, result.folder.parent / "logs", startup_s=60)
    try:
        client = await process.ensure_running()
        return client.hello.name if client.hello is not None else "?"
    finally:
        await process.stop()


@pytest.fixture(scope="module")
def node_cache(tmp_path_factory) -> KitCache:
    """The node kit's cache, prepared from the kit's example offline over a copy of the machine's npm cache (which
    bash scripts/setup.sh filled), so the test needs no network."""
    machine_cache = Path.home() / ".npm" / "_cacache"
    if shutil.which("npm") is None or not machine_cache.is_dir():
        pytest.skip("npm, or its cache from scripts/setup.sh, is missing")
    cache = tmp_path_factory.mktemp("kits")
    shutil.copytree(machine_cache, cache / "node" / "npm" / "_cacache")
    prepare_kits(cache, ["node"], env={"npm_config_offline": "true"})
    return KitCache(cache)


def test_node_example_builds_offline_and_its_bot_answers_the_handshake(tmp_path, node_cache):
    source, manifest = example("node", tmp_path)
    result = trio.run(build_version, source, manifest, tmp_path, node_cache, BuildLimits(), tmp_path / "build.log")
    assert result.ok, (result.why, result.log.read_text()[-2000:])
    assert (result.folder / "node_modules" / "@grpc" / "grpc-js").is_dir()
    assert not (result.folder / ".cache").exists(), "the copied npm cache stays out of the built bot"
    assert trio.run(handshake, result) == "node-random"


def test_python_example_builds_and_its_bot_answers_the_handshake(tmp_path):
    source, manifest = example("python", tmp_path)
    before = tree_digest(source)
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"), BuildLimits(),
                      tmp_path / "build.log")
    assert (result.ok, result.command, result.protocol) == (True, ("python", "greedy_bot.py"), "grpc"), result.why
    assert result.folder == tmp_path / "bot" and (result.folder / "greedy_bot.py").is_file()
    assert tree_digest(source) == before
    assert trio.run(handshake, result) == "py-greedy"


def test_a_python_entry_that_does_not_parse_fails_its_build_with_the_reason_in_its_log(tmp_path):
    source, manifest = example("python", tmp_path)
    (source / "greedy_bot.py").write_text("def broken(:\n")
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"), BuildLimits(),
                      tmp_path / "build.log")
    assert (result.ok, result.why, result.command, result.folder) == (
        False, "exit status 1 (see the build log)", (), None)
    log = result.log.read_text()
    assert "SyntaxError" in log and "--- the build failed: exit status 1 (see the build log) ---" in log
    assert not (tmp_path / "bot").exists()


def test_a_kit_without_a_recipe_fails_in_one_line(tmp_path):
    source, manifest = example("typescript", tmp_path)
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"), BuildLimits(),
                      tmp_path / "build.log")
    assert not result.ok and result.why.startswith("the typescript kit cannot be built by this league yet")


def test_go_example_builds_offline_and_its_bot_answers_the_handshake(tmp_path, go_cache):
    source, manifest = example("go", tmp_path)
    result = trio.run(build_version, source, manifest, tmp_path, go_cache, BuildLimits(), tmp_path / "build.log")
    assert (result.ok, result.command) == (True, ("bin/bot",)), (result.why, result.log.read_text()[-2000:])
    assert not (result.folder / ".cache").exists(), "the copied build cache stays out of the built bot"
    assert trio.run(handshake, result) == "go-random"


def test_a_go_version_needing_a_module_the_cache_lacks_fails_offline(tmp_path, go_cache):
    source, manifest = example("go", tmp_path)
    main = source / "main.go"
    main.write_text(main.read_text().replace("import (", 'import (\n\t_ "github.com/stranger/not-in-the-cache"', 1))
    result = trio.run(build_version, source, manifest, tmp_path, go_cache, BuildLimits(), tmp_path / "build.log")
    assert (result.ok, result.why) == (False, "exit status 1 (see the build log)")
    assert "github.com/stranger/not-in-the-cache" in result.log.read_text()


HOSTILE_LIMITS = BuildLimits(memory_mb=512, pids=48, disk_mb=64, tmp_mb=16, timeout_s=120)


def hostile_build_by_script(tmp_path: Path, source: Path, attack: str) -> tuple[bool, str, Path]:
    """The attack as the build's own step, straight through the build sandbox."""
    log = tmp_path / "build.log"
    outcome = trio.run(run_build, BuildJob(script=f"{attack}\n"), source, tmp_path / "out", HOSTILE_LIMITS, log)
    return outcome.ok, outcome.why, log


def hostile_build_by_npm_postinstall(tmp_path: Path, source: Path, attack: str) -> tuple[bool, str, Path]:
    """The attack as a Node version's postinstall script, run by the node kit's real recipe (npm ci, offline)."""
    (source / "bot.js").write_text("// never run\n")
    (source / "bot.toml").write_text('kit = "node"\nentry = "bot.js"\nvariants = ["draw"]\n')
    (source / "package.json").write_text(json.dumps(
        {"name": "hostile", "version": "1.0.0", "private": True, "scripts": {"postinstall": attack}}))
    (source / "package-lock.json").write_text(json.dumps(
        {"name": "hostile", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
         "packages": {"": {"name": "hostile", "version": "1.0.0", "hasInstallScript": True}}}))
    cache = tmp_path / "cache"
    (cache / "node" / "npm").mkdir(parents=True)
    manifest = parse_manifest((source / "bot.toml").read_bytes())
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(cache), HOSTILE_LIMITS,
                      tmp_path / "build.log")
    return result.ok, result.why, result.log


@pytest.mark.parametrize("how", [hostile_build_by_script, hostile_build_by_npm_postinstall],
                         ids=["build-step", "npm-postinstall"])
def test_a_hostile_build_step_is_contained(tmp_path, how):
    """The build step connects to a port the test listens on and looks a name up, reads the server's token and data
    folder (world-readable here, so only the sandbox's view protects them), writes beside them, forks and writes
    without end: each attack fails, within the build's limits, and nothing outside its build folder changes."""
    if how is hostile_build_by_npm_postinstall and shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    server = tmp_path / "server"
    (server / "data").mkdir(parents=True)
    token = server / "token"
    token.write_text("SECRET-TOKEN-1234")
    (server / "data" / "league.sqlite").write_text("SECRET-DATA")
    for path in (tmp_path, server, server / "data"):
        path.chmod(0o777)
    token.chmod(0o644)
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ATTACK, source / "attack.py")
    watched = {folder: tree_digest(folder) for folder in (server, REPO / "bots" / "python")}
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    attack = f"python attack.py {port} {token} {server / 'data'} {server / 'pwned'} 200 200 hostile-build-marker"
    try:
        ok, why, log_path = how(tmp_path, source, attack)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    log = log_path.read_text()
    lines = dict(line[len("ATTACK "):].split(": ", 1) for line in log.splitlines() if line.startswith("ATTACK "))
    assert (ok, why) == (False, f"over its processes {HOSTILE_LIMITS.pids} limit (stopped by the kernel)"), log
    assert lines["done"] == "left children behind", "every attack failed, so the script ran to its end"
    for attack_name in ("network", "dns", "token", "data", "outside"):
        assert lines[attack_name].startswith("failed:"), (attack_name, lines[attack_name])
    assert "SECRET" not in log
    assert lines["fork"].startswith("failed:") and 0 < int(lines["forked"]) < HOSTILE_LIMITS.pids
    assert lines["disk"].startswith("failed: OSError: [Errno 28] No space left on device"), lines["disk"]
    assert int(lines["written_mb"]) < HOSTILE_LIMITS.disk_mb
    assert not (server / "pwned").exists()
    assert {folder: tree_digest(folder) for folder in watched} == watched
    assert bot_processes("hostile-build-marker") == []


def test_a_build_past_its_time_is_killed_with_every_process_it_started(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    sleeper = f"{sys.executable} -c 'import time; time.sleep(1000)' slow-build-marker"
    script = f"{sleeper} &\nsetsid {sleeper} &\n{sleeper}\n"
    limits = BuildLimits(timeout_s=3)
    outcome = trio.run(run_build, BuildJob(script=script), source, tmp_path / "out", limits, tmp_path / "build.log")
    assert (outcome.ok, outcome.why) == (False, "timed out after 3 s (every process of it was killed)")
    assert "--- the build failed: timed out after 3 s" in (tmp_path / "build.log").read_text()
    assert bot_processes("slow-build-marker") == []
    assert not (tmp_path / "out").exists()


def test_a_version_bigger_than_its_build_folder_fails_in_one_line(tmp_path):
    source, manifest = example("python", tmp_path)
    (source / "ballast.bin").write_bytes(b"\0" * (3 * 1024 * 1024))
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"),
                      BuildLimits(disk_mb=2), tmp_path / "build.log")
    assert (result.ok, result.why) == (
        False, "the version's files do not fit its build folder of 2 MiB (No space left on device)")
    assert not (tmp_path / "bot").exists()
