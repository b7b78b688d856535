#!/usr/bin/env bash
# Build the compiled bot kits: `bash bots/build.sh` builds every kit, `bash bots/build.sh go` one.
# Each kit is a function build_<lang> in bots/<lang>/build.sh; add a language by adding that file.
# Idempotent and quick when nothing changed: a stamp beside each result holds the hash of what the build read.
# Downloads and build caches live outside the clone, in $ARENA_CACHE (default ~/.cache/dominoes-arena), so a
# fresh clone (CI) reuses them.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${ARENA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dominoes-arena}

say() { echo "build[$1]: $2"; }
die() { echo "build[$1]: error: $2" >&2; exit 1; }

# The hash of the files a kit's build reads, plus the tool versions: it changes exactly when a rebuild is due.
inputs_hash() {
  local dir=$1; shift
  {
    find "$dir" \( -path "$dir/bin" -o -path "$dir/gen" \) -prune -o -type f -print | LC_ALL=C sort |
      xargs sha256sum
    sha256sum bots/build.sh "$@"
  } | sha256sum | cut -d' ' -f1
}

# The protocol compiler is grpcio-tools in the arena's venv, so protoc itself needs no separate install.
need_protoc() {
  if ! .venv/bin/python -c 'import grpc_tools' 2>/dev/null; then
    say "$1" "grpcio-tools is not in .venv yet: running scripts/setup.sh"
    bash scripts/setup.sh
  fi
}


# Each kit's build is bots/<lang>/build.sh, which defines build_<lang> with the helpers above.
KITS=()
for script in bots/*/build.sh; do
  kit=$(basename "$(dirname "$script")")
  # shellcheck source=/dev/null
  source "$script"
  KITS+=("$kit")
done

# -----------------------------------------------------------------------------------------------------
if [ $# -eq 0 ]; then set -- "${KITS[@]}"; fi
for kit in "$@"; do
  [[ " ${KITS[*]} " == *" $kit "* ]] || die "$kit" "unknown kit (known: ${KITS[*]})"
  "build_$kit"
done
