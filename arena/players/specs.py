"""Turning what a user types into seats: a bot command, a bot address, or a built-in player."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from arena.players.base import LocalPlayer
from arena.players.builtin import BUILTIN_PLAYERS, builtin_player
from arena.players.process import BUILTIN_PREFIX, BotProcess, BotSpec
from arena.rules.errors import RulesError
from arena.sandbox import DEFAULT_LIMITS, Limits

ADDRESS_RE = re.compile(r"^(unix:.+|[\w.\-]+:\d+|\[[0-9a-fA-F:]+\]:\d+)$")
INTERPRETER_RE = re.compile(r"^(python[\d.]*|pypy[\d.]*|node|nodejs|deno|bun|java|ruby|perl|php|bash|sh|env)$")
"""Programs that run another file: a bot is named after that file, not after its interpreter."""


def is_address(text: str) -> bool:
    return bool(ADDRESS_RE.match(text)) and " " not in text


def builtin_kind(command: Sequence[str]) -> str | None:
    """The built-in player a tournament file's ``command = "builtin:KIND"`` names (its one word), None for a program:
    the built-ins play wherever a bot does, in a tournament as in ``play`` and ``check-bot``. An unknown kind is a
    RulesError naming the valid ones."""
    if len(command) != 1 or not command[0].startswith(BUILTIN_PREFIX):
        return None
    kind = parse_bot(command[0], command[0])
    return kind if isinstance(kind, str) else None


def parse_bot(text: str, name: str) -> BotSpec | str:
    """A BotSpec for a command or an address; the built-in kind's name for ``builtin:KIND``."""
    text = text.strip()
    if not text:
        raise RulesError("expected a bot command, an address or builtin:random, got an empty string")
    if text.startswith(BUILTIN_PREFIX):
        kind = text[len(BUILTIN_PREFIX):]
        if kind not in BUILTIN_PLAYERS:
            raise RulesError(f"unknown built-in player {kind!r}; valid players: {', '.join(BUILTIN_PLAYERS)}")
        return kind
    if is_address(text):
        return BotSpec(name=name, address=text)
    try:
        command = tuple(shlex.split(text))
    except ValueError as error:
        raise RulesError(f"cannot read the bot command {text!r}: {error}") from None
    return BotSpec(name=name, command=command)


def seat_players(texts: Sequence[str], seats: int, log_dir: Path, startup_s: float, seed: int | str, *,
                 sandbox: bool = True, limits: Limits = DEFAULT_LIMITS, transport: str = "unix", protocol: str = "grpc"
                 ) -> tuple[list[BotProcess | LocalPlayer], list[BotProcess]]:
    """One player per seat, the given bots cycled over the seats; each seat of a command gets its own process
    (sandboxed with ``limits`` unless ``sandbox`` is false)."""
    if not texts:
        raise RulesError("expected at least one bot")
    players: list[BotProcess | LocalPlayer] = []
    processes: list[BotProcess] = []
    for seat in range(seats):
        text = texts[seat % len(texts)]
        spec = parse_bot(text, f"seat{seat}-{program_name(text)}")  # the log's name: one log per seat
        if isinstance(spec, str):
            players.append(LocalPlayer(builtin_player(spec, seed=f"{seed}/{seat}"), name=f"builtin:{spec}"))
        else:
            if protocol == "stdio" and not spec.command:
                raise RulesError(f"--protocol stdio needs bot commands, got the address {spec.address!r}")
            process = BotProcess(replace(spec, sandbox=sandbox, limits=limits, transport=transport,
                                         protocol=protocol), log_dir, startup_s)
            players.append(process)
            processes.append(process)
    return players, processes


def program_name(text: str) -> str:
    """A short name for a bot given on the command line, for a seat whose bot sent no handshake name: the program's
    file name without its folder and extension (``python bots/python/greedy_bot.py`` -> ``greedy_bot``; the file
    an interpreter runs, its module with ``-m``), an address as it is, ``builtin:KIND`` as it is."""
    text = text.strip()
    if text.startswith(BUILTIN_PREFIX) or is_address(text):
        return text[:64]
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    program, module = _program_word(words)
    name = program if module else Path(program).stem
    return (name or "bot")[:40]


def _program_word(words: list[str]) -> tuple[str, bool]:
    """The word that names the bot, and whether it is a module (``-m``): the command itself, or the file its
    interpreter (or ``env`` and its assignments) runs."""
    rest = iter(words)
    for word in rest:
        if word == "-m":
            return next(rest, ""), True
        if word == "-jar":
            return next(rest, ""), False
        if word.startswith("-") or "=" in word or INTERPRETER_RE.match(Path(word).name):
            continue
        return word, False
    return (Path(words[0]).name if words else ""), False
