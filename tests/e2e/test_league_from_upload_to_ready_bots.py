"""The league from upload to ready bots, end to end, on SQLite and on PostgreSQL: a real ``arena serve --league`` with the real
sandboxed offline builds. The operator creates two authors; each uploads a bot in another language from its own
folder (python, and go built from a prepared kit cache); both become ready after their build and a passing check
of the league's own game (three players). A third author's node version whose npm postinstall attacks (the network,
the server's token and data folder, a world-writable folder outside, a fork bomb) fails its build with its log
readable by its author, while nothing outside its sandbox changed. A ready version's built bot is started again
from its database row alone, as the ladder will.
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import trio

from arena.league.intake.build import COMPLETE
from arena.league.storage.db import open_database, sqlite_url
from arena.league.intake.pipeline import runnable_spec
from arena.players.process import BotProcess
from arena.protocol import league_pb2 as lpb
from arena.sandbox import Limits, host
from support.league import (ATTACK, League, database_of, hostile_node_package, private_file, start_league,
                            tree_digest)
from support.paths import ROOT
from support.processes import bot_processes

pytestmark = pytest.mark.skipif(host().bwrap_problem is not None or host().cgroups is None,
                                reason="builds need bubblewrap and cgroups")

BUILD_PIDS = 128
LEAGUE = f"""name = "intake"
variant = "block"
players = 3
kits = ["python", "go", "node"]
[options]
target = 1
[time]
move_ms = 2000
startup_ms = 60000
[build]
pids = {BUILD_PIDS}
[authors]
uploads_per_day = 10
"""
MARKER = "intake-hostile-marker"
LEFT_OUT = shutil.ignore_patterns("bin", "gen", "node_modules", "__pycache__")


@pytest.fixture(scope="session")
def league_kits(go_cache):
    """A kit cache with go prepared (offline, from the machine's caches) and node's npm cache present (empty: enough
    for a version without dependencies, as the hostile one is), marked complete as prepare-kits marks it."""
    (go_cache.root / "node" / "npm").mkdir(parents=True, exist_ok=True)
    (go_cache.root / "node" / COMPLETE).write_text("an empty npm cache, made by the test\n")
    return go_cache


@dataclass
class Story:
    league: League
    url: str
    python: object
    go: object
    hostile: object
    hostile_log: str
    outside: Path
    listener_hit: bool
    token_before: tuple[str, int]
    data_before: str
    data_after: str


def own_folder(root: Path, kit: str) -> Path:
    """An author's folder: a copy of the kit's example (without what the project's own build made)."""
    shutil.copytree(ROOT / "bots" / kit, root / f"{kit}-bot", ignore=LEFT_OUT)
    return root / f"{kit}-bot"


def hostile_folder(root: Path, attack: str) -> Path:
    """A node version whose package.json's postinstall runs the attack (npm ci runs it during the build)."""
    folder = root / "hostile-bot"
    folder.mkdir(parents=True)
    shutil.copy(ATTACK, folder / "attack.py")
    return hostile_node_package(folder, attack, "block")


def data_digest(data: Path, skip: tuple[Path, ...]) -> str:
    """Everything of the data folder but what the server itself writes meanwhile (its log, its database, its store,
    which gains the hostile archive) and the hostile version's own work folder."""
    kept = data.parent / "data-view"
    shutil.rmtree(kept, ignore_errors=True)
    shutil.copytree(data, kept, symlinks=True, ignore=lambda folder, names: [
        n for n in names if Path(folder) / n in skip or n.startswith(("arena.log", "league.db"))])
    try:
        return tree_digest(kept)
    finally:
        shutil.rmtree(kept)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def story(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, league_kits) -> Iterator[Story]:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    root = tmp_path_factory.mktemp("intake")
    operator = private_file(root / "operator.token", secrets.token_urlsafe(32))
    (root / "league.toml").write_text(LEAGUE)
    database = database_of(request)
    data = root / "data"
    server = start_league(data, operator, root / "league.toml", database, kit_cache=league_kits.root)
    setup = League(server, root, operator, {})
    try:
        for author in ("alice", "bob", "mallory"):
            setup.add_author(author)
        setup.upload("alice", own_folder(root / "alice", "python"), "greedy")
        setup.upload("bob", own_folder(root / "bob", "go"), "gopher")
        python = setup.settled(setup.token("alice"), "greedy")
        go = setup.settled(setup.token("bob"), "gopher")

        outside = root / "outside"
        outside.mkdir()
        outside.chmod(0o777)  # anyone may write here: only the sandbox's view keeps the build out
        listener = socket.create_server(("127.0.0.1", 0))
        listener.setblocking(False)
        attack = (f"python attack.py {listener.getsockname()[1]} {operator} {data} {outside / 'pwned'} 200 16 "
                  f"{MARKER}")
        token_before = (operator.read_text(), operator.stat().st_mode)
        next_id = max(python.id, go.id) + 1
        skip = (data / "league" / "store", data / "league" / "versions" / str(next_id))
        data_before = data_digest(data, skip)
        try:
            shown = setup.upload("mallory", hostile_folder(root / "mallory", attack), "hostile")
            assert f"version {next_id} " in shown
            hostile = setup.settled(setup.token("mallory"), "hostile")
            try:
                listener.accept()
                listener_hit = True
            except BlockingIOError:
                listener_hit = False
        finally:
            listener.close()
        data_after = data_digest(data, skip)
        log = setup.league("log", str(hostile.id), token=setup.tokens["mallory"])
        assert log.returncode == 0, log.stderr
        yield Story(setup, database or sqlite_url(data), python, go, hostile, log.stdout, outside, listener_hit,
                   token_before, data_before, data_after)
    finally:
        setup.server.stop()


def test_bots_in_two_languages_become_ready(story: Story) -> None:
    for version, author, bot in ((story.python, "alice", "greedy"), (story.go, "bob", "gopher")):
        assert (version.state, version.author, version.bot, version.number, version.active) == (
            lpb.VERSION_STATE_READY, author, bot, 1, True), version.reason
        log = story.league.league("log", str(version.id), token=story.league.tokens[author])
        assert log.returncode == 0, log.stderr
        assert "--- the build succeeded: built in " in log.stdout
        report = json.loads(log.stdout.split("--- check report ---\n", 1)[1])
        assert report["passed"] is True and report["start_fault"] is None
        assert [(v["variant"], v["players"], v["matches"]) for v in report["variants"]] == [("block", 3, 2)]
        assert "sandbox bubblewrap" in report["containment"]
    go_log = story.league.league("log", str(story.go.id), token=story.league.tokens["bob"]).stdout
    assert "go build -trimpath" in go_log


def test_a_hostile_build_fails_and_harms_nothing(story: Story) -> None:
    assert story.hostile.state == lpb.VERSION_STATE_FAILED
    assert story.hostile.reason == f"build failed: over its processes {BUILD_PIDS} limit (stopped by the kernel)"
    attacks = dict(line[len("ATTACK "):].split(": ", 1) for line in story.hostile_log.splitlines()
                   if line.startswith("ATTACK "))
    for name in ("network", "dns", "token", "data", "outside", "fork"):
        assert attacks[name].startswith("failed:"), (name, attacks[name])
    assert attacks["done"] == "left children behind"
    assert attacks["terminal"] == "]0;pwned[2Jescape sequences for whoever reads this log in a terminal"
    assert "\x1b" not in story.hostile_log and "\x07" not in story.hostile_log  # the log is a stranger's text
    assert not story.listener_hit, "the build reached a port on the host"
    assert story.token_before[0] not in story.hostile_log
    assert (story.league.operator.read_text(), story.league.operator.stat().st_mode) == story.token_before
    assert story.data_after == story.data_before, "the hostile build changed the server's data folder"
    assert list(story.outside.iterdir()) == []
    assert bot_processes(MARKER) == []
    other = story.league.league("log", str(story.hostile.id), token=story.league.tokens["alice"])
    assert other.returncode == 1 and "author 'alice' may not read the build log of" in other.stderr


def test_a_ready_bot_restarts_from_its_row(story: Story) -> None:
    """What the ladder will do after a restart: the row says how the built bot runs; no rebuild."""
    database = open_database(story.url)
    try:
        version = database.version(story.go.id)
    finally:
        database.close()
    assert version.runnable is not None and version.runnable.command == ("bin/bot",)
    assert version.runnable.folder == f"{story.go.id}/bot"
    spec = runnable_spec(story.league.server.data / "league" / "versions", version, "gopher", Limits())

    async def hello() -> str:
        process = BotProcess(spec, story.league.root / "again-logs", startup_s=60)
        try:
            client = await process.ensure_running()
            return client.hello.name if client.hello is not None else "?"
        finally:
            await process.stop()

    assert trio.run(hello) == "go-random"
