"""The generated reference pages (docs/reference/) say what the code does: each is regenerated in memory from the
code it describes (the command-line parser, the .proto files, the configuration parsers) and must equal the file on
disk, so a flag, field or key added to the code and not to its page fails here, and the other way round."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.fast  # the pages are generated in this process (protoc runs as a library)

ROOT = Path(__file__).resolve().parent.parent


def load_generator() -> ModuleType:
    """scripts/reference.py imported by its path: it is a script, not a module of the arena."""
    spec = importlib.util.spec_from_file_location("reference_pages", ROOT / "scripts" / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


reference = load_generator()


@pytest.mark.parametrize("name", sorted(reference.PAGES))
def test_generated_page_matches_the_code(name: str) -> None:
    want = reference.PAGES[name]()
    path = ROOT / name
    have = path.read_text() if path.exists() else ""
    assert have == want, (f"{name} differs from the code; regenerate it with `{reference.REGENERATE}`\n"
                          + reference.stale().get(name, "")[:4000])
