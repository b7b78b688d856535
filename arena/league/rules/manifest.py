"""The manifest in a bot's folder, ``bot.toml``: which kit builds and runs the bot, from which file, for which variants.

An upload is hostile input from a stranger, so the manifest is read strictly: unknown keys are refused (a typo must
not silently fall back to a default), and every mistake is one line naming the key, what was expected and the bad
value. For the ``binary`` kit the entry is checked to be a static ELF executable for this machine, by reading its
ELF header with ``struct`` (a few fixed fields: nothing of the binary is run or loaded).
"""

from __future__ import annotations

import platform
import re
import struct
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from arena.league.rules.errors import LeagueError
from arena.rules import VARIANTS

MANIFEST_NAME = "bot.toml"
MAX_MANIFEST_BYTES = 64 * 1024
"""A manifest is a few lines; a bigger one is refused before TOML parses it."""
MAX_DESCRIPTION_CHARS = 1000
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class ManifestError(LeagueError, ValueError):
    """A manifest that cannot be used; the message is one line for the author."""


@dataclass(frozen=True)
class Kit:
    """A starter kit the project ships, and what the manifest's ``entry`` means for it."""

    name: str
    entry: str
    """What the entry is, in the words of the docs (and of the error when it has the wrong name)."""
    suffixes: tuple[str, ...] = ()
    """The entry's file name must end with one of these (when given)."""
    file_names: tuple[str, ...] = ()
    """The entry's file name must be one of these (when given)."""

    def entry_problem(self, entry: str) -> str | None:
        """Why ``entry`` cannot be this kit's entry, or None."""
        base = entry.rsplit("/", 1)[-1]
        if self.file_names and base not in self.file_names:
            return f"the {self.name} kit's entry must be {self.entry}"
        if self.suffixes and not base.endswith(self.suffixes):
            return f"the {self.name} kit's entry must be {self.entry}"
        return None


BINARY = "binary"
STDIO = "stdio"
DEFAULT_INTERPRETER = "python3"
"""The stdio kit's interpreter when ``bot.toml`` names none: the stdio kit's scripts were Python first."""
INTERPRETER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}|/[A-Za-z0-9._+/-]{1,255}")
"""An interpreter is a program's name, found on the sandbox's ``PATH`` (``perl``, ``python3.11``), or its absolute
path (``/usr/bin/perl``); no space, quote or ``..`` (checked apart)."""
KITS: dict[str, Kit] = {
    kit.name: kit
    for kit in (
        Kit("python", "a Python 3 script (.py) run with the arena's botkit", suffixes=(".py",)),
        Kit("node", "a JavaScript file (.js, .mjs or .cjs) run with node", suffixes=(".js", ".mjs", ".cjs")),
        Kit("typescript", "the JavaScript launcher (.js, .mjs or .cjs) that node runs after tsc built dist/",
            suffixes=(".js", ".mjs", ".cjs")),
        Kit("go", "a .go file of the main package (the build runs go build in its folder)", suffixes=(".go",)),
        Kit("rust", "the package's Cargo.toml (the build runs cargo build --release --locked)",
            file_names=("Cargo.toml",)),
        Kit("java", "the project's pom.xml (the build runs mvn package)", file_names=("pom.xml",)),
        Kit("cpp", "the project's CMakeLists.txt (the build runs cmake)", file_names=("CMakeLists.txt",)),
        Kit(STDIO, "a script its interpreter runs (key 'interpreter', python3 by default: then a .py file, "
            "standard library only), speaking the stdio protocol"),
        Kit(BINARY, "a statically linked Linux ELF executable for this machine"),
    )
}
KEYS = ("kit", "entry", "interpreter", "variants", "name", "description")


@dataclass(frozen=True)
class Manifest:
    """A bot's ``bot.toml``, checked."""

    kit: str
    """The starter kit that builds and runs the bot (its recipe), or ``binary`` for a prebuilt static Linux
    binary; required."""
    entry: str
    """The file the kit starts the bot from: a path inside the bot's folder, relative, with '/' between folders
    (e.g. ``src/main.py``), a file of the upload; what it must be depends on the kit. Required."""
    variants: tuple[str, ...]
    """The variants the bot plays, each once, from ``arena variants``, in the manifest's order; required."""
    interpreter: str | None = None
    """The stdio kit only: the program that runs the entry, ``INTERPRETER ENTRY`` (``perl``, ``ruby``, ``bash``,
    ...: a name found on the bot sandbox's ``PATH``, or an absolute path), one of the league's ``interpreters``;
    ``python3`` when not given. Refused for the other kits."""
    name: str | None = None
    """The bot's name: 1 to 64 letters, digits, ``.``, ``_`` or ``-`` (not first)."""
    description: str | None = None
    """A text of at most 1,000 characters about the bot, no control characters (newline and tab allowed)."""


def parse_manifest(data: bytes) -> Manifest:
    """The manifest from the bytes of a ``bot.toml``; a ManifestError names the first mistake."""
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"expected at most {MAX_MANIFEST_BYTES:,} bytes, got {len(data):,}")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ManifestError("expected UTF-8 text, got bytes that are not") from None
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"not valid TOML: {error}") from None
    return manifest_from_table(table)


def manifest_from_table(table: Mapping[str, Any]) -> Manifest:
    """The manifest from a parsed TOML table (one error per mistake, the first found)."""
    unknown = [key for key in table if key not in KEYS]
    if unknown:
        raise ManifestError(f"key {unknown[0]!r} is not a manifest key; expected one of {', '.join(KEYS)}")
    kit = _kit(table.get("kit"))
    interpreter = _interpreter(table.get("interpreter"), kit)
    entry = _entry(table.get("entry"), KITS[kit], interpreter)
    return Manifest(kit=kit, entry=entry, variants=_variants(table.get("variants")), interpreter=interpreter,
                    name=_name(table.get("name")), description=_description(table.get("description")))


def _kit(value: Any) -> str:
    if value is None:
        raise ManifestError(f"key 'kit' is missing; expected one of {', '.join(KITS)}")
    if not isinstance(value, str) or value not in KITS:
        raise ManifestError(f"key 'kit' must be one of {', '.join(KITS)}, got {value!r}")
    return value


def _interpreter(value: Any, kit: str) -> str | None:
    if kit != STDIO:
        if value is not None:
            raise ManifestError(f"key 'interpreter' is for the {STDIO} kit only (the {kit} kit's recipe says what "
                                f"runs the bot), got {value!r}")
        return None
    if value is None:
        return DEFAULT_INTERPRETER
    problem = interpreter_problem(value)
    if problem:
        raise ManifestError(f"key 'interpreter' {problem}, got {value!r}")
    return str(value)


def interpreter_problem(value: Any) -> str | None:
    """Why ``value`` cannot name an interpreter (in a ``bot.toml`` or a league's ``interpreters``), or None."""
    if not isinstance(value, str) or not INTERPRETER_PATTERN.fullmatch(value) or ".." in value.split("/"):
        return ("must be a program's name like 'perl' (letters, digits, '.', '_', '+' or '-') or an absolute path "
                "like '/usr/bin/perl'")
    return None


def _entry(value: Any, kit: Kit, interpreter: str | None = None) -> str:
    if value is None:
        raise ManifestError(f"key 'entry' is missing; expected {kit.entry}, as a path inside the bot's folder")
    if not isinstance(value, str):
        raise ManifestError(f"key 'entry' must be a path inside the bot's folder like 'src/bot.py', got {value!r}")
    problem = path_problem(value)
    if problem:
        raise ManifestError(f"key 'entry' must be a path inside the bot's folder like 'src/bot.py' ({problem}), "
                            f"got {value!r}")
    problem = kit.entry_problem(value)
    if problem is None and interpreter == DEFAULT_INTERPRETER and not value.endswith(".py"):
        problem = f"the {STDIO} kit's entry run by {DEFAULT_INTERPRETER} must be a Python 3 script (.py)"
    if problem:
        raise ManifestError(f"key 'entry': {problem}, got {value!r}")
    return value


def _variants(value: Any) -> tuple[str, ...]:
    valid = ", ".join(VARIANTS)
    if value is None:
        raise ManifestError(f"key 'variants' is missing; expected a list of variants the bot plays, from {valid}")
    if not isinstance(value, list) or not value:
        raise ManifestError(f"key 'variants' must be a non-empty list of variants like [\"draw\"], got {value!r}")
    for name in value:
        if not isinstance(name, str) or name not in VARIANTS:
            raise ManifestError(f"key 'variants' must list variants from {valid}, got {name!r}")
    if len(set(value)) != len(value):
        twice = next(name for name in value if value.count(name) > 1)
        raise ManifestError(f"key 'variants' must name each variant once, got {twice!r} twice")
    return tuple(value)


def _name(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not NAME_PATTERN.fullmatch(value):
        raise ManifestError("key 'name' must be 1 to 64 letters, digits, '.', '_' or '-' (not first) like "
                            f"'my-bot', got {value!r}")
    return value


def _description(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_DESCRIPTION_CHARS or any(
            unicodedata.category(c) == "Cc" and c not in "\n\t" for c in value):
        shown = value if not isinstance(value, str) or len(value) <= 60 else value[:60] + "..."
        raise ManifestError(f"key 'description' must be a text of at most {MAX_DESCRIPTION_CHARS} characters "
                            f"without control characters, got {shown!r}")
    return value


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a plain relative path inside a folder (the rule for entries and archive members)."""
    if not path:
        return "an empty path"
    if path.startswith("/"):
        return "an absolute path"
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in path):
        return "a control character or undecodable byte"
    if "\\" in path:
        return "a backslash"
    parts = path.split("/")
    if ".." in parts:
        return "a '..' component"
    if "" in parts or "." in parts:
        return "an empty or '.' component"
    if any(len(part.encode("utf-8")) > 255 for part in parts):
        return "a component longer than 255 bytes"
    return None


# ELF: the identification bytes, then e_type, e_machine, ..., e_phoff, ..., e_phentsize, e_phnum (System V gABI).
ELF_MAGIC = b"\x7fELF"
ET_EXEC, ET_DYN = 2, 3
PT_INTERP = 3
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}
ELF_HEADER_BYTES = 64


def check_static_elf(stream: BinaryIO, size: int, machine: str | None = None) -> None:
    """Refuse, with one line, a file that is not a static 64-bit little-endian Linux executable for ``machine``.

    "Static" means no PT_INTERP program header: the kernel starts it without a dynamic loader, so it needs nothing
    from the sandbox's /usr/lib (a static-pie binary is ET_DYN without PT_INTERP, and is accepted).
    """
    machine = machine or platform.machine()
    header = stream.read(ELF_HEADER_BYTES)
    if len(header) < ELF_HEADER_BYTES or header[:4] != ELF_MAGIC:
        raise ManifestError(f"expected an ELF executable, got a file starting with {header[:4]!r}")
    if header[4] != 2 or header[5] != 1:
        raise ManifestError(f"expected a 64-bit little-endian ELF file, got class {header[4]}, data {header[5]}")
    e_type, e_machine = struct.unpack_from("<HH", header, 16)
    if e_type not in (ET_EXEC, ET_DYN):
        raise ManifestError(f"expected an ELF executable (type {ET_EXEC} or {ET_DYN}), got type {e_type}")
    if e_machine != ELF_MACHINES.get(machine):
        raise ManifestError(f"expected an ELF executable for {machine} (machine {ELF_MACHINES.get(machine)}), "
                            f"got machine {e_machine}")
    (e_phoff,) = struct.unpack_from("<Q", header, 32)
    e_phentsize, e_phnum = struct.unpack_from("<HH", header, 54)
    if e_phnum == 0 or e_phentsize < 4 or e_phoff + e_phentsize * e_phnum > size:
        raise ManifestError(f"expected ELF program headers inside the file, got {e_phnum} of {e_phentsize} bytes "
                            f"at offset {e_phoff}")
    stream.seek(e_phoff)
    table = stream.read(e_phentsize * e_phnum)
    for index in range(e_phnum):
        (p_type,) = struct.unpack_from("<I", table, index * e_phentsize)
        if p_type == PT_INTERP:
            raise ManifestError("expected a statically linked executable, got one that needs a dynamic loader "
                                "(PT_INTERP): link it statically (e.g. CGO_ENABLED=0, or -static)")
