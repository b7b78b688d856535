#!/usr/bin/env bash
# Build the compiled bot kits: `bash bots/build.sh` builds every kit, `bash bots/build.sh go` one, and
# `bash bots/build.sh DIR` a bot folder made from a kit (`arena new-bot go DIR`, or a copy such as bots/mygo).
# Each kit is a function build_<lang> in bots/<lang>/build.sh; add a language by adding that file.
# Idempotent and quick when nothing changed: a stamp beside each result holds the hash of what the build read.
# Downloads and build caches live outside the clone, in $ARENA_CACHE (default ~/.cache/dominoes-arena), so a
# fresh clone (CI) reuses them.
set -euo pipefail
CALLER=$PWD
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


# The kit a bot folder was made from: the `kit = "..."` line of its bot.toml (the league's manifest).
kit_of() {
  sed -n 's/^[[:space:]]*kit[[:space:]]*=[[:space:]]*"\([a-z]*\)".*/\1/p' "$1/bot.toml" 2>/dev/null | head -1
}

# Each kit's build is bots/<lang>/build.sh, which defines build_<lang> with the helpers above. A folder whose
# bot.toml names another kit (a copy, bots/mygo) is not a kit: it is built with its kit's function.
KITS=()
for script in bots/*/build.sh; do
  kit=$(basename "$(dirname "$script")")
  [ "$(kit_of "bots/$kit")" = "$kit" ] || continue
  # shellcheck source=/dev/null
  source "$script"
  KITS+=("$kit")
done

# -----------------------------------------------------------------------------------------------------
# An argument is a kit (go), or a bot folder made from one (bots/mygo, mygo for bots/mygo, or any path): its
# bot.toml says which kit builds it, in that folder.
if [ $# -eq 0 ]; then set -- "${KITS[@]}"; fi
for arg in "$@"; do
  if [[ " ${KITS[*]} " == *" $arg "* ]]; then
    "build_$arg"
    continue
  fi
  case $arg in
    /*) folder=$arg ;;
    *) if [ -d "$CALLER/$arg" ]; then folder=$CALLER/$arg; else folder=bots/$arg; fi ;;
  esac
  [ -d "$folder" ] || die "$arg" "no such kit or bot folder (kits: ${KITS[*]})"
  kit=$(kit_of "$folder")
  [ -n "$kit" ] || die "$arg" "$folder/bot.toml names no kit (kit = \"go\", ...): make the folder with arena new-bot KIT DIR"
  if [[ " ${KITS[*]} " == *" $kit "* ]]; then
    "build_$kit" "$folder"
  else
    say "$arg" "the $kit kit has nothing to build"
  fi
done
