"""Each kit's build recipe, as data: the script the build sandbox runs in the version's folder, its environment, what
of the kit's cache it reads (read-only), the command that runs the built bot, and how the operator fills the cache.

A recipe's script runs in ``/build`` (the version's files) with ``sh -eu``; ``{entry}``, ``{entry_dir}``,
``{cache}`` (the kit's cache folder, read-only) and ``{proto}`` (the protocol's .proto files) are filled in. The build
sees no network: a version can use what the kit's example uses (pre-fetched into the cache by
:func:`arena.league.build.prepare_kits`) plus what it vendors in its archive (a Go ``vendor/`` folder, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

REPO = Path(__file__).resolve().parents[2]
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
    """Folders outside the system's (/usr) the build reads: a toolchain installed under /usr/local or /opt."""
    protocol: str = "grpc"
    prepare: tuple[tuple[str, ...], ...] = ()
    """The operator's commands, run with the network in a copy of bots/<kit>/, that fill ``{cache}``."""
    prepare_env: Mapping[str, str] = field(default_factory=dict)


PYTHON_CHECK = "python -c 'import ast,sys; ast.parse(open(sys.argv[1], \"rb\").read(), sys.argv[1])' {entry}\n"
"""The Python kits have nothing to build: the entry must parse (a syntax error is an upload's mistake, said early)."""

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

RECIPES: dict[str, Recipe] = {r.kit: r for r in (
    Recipe("python", PYTHON_CHECK, ("python", "{entry}")),
    Recipe("stdio", PYTHON_CHECK, ("python", "{entry}"), protocol="stdio"),
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
)}
"""The kits a league builds today. typescript, rust, java and cpp are not yet here: a version of theirs fails
its build with a line saying so (see the docs note)."""
