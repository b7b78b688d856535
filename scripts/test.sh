#!/usr/bin/env bash
# Run the whole test suite (setting up first if needed). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
