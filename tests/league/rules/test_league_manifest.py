"""bot.toml: every example kit's manifest parses, every mistake is one line, and the binary kit's ELF check."""

from __future__ import annotations

import io

import pytest

from arena.league.rules.manifest import KITS, ManifestError, check_static_elf, parse_manifest, path_problem
from arena.rules import VARIANTS
from support.elf import elf
from support.paths import ROOT

pytestmark = pytest.mark.fast  # starts no process, no server, no browser

BOTS = ROOT / "bots"
SHIPPED_KITS = ["python", "node", "typescript", "go", "rust", "java", "cpp", "stdio"]


def test_the_kits_are_the_shipped_kits_and_binary():
    folders = sorted(path.name for path in BOTS.iterdir() if path.is_dir())
    assert folders == sorted(SHIPPED_KITS)
    assert list(KITS) == SHIPPED_KITS + ["binary"]


@pytest.mark.parametrize("kit", SHIPPED_KITS)
def test_each_example_kit_has_a_manifest_that_parses(kit):
    manifest = parse_manifest((BOTS / kit / "bot.toml").read_bytes())
    assert manifest.kit == kit
    assert (BOTS / kit / manifest.entry).is_file()
    assert manifest.variants == tuple(VARIANTS)
    assert manifest.name and manifest.description


GOOD = 'kit = "python"\nentry = "bot.py"\nvariants = ["draw"]\n'


def test_a_minimal_manifest():
    manifest = parse_manifest(GOOD.encode())
    assert (manifest.kit, manifest.entry, manifest.variants, manifest.name, manifest.description) == (
        "python", "bot.py", ("draw",), None, None)


def test_the_stdio_kit_names_its_interpreter_and_python3_by_default():
    perl = parse_manifest(b'kit = "stdio"\nentry = "src/bot.pl"\ninterpreter = "perl"\nvariants = ["draw"]\n')
    assert (perl.kit, perl.entry, perl.interpreter) == ("stdio", "src/bot.pl", "perl")
    path = parse_manifest(b'kit = "stdio"\nentry = "bot.rb"\ninterpreter = "/usr/bin/ruby3.1"\nvariants = ["draw"]\n')
    assert path.interpreter == "/usr/bin/ruby3.1"
    python = parse_manifest(b'kit = "stdio"\nentry = "bot.py"\nvariants = ["draw"]\n')
    assert python.interpreter == "python3"
    assert parse_manifest(GOOD.encode()).interpreter is None  # the other kits' recipes say what runs them


def test_the_manifest_is_frozen():
    manifest = parse_manifest(GOOD.encode())
    with pytest.raises(AttributeError):
        manifest.kit = "go"  # type: ignore[misc]


KIT_LIST = "python, node, typescript, go, rust, java, cpp, stdio, binary"
VARIANT_LIST = "draw, block, la_plaza, la_plaza_teams, all_fives, mexican_train"
BAD = [
    ('entry = "bot.py"\nvariants = ["draw"]', f"key 'kit' is missing; expected one of {KIT_LIST}"),
    ('kit = "cobol"\nentry = "bot.py"\nvariants = ["draw"]', f"key 'kit' must be one of {KIT_LIST}, got 'cobol'"),
    ('kit = 3\nentry = "bot.py"\nvariants = ["draw"]', f"key 'kit' must be one of {KIT_LIST}, got 3"),
    ('kit = "python"\nvariants = ["draw"]',
     "key 'entry' is missing; expected a Python 3 script (.py) run with the arena's botkit, as a path inside the "
     "bot's folder"),
    ('kit = "python"\nentry = 7\nvariants = ["draw"]',
     "key 'entry' must be a path inside the bot's folder like 'src/bot.py', got 7"),
    ('kit = "python"\nentry = "/etc/bot.py"\nvariants = ["draw"]',
     "key 'entry' must be a path inside the bot's folder like 'src/bot.py' (an absolute path), got '/etc/bot.py'"),
    ('kit = "python"\nentry = "../bot.py"\nvariants = ["draw"]',
     "key 'entry' must be a path inside the bot's folder like 'src/bot.py' (a '..' component), got '../bot.py'"),
    ('kit = "python"\nentry = "./bot.py"\nvariants = ["draw"]',
     "key 'entry' must be a path inside the bot's folder like 'src/bot.py' (an empty or '.' component), "
     "got './bot.py'"),
    ('kit = "python"\nentry = "bot.js"\nvariants = ["draw"]',
     "key 'entry': the python kit's entry must be a Python 3 script (.py) run with the arena's botkit, "
     "got 'bot.js'"),
    ('kit = "rust"\nentry = "src/main.rs"\nvariants = ["draw"]',
     "key 'entry': the rust kit's entry must be the package's Cargo.toml (the build runs cargo build --release "
     "--locked), got 'src/main.rs'"),
    ('kit = "python"\nentry = "bot.py"', f"key 'variants' is missing; expected a list of variants the bot plays, "
     f"from {VARIANT_LIST}"),
    ('kit = "python"\nentry = "bot.py"\nvariants = []',
     "key 'variants' must be a non-empty list of variants like [\"draw\"], got []"),
    ('kit = "python"\nentry = "bot.py"\nvariants = "draw"',
     "key 'variants' must be a non-empty list of variants like [\"draw\"], got 'draw'"),
    ('kit = "python"\nentry = "bot.py"\nvariants = ["draw", "chess"]',
     f"key 'variants' must list variants from {VARIANT_LIST}, got 'chess'"),
    ('kit = "python"\nentry = "bot.py"\nvariants = ["draw", "draw"]',
     "key 'variants' must name each variant once, got 'draw' twice"),
    (GOOD + 'name = "my bot"',
     "key 'name' must be 1 to 64 letters, digits, '.', '_' or '-' (not first) like 'my-bot', got 'my bot'"),
    (GOOD + 'description = "a\\u001bb"',
     "key 'description' must be a text of at most 1000 characters without control characters, got 'a\\x1bb'"),
    (GOOD + 'varients = ["draw"]',
     "key 'varients' is not a manifest key; expected one of kit, entry, interpreter, variants, name, description"),
    ('kit = "python"\nentry = "bot.py"\ninterpreter = "perl"\nvariants = ["draw"]',
     "key 'interpreter' is for the stdio kit only (the python kit's recipe says what runs the bot), got 'perl'"),
    ('kit = "stdio"\nentry = "bot.pl"\ninterpreter = "perl -w"\nvariants = ["draw"]',
     "key 'interpreter' must be a program's name like 'perl' (letters, digits, '.', '_', '+' or '-') or an absolute "
     "path like '/usr/bin/perl', got 'perl -w'"),
    ('kit = "stdio"\nentry = "bot.pl"\ninterpreter = "/usr/../tmp/perl"\nvariants = ["draw"]',
     "key 'interpreter' must be a program's name like 'perl' (letters, digits, '.', '_', '+' or '-') or an absolute "
     "path like '/usr/bin/perl', got '/usr/../tmp/perl'"),
    ('kit = "stdio"\nentry = "bot.pl"\ninterpreter = ["perl"]\nvariants = ["draw"]',
     "key 'interpreter' must be a program's name like 'perl' (letters, digits, '.', '_', '+' or '-') or an absolute "
     "path like '/usr/bin/perl', got ['perl']"),
    ('kit = "stdio"\nentry = "bot.pl"\nvariants = ["draw"]',
     "key 'entry': the stdio kit's entry run by python3 must be a Python 3 script (.py), got 'bot.pl'"),
    ('kit = "python', "not valid TOML: Unterminated string (at end of document)"),
]


@pytest.mark.parametrize("text, message", BAD, ids=[message[:40] for _, message in BAD])
def test_each_mistake_is_one_line_naming_the_key(text, message):
    with pytest.raises(ManifestError) as error:
        parse_manifest(text.encode())
    assert str(error.value) == message


def test_a_manifest_not_utf8_or_too_big():
    with pytest.raises(ManifestError, match="^expected UTF-8 text, got bytes that are not$"):
        parse_manifest(b'kit = "\xff"')
    with pytest.raises(ManifestError, match="^expected at most 65,536 bytes, got 65,537$"):
        parse_manifest(b"#" * 65537)


@pytest.mark.parametrize("path, problem", [
    ("a/b.py", None), ("", "an empty path"), ("/a", "an absolute path"), ("a/../b", "a '..' component"),
    ("a//b", "an empty or '.' component"), ("a\\b", "a backslash"), ("a\nb", "a control character or "
     "undecodable byte"), ("x" * 256, "a component longer than 255 bytes"),
])
def test_path_problems(path, problem):
    assert path_problem(path) == problem


# ELF: a 64-byte header and program headers of 56 bytes, built here so the check is tested on exact inputs.


def check(data: bytes, machine: str = "x86_64") -> None:
    check_static_elf(io.BytesIO(data), len(data), machine)


def test_a_static_elf_is_accepted_and_static_pie_too():
    check(elf((6, 1, 1)))
    check(elf((6, 1, 2), e_type=3))  # ET_DYN with PT_DYNAMIC, no PT_INTERP: static-pie
    check(elf((1,), machine=183), machine="aarch64")


@pytest.mark.parametrize("data, message", [
    (elf((6, 3, 1)), "expected a statically linked executable, got one that needs a dynamic loader (PT_INTERP): "
                     "link it statically (e.g. CGO_ENABLED=0, or -static)"),
    (b"#!/bin/sh\necho hi\n" + bytes(64), "expected an ELF executable, got a file starting with b'#!/b'"),
    (b"\x7fELF", "expected an ELF executable, got a file starting with b'\\x7fELF'"),
    (elf(elf_class=1), "expected a 64-bit little-endian ELF file, got class 1, data 1"),
    (elf(machine=183), "expected an ELF executable for x86_64 (machine 62), got machine 183"),
    (elf(e_type=1), "expected an ELF executable (type 2 or 3), got type 1"),
    (elf(())[:64], "expected ELF program headers inside the file, got 0 of 56 bytes at offset 64"),
    (elf((1, 1))[:100], "expected ELF program headers inside the file, got 2 of 56 bytes at offset 64"),
])
def test_a_non_static_or_foreign_binary_is_refused(data, message):
    with pytest.raises(ManifestError) as error:
        check(data)
    assert str(error.value) == message
