"""Decision requests assembled as protobuf bytes from cached pieces: the hot path of every call to a bot.

A seat's observation is mostly made of parts that never change once created: the history's events, the layout's
connections and open ends, the legal actions, the tiles. Building a fresh message for each decision costs tens of
microseconds of Python; here each part is encoded once and requests are joined from the cached bytes. This is valid
protobuf: a message's encoding is the concatenation of its fields' encodings, in any order, and a parser appends
repeated fields in the order it meets them. A test checks, for every variant, that these bytes parse to exactly the
message :func:`arena.protocol.convert.act_request_pb` builds.
"""

from __future__ import annotations

import weakref
from typing import Any, Iterable

from ..rules import NO_TRAIN, Action, Observation
from ..rules.tiles import HIGH, LOW
from . import bot_pb2
from . import types_pb2 as pb
from .convert import _connection_pb, _open_end_pb, action_pb, event_pb, layout_extras_pb, options_pb

LENGTH_DELIMITED = 2


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """One length-delimited field: tag, length, payload."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload


def _tile_fields(number: int) -> tuple[bytes, ...]:
    return tuple(field(number, pb.Tile(low=LOW[t], high=HIGH[t]).SerializeToString()) for t in range(len(LOW)))


HAND_TILES = _tile_fields(6)       # Observation.hand
PLAYED_TILES = _tile_fields(1)     # Layout.played
LINE_TILES = _tile_fields(2)       # Layout.line

_EVENTS: dict[tuple[int, Action], bytes] = {}
_LEGAL: dict[Action, bytes] = {}
_CONNECTIONS: dict[tuple[Any, int], bytes] = {}
_ENDS: dict[tuple[Any, int], bytes] = {}
_OPTIONS: "weakref.WeakKeyDictionary[Any, bytes]" = weakref.WeakKeyDictionary()


def _event(seat: int, action: Action) -> bytes:
    key = (seat, action)
    data = _EVENTS.get(key)
    if data is None:
        data = _EVENTS[key] = field(8, event_pb(seat, action).SerializeToString())
    return data


def _legal(action: Action) -> bytes:
    data = _LEGAL.get(action)
    if data is None:
        data = _LEGAL[action] = field(13, action_pb(action).SerializeToString())
    return data


def _connection(c: Any, train: int) -> bytes:
    key = (c, train)
    data = _CONNECTIONS.get(key)
    if data is None:
        data = _CONNECTIONS[key] = field(3, _connection_pb(c, train).SerializeToString())
    return data


def _end(end: Any, train: int) -> bytes:
    key = (tuple(end[:3]), train)
    data = _ENDS.get(key)
    if data is None:
        data = _ENDS[key] = field(4, _open_end_pb(end, train).SerializeToString())
    return data


def layout_bytes(view: Any) -> bytes:
    """The Layout message of any variant's view, in the field order of ``convert.layout_pb``."""
    parts = [PLAYED_TILES[t] for t in view.played]
    parts.extend(LINE_TILES[t] for t in getattr(view, "line", ()))
    parts.extend(_connection(c, NO_TRAIN) for c in getattr(view, "connections", ()))
    parts.extend(_end(e, NO_TRAIN) for e in getattr(view, "open_ends", ()))
    for train in getattr(view, "trains", ()):
        parts.append(_end(train.end, train.train))
        parts.extend(_connection(c, train.train) for c in train.connections)
    rest = layout_extras_pb(view)
    parts.append(rest.SerializeToString())
    return b"".join(parts)


def observation_bytes(obs: Observation, side_of_seat: Iterable[int]) -> bytes:
    base = pb.Observation(
        seat=obs.seat, players=obs.players, round_index=obs.round_index, turn=max(obs.turn, 0), leader=obs.leader,
        hand_counts=obs.hand_counts, boneyard_count=obs.boneyard_count, scores=obs.scores,
        side_of_seat=side_of_seat,
    ).SerializeToString()
    parts = [base]
    parts.extend(HAND_TILES[t] for t in obs.hand)
    parts.append(field(7, layout_bytes(obs.layout)))
    parts.extend(_event(s, a) for s, a in obs.history)
    parts.extend(_legal(a) for a in obs.legal_actions)
    return b"".join(parts)


def _options(game: Any) -> bytes:
    data = _OPTIONS.get(game)
    if data is None:
        data = _OPTIONS[game] = bot_pb2.ActRequest(options=options_pb(game.options)).SerializeToString()
    return data


def act_request_bytes(request: Any) -> bytes:
    """The encoded ``ActRequest`` for a :class:`~arena.players.base.DecisionRequest`."""
    game = request.game
    base = bot_pb2.ActRequest(
        match_id=request.match_id, variant=game.name, seat=request.seat,
        time=bot_pb2.TimeControl(move_ms=request.move_ms, bank_ms=request.bank_ms, deadline_ms=request.deadline_ms),
        move_number=request.move_number,
    ).SerializeToString()
    return b"".join((base, _options(game), field(5, observation_bytes(request.observation, game.side_of))))
