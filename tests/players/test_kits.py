"""Every starter kit as a bot author meets it: built by ``bash bots/build.sh`` (scripts/test.sh runs it once per run),
started by the arena the normal way (a Unix socket, sandboxed), passing ``arena check-bot`` over every variant, and
all of them together with the Python and Node.js bots in one cross-language tournament without a fault."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.rules.manifest import ManifestError, check_static_elf
from arena.sandbox.syscalls import refusal_line
from arena.tournament.runner import run_tournament
from arena.tournament.spec import spec_from_dict
from support.paths import ROOT



class Kit:
    def __init__(self, name: str, command: list[str], built: str | None, toolchain: str,
                 protocol: str = "grpc") -> None:
        self.name, self.command, self.built, self.toolchain, self.protocol = name, command, built, toolchain, protocol

    def missing(self) -> str | None:
        """Why this kit cannot run here: no toolchain (skip), else None. A missing build with the toolchain
        present is a failure (scripts/test.sh builds every kit)."""
        if shutil.which(self.toolchain) is None and not Path(self.toolchain).exists():
            return f"{self.toolchain} is not installed on this machine"
        return None


KITS = [
    Kit("go", ["bots/go/bin/bot"], "bots/go/bin/bot", "/usr/local/go/bin/go"),
    Kit("rust", ["bots/rust/bin/bot"], "bots/rust/bin/bot", "cargo"),
    Kit("java", ["bots/java/bot"], "bots/java/bin/bot.jar", "java"),
    Kit("cpp", ["bots/cpp/bin/bot"], "bots/cpp/bin/bot", "g++"),
    Kit("typescript", ["node", "bots/typescript/bot.js"], "bots/typescript/dist/bot.js", "node"),
    Kit("stdio", [sys.executable, "bots/stdio/bot.py"], None, sys.executable, protocol="stdio"),
]
EXAMPLES = [
    Kit("python", [sys.executable, "bots/python/greedy_bot.py"], None, sys.executable),
    Kit("node", ["node", "bots/node/bot.js", "--policy", "heaviest"], None, "node"),
]


def runnable(kit: Kit) -> None:
    why = kit.missing()
    if why:
        pytest.skip(why)
    if kit.built is not None:
        assert (ROOT / kit.built).exists(), f"the {kit.name} kit is not built: bash bots/build.sh {kit.name}"


@pytest.mark.parametrize("policy", ["random", "heaviest"])
@pytest.mark.parametrize("kit", KITS, ids=[k.name for k in KITS])
def test_every_kit_passes_check_bot_in_every_variant(kit: Kit, policy: str) -> None:
    runnable(kit)
    out = subprocess.run([sys.executable, "-m", "arena", "check-bot", "--matches", "1", "--first-move-ms", "5000",
                          "--protocol", kit.protocol, "--", *kit.command, "--policy", policy],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "sandbox bubblewrap" in out.stdout
    assert out.stdout.count("PASS") == 6 + 1  # every variant, and the verdict
    assert f"handshake: {kit.name}-{policy} " in out.stdout or (
        kit.name == "typescript" and f"handshake: typescript-{policy} " in out.stdout)


@pytest.mark.parametrize(("variant", "players", "options"), [("draw", 2, {"target": 50}),
                                                             ("mexican_train", 4, {"set": 9})])
async def test_a_cross_language_tournament_has_no_fault(variant: str, players: int, options: dict,
                                                        tmp_path: Path) -> None:
    kits = [k for k in KITS + EXAMPLES if k.missing() is None]
    for kit in kits:
        runnable(kit)
    bots = [{"name": kit.name, "command": kit.command, "protocol": kit.protocol, "cwd": str(ROOT)} for kit in kits]
    table = {"name": f"cross-language {variant}", "variant": variant, "players": players, "options": options,
             "games": 1, "duplicate": variant == "draw", "seed": "kits", "concurrency": 4, "bots": bots,
             "time": {"move_ms": 3000, "first_move_ms": 10000, "startup_ms": 30000}}
    summary = await run_tournament(spec_from_dict(table), "# test\n", tmp_path / "run")
    assert summary.played_now == summary.total > 0
    standings = summary.standings
    assert standings is not None
    faults = {name: entry["faults"] for name, entry in
              ((e["name"], e) for e in standings.to_json()["entrants"])}
    assert set(faults) == {k.name for k in kits} and all(v == 0 for v in faults.values()), faults
    for log in sorted((tmp_path / "run" / "logs").glob("*.log")):
        assert_nothing_it_needs_was_refused(log)


def assert_nothing_it_needs_was_refused(log: Path) -> None:
    """The kit ran under the seccomp filter (its log says so) and no call of it was refused (a lock or a watch its
    runtime wanted would be reported in its log: the JVM's "flock() failed (errno = 1)")."""
    lines = log.read_text(errors="replace").splitlines()
    assert refusal_line() in lines, f"{log.name} did not run under the filter: {lines[:2]}"
    refused = [line for line in lines if line != refusal_line()
               and any(word in line.lower() for word in ("flock", "inotify", "errno = 1", "not permitted", "eperm"))]
    assert refused == [], f"{log.name}: {refused}"


def test_real_binaries_the_go_kit_static_and_a_dynamic_one() -> None:
    """The league's check of a binary kit's entry (static, for this machine) on real files: the built Go kit's bot
    passes, a dynamic /bin/sh is refused."""
    go = ROOT / "bots" / "go" / "bin" / "bot"
    if not go.is_file():
        pytest.skip("the Go kit is not built (bash bots/build.sh go)")
    with open(go, "rb") as stream:
        check_static_elf(stream, os.path.getsize(go))
    with open("/bin/sh", "rb") as stream, pytest.raises(ManifestError, match="PT_INTERP"):
        check_static_elf(stream, os.path.getsize("/bin/sh"))
