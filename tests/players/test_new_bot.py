"""``arena new-bot KIT DIR`` and building a copy of a kit: a bot folder of one's own, anywhere, that builds, passes
``check-bot`` sandboxed with the command its README gives, and carries the league's manifest under its own name."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tomllib
import uuid
from pathlib import Path

import pytest

from arena.league.rules.manifest import parse_manifest
from support.cli import arena
from support.paths import ROOT

GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
needs_go = pytest.mark.skipif(GO is None, reason="Go is not installed (go on the PATH or /usr/local/go)")


def readme_commands(folder: Path) -> list[str]:
    """The shell lines of the README's first block, without their comments."""
    block = (folder / "README.md").read_text().split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  # ")[0] for line in block.splitlines()]


def run_line(line: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(shlex.split(line), capture_output=True, text=True, timeout=timeout, cwd="/")


def test_a_new_python_bot_works_as_its_readme_says(tmp_path: Path) -> None:
    folder = tmp_path / "my-bot"
    made = arena("new-bot", "python", str(folder))
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0] == f"made {folder}: a python bot named 'my-bot' (bot.toml, README.md)"
    manifest = parse_manifest((folder / "bot.toml").read_bytes())
    assert (manifest.kit, manifest.name, manifest.entry) == ("python", "my-bot", "greedy_bot.py")
    assert tomllib.loads((ROOT / "bots/python/bot.toml").read_text())["variants"] == list(manifest.variants)
    lines = readme_commands(folder)
    assert made.stdout.splitlines()[1:] == [f"{line}  # {why}" for line, why in zip(
        lines, ("check it", "upload it to a league"))]
    check = run_line(lines[0])  # from another folder: the command works wherever it is typed
    assert check.returncode == 0, check.stdout + check.stderr
    assert "FAIL" not in check.stdout and check.stdout.count("PASS") >= 2


@needs_go
def test_a_go_bot_builds_by_script_and_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "mygo"
    assert arena("new-bot", "go", str(folder)).returncode == 0
    build, check, _ = readme_commands(folder)
    assert build == f"bash {folder / 'build.sh'}" and not (folder / "bin").exists()
    built = run_line(build)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (folder / "bin" / "bot").is_file()
    checked = run_line(check)
    assert checked.returncode == 0 and "FAIL" not in checked.stdout, checked.stdout + checked.stderr

    copy = ROOT / "bots" / f"copy-{uuid.uuid4().hex[:8]}"   # cp -r bots/go bots/NAME, as an author would
    try:
        shutil.copytree(ROOT / "bots" / "go", copy, ignore=shutil.ignore_patterns("bin", "gen"))
        done = subprocess.run(["bash", "bots/build.sh", copy.name], capture_output=True, text=True, timeout=600,
                              cwd=ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"built bots/{copy.name}/bin/bot" in done.stdout and (copy / "bin" / "bot").is_file()
        again = subprocess.run(["bash", "bots/build.sh", "go"], capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert again.returncode == 0 and "build[go]: " in again.stdout, again.stderr  # the kit itself still builds
    finally:
        shutil.rmtree(copy, ignore_errors=True)


@pytest.mark.parametrize("args, message", [
    (["cobol", "DIR/x"], "error: unknown kit 'cobol'; kits: cpp, go, java, node, python, rust, stdio, typescript"),
    (["go", "DIR"], "error: DIR already exists and is not an empty folder: name a new one"),
    (["go", "DIR/bad name"], "error: the folder's name 'bad name' is the bot's name: letters, digits, '.', '_' and "
                             "'-', at most 64 characters, starting with a letter or a digit"),
])
def test_an_unusable_kit_or_folder_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "something").write_text("taken")
    done = arena("new-bot", *(a.replace("DIR", str(tmp_path)) for a in args))
    assert (done.returncode, done.stderr.strip()) == (2, message.replace("DIR", str(tmp_path)))

