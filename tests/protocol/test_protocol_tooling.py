"""The protocol's own checks, with the real, pinned buf (built by scripts/tools.sh): ``buf lint`` (buf.yaml: STANDARD
and COMMENTS, with the frozen v1 names excepted) passes on proto/, and fails when one element loses its comment (so
the comment rules are really on); ``buf breaking`` finds no breaking change against main, the previous commit and the
v1 baseline, and does find one when a field is renamed.

Against what ``buf breaking`` compares, and why three references:

- ``main`` (buf's own git input, the command one runs by hand): on a branch or with uncommitted changes it catches
  a break before it lands. In CI, a fresh clone whose HEAD is main, it compares the tree with itself and passes.
- ``HEAD~1``: in CI, whether the last commit broke anything, including in fields added after the baseline.
- the v1 baseline (``V1_BASELINE``, the commit that gave the .proto files their generator options): the protocol
  as published; whatever the history, nothing may break it. (Earlier commits would flag those options themselves.)
  The two git references need the history; in a shallow clone they are skipped, saying so.

Skipped only when Go is not installed (scripts/tools.sh then builds nothing).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from support.paths import ROOT
from support.tools import go_tool

PROTO = ROOT / "proto" / "dominoes" / "v1"
V1_BASELINE = "3a6471d0e72bc515e2cb591bd99d2d5c27e99ea3"
"""The commit that froze dominoes.v1 as published: every message, field, enum and the generator options."""


@pytest.fixture(scope="module")
def buf() -> str:
    return go_tool("buf")


def run(*command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def output(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr).strip()


def workspace_copy(folder: Path) -> Path:
    """buf.yaml and proto/dominoes/ copied into ``folder``; returns it."""
    shutil.copy(ROOT / "buf.yaml", folder / "buf.yaml")
    shutil.copytree(ROOT / "proto" / "dominoes", folder / "proto" / "dominoes")
    return folder


# --- lint -------------------------------------------------------------------------------------------------------


def test_buf_lint_passes(buf: str) -> None:
    result = run(buf, "lint", "--error-format", "text")
    assert result.returncode == 0, f"buf lint failed (see buf.yaml for the rules):\n{output(result)}"


@pytest.mark.parametrize("file, declaration, complaint", [
    ("types.proto", r"  uint32 boneyard_count = 10;", 'Field "boneyard_count" should have a non-empty comment'),
    ("tournament.proto", r"  uint32 seat = 2;", 'Field "seat" should have a non-empty comment'),
    ("types.proto", r"  ACTION_KIND_UNSPECIFIED = 0;",
     'Enum value "ACTION_KIND_UNSPECIFIED" should have a non-empty comment'),
    ("types.proto", r"enum Ending {", 'Enum "Ending" should have a non-empty comment'),
    ("bot.proto", r"message NotifyReply {}", 'Message "NotifyReply" should have a non-empty comment'),
    ("bot.proto", r"  rpc Hello(HelloRequest) returns (HelloReply);", 'RPC "Hello" should have a non-empty comment'),
    ("arena.proto", r"service Arena {", 'Service "Arena" should have a non-empty comment'),
    ("arena.proto", r"  oneof kind {", 'Oneof "kind" should have a non-empty comment'),
])
def test_an_uncommented_element_fails_lint(buf: str, tmp_path: Path, file: str, declaration: str,
                                           complaint: str) -> None:
    """Remove the comment above one declaration in a copy of proto/: lint fails, naming that element only."""
    copy = workspace_copy(tmp_path)
    path = copy / "proto" / "dominoes" / "v1" / file
    lines = path.read_text().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.rstrip("\n") == declaration]
    assert len(at) == 1, f"expected one line {declaration!r} in {file}, found {len(at)}"
    start = at[0]
    while start > 0 and lines[start - 1].lstrip().startswith("//"):
        start -= 1
    assert start < at[0], f"{declaration!r} in {file} has no comment to remove"
    path.write_text("".join(lines[:start] + lines[at[0]:]))

    result = run(buf, "lint", "--error-format", "text", cwd=copy)
    assert result.returncode != 0, f"buf lint passed without the comment on {declaration.strip()!r}"
    problems = output(result).splitlines()
    assert len(problems) == 1 and complaint in problems[0] and f"dominoes/v1/{file}:{start + 1}:" in problems[0], \
        output(result)


def test_comment_ignores_are_refused(buf: str, tmp_path: Path) -> None:
    """A ``// buf:lint:ignore`` comment cannot silence a rule (disallow_comment_ignores): every exception is in
    buf.yaml, with its reason."""
    copy = workspace_copy(tmp_path)
    path = copy / "proto" / "dominoes" / "v1" / "bot.proto"
    text = path.read_text()
    assert text.count("message NotifyReply {}") == 1
    text = re.sub(r"(?m)^// .*\nmessage NotifyReply \{\}", "// buf:lint:ignore COMMENT_MESSAGE\nmessage NotifyReply {}",
                  text)
    path.write_text(text)
    result = run(buf, "lint", "--error-format", "text", cwd=copy)
    assert result.returncode != 0 and 'Message "NotifyReply"' in output(result), output(result)


FROZEN_NAMES = {
    "ENUM_ZERO_VALUE_SUFFIX": {"POINT_NONE", "TRAIN_KIND_NONE"},
    "SERVICE_SUFFIX": {"Bot", "Arena"},
    "RPC_RESPONSE_STANDARD_NAME": {"HelloReply", "ActReply", "NotifyReply", "SubmitTournamentReply",
                                   "ListTournamentsReply", "GetStandingsReply", "WatchReply", "ListGamesReply",
                                   "GetGameReply", "CancelTournamentReply"},
    "RPC_REQUEST_STANDARD_NAME": {"Notification"},
}
"""The v1 names STANDARD would have named otherwise, by rule: what buf.yaml's ignore_only exists for."""


def ignore_only(config: str) -> dict[str, set[str]]:
    """buf.yaml's lint.ignore_only: rule -> paths (read by hand: its layout is fixed, and PyYAML is no dependency)."""
    block = re.search(r"(?ms)^  ignore_only:\n(.*?)(?=^\S)", config)
    assert block, "buf.yaml has no lint.ignore_only"
    rules: dict[str, set[str]] = {}
    rule = None
    for line in block.group(1).splitlines():
        if match := re.fullmatch(r"    ([A-Z_]+):", line):
            rule = match.group(1)
            rules[rule] = set()
        elif match := re.fullmatch(r"      - (\S+)", line):
            assert rule is not None
            rules[rule].add(match.group(1))
    return rules


def test_the_exceptions_are_the_frozen_v1_names(buf: str, tmp_path: Path) -> None:
    """Without buf.yaml's ignore_only, lint fails on the frozen v1 names and nothing else, each in a file that
    ignore_only lists for that rule (and every listed file is needed)."""
    copy = workspace_copy(tmp_path)
    config = (ROOT / "buf.yaml").read_text()
    listed = ignore_only(config)
    (copy / "buf.yaml").write_text(re.sub(r"(?ms)^  ignore_only:\n.*?(?=^\S)", "", config))
    result = run(buf, "lint", "--error-format", "json", cwd=copy)
    assert result.returncode != 0, output(result)
    found: dict[str, set[str]] = {}
    used: dict[str, set[str]] = {}
    for line in result.stdout.splitlines():
        problem = json.loads(line)
        name = re.search(r'"([^"]+)"', problem["message"]).group(1)
        found.setdefault(problem["type"], set()).add(name)
        used.setdefault(problem["type"], set()).add(problem["path"])
    assert found == FROZEN_NAMES, output(result)
    assert used == listed, f"buf.yaml's ignore_only should list exactly {used}, lists {listed}"


# --- breaking ---------------------------------------------------------------------------------------------------


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def checkout_of(ref: str, folder: Path) -> Path:
    """proto/ as it is at ``ref``, extracted into ``folder`` (git archive: no clone, any depth); skips when the
    clone does not hold ``ref``."""
    if git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
        pytest.skip(f"{ref} is not in this clone (a shallow clone?), so there is nothing to compare against")
    archive = subprocess.run(["git", "archive", "--format=tar", ref, "proto"], cwd=ROOT, capture_output=True,
                             timeout=60)
    assert archive.returncode == 0, archive.stderr.decode()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "proto"


def test_no_breaking_change_against_main(buf: str) -> None:
    """buf's own git input, as one runs it by hand (docs/reference/protocol-rules.md): the working tree against the branch main."""
    if git("rev-parse", "--verify", "--quiet", "refs/heads/main").returncode != 0:
        pytest.skip("this clone has no branch main to compare against")
    # The repository's git folder (in a git worktree, .git is a file; the common folder holds the branches).
    common = git("rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    result = run(buf, "breaking", "proto", "--error-format", "text", "--against", f"{common}#branch=main,subdir=proto")
    assert result.returncode == 0, f"breaking changes against main:\n{output(result)}"


@pytest.mark.parametrize("ref", ["HEAD~1", V1_BASELINE], ids=["previous-commit", "v1-baseline"])
def test_no_breaking_change_against_history(buf: str, tmp_path: Path, ref: str) -> None:
    against = checkout_of(ref, tmp_path)
    result = run(buf, "breaking", "proto", "--error-format", "text", "--against", str(against))
    assert result.returncode == 0, f"breaking changes against {ref}:\n{output(result)}"


def test_a_renamed_field_is_a_breaking_change(buf: str, tmp_path: Path) -> None:
    """The breaking rules are on: a copy with Tile.high renamed breaks against the working tree."""
    copy = workspace_copy(tmp_path)
    path = copy / "proto" / "dominoes" / "v1" / "types.proto"
    text = path.read_text()
    assert text.count("  uint32 high = 2;") == 1
    path.write_text(text.replace("  uint32 high = 2;", "  uint32 hi = 2;"))
    result = run(buf, "breaking", "proto", "--error-format", "text", "--against", str(ROOT / "proto"), cwd=copy)
    assert result.returncode != 0 and 'changed name from "high" to "hi"' in output(result), output(result)
