"""The arena's import graph, read from the source with ``ast`` (every import, at module level and inside
functions; not those under ``if TYPE_CHECKING:``, which never run): no import cycle between modules, and no lower
layer importing a higher one (the layers, low to high, are :data:`LAYERS`); and the facts that have one owner are
spelled only there (a run folder's file names in ``arena/records/run_folder.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Callable

import pytest

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

ARENA = Path(__file__).resolve().parents[1] / "arena"

LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer.split()) for layer in (
    "arena errors display futures guest rules codegen invocation",  # `arena` itself: the package's __init__ (its version)
    "protocol",
    "players sandbox botkit simulate env",
    "referee time_control",
    "play check_bot examples",
    "records",
    "tournament",
    "cluster",
    "league",
    "server",
    "web",
    "serve",
    "bench",
    "cli __main__",
))
"""Each name is a top-level module or package of ``arena``; a module may import its own layer and those below."""

LEAGUE_LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer.split()) for layer in (
    "rules clock",  # pure: no database, no files, no processes (the clock only reads the time)
    "storage files",  # the database gateway, the only part that speaks SQL; the league files read from disk
    "authors intake",  # tokens, and an upload made a ready version
    "play",  # the ready versions at tables
    "core views assembly",  # the use cases, what they answer, and the assembly of a server's leagues
    "__init__",  # the league's public face re-exports from every wing
))
"""The league's wings, low to high: each name is a module or package of ``arena.league`` (``__init__`` is the
package itself); a league module may import its own wing and those below."""
GATEWAY = "arena.league.storage.db"
GATEWAY_NAMES = frozenset({"Database", "AsyncDatabase", "shown_url"})
"""What the rest of the league takes from storage: the gateway (and its URL as the log shows it); the rows come as
the domain values of arena.league.rules.model, never as tables."""

def module_name(path: Path) -> str:
    parts = list(path.relative_to(ARENA.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in ARENA.rglob("*.py") if "_generated" not in p.parts}


def type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The import statements under ``if TYPE_CHECKING:`` (for annotations only: they never run)."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(n for stmt in node.body for n in ast.walk(stmt))
    return skipped


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The arena modules ``name`` imports (``from .x import y`` counts as x.y when that is a module, else x)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    skipped = type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    found.add(f"{source}.{alias.name}")
                elif source in known:
                    found.add(source)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def unit(module: str) -> str:
    """The top-level module or package a module belongs to (``arena.players.remote``: ``players``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "arena"


def layer_of(module: str) -> int:
    name = unit(module)
    for level, layer in enumerate(LAYERS):
        if name in layer:
            return level
    raise AssertionError(f"{module}: {name} is in no layer of tests/test_architecture.py (add it to LAYERS)")


def league_wing(module: str) -> int:
    """The wing of a module of ``arena.league`` (its index in :data:`LEAGUE_LAYERS`)."""
    parts = module.split(".")
    name = parts[2] if len(parts) > 2 else "__init__"
    for level, layer in enumerate(LEAGUE_LAYERS):
        if name in layer:
            return level
    raise AssertionError(f"{module}: {name} is in no wing of the league in tests/test_architecture.py (add it to "
                         f"LEAGUE_LAYERS)")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a))


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert "arena.players.remote" in graph["arena.players.process"]
    assert "arena.cluster.ray_backend" in graph["arena.cluster.options"]  # imported inside backend_from


def test_import_graph_has_no_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_lower_layer_imports_a_higher_one() -> None:
    assert upward_imports(import_graph()) == []


def test_no_league_wing_imports_a_higher_one() -> None:
    """Inside the league: rules < storage < authors and intake < play < the core, its views and the assembly."""
    graph = import_graph()
    upward = sorted((a, b) for a, targets in graph.items() if unit(a) == "league" for b in targets
                    if unit(b) == "league" and league_wing(b) > league_wing(a))
    assert upward == []


def test_the_league_rules_import_only_league_rules() -> None:
    """The league's rules are pure: no storage, intake, play or clock; only their own modules (and the arena below
    the league)."""
    graph = import_graph()
    found = sorted((a, b) for a, targets in graph.items() if a.startswith("arena.league.rules")
                   for b in targets if unit(b) == "league" and not b.startswith("arena.league.rules"))
    assert found == []


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of every package a module imports (at module level and inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def test_only_league_storage_imports_sqlalchemy() -> None:
    """Every SQL statement of the league is under arena/league/storage/: no other module of the league imports
    SQLAlchemy or Alembic."""
    league = ARENA / "league"
    found = sorted(str(path.relative_to(ARENA.parent)) for path in league.rglob("*.py")
                   if "storage" not in path.relative_to(league).parts
                   and third_party_imports(path) & {"sqlalchemy", "alembic"})
    assert found == []


def test_the_league_takes_only_the_storage_gateway() -> None:
    """Outside storage, the league imports from arena.league.storage only the gateway (arena.league.storage.db's
    :data:`GATEWAY_NAMES`): never a table, a row mapper or one aggregate's module."""
    found = []
    for path in sorted((ARENA / "league").rglob("*.py")):
        name = module_name(path)
        if name.startswith("arena.league.storage"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arena.league.storage"):
                names = {alias.name for alias in node.names}
                if node.module != GATEWAY or not names <= GATEWAY_NAMES:
                    found.append(f"{name}:{node.lineno}: from {node.module} import {', '.join(sorted(names))}")
            elif isinstance(node, ast.Import):
                found += [f"{name}:{node.lineno}: import {alias.name}" for alias in node.names
                          if alias.name.startswith("arena.league.storage")]
    assert found == []


def test_protocol_imports_nothing_above_it() -> None:
    graph = import_graph()
    assert sorted({unit(b) for a, targets in graph.items() if unit(a) == "protocol" for b in targets}) == [
        "protocol", "rules"]


def test_records_imports_no_tournament() -> None:
    """records/ reads what tournaments wrote (the run folder, the seed's commitment) without knowing tournaments."""
    graph = import_graph()
    assert sorted(b for a, targets in graph.items() if unit(a) == "records" for b in targets
                  if unit(b) == "tournament") == []


def test_the_errors_module_imports_no_arena_code() -> None:
    assert import_graph()["arena.errors"] == set()


def test_only_the_cli_imports_the_benchmarks() -> None:
    """arena/bench/ holds every benchmark; nothing in production (nor anything else outside arena/bench/ and
    arena/cli/) imports it, so a benchmark and its helpers never ship inside the code they measure."""
    graph = import_graph()
    assert sorted((a, b) for a, targets in graph.items() if unit(a) not in ("bench", "cli")
                  for b in targets if unit(b) == "bench") == []
    assert any(unit(b) == "bench" for b in graph["arena.cli.bench"])  # the test sees the command line's imports


def test_the_cli_imports_at_the_top() -> None:
    """arena/cli/ imports its modules once, at the top (Ray, the one heavy optional dependency, is loaded by
    arena.cluster when a command asks for it, not here; a command's handler module is loaded by its name, once the
    line is parsed, by arena.cli.main: see arena/cli/parsers/)."""
    inside_functions = []
    for path in sorted((ARENA / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside_functions += [f"{path.name}:{n.lineno}" for n in ast.walk(node)
                                     if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert inside_functions == []


def imported_names(path: Path) -> set[str]:
    """Every module a file imports, arena's or not, and each name of a ``from`` import as ``module.name`` too
    (``from arena.protocol import league_pb2`` is arena.protocol and arena.protocol.league_pb2): at module level and
    inside functions, not under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    skipped = type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def is_protocol_code(name: str) -> bool:
    """A generated protocol module (``league_pb2``, ``arena_pb2_grpc``), however it is reached."""
    return any(part.endswith(("_pb2", "_pb2_grpc")) for part in name.split("."))


def is_grpc(name: str) -> bool:
    return name == "grpc" or name.startswith("grpc.")


def servicer_modules() -> set[str]:
    """The arena's modules that serve a gRPC service: those that import a generated ``_pb2_grpc`` module and define
    a class deriving from its ``...Servicer``."""
    found = set()
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        serves = any(isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith("Servicer")
                                                            for base in node.bases) for node in ast.walk(tree))
        if serves and any(name_.endswith("_pb2_grpc") for name_ in imported_names(path)):
            found.add(name)
    return found


def edge_offenders(package: str, refused: Callable[[str], bool]) -> list[str]:
    return sorted(f"{name}: imports {imported}" for name, path in modules().items()
                  if name == f"arena.{package}" or name.startswith(f"arena.{package}.")
                  for imported in sorted(imported_names(path)) if refused(imported))


def test_the_servicers_belong_to_the_server_layer() -> None:
    """Both control services are served from arena/server (a bot's own service is the botkit's); none is the
    league's or the web's."""
    found = servicer_modules()
    assert {"arena.server.service", "arena.server.league_service"} <= found
    assert sorted(name for name in found if unit(name) in ("league", "web")) == []


def test_the_web_imports_no_protocol_or_servicer() -> None:
    """The web reads the domain's types (the Arena core's, the league's use cases' answers) and converts them to its
    pages and JSON itself: a gRPC message or a servicer in arena/web would be a second edge's conversion."""
    servicers = servicer_modules()
    assert edge_offenders("web", lambda name: is_protocol_code(name) or name in servicers) == []


def test_the_league_imports_no_grpc_or_protocol() -> None:
    """The league's use cases take and answer its own types; the gRPC service and its messages are the server's."""
    assert edge_offenders("league", lambda name: is_grpc(name) or is_protocol_code(name)) == []


def test_edge_checks_see_protocol_and_grpc_imports() -> None:
    assert is_protocol_code("arena.protocol.league_pb2") and is_protocol_code("dominoes.v1.arena_pb2_grpc")
    assert not is_protocol_code("arena.protocol") and not is_protocol_code("arena.protocol.convert")
    assert is_grpc("grpc") and is_grpc("grpc.aio") and not is_grpc("grpc_health")
    assert "arena.protocol.league_pb2" in imported_names(ARENA / "server" / "league_messages.py")


def test_the_run_folder_layout_lives_in_one_module() -> None:
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


INNER_IMPORTS_ALLOWED = 10
"""Imports inside functions, outside the command line and the benchmarks (which load what a command asks for): each
one an optional dependency loaded only when used, or a start-up cost a bot must not pay, and each says why."""


def imports_inside_functions() -> list[tuple[Path, int]]:
    """(file, line) of every import inside a function of the arena, outside arena/cli and arena/bench."""
    found = []
    for path in sorted(ARENA.rglob("*.py")):
        if {"_generated", "cli", "bench"} & set(path.relative_to(ARENA).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [(path, n.lineno) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return sorted(set(found))


def test_imports_inside_functions_are_few_and_say_why() -> None:
    found = imports_inside_functions()
    uncommented = []
    for path, line in found:
        lines = path.read_text().splitlines()
        comments = [text.split("#", 1)[1] for text in lines[line - 2:line] if "#" in text]
        if not any(comment.strip() and not comment.strip().startswith("noqa") for comment in comments):
            uncommented.append(f"{path.relative_to(ARENA.parent)}:{line}")
    assert uncommented == []
    assert len(found) <= INNER_IMPORTS_ALLOWED, [f"{p.relative_to(ARENA.parent)}:{n}" for p, n in found]


# --- the tests' own house: by subject, in folders that mirror the package, helpers in tests/support/ ------------------

TESTS = Path(__file__).resolve().parent
HISTORY_WORDS = ("hardening", "rough_edges", "guard", "rest", "done", "part2", "phase", "issue")
"""Words that name when or why tests were written (an issue's clean-up, its rest, a mutation audit, a milestone's
"done means", a second part or phase of the work) rather than what they test: a test module is named by its subject,
and its tests go to the module of theirs. Matched against whole words of the name (``rest`` is not ``restore``,
``phase`` is not ``phases``)."""


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import in ``tree``, at module level and inside functions, relative ones with their
    dots (``from .test_x import y`` is ``.test_x``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
            if not node.module:  # from . import test_x
                found += [(node.lineno, "." + alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_no_module_imports_a_test_module() -> None:
    """Test modules share helpers through tests/support/ (and fixtures through conftest.py), never by importing one
    another: a test module's import would run its module fixtures' set-up and collect nothing, and would tie the
    layout of one subject to another's."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for line, module in imported_modules(ast.parse(path.read_text())):
            if module.split(".")[-1].startswith("test_"):
                offenders.append(f"{path.relative_to(TESTS.parent)}:{line}: imports {module}")
    assert offenders == []


def test_no_test_module_is_named_by_history() -> None:
    named = [path.name for path in sorted(TESTS.rglob("test_*.py"))
             if any(f"_{word}_" in f"_{path.stem}_" for word in HISTORY_WORDS)]
    assert named == []


HISTORY_IN_TEST_NAMES = re.compile(r"_(part|phase|stage)_?\d+(_|$)|_(issue|issues|hardening|rough_edges|"
                                   r"milestone|done_means)(_|$)")
"""A numbered part or phase of the work, an issue, a milestone's "done means" in a test's name: history, not the
promise. (The plain words of the module check are not here: a test's name may say a game is done, the rest of the
lines or a tournament's phase.)"""


def test_no_test_is_named_by_history() -> None:
    named = [f"{path.relative_to(TESTS)}::{name}" for path in sorted(TESTS.rglob("test_*.py"))
             for name in re.findall(r"^(?:async )?def (test_\w+)", path.read_text(), re.M)
             if HISTORY_IN_TEST_NAMES.search(f"_{name}_")]
    assert named == []


def test_shared_helpers_live_in_tests_support() -> None:
    """The helper modules that were at the top of tests/ are gone (their contents are in tests/support/): the only
    Python files there are conftest.py and test modules."""
    loose = sorted(path.name for path in TESTS.glob("*.py") if path.name != "conftest.py"
                   and not path.name.startswith("test_"))
    assert loose == []
