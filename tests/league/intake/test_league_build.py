"""League builds: a version is built by its kit's recipe in the build sandbox, offline, within its
limits, from the kit's prepared cache; a hostile build step (a build script, an npm postinstall, a Rust build.rs)
can neither reach the network, read the server's secrets, write outside its build folder, fork or write without
end, nor outlive its build. Real processes, the real sandbox, real compilers, real bots' handshakes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest
import trio

from arena.league.intake.build import BuildLimits, KitCache, build_version, prepare_kits
from arena.league.rules.config import league_from_dict
from arena.league.intake.kits import RECIPES
from arena.league.intake.pipeline import check_built, check_problem
from arena.league.rules.manifest import KITS, parse_manifest
from arena.players.process import BotProcess, BotSpec
from arena.sandbox import host
from arena.sandbox.build import BuildJob, run_build

from support.kits import GO_MODULE_DOWNLOADS, MACHINE_CACHE, need, prepared_once, unavailable
from support.league import ATTACK, hostile_node_package, tree_digest
from support.paths import ROOT
from support.processes import bot_processes

REPO = ROOT

pytestmark = pytest.mark.skipif(host().bwrap_problem is not None or host().cgroups is None,
                                reason="builds need bubblewrap and cgroups")


def example(kit: str, tmp_path: Path) -> tuple[Path, object]:
    """A copy of bots/<kit>/ as an upload would carry it (without what the project's own build made)."""
    source = tmp_path / "source"
    shutil.copytree(REPO / "bots" / kit, source, ignore=shutil.ignore_patterns("bin", "gen", "node_modules"))
    return source, parse_manifest((source / "bot.toml").read_bytes())


CHECK_LEAGUE = league_from_dict({"name": "check", "variant": "block", "options": {"target": 1},
                                 "time": {"move_ms": 2000, "startup_ms": 60000}})
"""A league whose check (the pipeline's own, two quick matches of Block) a built example must pass to be ready."""


def built_spec(result) -> BotSpec:
    """The built bot as the league starts it: its command in its built folder, sandboxed."""
    return BotSpec("built", command=result.command, cwd=str(result.folder), folder=str(result.folder),
                   protocol=result.protocol)


async def handshake(result) -> str:
    """Start the built bot the way the league will (its command in its folder, sandboxed) and return its name."""
    process = BotProcess(built_spec(result), result.folder.parent / "logs", startup_s=60)
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
        unavailable("npm, or its cache from scripts/setup.sh, is missing")
    cache = tmp_path_factory.mktemp("kits")
    shutil.copytree(machine_cache, cache / "node" / "npm" / "_cacache")
    prepare_kits(cache, ["node"], env={"npm_config_offline": "true"})
    return KitCache(cache)


@pytest.fixture(scope="module")
def rust_cache() -> KitCache:
    """The rust kit's cache: the crates from the machine's CARGO_HOME of bots/build.sh (fetched offline), and the
    example's warm target folder built in the sandbox."""
    need(("cargo", "rustc"), (MACHINE_CACHE / "rust" / "cargo-home" / "registry",))
    return KitCache(prepared_once("rust", {"CARGO_NET_OFFLINE": "true"},
                                  {"home": MACHINE_CACHE / "rust" / "cargo-home"}))


@pytest.fixture(scope="module")
def java_cache() -> KitCache:
    """The java kit's cache: Maven's repository of bots/build.sh, completed by building the example with it."""
    need(("mvn", "javac"), (MACHINE_CACHE / "java" / "m2",))
    return KitCache(prepared_once("java", {}, {"m2": MACHINE_CACHE / "java" / "m2"}))


@pytest.fixture(scope="module")
def cpp_cache() -> KitCache:
    """The cpp kit's cache: the example's warm CMake folder (and ccache's objects), built in the sandbox."""
    need(("cmake", "make", "g++", "protoc", "grpc_cpp_plugin"))
    return KitCache(prepared_once("cpp", {}))


@pytest.fixture(scope="module")
def typescript_cache() -> KitCache:
    """The typescript kit's npm cache, prepared offline over a copy of the one bots/build.sh filled."""
    need(("npm", "node"), (MACHINE_CACHE / "typescript" / "npm",))
    return KitCache(prepared_once("typescript", {"npm_config_offline": "true"},
                                  {"npm": MACHINE_CACHE / "typescript" / "npm"}))


def build(kit: str, tmp_path: Path, cache: KitCache, source: Path | None = None, limits=BuildLimits(),
          protected=()):
    """build_version of bots/<kit>/ (or of ``source``), as the league's pipeline calls it."""
    if source is None:
        source, manifest = example(kit, tmp_path)
    else:
        manifest = parse_manifest((source / "bot.toml").read_bytes())
    return trio.run(build_version, source, manifest, tmp_path, cache, limits, tmp_path / "build.log", protected)


MAIN_SOURCE = {"rust": ("src/main.rs", "const _A_VERSION_OF_ITS_OWN: u8 = 1;"),
               # Code, not a comment: the preprocessor drops comments, and ccache would find the example's object.
               "cpp": ("main.cpp", "[[maybe_unused]] static const int a_version_of_its_own = 1;"),
               "typescript": ("src/bot.ts", "// a version of its own"),
               "java": ("src/main/java/dominoes/bot/Bot.java", "// a version of its own")}
"""Each kit's main source and a line a version of its own adds to it."""


def rust_compiled_only_its_crate(log: str) -> None:
    """From the warm target folder cargo compiles the version's own crate and none of the crates it uses."""
    compiled = [line.split()[1] for line in log.splitlines() if line.strip().startswith("Compiling ")]
    assert compiled == ["dominoes-rust-bot"], compiled


def cpp_compiled_only_main(log: str) -> None:
    """From the warm CMake folder make compiles main.cpp, not the generated protocol code nor its library."""
    assert "Building CXX object CMakeFiles/bot.dir/main.cpp.o" in log, log[-3000:]
    assert "Generating the protocol code" not in log and "dominoes_proto.dir" not in log, log[-3000:]


@pytest.mark.parametrize("kit, command, name, log_check", [
    ("rust", ("bin/bot",), "rust-random", rust_compiled_only_its_crate),
    ("cpp", ("bin/bot",), "cpp-random", cpp_compiled_only_main),
    ("typescript", ("node", "bot.js"), "typescript-random", None),
    ("java", ("java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
              "-XX:ActiveProcessorCount=1", "-XX:-UsePerfData", "-jar", "bin/bot.jar"), "java-random", None),
])
def test_compiled_examples_build_offline_and_pass(tmp_path, request, kit, command, name, log_check):
    """A version of its own (the kit's example with a line added to its main source) is built in the sandbox from
    the kit's prepared cache (read-only) with no network; the bot then runs from its built folder, sandboxed, as the
    league runs it. What the build copied in to write on (the warm folder, npm's cache, Maven's repository) stays
    out of the built bot."""
    cache = request.getfixturevalue(f"{kit}_cache")
    source, _ = example(kit, tmp_path)
    path, line = MAIN_SOURCE[kit]
    (source / path).write_text((source / path).read_text() + f"\n{line}\n")
    for proto in (REPO / "proto").rglob("*.proto"):  # newer than the warm folder, as a fresh clone's checkout is
        os.utime(proto)
    result = build(kit, tmp_path, cache, source)
    assert (result.ok, result.command, result.protocol) == (True, command, "grpc"), (
        result.why, result.log.read_text()[-3000:])
    assert not any((result.folder / left).exists() for left in (".warm", ".cache", ".m2"))
    if log_check is not None:
        log_check(result.log.read_text())
    report = trio.run(check_built, built_spec(result), CHECK_LEAGUE, tmp_path / "check")
    assert (check_problem(report, "block"), report.hello.split()[0]) == (None, name), report


def test_rust_needing_an_uncached_crate_fails_offline(tmp_path, rust_cache):
    """The author's Cargo.lock names a crate nobody fetched: cargo, offline, says which."""
    source, _ = example("rust", tmp_path)
    toml = source / "Cargo.toml"
    toml.write_text(toml.read_text().replace("[dependencies]\n", '[dependencies]\nstranger-crate = "1.0.0"\n', 1))
    lock = source / "Cargo.lock"
    text = lock.read_text().replace('name = "dominoes-rust-bot"\nversion = "1.0.0"\ndependencies = [\n',
                                    'name = "dominoes-rust-bot"\nversion = "1.0.0"\ndependencies = [\n'
                                    ' "stranger-crate",\n', 1)
    lock.write_text(text + '\n[[package]]\nname = "stranger-crate"\nversion = "1.0.0"\n'
                    'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
                    f'checksum = "{"0" * 64}"\n')
    result = build("rust", tmp_path, rust_cache, source)
    assert (result.ok, result.why) == (False, "exit status 101 (see the build log)")
    log = result.log.read_text()
    assert "stranger-crate" in log and "offline" in log, log[-3000:]


def test_java_needing_an_uncached_artifact_fails_offline(tmp_path, java_cache):
    source, _ = example("java", tmp_path)
    pom = source / "pom.xml"
    head, _, tail = pom.read_text().rpartition("</dependencies>")  # the project's own, after the managed ones
    pom.write_text(head + "<dependency><groupId>com.stranger</groupId><artifactId>not-in-the-cache</artifactId>"
                   "<version>1.0</version></dependency></dependencies>" + tail)
    result = build("java", tmp_path, java_cache, source)
    assert (result.ok, result.why) == (False, "exit status 1 (see the build log)")
    log = result.log.read_text()
    assert "com.stranger:not-in-the-cache:jar:1.0" in log and "offline" in log, log[-3000:]


def test_the_binary_kit_runs_a_static_executable(tmp_path):
    """bots/go/bin/bot is built with CGO_ENABLED=0: statically linked. The built folder has it executable."""
    static = REPO / "bots" / "go" / "bin" / "bot"
    if not static.is_file():
        unavailable(f"{static} is missing: run bash bots/build.sh go first")
    source = tmp_path / "source"
    source.mkdir()
    shutil.copyfile(static, source / "bot")  # no exec bit, as an archive may carry it
    (source / "bot.toml").write_text('kit = "binary"\nentry = "bot"\nvariants = ["draw"]\n')
    result = build("binary", tmp_path, KitCache(tmp_path / "cache"), source)
    assert (result.ok, result.command) == (True, ("./bot",)), (result.why, result.log.read_text())
    assert (result.folder / "bot").stat().st_mode & 0o777 == 0o755
    assert trio.run(handshake, result) == "go-random"


@pytest.mark.fast
def test_the_binary_kit_refuses_dynamic_linking(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copyfile(sys.executable, source / "bot")  # the arena's Python needs the dynamic loader
    (source / "bot.toml").write_text('kit = "binary"\nentry = "bot"\nvariants = ["draw"]\n')
    result = build("binary", tmp_path, KitCache(tmp_path / "cache"), source)
    why = ("the entry bot: expected a statically linked executable, got one that needs a dynamic loader "
           "(PT_INTERP): link it statically (e.g. CGO_ENABLED=0, or -static)")
    assert (result.ok, result.why, result.folder) == (False, why, None)
    assert result.log.read_text() == f"--- the build failed: {why} ---\n"
    assert not (tmp_path / "bot").exists()


@pytest.mark.fast
def test_every_kit_a_manifest_accepts_has_a_recipe():
    assert sorted(RECIPES) == sorted(KITS)


def test_node_example_builds_offline_and_shakes_hands(tmp_path, node_cache):
    source, manifest = example("node", tmp_path)
    result = trio.run(build_version, source, manifest, tmp_path, node_cache, BuildLimits(), tmp_path / "build.log")
    assert result.ok, (result.why, result.log.read_text()[-2000:])
    assert (result.folder / "node_modules" / "@grpc" / "grpc-js").is_dir()
    assert not (result.folder / ".cache").exists(), "the copied npm cache stays out of the built bot"
    assert trio.run(handshake, result) == "node-random"


def test_python_example_builds_and_shakes_hands(tmp_path):
    source, manifest = example("python", tmp_path)
    before = tree_digest(source)
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"), BuildLimits(),
                      tmp_path / "build.log")
    assert (result.ok, result.command, result.protocol) == (True, ("python", "greedy_bot.py"), "grpc"), result.why
    assert result.folder == tmp_path / "bot" and (result.folder / "greedy_bot.py").is_file()
    assert tree_digest(source) == before
    assert trio.run(handshake, result) == "py-greedy"


def test_an_unparsable_python_entry_logs_why_it_failed(tmp_path):
    source, manifest = example("python", tmp_path)
    (source / "greedy_bot.py").write_text("def broken(:\n")
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"), BuildLimits(),
                      tmp_path / "build.log")
    assert (result.ok, result.why, result.command, result.folder) == (
        False, "exit status 1 (see the build log)", (), None)
    log = result.log.read_text()
    assert "SyntaxError" in log and "--- the build failed: exit status 1 (see the build log) ---" in log
    assert not (tmp_path / "bot").exists()


def test_go_example_builds_offline_and_shakes_hands(tmp_path, go_cache):
    source, manifest = example("go", tmp_path)
    result = trio.run(build_version, source, manifest, tmp_path, go_cache, BuildLimits(), tmp_path / "build.log")
    assert (result.ok, result.command) == (True, ("bin/bot",)), (result.why, result.log.read_text()[-2000:])
    assert not (result.folder / ".cache").exists(), "the copied build cache stays out of the built bot"
    assert trio.run(handshake, result) == "go-random"


def test_go_needing_an_uncached_module_fails_offline(tmp_path, go_cache):
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
    hostile_node_package(source, attack, "draw")
    cache = tmp_path / "cache"
    (cache / "node" / "npm").mkdir(parents=True)
    manifest = parse_manifest((source / "bot.toml").read_bytes())
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(cache), HOSTILE_LIMITS,
                      tmp_path / "build.log")
    return result.ok, result.why, result.log


HOSTILE_BUILD_RS = """// A stranger's build script: cargo runs it before compiling the crate, as the build's own user.
use std::process::{Command, Stdio};
fn main() {
    let args: Vec<&str> = ATTACK.split(' ').collect();
    let out = std::fs::File::create("/tmp/attack.out").unwrap();
    // Its children (the fork bomb) keep the file open: wait for the attack alone, then show what it did.
    let status = Command::new(args[0]).args(&args[1..]).stdout(Stdio::from(out)).status();
    eprintln!("{}", std::fs::read_to_string("/tmp/attack.out").unwrap_or_default());
    panic!("the hostile build script ends the build ({status:?})");
}
"""


def hostile_build_by_rust_build_rs(tmp_path: Path, source: Path, attack: str) -> tuple[bool, str, Path]:
    """The attack as a Rust version's build.rs, run by cargo in the rust kit's real recipe (offline), with the
    server's token and data folder passed as the paths no build may see."""
    if shutil.which("cargo") is None and not (Path.home() / ".cargo" / "bin" / "cargo").exists():
        unavailable("cargo is not installed")
    (source / "src").mkdir()
    (source / "src" / "main.rs").write_text("fn main() {}\n")
    (source / "build.rs").write_text(f"const ATTACK: &str = {json.dumps(attack)};\n{HOSTILE_BUILD_RS}")
    (source / "Cargo.toml").write_text('[package]\nname = "hostile"\nversion = "1.0.0"\nedition = "2021"\n')
    (source / "Cargo.lock").write_text('version = 4\n\n[[package]]\nname = "hostile"\nversion = "1.0.0"\n')
    (source / "bot.toml").write_text('kit = "rust"\nentry = "Cargo.toml"\nvariants = ["draw"]\n')
    server = tmp_path / "server"
    result = build("rust", tmp_path, KitCache(tmp_path / "cache"), source, HOSTILE_LIMITS,
                   (server / "token", server / "data"))
    return result.ok, result.why, result.log


@pytest.mark.parametrize("how", [hostile_build_by_script, hostile_build_by_npm_postinstall,
                                 hostile_build_by_rust_build_rs],
                         ids=["build-step", "npm-postinstall", "rust-build-rs"])
def test_a_hostile_build_step_is_contained(tmp_path, how):
    """The build step connects to a port the test listens on and looks a name up, reads the server's token and data
    folder (world-readable here, so only the sandbox's view protects them), writes beside them, forks and writes
    without end: each attack fails, within the build's limits, and nothing outside its build folder changes."""
    if how is hostile_build_by_npm_postinstall and shutil.which("npm") is None:
        unavailable("npm is not installed")
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
    python = "python" if how is not hostile_build_by_rust_build_rs else str(Path(sys.executable))
    attack = (f"{python} /build/attack.py {port} {token} {server / 'data'} {server / 'pwned'} 200 200 "
              "hostile-build-marker")
    try:
        ok, why, log_path = how(tmp_path, source, attack)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    log = log_path.read_text()
    # One line per attack (cargo indents what a failed build script wrote).
    lines = dict(line.strip()[len("ATTACK "):].split(": ", 1) for line in log.splitlines()
                 if line.strip().startswith("ATTACK "))
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


def test_an_overdue_build_is_killed_with_its_processes(tmp_path):
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


@pytest.mark.fast
def test_a_version_bigger_than_its_build_folder_fails(tmp_path):
    source, manifest = example("python", tmp_path)
    (source / "ballast.bin").write_bytes(b"\0" * (3 * 1024 * 1024))
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(tmp_path / "cache"),
                      BuildLimits(disk_mb=2), tmp_path / "build.log")
    assert (result.ok, result.why) == (
        False, "the version's files do not fit its build folder of 2 MiB (No space left on device)")
    assert not (tmp_path / "bot").exists()


@pytest.mark.parametrize("where", ["the cache inside a protected folder", "a protected file inside the cache"])
@pytest.mark.fast
def test_a_cache_showing_a_protected_path_is_refused(tmp_path, where):
    """The kit's cache is bound into the build read-only: it may neither lie inside a folder no build may see (the
    data folder) nor hold a file no build may see (the operator's token), either way round."""
    source, manifest = example("python", tmp_path)
    kits = tmp_path / "kits"
    (kits / "python").mkdir(parents=True)
    secret = kits if where.startswith("the cache") else kits / "python" / "operator.token"
    secret.touch()
    result = trio.run(build_version, source, manifest, tmp_path, KitCache(kits), BuildLimits(), tmp_path / "build.log",
                      [secret])
    assert (result.ok, result.why, result.folder) == (
        False, f"cannot contain the build: the build would see {secret} through {kits / 'python'}", None)
    assert not (tmp_path / "bot").exists()
    assert result.log.read_text().splitlines() == [f"--- the build failed: {result.why} ---"]  # nothing of it ran
