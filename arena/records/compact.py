"""The compact record file, ``games.jsonl.zst``: each game's JSON line, its tiles written as numbers, compressed on
its own with zstd and a dictionary that ships with the arena: about seventeen times smaller than the line.

Why per record and not the whole file: a game counts once it is on disk and fsynced, and a crash may cut the last
write short; with one frame per game the file is a sequence of independent, complete records plus at most one torn
tail, exactly like the JSON lines file, and any game can be read alone (the server serves a game by its offset). The
shared dictionary (trained once on games of every variant, :mod:`arena.records.dictionary`) gives each small frame
most of what compressing the file whole would.

Layout, one unit per game, each written with one ``write`` and fsynced::

    header (12 bytes): 50 2A 4D 18 | 04 00 00 00 | length of the frame (uint32, little-endian)
    frame (length bytes): a zstd frame of the packed JSON line (newline included), with its content size, its
                          content checksum and its dictionary's id

The packed line is the record's JSON line (protobuf's JSON mapping, the keys in the same order) with every
``Tile`` written as its number, ``high * (high + 1) / 2 + low`` (``[0|0]`` 0, ``[0|1]`` 1, ``[1|1]`` 2, ``[0|2]``
3, ...), and every move's ``thinkMs`` (rounded to the microsecond by the referee) as whole microseconds, both found
from the schema (the fields of type ``Tile``, ``MoveRecord.think_ms``), not guessed: the tiles are half the line's
bytes and most of what is left after compression, the think times a quarter of what is left. Unpacking gives the
record back exactly (the same dict, the same JSON); a record the arena would not write (a tile without both halves,
a think time finer than a microsecond) is refused by the writer rather than stored changed.

The header is a zstd *skippable frame* carrying the next frame's length, so the file is also a plain zstd stream:
``zstd -d -D arena/records/dictionaries/records-1.dict < games.jsonl.zst`` prints the packed lines; ``arena export
RUN --jsonl`` prints the readable ones. The frame names its dictionary (zstd's dictionary id), and the id names the
whole encoding (this packing and that dictionary): a new one gets a new id and file, and this module keeps every
earlier one, so every file stays readable.

A unit that is not a record (a bad header, a frame that fails its checksum or has none, one compressed with a
dictionary this arena does not have) is a *bad unit* with a one-line problem, and the reader goes on with the next
header it finds; a unit cut short at the end of the file is the torn tail, which resume drops. So a bit flipped in a
frame is never read as another record: it fails the checksum of the content (or, in the few bits zstd ignores,
changes nothing).
"""

from __future__ import annotations

import json
import math
import struct
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import zstandard
from google.protobuf.descriptor import Descriptor

from arena.protocol import tournament_pb2 as tpb
from arena.protocol import types_pb2 as pb
from arena.records.schema import Record, RecordFormatError

SKIPPABLE_MAGIC = 0x184D2A50
HEADER = struct.Struct("<III")
"""magic of a zstd skippable frame, its payload's size (4), the length of the record frame that follows."""
HEADER_START = struct.pack("<II", SKIPPABLE_MAGIC, 4)
"""The first eight bytes of every header: where the reader finds the next unit after a damaged one."""
MAX_FRAME = 64 << 20
"""A frame or a record longer than this is damage, never a game (a four-player Mexican Train game is ~10 kB)."""

DICTIONARIES = {32769: "records-1.dict"}
"""zstd dictionary id -> its file under ``dictionaries/``; new records use :data:`CURRENT`. Never remove one."""
CURRENT = 32769
LEVEL = 9
"""zstd's level for new records: ~2 ms a Draw game, ~2,600 bytes; level 12 saves 20% more for ten times the time."""


@dataclass(frozen=True)
class Unit:
    """One stored unit of a record file: where it is, its bytes as stored, and why it is not a record if known."""

    offset: int
    """Of the stored bytes (a JSON line without its newline; a frame after its header) in the file."""
    length: int
    raw: bytes
    problem: str = ""


@cache
def dictionary(dict_id: int) -> zstandard.ZstdCompressionDict:
    """The dictionary of this id, loaded once from the package (KeyError: not one this arena has)."""
    data = resources.files(__package__).joinpath("dictionaries", DICTIONARIES[dict_id]).read_bytes()
    return zstandard.ZstdCompressionDict(data)


@cache
def _compression_dictionary() -> zstandard.ZstdCompressionDict:
    """The current dictionary digested for :data:`LEVEL` once (compressing with a raw dictionary digests it again
    at every call: most of the time of a small frame)."""
    prepared = zstandard.ZstdCompressionDict(dictionary(CURRENT).as_bytes())
    prepared.precompute_compress(level=LEVEL)
    return prepared


_local = threading.local()


def _decompressor(dict_id: int) -> zstandard.ZstdDecompressor:
    """One decompressor per dictionary and thread (they are not safe to share between threads)."""
    cached: dict[int, zstandard.ZstdDecompressor] = _local.__dict__.setdefault("decompressors", {})
    if dict_id not in cached:
        cached[dict_id] = zstandard.ZstdDecompressor(dict_data=dictionary(dict_id))
    return cached[dict_id]


def _compressor() -> zstandard.ZstdCompressor:
    if not hasattr(_local, "compressor"):
        _local.compressor = zstandard.ZstdCompressor(dict_data=_compression_dictionary(), write_checksum=True,
                                                     write_content_size=True, write_dict_id=True)
    compressor: zstandard.ZstdCompressor = _local.compressor
    return compressor


def encode(record: Record) -> bytes:
    """The stored unit of one record: header and frame, to be written with one write."""
    packed = _walk(record, _PLAN, _packed)
    frame = _compressor().compress(json.dumps(packed, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
    return HEADER.pack(SKIPPABLE_MAGIC, 4, len(frame)) + frame


def unpack(line: bytes) -> Any:
    """The record a packed line holds (not yet checked: :func:`~.schema.check_record` does that); a line that is not
    JSON is a :class:`RecordFormatError`, as :func:`~.schema.parse_record` says it."""
    try:
        data = json.loads(line.decode("utf-8"))
    except RecursionError:
        raise RecordFormatError("not a game record: nested deeper than any record is") from None
    except ValueError as error:
        raise RecordFormatError(f"not JSON: {str(error)[:120]}") from None
    return _walk(data, _PLAN, _unpacked, copy=False) if type(data) is dict else data  # fresh from json.loads


class PackedLine(bytes):
    """A packed line, as :func:`~.schema.parse_record` takes it (it calls :meth:`unpack`): bytes, so that
    verification sends the lines of a compact file to its worker processes as cheaply as JSON lines, and each worker
    unpacks its own."""

    def unpack(self) -> Any:
        return unpack(self)


# --- tiles as numbers ---------------------------------------------------------------------------------------------

TILE = pb.Tile.DESCRIPTOR.full_name
THINK = tpb.MoveRecord.DESCRIPTOR.fields_by_name["think_ms"].full_name
Plan = dict[str, tuple[bool, Any]]
"""JSON field name -> (repeated, ``TILE``, ``THINK`` or the plan of the message below) for each field packed."""


def _plan_of(message: Descriptor) -> Plan:
    """Where the tiles and think times are in a message, from its descriptor (only the fields with one below)."""
    plan: Plan = {}
    for field in message.fields:
        below = field.message_type
        if field.full_name == THINK:
            plan[field.json_name] = (False, THINK)
        if below is None or below.GetOptions().map_entry:
            continue
        inner = TILE if below.full_name == TILE else _plan_of(below)
        if inner:
            plan[field.json_name] = (field.is_repeated, inner)
    return plan


_PLAN = _plan_of(tpb.GameRecord.DESCRIPTOR)


def _walk(data: dict[str, Any], plan: Plan, convert: Any, copy: bool = True) -> dict[str, Any]:
    """``data`` (a copy, key order kept; with ``copy`` False, ``data`` itself, changed in place) with ``convert``
    applied to every tile and think time the plan finds (``convert(kind, value)``, kind ``TILE`` or ``THINK``);
    values of the wrong type are left as they are, for the schema's check to report."""
    out = dict(data) if copy else data
    for key, (repeated, inner) in plan.items():
        value = out.get(key)
        if value is None or (repeated and type(value) is not list):
            continue
        if inner == THINK:
            out[key] = convert(inner, value)
        elif inner == TILE:
            out[key] = [convert(inner, v) for v in value] if repeated else convert(inner, value)
        elif repeated:
            out[key] = [_walk(v, inner, convert, copy) if type(v) is dict else v for v in value]
        elif type(value) is dict:
            out[key] = _walk(value, inner, convert, copy)
    return out


def _packed(kind: str, value: Any) -> int:
    """A tile (both halves, low first) as its number, a think time in milliseconds as whole microseconds; anything
    else is not a record this arena writes."""
    if kind == THINK:
        micros = round(value * 1000) if type(value) is float and math.isfinite(value) else None
        if micros is None or micros / 1000 != value:
            raise RecordFormatError(f"not a think time as records write them: {str(value)[:40]}")
        return micros
    tile = value
    if type(tile) is dict and tile.keys() == {"low", "high"}:
        low, high = tile["low"], tile["high"]
        if type(low) is int and type(high) is int and 0 <= low <= high <= MAX_PIPS:
            return high * (high + 1) // 2 + low
    raise RecordFormatError(f"not a tile as records write them: {str(tile)[:40]}")


MAX_PIPS = 1000
"""No set has more pips on a half (double-eighteen is the largest sold); a larger number is not a tile."""


def _unpacked(kind: str, number: Any) -> Any:
    """A tile's number as the tile, whole microseconds as milliseconds; anything else (for the schema's check to
    refuse) as it is."""
    if kind == THINK:
        return number / 1000 if type(number) is int else number
    if type(number) is not int or not 0 <= number <= MAX_PIPS * (MAX_PIPS + 3) // 2:
        return number
    high = (math.isqrt(8 * number + 1) - 1) // 2
    return {"low": number - high * (high + 1) // 2, "high": high}


def decode(frame: bytes) -> bytes:
    """The packed JSON line a frame holds; :class:`RecordFormatError` (one line) for a frame that is damaged, too
    large, or compressed with a dictionary this arena does not have. Every frame the arena writes carries the
    checksum of its content, and one without it, or with bytes after its end, is damage: a flipped bit that cleared
    the frame's checksum flag would otherwise have the checksum's own bytes ignored as trailing data, and a bit
    flipped in a frame without a checksum can decode into a different record that parses."""
    try:
        params = zstandard.get_frame_parameters(frame)
    except zstandard.ZstdError:
        raise RecordFormatError("not a zstd frame (damaged)") from None
    if params.dict_id not in DICTIONARIES:
        raise RecordFormatError(f"compressed with dictionary {params.dict_id}, which this arena does not have "
                                f"(it knows {', '.join(map(str, DICTIONARIES))}; written by a newer arena?)")
    if not 0 < params.content_size <= MAX_FRAME:
        raise RecordFormatError("a frame without a plausible size (damaged)")
    if not params.has_checksum:
        raise RecordFormatError("a frame without its content checksum (damaged)")
    try:
        return _decompressor(params.dict_id).decompress(frame, max_output_size=MAX_FRAME, allow_extra_data=False)
    except zstandard.ZstdError as error:
        raise RecordFormatError(f"a damaged frame: {str(error)[:120]}") from None


def split(data: bytes, base: int, final: bool) -> tuple[list[Unit], int]:
    """The units that ``data`` (the file's bytes from offset ``base``) holds whole, and how many bytes they take.

    What is left (``len(data)`` minus that) is a unit still being written, or, when ``final`` (``data`` reaches the
    end of the file), the torn tail. Damaged bytes are a unit with a ``problem``, up to the next header; a header
    whose length runs past the end while a later header follows is damage too, not a torn tail (so resume never
    drops games after it).
    """
    units: list[Unit] = []
    position = 0
    while len(data) - position >= HEADER.size:
        magic, size, length = HEADER.unpack_from(data, position)
        start = position + HEADER.size
        if magic != SKIPPABLE_MAGIC or size != 4 or length > MAX_FRAME:
            following = data.find(HEADER_START, position + 1)
            if following < 0 and not final:
                break  # the next header may still be on its way
            end = following if following >= 0 else len(data)
            units.append(Unit(base + position, end - position, data[position:end],
                              f"{end - position} bytes that are not a record unit (damaged)"))
            position = end
            continue
        if start + length > len(data):
            following = data.find(HEADER_START, start) if final else -1
            if following < 0:
                break  # being written, or the torn tail
            units.append(Unit(base + position, following - position, data[position:following],
                              "a unit cut short before the next one (damaged)"))
            position = following
            continue
        units.append(Unit(base + start, length, data[start:start + length]))
        position = start + length
    return units, position


def looks_compact(start: bytes) -> bool:
    """Whether a file's first bytes are a compact record file's (to tell it from a file given by mistake)."""
    return start.startswith(HEADER_START)
