"""Every field of a record line checked against ``GameRecord`` before any reader touches it.

A record line is trusted by nothing downstream: the runner's resume, the server, the terminal and HTML replays and
verification all read plain dicts (:mod:`.jsonform`) and would fail on ``"faults":[5]`` or ``"rounds":null`` with a
raw ``AttributeError``. So a line is parsed and checked here once, and a line that fails is a *bad line*, reported
with its number and skipped, never an exception that escapes.

What is checked, and why:

- **Types, from the schema itself.** The checker is compiled from the protobuf descriptor of ``GameRecord`` (not a
  second copy of the schema that could drift): every key must be a field of its message (by its JSON name, as this
  arena writes them), every value of the JSON type that protobuf's JSON mapping gives that field, as the writer
  writes it: messages are objects, repeated fields lists, maps objects, ``uint32`` a JSON integer in range, 64-bit
  integers a string of digits (or an integer) in range, doubles finite numbers, enums one of their names, at most one
  member of a oneof. ``null`` is refused everywhere: a record the arena wrote never holds one.
- **Depth.** ``json`` of the standard library parses nested arrays by recursion; a line nested thousands deep stops
  at the interpreter's recursion limit (a ``RecursionError``, caught here, never a crash of the process), and
  anything nested deeper than the schema is refused by the type check, which walks only the schema's own depth.
- **What readers rely on beyond types** (:func:`check_record`): at least one seat; and for a *complete* record (what
  resume, standings and the server count) a match result that fits the seats: one side per seat, every side holding
  a seat, one score per side, the ranking a permutation of the sides with the winner first (a drawn match tied for
  first), and every move's and fault's seat one of the game's seats. Whether the moves follow the rules is
  verification's job (:mod:`.replay`), not the reader's.

Messages name the place of the problem as a path (``rounds[0].moves[3].seat``) and show a bad value briefly (a
type, or at most 40 characters of it), so that a 15 MB value or a deeply nested one never reaches a terminal whole.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from rich.markup import escape

from arena.errors import ArenaError
from arena.protocol import tournament_pb2 as tpb
from arena.records.jsonform import RECORD_VERSION

Record = dict[str, Any]
Checker = Callable[[Any], None]

SHOWN = 40
"""At most this many characters of a bad value in a message."""
UINT32_MAX = (1 << 32) - 1
INT64 = (-(1 << 63), (1 << 63) - 1)
UINT64 = (0, (1 << 64) - 1)
_INTEGER_TEXT = re.compile(r"-?[0-9]{1,20}\Z")


class RecordFormatError(ArenaError, ValueError):
    """A line that is not a usable game record; the message says where and what."""

    def __init__(self, problem: str, path: str = "") -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.problem = problem
        self.path = path

    def at(self, key: str | int) -> RecordFormatError:
        """The same problem, one level further out (``key`` a field name or a list position)."""
        step = f"[{key}]" if isinstance(key, int) else str(key)
        joined = step + ("" if not self.path else self.path if self.path.startswith("[") else "." + self.path)
        return RecordFormatError(self.problem, joined)


def shown(value: Any) -> str:
    """A bad value, briefly: its JSON type for containers, a cut repr for scalars (never a recursive repr).

    A string is shown with ``repr`` (control characters escaped) and with any ``[`` that could open rich markup
    escaped (``\\[``): a message may reach a console that interprets markup, where a value such as ``[/x]`` would
    raise rich's ``MarkupError`` instead of being shown.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return escape(repr(value if len(value) <= SHOWN else value[:SHOWN] + "…"))
    if isinstance(value, int) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = str(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


# --- the checker, compiled from the descriptor ------------------------------------------------------------------------


def _unsigned32(value: Any) -> None:
    if type(value) is not int or not 0 <= value <= UINT32_MAX:
        raise RecordFormatError(f"expected an integer from 0 to {UINT32_MAX}, got {shown(value)}")


def _signed32(value: Any) -> None:
    if type(value) is not int or not -(1 << 31) <= value < (1 << 31):
        raise RecordFormatError(f"expected a 32-bit integer, got {shown(value)}")


def _integer64(low: int, high: int) -> Checker:
    def check(value: Any) -> None:
        if type(value) is str and _INTEGER_TEXT.match(value) and low <= int(value) <= high:
            return
        if type(value) is int and low <= value <= high:
            return
        raise RecordFormatError(f"expected an integer from {low} to {high} (as a string of digits), got "
                                f"{shown(value)}")
    return check


def _double(value: Any) -> None:
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return
    raise RecordFormatError(f"expected a finite number, got {shown(value)}")


def _string(value: Any) -> None:
    if type(value) is not str:
        raise RecordFormatError(f"expected a string, got {shown(value)}")


def _boolean(value: Any) -> None:
    if type(value) is not bool:
        raise RecordFormatError(f"expected true or false, got {shown(value)}")


def _message_type(field: FieldDescriptor) -> Descriptor:
    """The message a message field holds (the descriptor types it Optional: other fields have none)."""
    message = field.message_type
    assert message is not None, field.full_name
    return message


def _enum_type(field: FieldDescriptor) -> EnumDescriptor:
    """The enum an enum field holds (the descriptor types it Optional: other fields have none)."""
    enum = field.enum_type
    assert enum is not None, field.full_name
    return enum


def _enum(field: FieldDescriptor) -> Checker:
    names = frozenset(v.name for v in _enum_type(field).values)

    def check(value: Any) -> None:
        if type(value) is not str or value not in names:
            raise RecordFormatError(f"expected one of {', '.join(sorted(names))}, got {shown(value)}")
    return check


_SCALARS: dict[int, Checker] = {
    FieldDescriptor.TYPE_UINT32: _unsigned32, FieldDescriptor.TYPE_FIXED32: _unsigned32,
    FieldDescriptor.TYPE_INT32: _signed32, FieldDescriptor.TYPE_SINT32: _signed32,
    FieldDescriptor.TYPE_SFIXED32: _signed32,
    FieldDescriptor.TYPE_INT64: _integer64(*INT64), FieldDescriptor.TYPE_SINT64: _integer64(*INT64),
    FieldDescriptor.TYPE_SFIXED64: _integer64(*INT64),
    FieldDescriptor.TYPE_UINT64: _integer64(*UINT64), FieldDescriptor.TYPE_FIXED64: _integer64(*UINT64),
    FieldDescriptor.TYPE_DOUBLE: _double, FieldDescriptor.TYPE_FLOAT: _double,
    FieldDescriptor.TYPE_STRING: _string, FieldDescriptor.TYPE_BOOL: _boolean,
}


def _repeated(element: Checker) -> Checker:
    def check(value: Any) -> None:
        if type(value) is not list:
            raise RecordFormatError(f"expected a list, got {shown(value)}")
        for position, item in enumerate(value):
            try:
                element(item)
            except RecordFormatError as error:
                raise error.at(position) from None
    return check


def _map(value_checker: Checker) -> Checker:
    def check(value: Any) -> None:
        if type(value) is not dict:
            raise RecordFormatError(f"expected an object, got {shown(value)}")
        for key, item in value.items():
            try:
                value_checker(item)
            except RecordFormatError as error:
                raise error.at(f"[{shown(key)}]") from None
    return check


def _not_an_object(value: Any) -> RecordFormatError:
    return RecordFormatError(f"expected an object, got {shown(value)}")


def _no_field(message: str, key: Any) -> RecordFormatError:
    return RecordFormatError(f"{message} has no field {shown(key)}")


def _one_of(members: frozenset[str]) -> RecordFormatError:
    return RecordFormatError(f"expected at most one of {', '.join(sorted(members))}")


_FAST: dict[int, str] = {
    FieldDescriptor.TYPE_UINT32: "type(item) is int and 0 <= item <= 4294967295",
    FieldDescriptor.TYPE_DOUBLE: "type(item) is int or (type(item) is float and -_INF < item < _INF)",
    FieldDescriptor.TYPE_STRING: "type(item) is str",
    FieldDescriptor.TYPE_BOOL: "type(item) is bool",
}
"""Inline tests that accept a good value of the commonest scalar types without a call (the checker of the type
still makes the message when one fails)."""


class _Compiler:
    """Writes one Python function per message type of the schema, then compiles them all at once.

    Why generated code: a record of a long game holds thousands of values (mostly moves and tiles), and a checker
    that makes one call per value costs several times the JSON parse itself. A function per message that tests each
    field inline (``if key == "seat": ...``), the way ``dataclasses`` writes its methods, costs about as much as the
    parse. The source comes from the descriptor alone, so it follows the ``.proto`` file.
    """

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.sources: list[str] = []
        self.scope: dict[str, Any] = {"RecordFormatError": RecordFormatError, "_INF": math.inf,
                                      "_not_an_object": _not_an_object, "_no_field": _no_field, "_one_of": _one_of}

    def message(self, descriptor: Descriptor) -> str:
        """The name of the function checking ``descriptor``'s messages (written on first use)."""
        if descriptor.full_name in self.names:
            return self.names[descriptor.full_name]
        name = f"_check_{len(self.names)}_{descriptor.name}"
        self.names[descriptor.full_name] = name
        lines = [f"def {name}(value):",
                 "    if type(value) is not dict:",
                 "        raise _not_an_object(value)",
                 "    for key, item in value.items():"]
        for number, field in enumerate(descriptor.fields):
            lines.append(f"        {'if' if number == 0 else 'elif'} key == {field.json_name!r}:")
            lines.extend("            " + line for line in self.field(field))
        lines.append(f"        {'else' if descriptor.fields else 'if True'}:")
        lines.append(f"            raise _no_field({descriptor.name!r}, key)")
        for number, oneof in enumerate(descriptor.oneofs):
            members = f"_oneof_{name}_{number}"
            self.scope[members] = frozenset(f.json_name for f in oneof.fields)
            lines.append(f"    if len({members} & value.keys()) > 1:")
            lines.append(f"        raise _one_of({members})")
        self.sources.append("\n".join(lines))
        return name

    def field(self, field: FieldDescriptor) -> list[str]:
        """The lines checking ``item``, the value of ``field``, with the field's name added to any error's path."""
        if field.is_repeated and not _is_map(field):
            check = self.single(field, "element")
            return ["if type(item) is not list:",
                    "    raise RecordFormatError(f'expected a list, got {_shown(item)}').at(key)",
                    "for position, element in enumerate(item):",
                    "    try:",
                    *("        " + line for line in check),
                    "    except RecordFormatError as error:",
                    "        raise error.at(position).at(key) from None"]
        return ["try:", *("    " + line for line in self.single(field, "item")),
                "except RecordFormatError as error:", "    raise error.at(key) from None"]

    def single(self, field: FieldDescriptor, value: str) -> list[str]:
        """The lines checking one value (``value`` names the variable holding it)."""
        if _is_map(field):
            checker = _map(_plain(_message_type(field).fields_by_name["value"]))
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            check = self.message(_message_type(field))
            fast = _flat(_message_type(field), value)
            return [f"if not ({fast}):", f"    {check}({value})"] if fast else [f"{check}({value})"]
        elif field.type == FieldDescriptor.TYPE_ENUM:
            enum = _enum_type(field)
            names = f"_enum_{enum.full_name.replace('.', '_')}"
            self.scope[names] = frozenset(v.name for v in enum.values)
            self.scope[names + "_check"] = _enum(field)
            return [f"if type({value}) is not str or {value} not in {names}:", f"    {names}_check({value})"]
        else:
            checker = _SCALARS[field.type]
        slow = f"_scalar_{len(self.scope)}"
        self.scope[slow] = checker
        fast = _FAST.get(field.type)
        if fast is None:
            return [f"{slow}({value})"]
        return [f"if not ({fast.replace('item', value)}):", f"    {slow}({value})"]

    def build(self, descriptor: Descriptor) -> Checker:
        name = self.message(descriptor)
        self.scope["_shown"] = shown
        exec("\n\n".join(self.sources), self.scope)  # noqa: S102 - source written above from the descriptor only
        checker: Checker = self.scope[name]
        return checker


def _flat(message: Descriptor, value: str) -> str | None:
    """For a small message of scalars only (a ``Tile``: records hold hundreds), an inline test that accepts it with
    every field present and good, without a call; None for other messages. Anything else (a field left out, as
    older records leave out a tile's zeros) goes to the message's checker."""
    fields = message.fields
    if not fields or len(fields) > 3 or message.oneofs or any(
            f.is_repeated or f.type not in _FAST for f in fields):
        return None
    tests = [f"type({value}) is dict", f"len({value}) == {len(fields)}"]
    for f in fields:
        tests.append(f"(_v := {value}.get({f.json_name!r})) is not None and ({_FAST[f.type].replace('item', '_v')})")
    return " and ".join(tests)


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and _message_type(field).GetOptions().map_entry


def _plain(field: FieldDescriptor) -> Checker:
    """A checker of one field made of closures rather than generated code: for map values, which are few."""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _Compiler().build(_message_type(field))
    single = _enum(field) if field.type == FieldDescriptor.TYPE_ENUM else _SCALARS[field.type]
    return _repeated(single) if field.is_repeated else single


check_types: Checker = _Compiler().build(tpb.GameRecord.DESCRIPTOR)
"""Raise :class:`RecordFormatError` unless a parsed value has GameRecord's shape and every field its JSON type."""


# --- the record as a whole ------------------------------------------------------------------------------------------


def parse_record(raw: bytes | str | Record, *, complete: bool = True) -> Record:
    """One line of a record file as a checked record; :class:`RecordFormatError` says why a line is not one. (A
    line of a compact file, :class:`~.compact.PackedLine`, is unpacked by its own ``unpack``; a dict is a record
    already decoded: it is only checked.)

    With ``complete`` False (verification), a record without its match result, or whose result does not fit its
    seats, is returned all the same so that verification can report it with the game's number.
    """
    unpack = getattr(raw, "unpack", None)
    if unpack is not None:
        raw = unpack()
    if isinstance(raw, dict):
        check_record(raw, complete=complete)
        return raw
    try:
        # UTF-8 only, no BOM sniffing
        record: Record = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except RecursionError:
        raise RecordFormatError("not a game record: nested deeper than any record is") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, an integer of more than 4300 digits
        raise RecordFormatError(f"not JSON: {str(error)[:120]}") from None
    check_record(record, complete=complete)
    return record


def check_record(record: Any, *, complete: bool = True) -> None:
    """Raise :class:`RecordFormatError` unless ``record`` is a game record every reader can use (see the module)."""
    if type(record) is not dict or "recordVersion" not in record:
        raise RecordFormatError("not a game record (no recordVersion)")
    if record["recordVersion"] != RECORD_VERSION or type(record["recordVersion"]) is not int:
        raise RecordFormatError(f"record version {shown(record['recordVersion'])}; this arena reads version "
                                f"{RECORD_VERSION}")
    try:
        check_types(record)
    except RecordFormatError as error:
        raise RecordFormatError(f"not a game record: {error}") from None
    if not record.get("seats"):
        raise RecordFormatError("not a complete game record: no seats")
    if complete:
        problem = _result_problem(record) or _seat_problem(record)
        if problem:
            raise RecordFormatError(f"not a complete game record: {problem}")


def _result_problem(record: Record) -> str | None:
    """What keeps the match result from fitting the seats (standings rely on each of these), or None."""
    result = record.get("result")
    if result is None:
        return "no result"
    seats = len(record["seats"])
    side_of = record.get("sideOfSeat", [])
    if len(side_of) != seats:
        return f"expected one side per seat for {seats} seats, got {len(side_of)} in sideOfSeat"
    sides = max(side_of, default=-1) + 1
    if not 2 <= sides <= seats or set(side_of) != set(range(sides)):  # more sides than seats: some side is empty
        return f"expected two sides or more, each holding a seat, got sideOfSeat {_numbers(side_of)}"
    scores = result.get("scores", [])
    if len(scores) != sides:
        return f"expected one score for each of the {sides} sides, got {len(scores)}"
    ranking = result.get("ranking", [])
    if sorted(ranking) != list(range(sides)):
        return f"expected a ranking of the sides 0 to {sides - 1}, got {_numbers(ranking)}"
    winner = result.get("winner")
    if winner is not None and winner != ranking[0]:
        return f"expected the winner (side {winner}) first in the ranking {_numbers(ranking)}"
    if winner is None and not _tied_for_first(record, ranking):
        return "a drawn match (no winner) whose first two sides in the ranking are not tied"
    return None


def _numbers(values: list[int]) -> str:
    """A list of integers, cut after a dozen (a record may hold a long one)."""
    return "[" + ", ".join(map(str, values[:12])) + (", …]" if len(values) > 12 else "]")


def _tied_for_first(record: Record, ranking: list[int]) -> bool:
    """The first two sides of the ranking share first place: the same score, and both faulted or neither did."""
    scores = [int(s) for s in record["result"].get("scores", ())]
    side_of = record["sideOfSeat"]
    faulted = {side_of[f.get("seat", 0)] for f in record.get("faults", ()) if f.get("seat", 0) < len(side_of)}
    first, second = ranking[0], ranking[1]
    return scores[first] == scores[second] and (first in faulted) == (second in faulted)


def _seat_problem(record: Record) -> str | None:
    """A move or a fault by a seat the game does not have, or None."""
    seats = len(record["seats"])
    for fault in record.get("faults", ()):
        if fault.get("seat", 0) >= seats:
            return f"a fault of seat {fault['seat']}, but the game has {seats} seats"
    for number, rnd in enumerate(record.get("rounds", ())):
        for move in rnd.get("moves", ()):
            if move.get("seat", 0) >= seats:
                return f"round {number + 1} has a move of seat {move['seat']}, but the game has {seats} seats"
    return None


__all__ = ["RecordFormatError", "check_record", "check_types", "parse_record", "shown"]
