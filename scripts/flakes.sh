#!/usr/bin/env bash
# Run the test suite N times (set up and built once, as scripts/test.sh does) and list every test that failed in any
# run, with the number of runs it failed in. No reruns: this finds the flaky tests that scripts/test.sh forgives.
# Usage: bash scripts/flakes.sh N [PYTEST ARGS]   e.g. bash scripts/flakes.sh 5 tests/server/test_server.py
set -euo pipefail
cd "$(dirname "$0")/.."
times="${1:?usage: bash scripts/flakes.sh N [pytest arguments]}"
shift
ARENA_WITH_RAY=1 ARENA_WITH_STUDY=1 bash scripts/setup.sh
bash bots/build.sh
bash scripts/tools.sh
if [ $# -eq 0 ]; then set -- -m "not soak"; fi  # the whole suite, both tiers in one run, as CI has them
workers="${ARENA_TEST_WORKERS:-4}"  # as scripts/test.sh runs the full tier
if [ "$workers" = 0 ]; then exec .venv/bin/python scripts/run_tests.py --repeat "$times" "$@"; fi
exec .venv/bin/python scripts/run_tests.py --repeat "$times" -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
