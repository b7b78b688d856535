"""Mutated tournament files (hypothesis): type flips and text mutations of a valid file give a clean SpecError or a
valid spec, never another exception."""

from __future__ import annotations

import copy
import datetime
import os
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis import HealthCheck, given, settings

import pytest

from arena.tournament.schedule import Schedule
from arena.tournament.spec import SpecError, TournamentSpec, load_spec, spec_from_dict

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

BASE = f'''name = "fuzz"
variant = "draw"
players = 2
games = 3
duplicate = true
seed = "s"
concurrency = 2
output = "runs/fuzz"
fault_policy = "forfeit"
sandbox = true

[options]
target = 50

[time]
move_ms = 1000
bank_ms = 0
startup_ms = 5000
first_move_ms = 0

[limits]
memory_mb = 512
pids = 64
cpus = 1.0

[[bots]]
name = "a"
command = "python bots/python/random_bot.py"
env = {{ KEY = "v" }}
cwd = "."
folder = "bots/python"
limits = {{ memory_mb = 256 }}
transport = "unix"
protocol = "grpc"

[[bots]]
name = "b"
command = ["python", "bots/python/greedy_bot.py"]
skip_if_missing = true

[[bots]]
name = "c"
address = "127.0.0.1:50051"
'''
BASE_DATA = tomllib.loads(BASE)
EXAMPLES = 3000 if os.environ.get("HYPOTHESIS_PROFILE") == "soak" else 300

NASTY = st.sampled_from(["", "\x00", "python\x00", "A=B", "\x1b[2J", "draw", "x" * 300, "unix:/x\x00",
                         "127.0.0.1:1", "python -c 'pass'", "'unclosed", "-1"])
"""Texts that have broken a parser or a system call somewhere."""
KEYS = st.sampled_from(["", "A=B", "K\x00", "KEY", "target", "memory_mb", "name"]) | st.text(max_size=8)
scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats()
           | st.text(max_size=12) | st.dates() | st.datetimes() | st.times())
toml_values = st.one_of(NASTY, scalars, st.recursive(
    scalars | NASTY, lambda children: st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12))
"""Anything a TOML file or the control API's message could put where a value goes (None stands for a key
removed), nasty texts often."""


def paths_of(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in the parsed file: keys of tables, items of lists."""
    found = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths_of(value, prefix + (key,))
    elif isinstance(data, list):
        for number, value in enumerate(data):
            found += paths_of(value, prefix + (number,))
    return found


PATHS = paths_of(BASE_DATA) + [("bots", 0, "skip_if_missing"), ("players",), ("extra",), ("bots", 3),
                               ("bots", 0, "env", "A=B"), ("bots", 0, "env", ""), ("bots", 0, "env", "K\x00")]


def flipped(data: dict, path: tuple, value: Any) -> dict:
    """``data`` with the value at ``path`` replaced (removed when ``value`` is None; appended past a list's end)."""
    data = copy.deepcopy(data)
    parent: Any = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if isinstance(parent, list):
        if value is None:
            parent.pop(last) if last < len(parent) else None
        elif last < len(parent):
            parent[last] = value
        else:
            parent.append(value)
    elif value is None:
        parent.pop(last, None)
    else:
        parent[last] = value
    return data


def clean(outcome: Any) -> None:
    """What load_spec / spec_from_dict may do: give a spec the arena can run, or raise a SpecError."""
    assert isinstance(outcome, (TournamentSpec, SpecError)), f"{type(outcome).__name__}: {outcome}"
    if isinstance(outcome, SpecError):
        assert str(outcome) and "Traceback" not in str(outcome)
        return
    runnable(outcome)


def runnable(spec: TournamentSpec) -> None:
    """A spec that passed holds nothing the system calls of a run would refuse with an exception (exec's NUL and
    '=' in an environment name, a path with a NUL): those are SpecErrors at the edge, not tracebacks mid-run."""
    assert spec.game().players == spec.players and Schedule(len(spec.bots), spec.game(), spec.games,
                                                            spec.duplicate, "").total() >= 1
    assert "\0" not in spec.output  # a name may hold one: names are only printed (made safe first) and logged
    for bot in spec.bots:
        assert bool(bot.command) != bool(bot.address)
        assert all(isinstance(part, str) and "\0" not in part for part in bot.command)
        assert all(key and "=" not in key and "\0" not in key + value for key, value in bot.env.items())
        assert all(path is None or "\0" not in path for path in (bot.cwd, bot.folder, bot.address))


def attempt(call: Any) -> Any:
    try:
        return call()
    except SpecError as error:
        return error


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), toml_values), min_size=1, max_size=3))
def test_type_flips_give_a_spec_error_or_a_valid_spec(flips: list[tuple[tuple, Any]]) -> None:
    data = BASE_DATA
    for path, value in flips:
        try:
            data = flipped(data, path, value)
        except (KeyError, IndexError, TypeError, AttributeError):
            continue  # a path through a value an earlier flip removed or replaced
    clean(attempt(lambda: spec_from_dict(data)))


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    """BASE with a few edits: a slice deleted, text inserted, a line repeated, a character replaced."""
    text = BASE
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "repeat", "replace"]))
        at = draw(st.integers(0, len(text)))
        if kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif kind == "insert":
            piece = draw(st.sampled_from(["\n", "=", "[", "]", "[[bots]]\n", '"', "0", "-1", "true", "{", "}", ",",
                                          "\\u0000", "1e999", "nan", "inf", "1979-05-27", "'''", "#"])
                         | st.text(max_size=6))
            text = text[:at] + piece + text[at:]
        elif kind == "repeat":
            lines = text.splitlines(keepends=True)
            line = draw(st.integers(0, len(lines) - 1))
            text = "".join(lines[:line + 1] + [lines[line]] + lines[line + 1:])
        else:
            text = text[:at] + draw(st.characters()) + text[at + 1:]
    return text


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_text())
def test_mutated_files_give_a_spec_error_or_a_valid_spec(text: str) -> None:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"arena-fuzz-{os.getpid()}.toml"
    try:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        outcome = attempt(lambda: load_spec(path))
    finally:
        path.unlink(missing_ok=True)
    clean(outcome)
    if isinstance(outcome, SpecError):
        assert str(outcome).startswith(f"{path}: ")


def test_the_fuzz_base_is_valid() -> None:
    spec = spec_from_dict(BASE_DATA)
    assert [b.name for b in spec.bots][0] == "a" and spec.time.move_ms == 1000
    assert datetime  # the value strategy includes TOML's dates and times
