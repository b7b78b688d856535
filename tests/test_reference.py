"""The generated reference pages (docs/reference/) say what the code does: each is regenerated in memory from the
code it describes (the command-line parser, the .proto files, the configuration parsers) and must equal the file on
disk, so a flag, field or key added to the code and not to its page fails here, and the other way round."""

from __future__ import annotations

import importlib.util
import math
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
    """The keys the configuration pages (docs/reference/config-*.md) list under each table heading, read back from
    the pages on disk."""
    found: dict[str, set[str]] = {}
    heading = ""
    lines = [line for page in reference.CONFIG_PAGES.values()
             for line in (ROOT / "docs" / "reference" / page).read_text().splitlines()]
    for line in lines:
        if line.startswith("## "):
            heading = line[3:].replace("\\", "")
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


def every_key() -> list[tuple[str, str]]:
    """Each (table heading, key) of the configuration page, from the generator's tables."""
    return [(f"{table.heading} ({short})", key) for (_title, short), tables in reference.config_files().items()
            for table in tables for key in table.keys]


@pytest.mark.parametrize(("heading", "key"), every_key())
def test_every_key_has_a_meaning(heading: str, key: str) -> None:
    table = next(t for (_title, short), tables in reference.config_files().items() for t in tables
                 if f"{t.heading} ({short})" == heading)
    meaning = table.meaning(key)
    assert len(meaning.split()) >= 3, (f"{heading}: key {key!r} has no meaning: give its field an attribute "
                                       f"docstring, or the parser's module a line for a key without a field")


# The bounds the page shows, held against the parser ------------------------------------------------------------

TWO_BOTS = [{"name": "a", "command": "builtin:random"}, {"name": "b", "command": "builtin:random"}]
TOURNAMENT = {"variant": "draw", "bots": TWO_BOTS}
LEAGUE = {"name": "bounds", "variant": "draw"}


def tournament_with(table: str) -> Callable[[dict[str, Any]], object]:
    """A parser of a whole tournament file with ``keys`` in ``table`` ("" for the top level)."""
    return lambda keys: spec.spec_from_dict({**TOURNAMENT, **keys} if not table else {**TOURNAMENT, table: keys})


def league_with(table: str) -> Callable[[dict[str, Any]], object]:
    return lambda keys: league_config.league_from_dict({**LEAGUE, **keys} if not table else {**LEAGUE, table: keys})


WHOLE_FILE: dict[str, Callable[[dict[str, Any]], object]] = {
    "top level (tournament file)": tournament_with(""),
    "[time] (tournament file)": tournament_with("time"),
    "[sprt] (tournament file)": tournament_with("sprt"),
    "[limits] (tournament file)": tournament_with("limits"),
    "top level (league file)": league_with(""),
    **{f"[{name}] (league file)": league_with(name)
       for name in ("time", "limits", "upload", "build", "authors", "ladder", "challenges", "signup", "notices")},
    "[finals] (league file)": lambda keys: league_config.league_from_dict(
        {**LEAGUE, "players": 3 if keys.get("format", "round_robin") == "round_robin" else 2, "finals": keys}),
}
"""Each table with bounds, parsed as part of a file that is valid but for the key under test (the finals' in a league of
three sides: two sides take no ``tables``; of two for a Swiss's or a knockout's keys)."""

COMPANIONS: dict[tuple[str, str, str], dict[str, Any]] = {
    ("top level (tournament file)", "tables", "low"): {"format": "balanced"},
    ("top level (tournament file)", "tables", "high"): {"format": "balanced"},
    ("top level (tournament file)", "players", "high"): {"variant": "mexican_train"},
    ("top level (tournament file)", "rounds", "low"): {"format": "swiss"},
    ("top level (tournament file)", "tiebreak_games", "low"): {"format": "knockout"},
    ("top level (tournament file)", "tiebreak_games", "high"): {"format": "knockout"},
    ("top level (league file)", "players", "high"): {"variant": "mexican_train"},
    ("[upload] (league file)", "unpacked_mb", "low"): {"archive_mb": 1},
    ("[upload] (league file)", "archive_mb", "high"): {"unpacked_mb": 65536},
    **{("[finals] (league file)", key, side): {"format": fmt} for key, fmt in (("rounds", "swiss"),
                                                                             ("tiebreak_deal_sets", "knockout"))
       for side in ("low", "high")},
}
"""Other keys a bound needs to be reached: a balanced schedule for ``tables``, a Swiss event for ``rounds``, a knockout
for ``tiebreak_games``, the variant with the most players, an archive no bigger than its unpacked size, the finals'
format a key belongs to."""

ORDERED = {("elo0", "high"), ("elo1", "low")}
"""Ends no file can reach, since elo0 < elo1 and both have the same bounds: there the test expects the refusal of
that rule, not of the bound."""


def outcome(heading: str, keys: dict[str, Any]) -> str:
    """"" when the file parses, else the parser's message."""
    try:
        WHOLE_FILE[heading](keys)
    except Exception as error:  # noqa: BLE001 (each parser has its own error type; only the message matters)
        return str(error) or type(error).__name__
    return ""


def integral(bound: Any) -> bool:
    return isinstance(bound.low, int) and (bound.high is None or isinstance(bound.high, int))


def step(value: float, toward: float, whole: bool) -> float:
    """The next value from ``value`` toward ``toward``: one for an integer key, the next float for a number."""
    if whole:
        return value + (1 if toward > value else -1)
    return math.nextafter(value, toward)


def bound_cases() -> list[tuple[str, str, str]]:
    return [(heading, key, side) for (_title, short), tables in reference.config_files().items() for table in tables
            for key, bound in table.bounds.items() for side in ("low", "high")
            if (heading := f"{table.heading} ({short})") and not (side == "high" and bound.high is None)]


@pytest.mark.parametrize(("heading", "key", "side"), bound_cases())
def test_the_parser_holds_each_key_to_the_bound_the_page_shows(heading: str, key: str, side: str) -> None:
    table = next(t for (_title, short), tables in reference.config_files().items() for t in tables
                 if f"{t.heading} ({short})" == heading)
    bound = table.bounds[key]
    edge = bound.low if side == "low" else bound.high
    outward = -math.inf if side == "low" else math.inf
    whole = integral(bound)
    inside, outside = (step(edge, -outward, whole), edge) if bound.exclusive else (edge, step(edge, outward, whole))
    companions = COMPANIONS.get((heading, key, side), {})
    accepted = outcome(heading, {**companions, key: inside})
    if (key, side) in ORDERED:
        assert "elo0" in accepted and "elo1" in accepted, f"{heading} {key} = {inside}: {accepted!r}"
    else:
        assert accepted == "", f"{heading}: {key} = {inside!r} is within the page's bound, refused: {accepted}"
    assert outcome(heading, {**companions, key: outside}), f"{heading}: {key} = {outside!r} is out of bounds, taken"


def test_the_sandbox_page_names_no_folder_of_this_machine() -> None:
    """The page is the same wherever the arena is cloned (CI clones elsewhere): the clone's folder and the Python
    environment's are shown by what they are."""
    page = reference.sandbox_contents_page()
    machine = {str(ROOT), sys.prefix, sys.base_prefix, str(Path(sys.executable).parent)}
    for folder in {f for f in machine if not any(f == d or f.startswith(d + "/") for d in ("/usr", "/bin"))}:
        assert folder not in page, f"{reference.SANDBOX_CONTENTS} names {folder}, a folder of this machine"
    assert reference.CLONE in page and reference.ENVIRONMENT in page
