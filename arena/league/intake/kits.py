"""Each kit's build recipe, as data: the script the build sandbox runs in the version's folder, its environment, what
of the kit's cache it reads (read-only), the command that runs the built bot, and how the operator fills the cache.

A recipe's script runs in ``/build`` (the version's files) with ``sh -eu``; ``{entry}``, ``{entry_dir}``,
``{cache}`` (the kit's cache folder, read-only), ``{proto}`` (the protocol's .proto files, also at ``/proto``) and
``{rust}`` (the Rust toolchain's folder) are filled in. The build sees no network: a version can use what the kit's
example uses (pre-fetched into the cache by :func:`arena.league.intake.build.prepare_kits`) plus what it vendors in its
archive (a Go ``vendor/`` folder, a Rust path dependency, ...). What a build must write on (npm's cache, Maven's
repository, a warm build folder) is copied from the cache into ``/build`` and removed before the build ends, so a
build can neither poison the cache for the next one nor carry hundreds of megabytes into its built folder.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
"""The project's checkout: the kits' examples are bots/<kit>/."""
GO_ROOT_CANDIDATES = ("/usr/local/go",)


@dataclass(frozen=True)
class Recipe:
    kit: str
    script: str
    """The build, run contained in the version's folder; an empty build only checks the entry (done before)."""
    run: tuple[str, ...]
    """The built bot's command, run in its folder (``{entry}`` filled in)."""
    env: Mapping[str, str] = field(default_factory=dict)
    toolchains: tuple[str, ...] = ()
    """Folders outside the system's (/usr) the build reads: a toolchain under /opt or a home folder (rustup's under
    /root, whose mode 0700 the sandbox's view does not keep: the folders on the way are made readable there)."""
    protocol: str = "grpc"
    prepare: tuple[tuple[str, ...], ...] = ()
    """The operator's commands, run with the network in a copy of bots/<kit>/, that fill ``{cache}``."""
    prepare_env: Mapping[str, str] = field(default_factory=dict)
    warm: str = ""
    """A build run by prepare_kits in the build sandbox on the kit's example, offline, after ``prepare``; what it
    leaves at ``/build/.warm`` becomes ``{warm}`` (a build folder built at /build, the path every version's
    build has, so the compilers' caches in it stay valid), which the script copies in."""
    check: str = ""
    """What is checked before any build: ``static-elf``, the entry (the binary kit); ``interpreter``, the manifest's
    interpreter, which must be a program of the bot sandbox's read-only system view (the stdio kit)."""

    @property
    def needs_cache(self) -> bool:
        """Whether the operator prepares a cache for this kit (fetched dependencies, or a warm build folder)."""
        return bool(self.prepare or self.warm)


PYTHON_CHECK = "python -c 'import ast,sys; ast.parse(open(sys.argv[1], \"rb\").read(), sys.argv[1])' {entry}\n"
"""The Python kits have nothing to build: the entry must parse (a syntax error is an upload's mistake, said early)."""

SYNTAX_CHECKS = {
    "python3 | python3.*": "{interpreter} -c 'import ast,sys; ast.parse(open(sys.argv[1], \"rb\").read(), sys.argv[1])' {entry}",
    "perl | perl5*": "{interpreter} -c {entry}",
    "ruby | ruby3*": "{interpreter} -c {entry}",
    "bash | sh | dash": "{interpreter} -n {entry}",
    "node | nodejs": "{interpreter} --check {entry}",
    "php | php8*": "{interpreter} -l {entry}",
}
"""The stdio kit's build: the entry checked by its interpreter's own syntax check, when the interpreter (by its file
name, a shell ``case`` pattern) has one; the others have nothing to build. (``perl -c`` runs the script's ``BEGIN`` blocks: in the build
sandbox, offline, as any build step.)"""
STDIO_CHECK = (
    'case "$(basename {interpreter})" in\n'
    + "".join(f"  {name}) {command} ;;\n" for name, command in SYNTAX_CHECKS.items())
    + "  *) echo 'no syntax check for this interpreter: the check-bot matches try the script' ;;\n"
    "esac\n")

GO_PROTOS = ("dominoes/v1/types.proto", "dominoes/v1/bot.proto")
GO_PACKAGE = "dominoes-arena/bots/go/gen/dominoes/v1;dominoesv1"
GO_GENERATE = (
    "if [ ! -d gen ]; then mkdir gen && python -m grpc_tools.protoc -I {proto} "
    "--plugin=protoc-gen-go={cache}/bin/protoc-gen-go --plugin=protoc-gen-go-grpc={cache}/bin/protoc-gen-go-grpc "
    "--go_out=gen --go_opt=paths=source_relative --go-grpc_out=gen --go-grpc_opt=paths=source_relative "
    + " ".join(f"'--go_opt=M{p}={GO_PACKAGE}' '--go-grpc_opt=M{p}={GO_PACKAGE}'" for p in GO_PROTOS) + " "
    + " ".join("{proto}/" + p for p in GO_PROTOS) + "; fi\n")
GO_ENV = {"CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOPROXY": "off", "GOSUMDB": "off", "GOFLAGS": "-modcacherw",
          "GOTELEMETRY": "off"}
"""No toolchain download (``go 1.99`` in go.mod fails instead), no module proxy, no checksum database: the
modules are the cache's (read-only) or the version's ``vendor/``."""

WARM = "{warm}"
"""The kit's warm build folder for this protocol, ``{cache}/warm-<proto digest>`` (arena.sandbox.build.proto_digest):
a cache prepared before the .proto files changed has none, and its builds are cold, not stale."""
COPY_WARM = "if [ -d " + WARM + " ]; then cp -a " + WARM + " .warm; fi\n"
"""The kit's warm build folder copied in (writable, times kept: make and cargo see its outputs up to date)."""

RUST_BUILD = (
    # The cache's CARGO_HOME is read-only; cargo wants to lock and write beside its registry: a CARGO_HOME of the
    # build's own whose registry (the index, the .crate files, their sources unpacked) is the cache's, and the
    # network off for cargo too (it says so, instead of waiting on a name that cannot be resolved).
    "export CARGO_HOME=/tmp/cargo-home CARGO_TARGET_DIR=/build/.warm\n"
    "mkdir -p $CARGO_HOME/registry\n"
    "for part in index cache src; do ln -s {cache}/home/registry/$part $CARGO_HOME/registry/$part; done\n"
    "printf '[net]\\noffline = true\\n' > $CARGO_HOME/config.toml\n"
    + COPY_WARM
    + "cargo build --release --offline --locked --manifest-path {entry}\n"
    # The bot is the package's binary named bot, else its only binary.
    "mkdir -p bin\n"
    "if [ -f .warm/release/bot ]; then cp .warm/release/bot bin/bot; else\n"
    "  set -- $(find .warm/release -maxdepth 1 -type f -perm -u+x)\n"
    "  [ $# -eq 1 ] || { echo \"expected one binary (or one named bot) in the package, got $#: $*\"; exit 1; }\n"
    "  cp \"$1\" bin/bot\n"
    "fi\n")
RUST_ENV = {"PATH": "{rust}/bin:{path}", "CARGO_TERM_COLOR": "never", "CARGO_INCREMENTAL": "1"}

CPP_BUILD = (
    COPY_WARM
    # ccache (when installed) with the kit's prepared objects: an unchanged main.cpp is not even recompiled.
    + "launcher=; if command -v ccache >/dev/null; then launcher=ccache; mkdir -p /tmp/ccache;"
    " if [ -d .warm/ccache ]; then cp -a .warm/ccache/. /tmp/ccache/; fi; fi\n"
    "cmake -S {entry_dir} -B .warm -DCMAKE_BUILD_TYPE=Release -DPROTO_DIR={proto}"
    " -DCMAKE_CXX_COMPILER_LAUNCHER=$launcher >/dev/null\n"
    "cmake --build .warm -j 2 -- --no-print-directory\n"
    "[ -f .warm/bot ] || { echo 'expected the CMake project to build an executable named bot'; exit 1; }\n"
    "mkdir -p bin && cp .warm/bot bin/bot\n")
CPP_ENV = {"CCACHE_DIR": "/tmp/ccache", "CCACHE_BASEDIR": "/build", "CCACHE_NOHASHDIR": "1",
           "CCACHE_SLOPPINESS": "include_file_mtime,include_file_ctime,time_macros"}

TS_PROTO_OPTS = "outputServices=grpc-js,env=node,useOptionals=messages"
NPM_CI = ("mkdir -p .cache && cp -R {cache}/npm .cache/npm\n"
          "npm ci --offline --cache /build/.cache/npm --no-audit --no-fund --no-update-notifier\n"
          "rm -rf .cache\n")
TS_BUILD = (
    NPM_CI
    + "if [ ! -d src/gen ]; then mkdir -p src/gen && python -m grpc_tools.protoc -I {proto} "
    "--plugin=protoc-gen-ts_proto=node_modules/.bin/protoc-gen-ts_proto --ts_proto_out=src/gen "
    f"--ts_proto_opt={TS_PROTO_OPTS} dominoes/v1/types.proto dominoes/v1/bot.proto; fi\n"
    "node node_modules/typescript/bin/tsc -p tsconfig.json\n")

MAVEN = ("mvn -B -q --no-transfer-progress -Dstyle.color=never -Dmaven.repo.local={m2}")
JAVA_BUILD = (
    # Maven writes into its repository even offline (what it resolved, from where): a copy, removed after.
    "cp -R {cache}/m2 .m2\n"
    + MAVEN.replace("{m2}", "/build/.m2") + " -o -f {entry} package\n"
    "rm -rf .m2\n"
    # The runnable jar: the one the package phase made in the build folder (Maven's target/, or gen/ as the
    # example has it), the shaded one rather than the original- one beside it.
    "set -- $(find {entry_dir}/target {entry_dir}/gen -maxdepth 1 -name '*.jar' ! -name 'original-*' 2>/dev/null)\n"
    "[ $# -eq 1 ] || { echo \"expected the build to make one runnable jar, got $#: $*\"; exit 1; }\n"
    "mkdir -p bin && cp \"$1\" bin/bot.jar\n")
JAVA_RUN = ("java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-XX:ActiveProcessorCount=1", "-XX:-UsePerfData", "-jar", "bin/bot.jar")
"""The launcher bots/java/bot's flags (sized for the bot sandbox), without its class-data archive."""
MAVEN_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

RECIPES: dict[str, Recipe] = {r.kit: r for r in (
    Recipe("python", PYTHON_CHECK, ("python", "{entry}")),
    Recipe("stdio", STDIO_CHECK, ("{interpreter}", "{entry}"), protocol="stdio", check="interpreter"),
    Recipe(
        "go",
        GO_GENERATE
        # The warm build cache is copied (a build cache must be writable, and a shared one could be poisoned),
        # then removed: the built folder keeps the binary, not 150 MB of objects.
        + "mkdir -p .cache && cp -R {cache}/build .cache/go-build\n"
        "go build -trimpath -buildvcs=false -ldflags='-s -w' -o bin/bot ./{entry_dir}\n"
        "rm -rf .cache\n",
        ("bin/bot",),
        env={**GO_ENV, "GOMODCACHE": "{cache}/mod", "GOCACHE": "/build/.cache/go-build",
             "PATH": "/usr/local/go/bin:{path}"},
        toolchains=GO_ROOT_CANDIDATES,
        # go build fetches exactly the modules the example needs (and go install the protoc plugins'):
        # ``go mod download all`` would fetch test-only modules too.
        prepare=(("go", "install", "google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12"),
                 ("go", "install", "google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2"),
                 ("sh", "-eu", "-c", GO_GENERATE.replace("{proto}", str(REPO / "proto"))),
                 ("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", "bin/bot", ".")),
        prepare_env={"CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GOFLAGS": "-modcacherw",
                     "GOMODCACHE": "{cache}/mod", "GOCACHE": "{cache}/build", "GOBIN": "{cache}/bin",
                     "GOPATH": "{cache}/path", "PATH": "/usr/local/go/bin:{path}"},
    ),
    Recipe(
        "node",
        # npm writes into its cache even offline: each build gets a copy of the prepared one, removed after.
        # Install scripts run (a version's postinstall or a dependency's native build): they are the stranger's
        # code, contained like the rest of the build, and refusing them would break packages that need them.
        "if [ -f package.json ]; then\n"
        "  mkdir -p .cache && cp -R {cache}/npm .cache/npm\n"
        "  npm ci --offline --cache /build/.cache/npm --no-audit --no-fund --no-update-notifier\n"
        "  rm -rf .cache\n"
        "fi\n",
        # The kit's example reads the .proto files at run time, from --proto-dir (the arena's, visible to bots).
        ("node", "{entry}", "--proto-dir", "{proto}"),
        env={"npm_config_update_notifier": "false"},
        prepare=(("npm", "ci", "--cache", "{cache}/npm", "--no-audit", "--no-fund"),),
    ),
    Recipe(
        "typescript",
        TS_BUILD,
        ("node", "{entry}"),
        env={"npm_config_update_notifier": "false"},
        prepare=(("npm", "ci", "--cache", "{cache}/npm", "--no-audit", "--no-fund", "--ignore-scripts"),),
    ),
    Recipe(
        "rust",
        RUST_BUILD + "rm -rf .warm\n",
        ("bin/bot",),
        env=RUST_ENV,
        toolchains=("{rust}",),
        # The crates of the example's Cargo.lock for this machine, fetched and unpacked into the cache's
        # CARGO_HOME (its index answers the resolution of the others, which are never built here: cargo vendor
        # would fetch every platform's), then the example built in the sandbox: its target folder makes a version
        # that changes only its own crate recompile only that crate.
        prepare=(("cargo", "fetch", "--locked", "--target", "{rust_host}"),),
        prepare_env={"CARGO_HOME": "{cache}/home", "PATH": "{rust}/bin:{path}"},
        warm=RUST_BUILD,
    ),
    Recipe(
        "cpp",
        CPP_BUILD + "rm -rf .warm\n",
        ("bin/bot",),
        env=CPP_ENV,
        # Debian's gRPC, protobuf, protoc and grpc_cpp_plugin are in /usr: nothing to fetch. The warm CMake
        # folder holds the generated protocol code compiled into its library, and ccache the objects.
        warm=CPP_BUILD + "mkdir -p .warm/ccache && cp -a /tmp/ccache/. .warm/ccache/\n",
    ),
    Recipe(
        "java",
        JAVA_BUILD,
        JAVA_RUN,
        env={"MAVEN_OPTS": MAVEN_OPTS},
        # Debian's Maven reads its settings through /etc/maven.
        toolchains=("/etc/maven",),
        # Maven's repository filled by building the example: the plugins, protoc and protoc-gen-grpc-java for
        # this machine, the libraries.
        prepare=(tuple(MAVEN.replace("{m2}", "{cache}/m2").split()) + ("package",),),
        prepare_env={"MAVEN_OPTS": MAVEN_OPTS},
    ),
    Recipe("binary", "chmod 0755 {entry}\n", ("./{entry}",), check="static-elf"),
)}
"""Every kit a league accepts (arena.league.rules.manifest.KITS) and how it is built."""


def rust_toolchain() -> str:
    """The Rust toolchain's own folder (rustc --print sysroot): its bin/ has cargo and rustc themselves, not
    rustup's proxies, which would want to write under ~/.rustup. Under /root (mode 0700) it is still visible to a
    build's own user: the sandbox makes the folders on the way to it readable (arena.sandbox.contain.MountView)."""
    return _rust_toolchain()


def rust_host() -> str:
    """The machine's target triple (x86_64-unknown-linux-gnu): the crates fetched are the ones built here."""
    rustc = Path(rust_toolchain()) / "bin" / "rustc"
    try:
        done = subprocess.run([str(rustc), "-vV"], capture_output=True, text=True, timeout=60)
    except OSError:
        return "unknown"
    return next((line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("host: ")),
                "unknown")


@functools.cache
def _rust_toolchain() -> str:
    rustc = shutil.which("rustc") or str(Path.home() / ".cargo" / "bin" / "rustc")
    try:
        done = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60)
    except OSError:
        return "/nonexistent-rust-toolchain"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "/nonexistent-rust-toolchain"
