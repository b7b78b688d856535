"""``arena new-bot KIT DIR``: a bot folder of one's own, anywhere, made from a kit's example (``bots/KIT``).

The example is copied without its build output (``bin/``, ``gen/``, ``dist/``, build stamps), and the new folder
gets what the example gets from its place in the repository: its own ``build.sh`` (which runs the kit's build,
``bots/build.sh``, on this folder), the league's manifest ``bot.toml`` with the folder's name as the bot's name,
and a README whose first lines say how to build it, check it and upload it. Editing the examples in place is then
never needed, and ``bash bots/build.sh DIR`` builds any such folder (its ``bot.toml`` names the kit).
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from arena.invocation import arena_command
from arena.league.intake.kits import REPO
from arena.league.rules.errors import LeagueError
from arena.league.rules.manifest import Manifest, ManifestError, parse_manifest

EXAMPLES = REPO / "bots"
BUILD_OUTPUT = ("bin", "gen", "dist", "target", ".warm", ".build-hash", "__pycache__", ".kit-lock-hash")
"""What a kit's build makes in its folder: never copied (the new folder's first build makes its own)."""
REBUILT_MODULES = ("typescript",)
"""Kits whose build installs ``node_modules`` itself (from the kit's cache): the example's is not copied."""
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class NewBotError(LeagueError):
    """A bot folder that cannot be made: the kit or the folder named wrongly, the folder not empty."""


@dataclass(frozen=True)
class NewBot:
    """The folder made, its kit and name, and the commands its README gives."""

    folder: Path
    kit: str
    name: str
    build: str
    """How to build it ('' for a kit with nothing to build)."""
    run: str
    """The bot's command, for ``arena check-bot -- ...``."""
    protocol: str = "grpc"


def kits() -> list[str]:
    """The kits there is an example folder of (``bots/KIT`` with its ``bot.toml``)."""
    return sorted(p.parent.name for p in EXAMPLES.glob("*/bot.toml") if _kit_of(p.parent) == p.parent.name)


def new_bot(kit: str, folder: Path) -> NewBot:
    """Make ``folder`` (new or empty) a bot of ``kit``; raises :class:`NewBotError` saying what is wrong."""
    if kit not in kits():
        raise NewBotError(f"unknown kit {kit!r}; kits: {', '.join(kits())}")
    folder = folder.expanduser().absolute()
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise NewBotError(f"{folder} already exists and is not an empty folder: name a new one")
    name = folder.name
    if not NAME_RE.match(name):
        raise NewBotError(f"the folder's name {name!r} is the bot's name: letters, digits, '.', '_' and '-', at most "
                          f"64 characters, starting with a letter or a digit")
    example = EXAMPLES / kit
    ignored = BUILD_OUTPUT + (("node_modules",) if kit in REBUILT_MODULES else ())
    shutil.copytree(example, folder, symlinks=True, ignore=shutil.ignore_patterns(*ignored), dirs_exist_ok=True)
    manifest = _manifest(example)
    (folder / "bot.toml").write_text(_bot_toml(manifest.entry, kit, name, manifest.variants))
    builds = (example / "build.sh").exists()
    made = NewBot(folder, kit, name, f"bash {shlex.quote(str(folder / 'build.sh'))}" if builds else "",
                  _run_command(kit, folder, manifest.entry), "stdio" if kit == "stdio" else "grpc")
    if builds:
        script = folder / "build.sh"
        script.write_text(_build_script(kit))
        script.chmod(0o755)
    readme = folder / "README.md"
    kept = readme.read_text() if readme.exists() else ""
    readme.write_text(readme_lines(made) + ("\n---\n\nThe kit's own README follows.\n\n" + kept if kept else ""))
    return made


def _kit_of(folder: Path) -> str:
    try:
        return parse_manifest((folder / "bot.toml").read_bytes()).kit
    except (OSError, ManifestError):
        return ""


def _manifest(example: Path) -> Manifest:
    try:
        return parse_manifest((example / "bot.toml").read_bytes())
    except (OSError, ManifestError) as error:
        raise NewBotError(f"the kit's example {example} has no readable bot.toml: {error}") from None


def _bot_toml(entry: str, kit: str, name: str, variants: tuple[str, ...]) -> str:
    listed = ", ".join(f'"{v}"' for v in variants)
    return (f'# The manifest a league reads from this folder when it is uploaded (arena league upload {name}).\n'
            f'kit = "{kit}"\nentry = "{entry}"\nvariants = [{listed}]\nname = "{name}"\n'
            f'description = "A {kit} bot made with arena new-bot {kit} {name}."\n')


def _build_script(kit: str) -> str:
    """The folder's own build: the kit's build (``bots/build.sh``, with the repository's caches and protocol
    files) run on this folder, wherever it lies."""
    return ("#!/usr/bin/env bash\n"
            f"# Builds this {kit} bot with the arena's kit build (made by arena new-bot): bash build.sh\n"
            "set -euo pipefail\n"
            f"exec bash {shlex.quote(str(EXAMPLES / 'build.sh'))} \"$(cd \"$(dirname \"$0\")\" && pwd)\"\n")


def _run_command(kit: str, folder: Path, entry: str) -> str:
    """The command that runs the built bot from anywhere (what ``arena check-bot --`` takes)."""
    def q(path: str | Path) -> str:
        return shlex.quote(str(path))

    if kit in ("python", "stdio"):
        return f"{q(sys.executable)} {q(folder / entry)}"
    if kit == "node":
        return f"node {q(folder / entry)} --proto-dir {q(REPO / 'proto')}"
    if kit == "typescript":
        return f"node {q(folder / entry)}"
    if kit == "java":
        return q(folder / "bot")
    return q(folder / "bin" / "bot")


def readme_lines(made: NewBot) -> str:
    """The README's first lines: what the folder is, and how to build, check and upload it."""
    arena = arena_command()
    protocol = " --protocol stdio" if made.protocol == "stdio" else ""
    steps = [f"{made.build}  # build it (again after each change)"] if made.build else []
    steps += [f"{arena} check-bot{protocol} --matches 1 -- {made.run}  # check it",
              f"{arena} league upload {shlex.quote(str(made.folder))} --bot {made.name} --server HOST:PORT "
              f"--token-file YOUR_TOKEN_FILE  # upload it to a league"]
    return (f"# {made.name}\n\nA {made.kit} bot made from the arena's {made.kit} kit with `arena new-bot {made.kit} "
            f"{made.name}`. `bot.toml` is its manifest for a league (its name is `{made.name}`).\n\n```sh\n"
            + "\n".join(steps) + "\n```\n")


__all__ = ["NewBot", "NewBotError", "kits", "new_bot", "readme_lines"]
