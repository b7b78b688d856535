# The C++ kit's build, sourced by bots/build.sh (which defines say, die, inputs_hash, need_protoc and CACHE).
# Run it as: bash bots/build.sh cpp, or bash bots/build.sh DIR for a bot folder made from this kit (arena new-bot).
# It builds with CMake against Debian's gRPC and protobuf; CMakeLists.txt generates the protocol code with
# Debian's protoc and grpc_cpp_plugin into the build folder, which lives outside the clone:
#   $CACHE/cpp/build-<hash of this kit's path>  the CMake build folder of one clone (incremental rebuilds)
#   $CACHE/cpp/bots/<hash of every input>       each binary built, so a fresh clone of the same sources copies it
#   $CACHE/cpp/ccache                            compiled objects by content (if ccache is installed), so a new
#                                                clone's build folder compiles only the files that differ
# As root it installs the Debian packages that are missing (and ccache) with apt-get; otherwise it names them.
CPP_PROTOS=(dominoes/v1/types.proto dominoes/v1/bot.proto)

# The Debian packages the build needs, with a command or pkg-config module that shows each is installed.
cpp_missing_packages() {
  local missing=() pair
  for pair in cmake:cmake make:make g++:g++ pkg-config:pkg-config protoc:protobuf-compiler \
              grpc_cpp_plugin:protobuf-compiler-grpc; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  for pair in grpc++:libgrpc++-dev protobuf:libprotobuf-dev; do
    cpp_pc_version "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
  done
  echo "${missing[*]}"
}

# A library's version from pkg-config. Debian's pkgconf takes over half a second to resolve grpc++ and its
# abseil modules, and a millisecond when told not to (--maximum-traverse-depth, which only pkgconf knows).
cpp_pc_version() {
  pkg-config --maximum-traverse-depth=1 --modversion "$1" 2>/dev/null || pkg-config --modversion "$1" 2>/dev/null
}

cpp_apt_install() {
  say cpp "installing $* with apt-get"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

build_cpp() {
  local dir=${1:-bots/cpp} missing can_install=
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && can_install=1
  missing=$(cpp_missing_packages)
  if [ -n "$missing" ]; then
    [ -n "$can_install" ] ||
      die cpp "missing Debian packages: $missing (install them: sudo apt-get install $missing ccache)"
    command -v ccache >/dev/null || missing+=" ccache"
    cpp_apt_install $missing
    missing=$(cpp_missing_packages)
    [ -z "$missing" ] || die cpp "apt-get did not install: $missing"
  elif [ -n "$can_install" ] && ! command -v ccache >/dev/null; then
    cpp_apt_install ccache || say cpp "ccache could not be installed: building without it"
  fi

  # Everything the binary depends on: this folder, the .proto files, and the versions of the tools and libraries.
  local want
  want=$({
    inputs_hash "$dir" "${CPP_PROTOS[@]/#/proto/}"
    g++ --version | head -1; cmake --version | head -1; protoc --version
    cpp_pc_version grpc++; cpp_pc_version protobuf
  } | sha256sum | cut -c1-32)
  local stamp=$dir/bin/.build-hash store=$CACHE/cpp/bots/$want
  if [ -x $dir/bin/bot ] && [ "$(cat $stamp 2>/dev/null)" = "$want" ]; then
    say cpp "$dir/bin/bot is up to date"
    return
  fi
  mkdir -p $dir/bin "$CACHE/cpp/bots"
  if [ -x "$store" ]; then
    # Built before from exactly these sources, by this clone or another one.
    cp "$store" $dir/bin/bot
    touch "$store"
    echo "$want" > $stamp
    say cpp "$dir/bin/bot copied from the cache ($store)"
    return
  fi

  # One CMake build folder per clone (CMake ties a build folder to its source folder), so that editing
  # main.cpp recompiles main.cpp only. flock: two builds of one clone at once take turns.
  local src build
  src=$(cd $dir && pwd -P)
  build=$CACHE/cpp/build-$(echo "$src" | sha256sum | cut -c1-16)
  mkdir -p "$build" && touch "$build"
  say cpp "building $dir/bin/bot with CMake in $build"
  # (Commands chained with &&: in a subshell followed by ||, set -e does not apply.)
  # ccache (optional) keeps compiled objects by content, in $CACHE/cpp/ccache: a new clone's build folder then
  # compiles only what changed. CCACHE_BASEDIR makes the paths inside the build folders relative, so the
  # generated code's objects match from one build folder to another.
  local launcher=
  if command -v ccache >/dev/null; then
    launcher=ccache
    local -x CCACHE_DIR=$CACHE/cpp/ccache CCACHE_BASEDIR=$CACHE/cpp CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-500M}
  fi
  (
    flock 9 &&
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROTO_DIR="$(pwd -P)/proto" \
      -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null &&
    cmake --build "$build" -j "$(nproc)" -- --no-print-directory &&
    cp "$build/bot" "$store.tmp" && mv "$store.tmp" "$store"
  ) 9>"$build.lock" || die cpp "the build failed (the compiler's messages are above)"
  cp "$store" $dir/bin/bot
  echo "$want" > $stamp
  # Forget the build folders of clones unused for two weeks and binaries unused for a month.
  find "$CACHE/cpp" -maxdepth 1 -name 'build-*' -mtime +14 -exec rm -rf {} + 2>/dev/null || true
  find "$CACHE/cpp/bots" -type f -mtime +30 -delete 2>/dev/null || true
  say cpp "built $dir/bin/bot ($(du -h $dir/bin/bot | cut -f1))"
}
