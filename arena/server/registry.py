"""The operator's registry of bots (``arena serve --bots FILE``): the programs a server runs for its clients, by
name, with their limits. Clients name these bots; they never send commands (unless ``--allow-commands``).

The file holds a tournament file's ``[[bots]]`` tables and, optionally, its ``[limits]``::

    [limits]                        # every registered bot's defaults; the most a submitted command bot may get
    memory_mb = 512

    [[bots]]
    name = "py-greedy"
    command = "python bots/python/greedy_bot.py"
    limits = { memory_mb = 256 }    # this bot's own; a submission may lower them, never raise them

It is validated by the tournament file's own code (:func:`~arena.tournament.spec.spec_from_dict`), so a mistake
gets the message ``arena run`` would print, and then as a server needs it: every program present, every name short
and printable, and no bot whose sandbox would show it what no bot may see (the data folder, the token).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.display import escaped
from arena.errors import read_named_file
from arena.players.client import MAX_NAME
from arena.players.process import BotSpec
from arena.sandbox import Limits, exposure_problem
from arena.server.auth import ConfigError
from arena.server.submission import check_programs
from arena.tournament.spec import SpecError, spec_from_dict

REGISTRY_KEYS = ("bots", "limits")
_STAND_IN = {"name": "\0stand-in", "address": "127.0.0.1:1"}
"""spec_from_dict wants at least two bots and a registry may hold one: this entry is validated with the others
(an address: nothing to look up) and dropped again."""


@dataclass(frozen=True)
class Registry:
    """The bots a server runs, by name; ``limits`` are the file's ``[limits]`` (defaults and ceilings)."""

    path: Path
    bots: dict[str, BotSpec]
    skipped: tuple[str, ...] = ()
    """Registered with ``skip_if_missing`` and not installed here."""
    limits: Limits = Limits()

    def names(self, most: int = 40) -> str:
        """The registered names for a message (a long list is cut)."""
        names = sorted(self.bots)
        shown = ", ".join(names[:most])
        return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def check_name(key: str, name: Any) -> None:
    """A name that reaches terminals, tables and web pages: at most MAX_NAME characters, all printable (an escape
    sequence in a name could rewrite the operator's terminal)."""
    if not isinstance(name, str):
        return  # not text: spec_from_dict names the problem
    if len(name) > MAX_NAME:
        raise SpecError(f"key '{key}' must be at most {MAX_NAME} characters, got {len(name)}")
    if not name.isprintable():
        raise SpecError(f"key '{key}' must hold printable characters only (no escape sequences or other control "
                        f"characters), got {name!r}")


def registry_from_dict(data: Mapping[str, Any], path: Path = Path("registry")) -> Registry:
    """Validate a registry's tables with the tournament file's rules; SpecError names any problem."""
    unknown = sorted(set(data) - set(REGISTRY_KEYS))
    if unknown:
        raise SpecError(f"unknown key '{escaped(unknown[0])}' at the top level; valid keys: {', '.join(REGISTRY_KEYS)}")
    entries = data.get("bots")
    if not isinstance(entries, list) or not entries:
        raise SpecError("key 'bots' must list at least one [[bots]] table, each with a name and a command or an "
                        "address")
    table: dict[str, Any] = {"variant": "draw", "games": 1, "duplicate": False, "bots": [*entries, _STAND_IN]}
    if "limits" in data:
        table["limits"] = data["limits"]
    spec = spec_from_dict(table)
    for number, entry in enumerate(entries, 1):
        check_name(f"bots[{number}].name", entry["name"])
    bots = {b.name: b for b in spec.bots if b.name != _STAND_IN["name"]}
    if not bots:
        raise SpecError(f"no bot of the registry can run on this machine ({', '.join(spec.skipped)} skipped: not "
                        f"installed)")
    return Registry(path=path, bots=bots, skipped=spec.skipped, limits=spec.limits)


def exposure(bot: BotSpec, protected: Sequence[Path], cwd: Path) -> str | None:
    """What a bot's sandbox would show it of the ``protected`` paths (see :func:`arena.sandbox.exposure_problem`)."""
    if not bot.command or bot.builtin:
        return None
    work = (cwd / bot.cwd if bot.cwd else cwd).resolve()
    return exposure_problem(bot.command, work, bot.folder, protected)


def check_exposure(bots: Sequence[BotSpec], protected: Sequence[Path], cwd: Path) -> None:
    """Refuse (SpecError) a bot that would see a protected path, before it is ever started."""
    for number, bot in enumerate(bots, 1):
        problem = exposure(bot, protected, cwd)
        if problem:
            raise SpecError(f"key 'bots[{number}]': bot {bot.name!r}: {problem}")


def load_registry(path: Path, *, protected: Sequence[Path] = (), cwd: Path | None = None) -> Registry:
    """Read, validate and check a registry file; ConfigError (one line, exit status 2) names any problem."""
    cwd = cwd or Path.cwd()
    text = read_named_file(path, "registry file (--bots)", ConfigError)
    try:
        registry = registry_from_dict(tomllib.loads(text), path)
        bots = list(registry.bots.values())
        check_programs(bots, cwd)
        check_exposure(bots, protected, cwd)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except SpecError as error:
        raise ConfigError(f"{path}: {error}") from None
    return registry
