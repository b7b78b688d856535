"""The operator's side of a league, through real servers and the real CLI: versions kept per bot (the oldest go,
retired ones first; their rows stay), a suspended version shown with its reason and reinstated by the operator
(``arena league reinstate``, every other caller or case refused in one line), a kit whose cache is not prepared
(one line at start, its uploads refused with what to run), ``arena league prepare-kits``'s lines, and its caches
counted only once complete (filled beside, renamed into place; an interrupted prepare leaves nothing that counts)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.storage.db import open_database, sqlite_url
from arena.protocol import league_pb2 as lpb
from arena.league.intake.build import COMPLETE, KitCache
from arena.league.intake.kits import RECIPES
from arena.league.intake.pipeline import kit_cache_problem
from support.league import READY, League, bearer, bot_folder, database_of, private_file, start_league
from support.paths import ROOT
from support.waiting import wait_for


KEPT_LEAGUE = """name = "kept"
variant = "block"
[options]
target = 1
[time]
startup_ms = 30000
[authors]
uploads_per_day = 20
versions_kept = 2
"""
RANDOM_BOT = (ROOT / "bots" / "python" / "random_bot.py").read_text()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> str | None:
    return database_of(request)


def served(tmp_path: Path, text: str, database: str | None = None, kit_cache: Path | None = None) -> League:
    operator = private_file(tmp_path / "operator.token", secrets.token_urlsafe(32))
    (tmp_path / "league.toml").write_text(text)
    return League(start_league(tmp_path / "data", operator, tmp_path / "league.toml", database, kit_cache),
                  tmp_path, operator, {})


def version_of(league: League, number: int) -> Path:
    """A distinct version of alice's bot (its own text, so its own archive)."""
    return bot_folder(league.root / f"v{number}", f"# version {number}\n{RANDOM_BOT}")


def no_space(text: str) -> str:
    """A table's text without its borders and spacing (a long cell wraps onto several lines)."""
    return re.sub(r"[\s│┃|]", "", text)


def test_versions_kept_deletes_the_oldest_retired_first(tmp_path: Path, database: str | None) -> None:
    league = served(tmp_path, KEPT_LEAGUE, database)
    try:
        league.add_author("alice")
        token = league.token("alice")
        ids = []
        for number in (1, 2):
            league.upload("alice", version_of(league, number), "bot")
            ids.append(league.settled(token, "bot").id)
        store = league.server.data / "league" / "store"
        versions_folder = league.server.data / "league" / "versions"
        first_archive = next(store.rglob(f"{league.versions(token, 'bot')[0].sha256}.tar"))
        assert (versions_folder / str(ids[0]) / "bot").is_dir()

        league.upload("alice", version_of(league, 3), "bot")  # 3 > versions_kept: version 1 (not active) goes
        ids.append(league.settled(token, "bot").id)
        assert [(v.number, v.state, v.active) for v in league.versions(token, "bot")] == [
            (2, READY, False), (3, READY, True)]
        assert not first_archive.exists() and not (versions_folder / str(ids[0])).exists()
        gone = league.stub().GetBuildLog(lpb.GetBuildLogRequest(version_id=ids[0]), timeout=30,
                                         metadata=bearer(token))  # its row stays: games and ratings refer to it
        assert (gone.version.state, gone.version.reason) == (
            lpb.VERSION_STATE_RETIRED, "deleted to keep bot 'bot' within authors.versions_kept = 2")

        retired = league.league("retire", str(ids[2]), token=league.tokens["alice"])  # the newest: retired first
        assert retired.returncode == 0, retired.stderr
        league.upload("alice", version_of(league, 4), "bot")
        ids.append(league.settled(token, "bot").id)
        assert [(v.number, v.state, v.active) for v in league.versions(token, "bot")] == [
            (2, READY, False), (4, READY, True)]

        again = league.league("upload", str(league.root / "v1"), "--bot", "bot", token=league.tokens["alice"])
        assert again.returncode == 1 and again.stderr.count("\n") == 1
        assert "this archive is version 1 of bot 'bot', deleted to keep authors.versions_kept = 2" in again.stderr

        url = database or sqlite_url(league.server.data)  # the ladder's part, until it exists: three failed starts
        direct = open_database(url)
        try:
            for failure in ("exit status 1", "exit status 1", "no port"):
                direct.record_start(ids[3], failure)
        finally:
            direct.close()
        shown = league.league("versions", "bot", token=league.tokens["alice"])
        assert shown.returncode == 0, shown.stderr
        assert no_space(f"{ids[3]}bot4suspended") in no_space(shown.stdout)
        assert no_space("failed to start 3 times in a row; last: no port") in no_space(shown.stdout)
    finally:
        league.server.stop()


def test_an_unprepared_kit_is_named_and_its_uploads_refused(tmp_path: Path) -> None:
    empty = tmp_path / "kits"
    empty.mkdir()
    text = KEPT_LEAGUE.replace('variant = "block"\n', 'variant = "block"\nkits = ["python", "go"]\n')
    league = served(tmp_path, text, kit_cache=empty)
    try:
        advice = (f"the go kit's cache is not prepared on this server ({empty}/go): the operator runs arena league "
                  f"prepare-kits --cache {empty} --kits go")
        assert (f"arena: league kit not prepared (kit=go cache={empty}/go run=arena league prepare-kits --cache "
                f"{empty} --kits go)\n") in league.server.output
        assert not any("kit=python" in line for line in league.server.output)
        league.add_author("alice")
        go = tmp_path / "go-bot"
        shutil.copytree(ROOT / "bots" / "go", go, ignore=shutil.ignore_patterns("bin", "gen"))
        done = league.league("upload", str(go), "--bot", "gopher", token=league.tokens["alice"])
        assert done.returncode == 1
        assert done.stderr == (f"error: failed precondition: this server cannot build go versions yet: {advice}; "
                               f"nothing was stored\n")
        assert list((league.server.data / "league" / "store").rglob("*.tar")) == []
        assert league.versions(league.token("alice")) == []
    finally:
        league.server.stop()


def prepare(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena", "league", "prepare-kits", *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env={**os.environ, **(env or {})})


def test_prepare_kits_prints_a_line_per_kit_or_failure(tmp_path: Path) -> None:
    done = prepare("--cache", str(tmp_path / "cache"), "--kits", "python,stdio")
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "python: nothing to prepare (its builds need no cache)\nstdio: nothing to prepare (its builds need no "
           "cache)\n", "")
    done = prepare("--cache", str(tmp_path / "cache"), "--kits", "python,cobol")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: unknown kit 'cobol'; the league builds {', '.join(RECIPES)}\n"


def test_prepare_kits_without_the_network_fails_in_one_line(tmp_path: Path) -> None:
    """No module proxy (GOPROXY=off stands for a machine without the network): the kit's first step fails, said in
    one line naming the kit and the step."""
    if not Path("/usr/local/go/bin/go").exists():
        pytest.skip("go is not installed")
    done = prepare("--kits", "go", env={"ARENA_KIT_CACHE": str(tmp_path / "cache"), "GOPROXY": "off"})
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: kit go: go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 "
                                  "failed (exit 1): ")
    assert done.stderr.count("\n") == 1


@pytest.mark.fast
def test_an_incomplete_kit_folder_is_not_prepared(tmp_path: Path) -> None:
    """A folder filled by half (what prepare-kits used to leave while it ran, or when it was interrupted) is no
    prepared cache: a server would build against half of it. Only the completion file, written last, counts."""
    cache = KitCache(tmp_path / "kits")
    (tmp_path / "kits" / "go" / "mod" / "cache").mkdir(parents=True)
    (tmp_path / "kits" / "go" / "mod" / "cache" / "half.zip").write_bytes(b"half a module")
    assert not cache.prepared("go")
    assert kit_cache_problem(cache, "go") == (
        f"the go kit's cache is not prepared on this server ({tmp_path}/kits/go is not complete: its prepare-kits "
        f"was interrupted, or was an older arena's): the operator runs arena league prepare-kits --cache "
        f"{tmp_path}/kits --kits go")
    (tmp_path / "kits" / "go" / COMPLETE).write_text("")
    assert cache.prepared("go") and kit_cache_problem(cache, "go") is None


FAKE_NPM = """#!/bin/sh
# npm ci --cache DIR ...: one file into DIR, then, told to, hang until killed (a prepare cut short)
mkdir -p "$3" && echo "$FAKE_NPM_FILE" > "$3/$FAKE_NPM_FILE"
if [ -n "$FAKE_NPM_HANG" ]; then touch "$FAKE_NPM_HANG"; exec sleep 600; fi
"""


def prepare_node(cache: Path, tools: Path, file: str, hang: Path | None = None) -> subprocess.Popen:
    """``arena league prepare-kits --kits node`` in a session of its own, with a fake npm that writes ``file``
    into the npm cache (and, with ``hang``, touches it and hangs)."""
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "FAKE_NPM_FILE": file,
           "FAKE_NPM_HANG": str(hang) if hang else ""}
    return subprocess.Popen([sys.executable, "-m", "arena", "league", "prepare-kits", "--cache", str(cache), "--kits",
                             "node"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                            start_new_session=True)


def killed_mid_prepare(cache: Path, tools: Path, file: str, tmp_path: Path) -> None:
    """A prepare killed (kill -9, with its npm) once its npm wrote into the cache it fills."""
    hang = tmp_path / f"{file}.hanging"
    process = prepare_node(cache, tools, file, hang)
    try:
        wait_for(lambda: hang.exists() or process.poll() is not None, 120, "the fake npm to write half the cache")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
    assert hang.exists(), err


def files_of(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_only_a_complete_prepare_is_renamed_into_place(tmp_path: Path) -> None:
    """The node kit prepared with a fake npm: killed mid-way, nothing counts as prepared (the next prepare removes
    what it left); run to its end, the cache is in place, complete; killed again while it prepares anew, the
    complete cache it would replace stays in place, whole, and still counts."""
    cache, tools = tmp_path / "kits", tmp_path / "tools"
    tools.mkdir()
    (tools / "npm").write_text(FAKE_NPM)
    (tools / "npm").chmod(0o755)
    killed_mid_prepare(cache, tools, "first", tmp_path)
    assert kit_cache_problem(KitCache(cache), "node") == (
        f"the node kit's cache is not prepared on this server ({cache}/node): the operator runs arena league "
        f"prepare-kits --cache {cache} --kits node")
    assert [path.name.startswith(".node.filling-") for path in cache.iterdir() if path.is_dir()] == [True]

    done = prepare_node(cache, tools, "second")
    out, err = done.communicate(timeout=120)
    assert (done.returncode, err) == (0, "") and out.startswith(f"node: prepared in {cache}/node (")
    assert kit_cache_problem(KitCache(cache), "node") is None
    assert [path.name for path in cache.iterdir() if path.is_dir()] == ["node"]  # what the killed one left: gone
    assert files_of(cache / "node") == [COMPLETE, "npm", "npm/second"]

    killed_mid_prepare(cache, tools, "third", tmp_path)
    assert kit_cache_problem(KitCache(cache), "node") is None
    assert files_of(cache / "node") == [COMPLETE, "npm", "npm/second"]


def test_only_the_operator_reinstates_only_a_suspended_version(tmp_path: Path, database: str | None) -> None:
    """``arena league reinstate VERSION`` (the ReinstateVersion RPC) through a real server: refused in one line to an
    author, for an unknown version and for a version that is not suspended (nothing changes); the operator's puts a
    suspended version back to ready with its failed starts reset, and the ladder counts it active again."""
    from arena.league.rules.lifecycle import READY as READY_STATE, SUSPENDED

    league = served(tmp_path, KEPT_LEAGUE, database)
    try:
        league.add_author("alice")
        league.upload("alice", version_of(league, 1), "bot")
        version = league.settled(league.token("alice"), "bot")
        assert version.state == READY

        def reinstate(target: int, token: Path) -> subprocess.CompletedProcess:
            return league.league("reinstate", str(target), token=token)

        def refused(done: subprocess.CompletedProcess, line: str) -> None:
            assert (done.returncode, done.stdout, done.stderr) == (1, "", f"error: {line}\n")

        refused(reinstate(version.id, league.operator),
                f"failed precondition: version {version.id} is ready, not suspended: only a suspended version can be reinstated")
        url = database or sqlite_url(league.server.data)
        direct = open_database(url)
        try:
            for failure in ("exit status 1", "exit status 1", "no port"):
                direct.record_start(version.id, failure)
            assert (direct.version(version.id).state, direct.version(version.id).start_failures) == (SUSPENDED, 3)
            refused(reinstate(version.id, league.tokens["alice"]),
                    "permission denied: author 'alice' may not reinstate a version: only the operator may")
            refused(reinstate(version.id + 1000, league.operator), f"not found: no version number {version.id + 1000}")
            assert direct.version(version.id).state == SUSPENDED  # refusals change nothing

            done = reinstate(version.id, league.operator)
            assert (done.returncode, done.stdout) == (0, f"version {version.id} of bot 'bot' is ready again\n"), \
                done.stderr
            after = direct.version(version.id)
            assert (after.state, after.start_failures, after.reason) == (READY_STATE, 0, None)
            assert [v.id for _, v in direct.active_versions(direct.league("kept").id)] == [version.id]
        finally:
            direct.close()
        assert [(v.id, v.state) for v in league.versions(league.token("alice"), "bot")] == [(version.id, READY)]
        refused(reinstate(version.id, league.operator),
                f"failed precondition: version {version.id} is ready, not suspended: only a suspended version can be reinstated")
    finally:
        league.server.stop()
