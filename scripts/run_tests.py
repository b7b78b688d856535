"""Run pytest, then rerun each failed test once, alone; or run the suite N times and count the failures.

``python scripts/run_tests.py [PYTEST ARGS]`` (what ``scripts/test.sh`` runs): one pytest run with the arguments as
given, in this process. If tests failed (an error in a test's set-up or tear-down counts, and so does a test whose
worker process died), each is run again, alone, in a fresh ``python -m pytest NODEID`` from the same folder, after the
suite. A test that passes its rerun prints ``flaky: NODEID`` and does not fail the run; one that fails it again fails
the run, its output shown. More than :data:`MOST_RERUNS` failures is a real breakage: no reruns, the run fails. A run
that ends any other way than "tests failed" (interrupted, a collection error, a usage error, no tests) ends at once
with pytest's own exit status.

``python scripts/run_tests.py --repeat N [PYTEST ARGS]`` (``scripts/flakes.sh``): the pytest run N times, each in a
fresh process and without reruns, then every test that failed in any run with the number of runs it failed in.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# As `python -m pytest` has it: the current folder first on the import path, not this script's folder.
sys.path[0] = os.getcwd()

import pytest  # noqa: E402 (after the import path is set, as pytest's own entry point has it)

MOST_RERUNS = 10
"""More failed tests than this in one run is a breakage, not a flake: they are reported, not rerun."""


class FailedTests:
    """A pytest plugin that keeps the node ids of the tests that failed, in the order they failed, and whether a
    collection failed. In the controller of a pytest-xdist run it sees the workers' reports too."""

    def __init__(self) -> None:
        self.nodeids: list[str] = []
        self.collection_failed = False
        self.rootdir = Path.cwd()

    def pytest_configure(self, config: pytest.Config) -> None:
        self.rootdir = config.rootpath

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and report.nodeid not in self.nodeids:
            self.nodeids.append(report.nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_failed = True


def run_once(args: list[str]) -> tuple[int, FailedTests]:
    """One pytest run in this process: its exit status and the failed tests."""
    failed = FailedTests()
    status = int(pytest.main(args, plugins=[failed]))
    return status, failed


def rerun_alone(nodeid: str, rootdir: Path) -> tuple[bool, str]:
    """The test run again, by itself, in a fresh pytest process: whether it passed, and its output."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", nodeid], cwd=rootdir,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return done.returncode == 0, done.stdout


def run_with_reruns(args: list[str]) -> int:
    status, failed = run_once(args)
    sys.stdout.flush()
    if status != pytest.ExitCode.TESTS_FAILED or failed.collection_failed:
        return status
    if not failed.nodeids:  # failed, but no test to rerun (a session-level failure): nothing to retry
        return status
    if len(failed.nodeids) > MOST_RERUNS:
        print(f"\n{len(failed.nodeids)} tests failed (more than {MOST_RERUNS}): not rerun, the run fails", flush=True)
        return status
    print(f"\nrerunning {len(failed.nodeids)} failed test(s), each alone", flush=True)
    still_failing = []
    for nodeid in failed.nodeids:
        passed, output = rerun_alone(nodeid, failed.rootdir)
        if passed:
            print(f"flaky: {nodeid}", flush=True)
        else:
            still_failing.append(nodeid)
            print(f"\n{'=' * 30} rerun of {nodeid} {'=' * 30}\n{output}", flush=True)
    for nodeid in still_failing:
        print(f"failed again: {nodeid}", flush=True)
    return pytest.ExitCode.TESTS_FAILED if still_failing else pytest.ExitCode.OK


def count_failures(times: int, args: list[str]) -> int:
    """The pytest run ``times`` times, each in a fresh process (``--record FILE``), and the tests that failed."""
    failures: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="flakes-") as folder:
        for run in range(1, times + 1):
            record = Path(folder) / f"run-{run}.txt"
            print(f"\n==== run {run} of {times} ====", flush=True)
            status = subprocess.run([sys.executable, __file__, "--record", str(record), *args]).returncode
            if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                print(f"run {run} ended with exit status {status}: stopping", flush=True)
                return status
            failures.update(record.read_text().splitlines() if record.exists() else [])
    print(f"\n==== tests that failed, in {times} run(s) ====", flush=True)
    for nodeid, count in sorted(failures.items(), key=lambda item: (-item[1], item[0])):
        print(f"{count}/{times} {nodeid}", flush=True)
    if not failures:
        print("none", flush=True)
    return 1 if failures else 0


def record_failures(record: Path, args: list[str]) -> int:
    status, failed = run_once(args)
    record.write_text("".join(f"{nodeid}\n" for nodeid in failed.nodeids))
    return status


def main(argv: list[str]) -> int:
    if argv[:1] == ["--repeat"]:
        return count_failures(int(argv[1]), argv[2:])
    if argv[:1] == ["--record"]:
        return record_failures(Path(argv[1]), argv[2:])
    return run_with_reruns(argv)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # during a rerun or between repeated runs (pytest itself answers its own)
        sys.exit(130)
