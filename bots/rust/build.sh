# The Rust kit's build, sourced by bots/build.sh (which defines say, die, inputs_hash, need_protoc and CACHE).
# Run it as: bash bots/build.sh rust, or bash bots/build.sh DIR for a bot folder made from this kit (arena new-bot).
# cargo builds the crate in bots/rust (Cargo.lock pins every crate); its build.rs generates the protocol code
# with protox, a .proto compiler written in Rust, so neither protoc nor the venv is needed.
#
# Everything lives under $CACHE/rust: cargo-home/ (the crates.io index and the crates), target/ (the build
# cache) and src/, a copy of bots/rust and proto/ that cargo actually builds. The copy sits at the same path for
# every clone, because rustc discards its incremental cache when the source folder moves: built in place, a
# fresh clone would recompile the bot for half a minute; built from the copy, with only changed files
# rewritten, an unchanged fresh clone rebuilds nothing and an edited policy recompiles in seconds.

# _rust_sync SRC DST: make DST a copy of SRC (without bin/, gen/, target/), rewriting only the files whose
# content differs, so the others keep their times and cargo sees them unchanged.
_rust_sync() {
  local src=$1 dst=$2 f
  mkdir -p "$dst"
  (cd "$src" && find . \( -path ./bin -o -path ./gen -o -path ./target \) -prune -o -type f -print) |
    while IFS= read -r f; do
      cmp -s "$src/$f" "$dst/$f" || { mkdir -p "$(dirname "$dst/$f")" && cp "$src/$f" "$dst/$f"; }
    done
  (cd "$dst" && find . \( -path ./gen -o -path ./target \) -prune -o -type f -print) |
    while IFS= read -r f; do
      [ -e "$src/$f" ] || rm -f "$dst/$f"
    done
}

build_rust() {
  # $CARGO, else cargo on the PATH, else ~/.cargo/bin, where rustup puts it (often not on a non-login PATH).
  local dir=${1:-bots/rust} cargo_bin=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
  "$cargo_bin" --version >/dev/null 2>&1 ||
    die rust "cargo not found or not working ($cargo_bin): install Rust 1.88 or later (https://rustup.rs) or set CARGO=/path/to/cargo"
  # rustc beside cargo (rustup's proxies), else on the PATH; cargo runs with that folder first on its PATH.
  local tools rustc_bin
  tools=$(dirname "$cargo_bin")
  rustc_bin=$tools/rustc
  [ -x "$rustc_bin" ] || rustc_bin=$(command -v rustc) || die rust "rustc not found beside $cargo_bin nor on the PATH"

  local src=$CACHE/rust/src target=$CACHE/rust/target
  mkdir -p "$CACHE/rust"
  # One build at a time per cache: two clones building at once would rewrite the same copy and binary.
  (
    flock 9 2>/dev/null || true
    _rust_sync "$dir" "$src/bots/rust"
    _rust_sync proto "$src/proto"

    # The stamp: the hash of the copy (this clone's sources, README included, and the protos), of this file
    # and of the tool versions.
    local stamp=$dir/bin/.build-hash want
    want=$(inputs_hash "$src/bots/rust" $dir/build.sh "$src"/proto/dominoes/v1/{types,bot}.proto
           "$cargo_bin" --version; "$rustc_bin" --version)
    if [ -x $dir/bin/bot ] && [ "$(cat $stamp 2>/dev/null)" = "$want" ]; then
      say rust "$dir/bin/bot is up to date"
      exit 0
    fi

    # CARGO_HOME moves only the index and the crates: the toolchain stays where rustup put it (RUSTUP_HOME).
    # --locked: the build uses Cargo.lock as it is, or fails.
    say rust "building $dir/bin/bot with $("$rustc_bin" --version | cut -d' ' -f1-2) (release; crates, build cache and the copy built in $CACHE/rust)"
    (cd "$src/bots/rust" && PATH="$tools:$PATH" CARGO_HOME="$CACHE/rust/cargo-home" CARGO_TARGET_DIR="$target" \
       "$cargo_bin" build --release --locked --quiet) || die rust "cargo build failed (see above)"
    mkdir -p $dir/bin $dir/gen
    cp "$src/bots/rust/gen/dominoes.v1.rs" $dir/gen/ # the generated code, to read
    # Copy, then rename: a bot running from bin/bot keeps its file, and nobody sees a half-written one.
    cp "$target/release/bot" $dir/bin/.bot.new && mv -f $dir/bin/.bot.new $dir/bin/bot
    echo "$want" > $stamp
    say rust "built $dir/bin/bot ($(du -h $dir/bin/bot | cut -f1))"
  ) 9>"$CACHE/rust/.lock"
}
