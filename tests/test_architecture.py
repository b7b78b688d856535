"""The layers hold: records/ never imports tournament/, arena/errors.py imports nothing of the arena, and the error
hierarchy says whose a problem is (a failed disk write is an ArenaError, not a bad value of the rules)."""

from __future__ import annotations

import ast
import errno
from pathlib import Path

import pytest

from arena.errors import ArenaError, UsageError
from arena.records.export import ExportError
from arena.records.jsonform import FormatError
from arena.records.replay import RecordError
from arena.records.schema import RecordFormatError
from arena.rules.errors import IllegalActionError, OptionError, RulesError
from arena.sandbox.limits import LimitsError
from arena.server.auth import ConfigError
from arena.tournament.runner import EntrantsCannotPlay, RecordsNotWritten, RunError
from arena.tournament.spec import SpecError
from arena.tournament.sprt import SprtError
from arena.tournament.standings import OutcomeError

ARENA = Path(__file__).resolve().parents[1] / "arena"


def arena_imports(path: Path) -> list[str]:
    """Every arena module a file imports (relative imports resolved), at any depth of the file (imports inside
    functions count: a late import is still a dependency)."""
    package = path.relative_to(ARENA.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                found.append(".".join((*base, *(node.module.split(".") if node.module else ()))))
            elif node.module:
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return [name for name in found if name == "arena" or name.startswith("arena.")]


def test_the_import_finder_sees_relative_and_late_imports(tmp_path: Path) -> None:
    """The checker below must be able to fail: it finds ``from ..tournament import x`` and a late import."""
    sample = ARENA / "records" / "replay.py"
    imports = arena_imports(sample)
    assert "arena.records.run_folder" in imports and "arena.rules" in imports
    late = ARENA / "tournament" / "sprt.py"  # imports .standings inside a function
    assert "arena.tournament.standings" in arena_imports(late)


def test_records_imports_nothing_of_tournament() -> None:
    offending = {str(path.relative_to(ARENA.parent)): name
                 for path in sorted((ARENA / "records").rglob("*.py"))
                 for name in arena_imports(path) if name.startswith("arena.tournament")}
    assert offending == {}


def test_the_errors_module_imports_nothing_of_the_arena() -> None:
    assert arena_imports(ARENA / "errors.py") == []


def test_the_run_folder_layout_is_spelled_in_one_module() -> None:
    """No module but records/run_folder.py names a run folder's files in code (docstrings and help texts may)."""
    names = {"games.jsonl", "standings.json", "seed.secret", "seed.json", "commitment.txt", "entrants.json",
             "bots.json", "tournament.toml"}
    spelled = []
    for path in sorted(ARENA.rglob("*.py")):
        if path.name == "run_folder.py" or "_generated" in path.parts:
            continue
        tree = ast.parse(path.read_text())
        documentation = {id(node.body[0].value) for node in ast.walk(tree)
                         if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                         and node.body and isinstance(node.body[0], ast.Expr)}
        help_texts = {id(keyword.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
                      for keyword in node.keywords if keyword.arg == "help"}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                    and id(node) not in documentation and id(node) not in help_texts):
                spelled.append(f"{path.relative_to(ARENA.parent)}:{node.lineno}: {node.value}")
    assert spelled == []


@pytest.mark.parametrize("error", [UsageError, RulesError, OptionError, IllegalActionError, SpecError, LimitsError,
                                   ConfigError, RunError, EntrantsCannotPlay, RecordsNotWritten, RecordError,
                                   RecordFormatError, FormatError, ExportError, SprtError, OutcomeError])
def test_every_refusal_is_an_arena_error(error: type[Exception]) -> None:
    assert issubclass(error, ArenaError)


@pytest.mark.parametrize("error", [UsageError, SpecError, LimitsError, ConfigError, RunError, EntrantsCannotPlay,
                                   RecordsNotWritten, RecordError, RecordFormatError, FormatError, ExportError,
                                   SprtError, OutcomeError])
def test_only_the_rules_refusals_are_rules_errors(error: type[Exception]) -> None:
    assert not issubclass(error, RulesError)


def test_a_failed_disk_write_is_an_arena_error_and_no_bad_value(tmp_path: Path) -> None:
    """RecordsNotWritten (a full disk) is an ArenaError the CLI prints in a line, and neither a RulesError nor a
    ValueError that a caller catching bad values would swallow."""
    error = RecordsNotWritten(tmp_path / "games.jsonl", OSError(errno.ENOSPC, "No space left on device"), 3, 10,
                              None)
    assert isinstance(error, ArenaError) and isinstance(error, RunError)
    assert not isinstance(error, (RulesError, SpecError, ValueError))
    assert str(error).startswith(f"cannot write {tmp_path / 'games.jsonl'}: No space left on device; 3 of 10 games")


@pytest.mark.parametrize("error", [RulesError, SpecError, LimitsError, ConfigError, RecordFormatError, FormatError,
                                   ExportError, SprtError, OutcomeError])
def test_refusals_of_a_bad_value_stay_value_errors(error: type[Exception]) -> None:
    """Callers catch these as ValueError (a damaged folder read with json, a field parsed with int): they stay so."""
    assert issubclass(error, ValueError)
