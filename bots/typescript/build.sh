# The TypeScript kit's build, sourced by bots/build.sh (which defines say, die, inputs_hash, need_protoc and CACHE).
# Run it as: bash bots/build.sh typescript, or bash bots/build.sh DIR for a bot folder made from this kit (arena new-bot).
# Every version (typescript, ts-proto, @grpc/grpc-js, @bufbuild/protobuf) is pinned in package.json and
# package-lock.json; ts-proto's generated code imports @bufbuild/protobuf/wire, so keep the two in step.
TS_PROTOS=(dominoes/v1/types.proto dominoes/v1/bot.proto)
# ts-proto's options: a grpc-js service definition and a typed server interface (BotService, BotServer),
# Node.js Buffers, and fields of message type optional (`observation?: Observation`).
TS_PROTO_OPTS=outputServices=grpc-js,env=node,useOptionals=messages

build_typescript() {
  # $NODE, else node on the PATH; npm beside it, else npm on the PATH (Debian packages it apart: apt-get install npm).
  local dir=${1:-bots/typescript} node_bin=${NODE:-$(command -v node || echo node)} npm_bin
  command -v "$node_bin" >/dev/null 2>&1 ||
    die typescript "node not found ($node_bin): install Node.js 20 or later (apt-get install nodejs npm) or set NODE=/path/to/node"
  node_bin=$(command -v "$node_bin")
  "$node_bin" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
    die typescript "Node.js $("$node_bin" --version) is too old ($node_bin): 20 or later is needed"
  npm_bin=$(dirname "$node_bin")/npm
  [ -x "$npm_bin" ] || npm_bin=$(command -v npm) ||
    die typescript "npm not found: install it (apt-get install npm) next to $node_bin"
  # The ts-proto plugin and tsc start with `#!/usr/bin/env node`: make that the node chosen here.
  local PATH="${node_bin%/*}:$PATH"

  local stamp=$dir/dist/.build-hash want
  local modules_stamp=$dir/node_modules/.kit-lock-hash modules_want
  # src/gen (generated) is left out of the hash by inputs_hash itself; node_modules and dist are not under src.
  want=$(inputs_hash "$dir/src" "${TS_PROTOS[@]/#/proto/}" \
           $dir/package.json $dir/package-lock.json $dir/tsconfig.json $dir/build.sh $dir/bot.js
         "$node_bin" --version) # two lines: the hash, then the Node.js version
  # What node_modules depends on: the lockfile, and the Node.js version and machine (platform packages).
  modules_want=$({ sha256sum $dir/package-lock.json; "$node_bin" --version; uname -m; } |
                 sha256sum | cut -d' ' -f1)
  if [ -f $dir/dist/bot.js ] && [ "$(cat $stamp 2>/dev/null)" = "$want" ] &&
     [ "$(cat $modules_stamp 2>/dev/null)" = "$modules_want" ]; then
    say typescript "$dir/dist is up to date"
    return
  fi

  # The packages, exactly as package-lock.json says, into $dir/node_modules. npm's downloads stay in the cache
  # outside the clone (--prefer-offline takes them from there without asking the registry again), but even then
  # `npm ci` takes 8 to 14 s here, reading a metadata document per package and unpacking every tarball; so the
  # installed tree is kept in the cache too, under the hash of the lockfile, Node.js version and machine, and a
  # fresh clone copies it (well under a second). --ignore-scripts: none of these packages needs an install script.
  if [ "$(cat $modules_stamp 2>/dev/null)" != "$modules_want" ]; then
    local trees=$CACHE/typescript/node_modules
    local tree=$trees/$modules_want
    rm -rf $dir/node_modules $dir/.node_modules.tmp
    if [ -f "$tree/.kit-lock-hash" ]; then
      say typescript "copying node_modules from the cache ($tree)"
      { cp -a "$tree" $dir/.node_modules.tmp && mv $dir/.node_modules.tmp $dir/node_modules; } ||
        die typescript "could not copy $tree into $dir/node_modules"
    else
      say typescript "installing the pinned packages (npm ci; cache $CACHE/typescript/npm)"
      (cd $dir && "$npm_bin" ci --cache "$CACHE/typescript/npm" --prefer-offline --ignore-scripts \
                   --no-audit --no-fund --no-update-notifier --loglevel=error) ||
        die typescript "npm ci failed in $dir (see above)"
      echo "$modules_want" > $modules_stamp
      # Into the cache under a temporary name, then renamed: a build cut short leaves no half tree there.
      # Only the three newest trees are kept.
      mkdir -p "$trees"
      local part
      part=$(mktemp -d "$trees/.part-XXXXXX")
      cp -a $dir/node_modules "$part/tree" && mv -T "$part/tree" "$tree" 2>/dev/null || true
      rm -rf "$part"
      { ls -1dt "$trees"/*/ | tail -n +4 | xargs -r rm -rf; } 2>/dev/null || true
    fi
  fi

  need_protoc typescript
  say typescript "generating the protocol code from proto/ into $dir/src/gen (ts-proto $TS_PROTO_OPTS)"
  rm -rf $dir/src/gen && mkdir -p $dir/src/gen
  .venv/bin/python -m grpc_tools.protoc -I proto \
    --plugin=protoc-gen-ts_proto=$dir/node_modules/.bin/protoc-gen-ts_proto \
    --ts_proto_out=$dir/src/gen --ts_proto_opt=$TS_PROTO_OPTS "${TS_PROTOS[@]}"

  say typescript "compiling $dir/src into $dir/dist with tsc $("$node_bin" $dir/node_modules/typescript/bin/tsc --version | awk '{print $NF}')"
  rm -rf $dir/dist
  (cd $dir && "$node_bin" node_modules/typescript/bin/tsc -p tsconfig.json) ||
    die typescript "tsc failed (see above)"
  echo "$want" > $stamp
  say typescript "built $dir/dist ($(du -sh $dir/dist | cut -f1); node_modules $(du -sh $dir/node_modules | cut -f1)); run: node $dir/bot.js"
}
