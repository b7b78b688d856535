"""The generated reference pages (docs/reference/) say what the code does: each is regenerated in memory from the
code it describes (the command-line parser, the .proto files, the configuration parsers) and must equal the file on
disk, so a flag, field or key added to the code and not to its page fails here, and the other way round."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arena.league.rules import config as league_config
from arena.league.rules import manifest
from arena.sandbox import limits_from_table
from arena.tournament import spec

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


def documented_keys() -> dict[str, set[str]]:
    """The keys docs/reference/config.md lists under each table heading, read back from the page on disk."""
    found: dict[str, set[str]] = {}
    heading = ""
    for line in (ROOT / "docs" / "reference" / "config.md").read_text().splitlines():
        if line.startswith("### "):
            heading = line[4:].replace("\\", "")
            found[heading] = set()
        elif heading and (key := re.match(r"\| `([a-z0-9_]+)` \|", line)):
            found[heading].add(key.group(1))
    return found


def test_config_page_lists_every_key_of_every_table_and_nothing_else() -> None:
    documented = documented_keys()
    for (_title, short), tables in reference.config_files().items():
        for table in tables:
            heading = f"{table.heading} ({short})"
            assert documented.get(heading) == set(table.keys), f"{heading}: the page and the parser differ"


def unknown_key_error(parse: Callable[[dict[str, Any]], object], key: str) -> str:
    """The parser's complaint about ``key`` being unknown, if that is what it raised ("" when it accepted the key
    and failed, if at all, on something else: a missing key, a bad value)."""
    try:
        parse({key: object()})
    except Exception as error:  # noqa: BLE001 (each parser has its own error type; only the message matters)
        message = str(error)
        complaint = "unknown key" in message or "is not a manifest key" in message
        return message if complaint and f"'{key}'" in message else ""
    return ""


PARSERS: dict[str, Callable[[dict[str, Any]], object]] = {
    "top level (tournament file)": spec.spec_from_dict,
    "[time] (tournament file)": spec.time_from_table,
    "[limits] (tournament file)": limits_from_table,
    "top level (league file)": league_config.league_from_dict,
    "top level (bot.toml)": manifest.manifest_from_table,
}
"""Tables whose parser checks for unknown keys before anything else, so a lone key shows whether it is accepted."""


@pytest.mark.parametrize("heading", sorted(PARSERS))
def test_the_parser_accepts_every_documented_key_and_refuses_another(heading: str) -> None:
    parse = PARSERS[heading]
    keys = documented_keys()[heading]
    assert keys
    refused = {key: unknown_key_error(parse, key) for key in keys}
    assert not any(refused.values()), f"{heading}: documented keys the parser refuses: {refused}"
    assert unknown_key_error(parse, "not_a_key"), f"{heading}: the parser took a key the page does not list"
