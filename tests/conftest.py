"""Shared set-up: the tests folder on sys.path (so ``support`` imports as a package, tests/support/, from the test
modules of every folder below: pytest loads this file before any of them), the helpers' asserts rewritten by pytest
like the tests' own, the PostgreSQL plugin, and the fixtures several modules use."""

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))
pytest.register_assert_rewrite("support")

from support.paths import ROOT  # noqa: E402 (after the path is set)
from support.kits import GO_MODULE_DOWNLOADS, need, prepared_once, unavailable  # noqa: E402
from support.servers import HANG_BOT  # noqa: E402

pytest_plugins = ["support.pg", "support.tiers"]

# New runs write the compact games.jsonl.zst; the test modules that read a run's records line by line (most of those
# written before it) get the readable games.jsonl, which every reader reads too. tests/records/test_records_compact.py
# takes this away to test the compact file, the default, end to end, and so do the league's main ladder, finals and
# pages tests (test_ladder_server.py, test_finals.py, test_web_league_live.py). Subprocesses inherit it.
os.environ.setdefault("ARENA_RECORDS", "jsonl")


LONGEST_FIRST = (
    "e2e/test_league_from_ladder_to_verified_finals.py", "e2e/test_competition_run_by_its_competitors.py",
    "e2e/test_tutorial_competition.py", "cluster/test_ray.py", "league/play/test_ladder.py",
    "league/play/test_league_timeline.py", "tournament/test_swiss_knockout_runs.py", "web/test_web_league_finals.py",
    "league/play/test_ladder_server.py", "players/test_kits.py", "server/test_dial_in.py", "server/test_server.py",
    "league/test_league_service.py", "web/test_web.py", "league/test_league_operator.py",
    "league/intake/test_league_build.py", "test_test_runner.py", "sandbox/test_security.py",
    "sandbox/test_duplicate_deals.py", "players/test_bots.py", "e2e/test_league_from_upload_to_ready_bots.py",
    "league/test_league_teams.py", "league/test_league_notices.py",
)
"""The files that take most of a worker's time (``--durations``): collected first, so that the workers of
``scripts/test.sh`` (each taking whole files, in this order: ``--no-loadscope-reorder``) start them first and end
together, rather than one still playing a long file after the others are done."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(ROOT / "tests").as_posix()
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within a file, and of the other files, stays


@pytest.fixture
def hang_bot() -> Iterator[Path]:
    """The hanging bot in a folder of its own (with the test bots' server code), for a registry. Not under /tmp: a
    sandbox has its own /tmp, so a bot there is not found."""
    artifacts = ROOT / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="hang-bot-", dir=artifacts))
    folder.chmod(0o755)
    shutil.copy(ROOT / "tests" / "bots" / "testbot.py", folder)
    (folder / "hang_bot.py").write_text(HANG_BOT)
    yield folder / "hang_bot.py"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator["Chromium"]:
    """A real headless Chromium (Debian's), its profile and log in a folder of the test's own; closed after."""
    from support.chromium import Chromium

    workdir = tmp_path / "chromium"
    workdir.mkdir()
    chromium = Chromium(workdir)
    try:
        yield chromium
    finally:
        chromium.close()


@pytest.fixture(scope="session")
def go_cache():
    """The go kit's cache, prepared from the kit's example; the module downloads come from the machine's own module
    cache (a file:// GOPROXY), so the test needs no network. (Shared by the build tests and the league's end-to-end
    tests.)"""
    from arena.league.intake.build import KitCache

    if shutil.which("go") is None and not Path("/usr/local/go/bin/go").exists():
        unavailable("go is not installed")
    need((), (GO_MODULE_DOWNLOADS,))
    return KitCache(prepared_once("go", {"GOPROXY": f"file://{GO_MODULE_DOWNLOADS}", "GOSUMDB": "off"}))
