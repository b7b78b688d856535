"""Generate the Python code of the protocol from ``proto/`` (run by ``scripts/setup.sh``; never edit the output).

It lives outside ``arena.protocol`` because that package imports the generated code, which this module writes.

``python -m arena.codegen`` writes ``arena/_generated/``; ``--check`` regenerates into a temporary folder
and exits 1 when the code in ``arena/_generated`` differs (stale), which a test also checks. This module imports nothing
generated, so it runs before the code exists.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path

import grpc_tools
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[1]
PROTO_DIR = ROOT / "proto"
OUT_DIR = ROOT / "arena" / "_generated"


def proto_files() -> list[Path]:
    return sorted(PROTO_DIR.rglob("*.proto"))


def generate(out: Path) -> None:
    """Run protoc (from grpcio-tools) over every .proto file into ``out``, with mypy-protobuf's typed stubs."""
    out.mkdir(parents=True, exist_ok=True)
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    plugins = Path(sys.executable).parent  # mypy-protobuf's protoc plugins, installed beside this interpreter
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_DIR}",
        f"-I{well_known}",
        f"--plugin=protoc-gen-mypy={plugins / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={plugins / 'protoc-gen-mypy_grpc'}",
        f"--python_out={out}",
        f"--mypy_out=quiet:{out}",  # typed stubs of the messages (enums as NewType, fields exact), read by mypy
        f"--grpc_python_out={out}",
        f"--mypy_grpc_out=quiet:{out}",  # typed stubs of the stubs and servicers
        *(str(p) for p in proto_files()),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("error: protoc failed on proto/ (see the message above)")
    for folder in [out, *(p for p in out.rglob("*") if p.is_dir())]:
        (folder / "__init__.py").touch()


def differences(a: Path, b: Path) -> list[str]:
    """Relative paths that differ between two generated trees."""
    names_a = {p.relative_to(a) for p in a.rglob("*") if _generated_file(p)}
    names_b = {p.relative_to(b) for p in b.rglob("*") if _generated_file(p)}
    changed = [n for n in names_a & names_b if not filecmp.cmp(a / n, b / n, shallow=False)]
    return sorted(str(n) for n in (names_a ^ names_b) | set(changed))


def _generated_file(path: Path) -> bool:
    return path.is_file() and "__pycache__" not in path.parts and not path.name.startswith(".")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if arena/_generated is stale")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(Path(tmp))
            stale = differences(Path(tmp), OUT_DIR) if OUT_DIR.exists() else ["arena/_generated (missing)"]
        if stale:
            print("stale generated code, run `python -m arena.codegen`: " + ", ".join(stale))
            return 1
        return 0
    if OUT_DIR.exists():
        shutil.rmtree(OUT_DIR)
    generate(OUT_DIR)
    return 0


if __name__ == "__main__":
    sys.exit(main())
