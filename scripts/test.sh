#!/usr/bin/env bash
# Run the whole test suite (setting up first if needed). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
ARENA_WITH_RAY=1 bash scripts/setup.sh  # with the Ray extra: tests/cluster/test_ray.py runs a local Ray cluster
# The static checks first, in seconds: ruff (lint, the rules chosen in pyproject.toml) and mypy (types) over the
# arena package, both with zero findings.
.venv/bin/ruff check arena
.venv/bin/mypy
# The compiled bots (starter kits) the tests start, built once per run; their toolchains' downloads are cached
# outside the clone (bots/build.sh). A kit that does not build fails the run.
bash bots/build.sh
# The Go tools the tests run (buf, grpcurl), pinned, built once into the same cache (scripts/tools.sh).
bash scripts/tools.sh
# Two test processes (pytest-xdist), each taking whole files (module fixtures such as a league server are set up
# once): most tests wait on bot processes and servers, so two share 2 cores well. ARENA_TEST_WORKERS=0: one process.
# scripts/run_tests.py runs pytest, then reruns each failed test once, alone: one that passes then prints
# `flaky: <test id>` and does not fail the run; one that fails again does (CONTRIBUTING.md, "The tests").
workers="${ARENA_TEST_WORKERS:-2}"
if [ "$workers" = 0 ]; then exec .venv/bin/python scripts/run_tests.py "$@"; fi
exec .venv/bin/python scripts/run_tests.py -n "$workers" --dist loadfile "$@"
