"""Submissions: the ``TournamentSpec`` message to and from the tournament file's tables, the TOML text kept in the
run folder, and the checks the server makes before accepting a tournament.

The message and the TOML file are one schema (``proto/dominoes/v1/tournament.proto``); validation is the file
format's own (:func:`~arena.tournament.spec.spec_from_dict`), so a submission gets the same messages as
``arena run`` would print. Unset or zero fields of the message mean "the file's default".
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from arena.players.process import BotSpec
from arena.protocol import tournament_pb2 as tpb
from arena.protocol.convert import option_value_from_pb, option_value_pb
from arena.sandbox import LIMIT_KEYS, SandboxError
from arena.sandbox.contain import resolve_program
from arena.tournament.spec import SPRT_NUMBERS, TIME_KEYS, SpecError, TournamentSpec, spec_from_dict

FAULT_POLICY_NAMES = {tpb.FAULT_POLICY_FORFEIT: "forfeit"}


# --- message <-> tables ------------------------------------------------------------------------------------------


def dict_from_message(message: tpb.TournamentSpec) -> dict[str, Any]:
    """The tournament file's tables for a message (only the fields that are set)."""
    data: dict[str, Any] = {}
    for key in ("name", "variant", "players", "games", "seed", "concurrency", "output"):
        value = getattr(message, key)
        if value:
            data[key] = value
    if message.HasField("duplicate"):
        data["duplicate"] = message.duplicate
    if message.options:
        options = {}
        for key, value in message.options.items():
            option = option_value_from_pb(value)
            if option is None:
                raise SpecError(f"key 'options.{key}' has no value (set int_value, bool_value or string_value)")
            options[key] = option
        data["options"] = options
    if message.HasField("time"):
        time = {k: getattr(message.time, k) for k in TIME_KEYS if _is_set(message.time, k)}
        if time:
            data["time"] = time
    if message.HasField("sandbox"):
        data["sandbox"] = message.sandbox
    if message.HasField("limits"):
        limits = _limits_from_pb(message.limits)
        if limits:
            data["limits"] = limits
    if message.fault_policy:
        data["fault_policy"] = FAULT_POLICY_NAMES.get(message.fault_policy, f"<enum value {message.fault_policy}>")
    if message.format:
        data["format"] = message.format
    if message.candidates:
        data["candidates"] = list(message.candidates)
    if message.tables:
        data["tables"] = message.tables
    if message.HasField("sprt"):
        data["sprt"] = _sprt_from_pb(message.sprt)
    bots = []
    for entry in message.bots:
        bot: dict[str, Any] = {"name": entry.name}
        if entry.command:
            bot["command"] = list(entry.command)
        if entry.address:
            bot["address"] = entry.address
        if entry.env:
            bot["env"] = dict(entry.env)
        if entry.cwd:
            bot["cwd"] = entry.cwd
        for key in ("folder", "transport", "protocol"):
            if getattr(entry, key):
                bot[key] = getattr(entry, key)
        if entry.HasField("limits") and _limits_from_pb(entry.limits):
            bot["limits"] = _limits_from_pb(entry.limits)
        if entry.skip_if_missing:
            bot["skip_if_missing"] = True
        if entry.dial_in:
            bot["dial_in"] = True
        if entry.token_sha256:
            bot["token_sha256"] = entry.token_sha256
        bots.append(bot)
    data["bots"] = bots
    return data


def _is_set(message: Message, key: str) -> bool:
    """Whether a field says something: set, for a field with presence (``optional``: a set 0 is a value, as
    ``grace_ms = 0`` is no grace), else not zero (zero means the file's default)."""
    if message.DESCRIPTOR.fields_by_name[key].has_presence:
        return message.HasField(key)
    return bool(getattr(message, key))


def _sprt_from_pb(sprt: tpb.SprtSpec) -> dict[str, Any]:
    """The fields of an SprtSpec that are set."""
    table: dict[str, Any] = {key: getattr(sprt, key) for key in SPRT_NUMBERS if sprt.HasField(key)}
    if sprt.model:
        table["model"] = sprt.model
    return table


def _limits_from_pb(limits: tpb.LimitsSpec) -> dict[str, Any]:
    """The fields of a LimitsSpec that are set (zero means the default)."""
    return {key: getattr(limits, key) for key in LIMIT_KEYS if getattr(limits, key)}


def _limits_into_pb(table: Mapping[str, Any], limits: tpb.LimitsSpec) -> None:
    for key, value in dict(table).items():
        setattr(limits, key, value)


def message_from_dict(data: Mapping[str, Any]) -> tpb.TournamentSpec:
    """The message for a tournament file's tables. Raises ValueError or TypeError when a value does not fit its
    field (the caller then sends the TOML text alone and lets the server name the problem)."""
    message = tpb.TournamentSpec()
    for key in ("name", "variant", "players", "games", "concurrency", "output", "tables"):
        if key in data:
            setattr(message, key, data[key])
    if "seed" in data:
        seed = data["seed"]
        if isinstance(seed, bool) or not isinstance(seed, (str, int)):
            raise TypeError("seed")
        message.seed = str(seed)
    if "duplicate" in data:
        message.duplicate = data["duplicate"]
    if "sandbox" in data:
        message.sandbox = data["sandbox"]
    if "limits" in data:
        _limits_into_pb(data["limits"], message.limits)
    for key, value in dict(data.get("options", {})).items():
        if not isinstance(value, (bool, int, str)):
            raise TypeError(f"options.{key}")
        message.options[key].CopyFrom(option_value_pb(value))
    if "time" in data:
        for key, value in dict(data["time"]).items():
            setattr(message.time, key, value)
    if "fault_policy" in data:
        names = {v: k for k, v in FAULT_POLICY_NAMES.items()}
        message.fault_policy = names[data["fault_policy"]]
    if "format" in data:
        message.format = data["format"]
    message.candidates.extend(data.get("candidates", ()))
    if "sprt" in data:
        message.sprt.SetInParent()  # an empty [sprt] table is a test with every default
        for key, value in dict(data["sprt"]).items():
            setattr(message.sprt, key, value)
    for entry in data.get("bots", []):
        bot = message.bots.add(name=entry["name"])
        command = entry.get("command")
        if isinstance(command, str):

            bot.command.extend(shlex.split(command))
        elif command is not None:
            bot.command.extend(command)
        for key in ("address", "cwd", "folder", "transport", "protocol", "skip_if_missing", "dial_in",
                    "token_sha256"):
            if key in entry:
                setattr(bot, key, entry[key])
        if "limits" in entry:
            _limits_into_pb(entry["limits"], bot.limits)
        for key, value in dict(entry.get("env", {})).items():
            bot.env[key] = value
    unknown = set(data) - {"name", "variant", "players", "games", "concurrency", "output", "seed", "duplicate",
                           "options", "time", "fault_policy", "bots", "sandbox", "limits", "format", "candidates",
                           "sprt", "tables"}
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    return message


# --- TOML text ---------------------------------------------------------------------------------------------------


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's string escapes are valid TOML basic-string escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")


def toml_text(data: Mapping[str, Any]) -> str:
    """A tournament file for the tables (what the run folder keeps when a submission came without its TOML)."""
    lines = ["# submitted to the arena server as a TournamentSpec message"]
    for key, value in data.items():
        if key not in ("options", "time", "limits", "bots"):
            lines.append(f"{key} = {_value(value)}")
    for table in ("options", "time", "limits"):
        if data.get(table):
            lines += ["", f"[{table}]"] + [f"{json.dumps(str(k))} = {_value(v)}" for k, v in data[table].items()]
    for bot in data.get("bots", []):
        lines += ["", "[[bots]]"] + [f"{k} = {_value(v)}" for k, v in bot.items()]
    return "\n".join(lines) + "\n"


# --- validation --------------------------------------------------------------------------------------------------


def _comparable(spec: TournamentSpec) -> TournamentSpec:
    return replace(spec, output="")


def _first_difference(a: TournamentSpec, b: TournamentSpec) -> str:
    for f in fields(TournamentSpec):
        if getattr(a, f.name) != getattr(b, f.name):
            return f"key '{f.name}': {getattr(b, f.name)!r} in the message, {getattr(a, f.name)!r} in the TOML"
    return "?"


Resolve = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""Turns a submission's tables into runnable ones (a server puts its registered bots in for their names)."""


def _no_change(data: Mapping[str, Any]) -> Mapping[str, Any]:
    return data


def parse_submission(message: tpb.TournamentSpec | None, toml: str,
                     resolve: Resolve = _no_change) -> tuple[TournamentSpec, str]:
    """The validated tournament and the text to keep as its tournament.toml; SpecError names any problem.

    ``resolve`` is applied to the tables of the message and of the TOML alike before validation, so both say the
    same thing about the bots the server will really run; the text kept is the submission's own (names, not the
    commands they stand for), so a resumed tournament is resolved again against the registry of that day."""
    from_message = None
    if message is not None:
        from_message = spec_from_dict(resolve(dict_from_message(message)))
    if not toml:
        if from_message is None:
            raise SpecError("expected a tournament: set spec (a TournamentSpec) or toml (the tournament file)")
        assert message is not None
        return from_message, toml_text(dict_from_message(message))
    try:
        data = tomllib.loads(toml)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"the tournament file is not valid TOML: {error}") from None
    spec = spec_from_dict(resolve(data))
    if from_message is not None and _comparable(from_message) != _comparable(spec):
        raise SpecError("the spec message and the TOML text describe different tournaments ("
                        f"{_first_difference(_comparable(spec), _comparable(from_message))})")
    return spec, toml


def _search_path() -> str:
    """Bots get the arena's interpreter first on their PATH (arena/players/process.py), so look there too."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def check_programs(bots: Iterable[BotSpec], cwd: Path | None = None) -> None:
    """Every bot command's program and working folder exist on this machine (the server's)."""
    cwd = cwd or Path.cwd()
    for number, bot in enumerate(bots, 1):
        if not bot.command or bot.builtin:
            continue
        folder = cwd / bot.cwd if bot.cwd else cwd
        if not folder.is_dir():
            raise SpecError(f"key 'bots[{number}].cwd': bot {bot.name!r}: no such folder on the arena server: "
                            f"{folder}")
        try:
            resolve_program(bot.command, folder.resolve(), _search_path())
            continue
        except SandboxError:
            program = bot.command[0]
        if os.sep in program:
            raise SpecError(f"key 'bots[{number}].command': bot {bot.name!r}: program {program!r} does not "
                            f"exist (or is not executable) on the arena server")
        raise SpecError(f"key 'bots[{number}].command': bot {bot.name!r}: program {program!r} is not found on "
                        f"the arena server's PATH")
