"""The test command's runner (scripts/run_tests.py), run for real on small test folders of its own: a failed test is
rerun once, alone, after the suite; one that passes its rerun is named on a ``flaky:`` line and does not fail the run,
one that fails again does. Too many failures, an interrupted run or a collection error are not rerun. And
``--repeat N`` (scripts/flakes.sh) counts each test's failed runs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from support.paths import ROOT

RUNNER = ROOT / "scripts" / "run_tests.py"

PASSES = """
def test_passes():
    assert True
"""

# Fails the first time it runs, passes after: its state is a file beside it.
FAILS_ONCE = """
from pathlib import Path

def test_fails_once():
    seen = Path(__file__).with_name("fails_once.seen")
    if not seen.exists():
        seen.write_text("1")
        assert False, "the first run fails"
"""

ALWAYS_FAILS = """
def test_always_fails():
    assert False, "this test always fails"
"""

# A test whose fixture fails in its tear-down, the first time only.
TEARDOWN_FAILS_ONCE = """
from pathlib import Path

import pytest

@pytest.fixture
def resource():
    yield
    seen = Path(__file__).with_name("teardown.seen")
    if not seen.exists():
        seen.write_text("1")
        raise RuntimeError("the first tear-down fails")

def test_with_resource(resource):
    assert True
"""


def suite(folder: Path, **files: str) -> Path:
    """A test folder of its own (its own pytest.ini: its own rootdir, none of the project's options)."""
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    for name, source in files.items():
        (folder / f"{name}.py").write_text(source)
    return folder


def without_pytest_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for a pytest of its own: none of this pytest's settings, and none of the installed plugins
    (pytest-trio alone imports Hypothesis: three seconds a start, where a bare pytest takes half a second); the
    runner's logic needs none of them, and a test that needs one names it (``-p xdist``)."""
    env = {name: value for name, value in environ.items() if not name.startswith("PYTEST_")}
    return {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The runner in ``folder``, as scripts/test.sh starts it, outside this pytest's own worker settings."""
    env = without_pytest_settings(os.environ)
    return subprocess.run([sys.executable, str(RUNNER), *args, "-p", "no:cacheprovider"], cwd=folder, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)


def flaky_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("flaky:")]


def test_passing_on_rerun_is_flaky_and_the_run_passes(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite", test_a=PASSES, test_b=FAILS_ONCE)
    done = run(folder)
    assert done.returncode == 0, done.stdout
    assert flaky_lines(done.stdout) == ["flaky: test_b.py::test_fails_once"]
    assert "1 failed, 1 passed" in done.stdout  # the suite's own run, before the rerun


def test_a_tear_down_error_is_rerun_like_a_failure(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite", test_a=PASSES, test_c=TEARDOWN_FAILS_ONCE)
    done = run(folder)
    assert done.returncode == 0, done.stdout
    assert flaky_lines(done.stdout) == ["flaky: test_c.py::test_with_resource"]


def test_a_failed_rerun_fails_the_run_with_output(tmp_path: Path) -> None:
    folder = suite(tmp_path / "suite", test_a=PASSES, test_b=FAILS_ONCE, test_d=ALWAYS_FAILS)
    done = run(folder)
    assert done.returncode == 1, done.stdout
    assert flaky_lines(done.stdout) == ["flaky: test_b.py::test_fails_once"]
    assert "failed again: test_d.py::test_always_fails" in done.stdout.splitlines()
    rerun_output = done.stdout.split("rerun of test_d.py::test_always_fails", 1)[1]
    assert "this test always fails" in rerun_output and "1 failed" in rerun_output


def test_a_run_with_no_failure_reruns_nothing(tmp_path: Path) -> None:
    done = run(suite(tmp_path / "suite", test_a=PASSES))
    assert done.returncode == 0, done.stdout
    assert "rerunning" not in done.stdout and flaky_lines(done.stdout) == []


def test_the_arguments_reach_pytest(tmp_path: Path) -> None:
    """A file named, or -k: only those tests run, and only they are rerun."""
    folder = suite(tmp_path / "suite", test_a=PASSES, test_b=FAILS_ONCE, test_d=ALWAYS_FAILS)
    done = run(folder, "test_a.py", "test_b.py")
    assert done.returncode == 0, done.stdout
    assert flaky_lines(done.stdout) == ["flaky: test_b.py::test_fails_once"]
    done = run(folder, "-k", "always")
    assert done.returncode == 1 and "failed again: test_d.py::test_always_fails" in done.stdout


def test_failures_in_workers_are_rerun(tmp_path: Path) -> None:
    """With pytest-xdist, as scripts/test.sh runs the suite: the failed tests are seen from the workers' reports."""
    folder = suite(tmp_path / "suite", test_a=PASSES, test_b=FAILS_ONCE, test_d=ALWAYS_FAILS)
    done = run(folder, "-p", "xdist", "-n", "2", "--dist", "loadfile")
    assert done.returncode == 1, done.stdout
    assert flaky_lines(done.stdout) == ["flaky: test_b.py::test_fails_once"]
    assert "failed again: test_d.py::test_always_fails" in done.stdout.splitlines()


def test_more_failures_than_the_limit_are_not_rerun(tmp_path: Path) -> None:
    many = "".join(f"\ndef test_fails_{n}():\n    assert False\n" for n in range(11))
    done = run(suite(tmp_path / "suite", test_a=PASSES, test_many=many))
    assert done.returncode == 1, done.stdout
    assert "11 tests failed (more than 10): not rerun, the run fails" in done.stdout
    assert "rerunning" not in done.stdout and flaky_lines(done.stdout) == []


def test_an_interrupted_run_fails_at_once(tmp_path: Path) -> None:
    """A KeyboardInterrupt in a test is pytest's Ctrl-C: the run stops, with nothing rerun."""
    interrupted = FAILS_ONCE + "\n\ndef test_interrupted():\n    raise KeyboardInterrupt\n"
    done = run(suite(tmp_path / "suite", test_b=interrupted))
    assert done.returncode == 2, done.stdout
    assert "rerunning" not in done.stdout and flaky_lines(done.stdout) == []


def test_a_collection_error_fails_at_once(tmp_path: Path) -> None:
    done = run(suite(tmp_path / "suite", test_b=FAILS_ONCE, test_e="import no_such_module_here\n"))
    assert done.returncode == 2, done.stdout
    assert "rerunning" not in done.stdout and flaky_lines(done.stdout) == []


def test_repeated_runs_count_each_tests_failed_runs(tmp_path: Path) -> None:
    """scripts/flakes.sh: N runs, no reruns, every test that failed in any run with its count."""
    folder = suite(tmp_path / "suite", test_a=PASSES, test_b=FAILS_ONCE, test_d=ALWAYS_FAILS)
    done = run(folder, "--repeat", "3")
    assert done.returncode == 1, done.stdout
    summary = done.stdout.split("tests that failed, in 3 run(s)", 1)[1].split("\n", 1)[1].splitlines()
    assert summary == ["3/3 test_d.py::test_always_fails", "1/3 test_b.py::test_fails_once"]
    assert flaky_lines(done.stdout) == []


# --- the fast tier's check --------------------------------------------------------------------------------------------

STARTS = {
    "subprocess": "subprocess.run(['true'], check=True)",
    "fork": "pid = os.fork()\n    if pid == 0: os._exit(0)\n    os.waitpid(pid, 0)",
    "posix_spawn": "os.waitpid(os.posix_spawn('/bin/true', ['true'], {}), 0)",
    "trio": "trio.run(trio.run_process, ['true'])",
    "multiprocessing": "p = multiprocessing.get_context('spawn').Process(target=print); p.start(); p.join()",
    "socket": "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()",
    "grpc": "grpc.server(concurrent.futures.ThreadPoolExecutor(1))",
    "grpc_aio": "asyncio.run(start_aio_server())",
}

TIER_TESTS = """
import asyncio, concurrent.futures, multiprocessing, os, socket, subprocess
import grpc, grpc.aio, pytest, trio

async def start_aio_server():
    grpc.aio.server()

def test_unmarked_{name}():
    {code}

@pytest.mark.fast
def test_fast_{name}():
    {code}

@pytest.mark.fast
def test_fast_pure():
    assert sorted([3, 1, 2]) == [1, 2, 3]
"""


@pytest.mark.parametrize("name", sorted(STARTS))
def test_a_fast_test_may_start_no_process_or_server(tmp_path: Path, name: str) -> None:
    folder = suite(tmp_path / "suite", test_tier=TIER_TESTS.format(name=name, code=STARTS[name]))
    env = {**without_pytest_settings(os.environ), "PYTHONPATH": str(ROOT / "tests")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "support.tiers", "-p", "no:cacheprovider", "-rA"],
                          cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300)
    outcomes = {line.split()[1].split("::")[1]: line.split()[0] for line in done.stdout.splitlines()
                if line.startswith(("PASSED ", "FAILED "))}
    assert outcomes == {f"test_unmarked_{name}": "PASSED", f"test_fast_{name}": "FAILED",
                        "test_fast_pure": "PASSED"}, done.stdout
    assert "StartedInTheFastTier: a test marked fast started" in done.stdout
