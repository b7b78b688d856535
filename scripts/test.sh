#!/usr/bin/env bash
# The test suite, in two tiers (setting up first if needed):
#   bash scripts/test.sh          the static checks, the fast tier, then every other test (CI runs this)
#   bash scripts/test.sh --fast   the static checks and the fast tier only: the tests marked fast, which start no
#                                 process, no server and no browser (tests/support/tiers.py checks it), in minutes
#   bash scripts/test.sh --soak   the soak profile: the long runs marked soak (proof-of-strength files run as they
#                                 are), and the property tests over many more games (HYPOTHESIS_PROFILE=soak)
#   bash scripts/test.sh ARGS     the static checks, then pytest with ARGS (a file, -k, ...), every test they name
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
soak=0
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
if [ "${1:-}" = "--soak" ]; then soak=1; shift; fi
# With the Ray extra (tests/cluster/test_ray.py runs a local Ray cluster), the study extra (DuckDB and matplotlib:
# tests/e2e/test_tutorial_study_games.py runs the tutorial's analysis) and the research extras (PettingZoo, Gymnasium
# and OpenSpiel: tests/env/ checks the environments with the frameworks' own tests).
ARENA_WITH_RAY=1 ARENA_WITH_STUDY=1 ARENA_WITH_RESEARCH=1 bash scripts/setup.sh
# The static checks first, in seconds: ruff (lint, the rules chosen in pyproject.toml) and mypy (types) over the
# arena package, both with zero findings.
.venv/bin/ruff check arena
.venv/bin/mypy
# scripts/run_tests.py runs pytest, then reruns each failed test once, alone: one that passes then prints
# `flaky: <test id>` and does not fail the run; one that fails again does (CONTRIBUTING.md, "The tests").
# Test processes (pytest-xdist), each taking whole files (module fixtures such as a league server are set up once),
# in the order tests/conftest.py collects them (the longest files first, so the workers end together): two for the
# fast tier (pure computation: one per core), four for the rest (most of those tests wait on bot processes and
# servers: four keep 2 cores busy, 785 s where three took 902). ARENA_TEST_WORKERS=N: N for both; 0: one process.
pytest_run() {
  local workers="$1"
  shift
  workers="${ARENA_TEST_WORKERS:-$workers}"
  if [ "$workers" = 0 ]; then .venv/bin/python scripts/run_tests.py "$@"
  else .venv/bin/python scripts/run_tests.py -n "$workers" --dist loadfile --no-loadscope-reorder "$@"; fi
}
if { [ $# -eq 0 ] && [ "$soak" = 0 ]; } || [ "$fast" = 1 ]; then
  echo "== the fast tier: the tests marked fast =="
  pytest_run 2 -m "fast and not soak" "$@"
  if [ "$fast" = 1 ]; then exit 0; fi
fi
# The compiled bots (starter kits) the tests start, built once per run; their toolchains' downloads are cached
# outside the clone (bots/build.sh). A kit that does not build fails the run.
bash bots/build.sh
# The Go tools the tests run (buf, grpcurl), pinned, built once into the same cache (scripts/tools.sh).
bash scripts/tools.sh
if [ "$soak" = 1 ]; then
  ARENA_PROOF=full HYPOTHESIS_PROFILE=soak pytest_run 4 -m soak "$@"
  HYPOTHESIS_PROFILE=soak pytest_run 2 tests/rules/test_properties.py tests/records/test_records_bad_lines.py \
    tests/tournament/test_tournament_fuzz.py "$@"
  exit 0
fi
if [ $# -gt 0 ]; then pytest_run 4 "$@"; exit; fi
echo "== the full tier: every other test, but the soak profile's =="
pytest_run 4 -m "not fast and not soak"
