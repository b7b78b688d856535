#!/usr/bin/env bash
# The Go tools the tests use, built from source at pinned versions through the Go module proxy:
#   buf      lints proto/ (every message, field, enum, value, service and rpc documented) and checks it for
#            breaking changes (tests/protocol/test_protocol_tooling.py; the rules are in buf.yaml)
#   grpcurl  a gRPC client of its own, pointed by tests/protocol/test_reflection.py at the reflection and health
#            services
# Downloads and build cache are shared with the Go bot kit (bots/go/build.sh): $ARENA_CACHE/go, default
# ~/.cache/dominoes-arena/go; the binaries go to $CACHE/go/bin. Idempotent: a tool whose binary already carries the
# pinned version is not rebuilt, so a warm run takes a fraction of a second.
# Writes .venv/.tools, one NAME=PATH line per tool, where the tests find them. Without Go it says so, writes no
# paths, and the tests that need the tools are skipped (naming the reason); a tool that fails to build fails.
set -euo pipefail
cd "$(dirname "$0")/.."

BUF_VERSION=v1.75.0      # github.com/bufbuild/buf (needs Go 1.26.7 or later)
GRPCURL_VERSION=v1.9.4   # github.com/fullstorydev/grpcurl

CACHE=${ARENA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dominoes-arena}
BIN=$CACHE/go/bin
LIST=.venv/.tools

say() { echo "tools: $*"; }

mkdir -p .venv
# $GO, else go on the PATH, else /usr/local/go, where Go's installer puts it (often not on a non-login PATH).
go_bin=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
if ! command -v "$go_bin" >/dev/null 2>&1; then
  say "warning: go not found ($go_bin), so buf and grpcurl are not built and the tests that use them are skipped;" \
      "install Go 1.26.7 or later (https://go.dev/dl/) or set GO=/path/to/go"
  : > "$LIST"
  exit 0
fi

export GOPATH=$CACHE/go/path GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build
# -modcacherw: the module cache is read-only by default, so a CI cache cleanup with rm -rf would fail.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
# Static binaries, like the Go bot's.
export CGO_ENABLED=0

# The version a binary was built from, read from its Go build information ("mod <module> <version>").
built_version() {
  [ -x "$1" ] || return 0
  "$go_bin" version -m "$1" 2>/dev/null | awk -v m="$2" '$1 == "mod" && $2 == m {print $3}'
}

lines=()
for pinned in github.com/bufbuild/buf/cmd/buf@$BUF_VERSION \
              github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION; do
  package=${pinned%@*} version=${pinned#*@}
  tool=${package##*/} module=${package%/cmd/*}
  if [ "$(built_version "$BIN/$tool" "$module")" != "$version" ]; then
    say "building $tool $version into $BIN (from the Go module proxy)"
    started=$SECONDS
    GOBIN=$BIN "$go_bin" install -trimpath -ldflags='-s -w' "$pinned"
    say "built $tool $version in $((SECONDS - started)) s"
  fi
  lines+=("$tool=$BIN/$tool")
done
printf '%s\n' "${lines[@]}" > "$LIST"
say "buf $BUF_VERSION, grpcurl $GRPCURL_VERSION in $BIN (listed in $LIST)"
