# The Go kit's build, sourced by bots/build.sh (which defines say, die, inputs_hash, need_protoc and CACHE).
# Run it as: bash bots/build.sh go, or bash bots/build.sh DIR for a bot folder made from this kit (arena new-bot).
# protoc-gen-go must stay at the version of google.golang.org/protobuf in bots/go/go.mod, so the generated
# code and the runtime library match.
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2
GO_PROTOS=(dominoes/v1/types.proto dominoes/v1/bot.proto)
GO_PACKAGE="dominoes-arena/bots/go/gen/dominoes/v1;dominoesv1" # import path; package name

build_go() {
  # $GO, else go on the PATH, else /usr/local/go, where Go's installer puts it (often not on a non-login PATH).
  local dir=${1:-bots/go} go_bin=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
  command -v "$go_bin" >/dev/null 2>&1 ||
    die go "go not found ($go_bin): install Go 1.26 or later (https://go.dev/dl/) or set GO=/path/to/go"

  export GOPATH=$CACHE/go/path GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build
  # -modcacherw: the module cache is read-only by default, so a CI cache cleanup with rm -rf would fail.
  export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw"
  local plugins=$CACHE/go/bin

  local stamp=$dir/bin/.build-hash want
  want=$(inputs_hash "$dir" "${GO_PROTOS[@]/#/proto/}"; "$go_bin" version)
  if [ -x $dir/bin/bot ] && [ "$(cat $stamp 2>/dev/null)" = "$want" ]; then
    say go "$dir/bin/bot is up to date"
    return
  fi

  # The protoc plugins, built from source at pinned versions (fetched through the Go module proxy).
  local module tool version have
  for module in google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION \
                google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION; do
    tool=${module%@*} tool=${tool##*/} version=${module#*@}
    # Both print their version last ("protoc-gen-go v1.36.12", "protoc-gen-go-grpc 1.6.2").
    have=$("$plugins/$tool" --version 2>/dev/null | awk '{print $NF}') || true
    if [ "v${have#v}" != "$version" ]; then
      say go "installing $tool $version into $plugins"
      GOBIN=$plugins "$go_bin" install "$module"
    fi
  done

  need_protoc go
  # The M options give each .proto its Go package here, so the .proto files need no go_package option.
  say go "generating the protocol code from proto/ into $dir/gen"
  local mapping=() p
  for p in "${GO_PROTOS[@]}"; do mapping+=("--go_opt=M$p=$GO_PACKAGE" "--go-grpc_opt=M$p=$GO_PACKAGE"); done
  rm -rf $dir/gen && mkdir -p $dir/gen
  .venv/bin/python -m grpc_tools.protoc -I proto \
    --plugin=protoc-gen-go="$plugins/protoc-gen-go" --plugin=protoc-gen-go-grpc="$plugins/protoc-gen-go-grpc" \
    --go_out=$dir/gen --go_opt=paths=source_relative \
    --go-grpc_out=$dir/gen --go-grpc_opt=paths=source_relative \
    "${mapping[@]}" "${GO_PROTOS[@]}"

  # CGO_ENABLED=0: a static binary that needs no libc, so it runs in a sandbox that shows only its folder.
  # -trimpath and -buildvcs=false keep local paths and the git state out of it; -s -w drop the symbol tables.
  say go "building $dir/bin/bot (static, CGO_ENABLED=0) with $("$go_bin" env GOVERSION)"
  (cd $dir && CGO_ENABLED=0 "$go_bin" build -trimpath -buildvcs=false -ldflags='-s -w' -o bin/bot .)
  echo "$want" > $stamp
  say go "built $dir/bin/bot ($(du -h $dir/bin/bot | cut -f1))"
}
