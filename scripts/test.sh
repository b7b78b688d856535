#!/usr/bin/env bash
# Run the whole test suite (setting up first if needed). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
ARENA_WITH_RAY=1 bash scripts/setup.sh  # with the Ray extra: tests/test_ray.py runs a local Ray cluster
# The compiled bots (starter kits) the tests start, built once per run; their toolchains' downloads are cached
# outside the clone (bots/build.sh). A kit that does not build fails the run.
bash bots/build.sh
# The Go tools the tests run (buf, grpcurl), pinned, built once into the same cache (scripts/tools.sh).
bash scripts/tools.sh
exec .venv/bin/python -m pytest "$@"
