"""Decision requests assembled as protobuf bytes from cached pieces: the hot path of every call to a bot.

A seat's observation is mostly made of parts that never change once created: the history's events, the layout's
connections and open ends, the legal actions, the tiles. Building a fresh message for each decision costs tens of
microseconds of Python; here each part is encoded once and requests are joined from the cached bytes. The parts
that only grow during a round (the history, the tiles played, a line's connections) are also kept joined per match
and seat (:func:`_grown`), so a decision encodes only what was added since the seat's last one, and the scalar
fields are written directly (:func:`_scalars`) rather than through a message built for them. This is valid
protobuf: a message's encoding is the concatenation of its fields' encodings, in any order, and a parser appends
repeated fields in the order it meets them. A test checks, for every variant, that these bytes parse to exactly the
message :func:`arena.protocol.convert.act_request_pb` builds.

The referee's own requests go further (:func:`round_observation_bytes`): they are encoded from the round itself,
without the :class:`~arena.rules.Observation` an in-process player reads, and what was encoded of the round is kept
per match (:class:`_Sent`), so each placement's new tiles, connections and history entries are encoded once. A test
holds those bytes equal to the bytes of the built observation.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from arena.protocol import bot_pb2
from arena.protocol import types_pb2 as pb
from arena.protocol.convert import (
    _connection_pb,
    _open_end_pb,
    action_pb,
    event_pb,
    layout_extras_pb,
    open_double_pb,
    options_pb,
    tile_pb,
    train_pb,
    train_view_pb,
)
from arena.rules import NO_TRAIN, Action, Observation, RoundState
from arena.rules.line import Line, LineView
from arena.rules.spinner import Spinner, SpinnerView
from arena.rules.tiles import HIGH, LOW, set_size
from arena.rules.trains import Trains, TrainsView

LENGTH_DELIMITED = 2
K = TypeVar("K")


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


def _key(number: int, wire_type: int = 0) -> bytes:
    return varint(number << 3 | wire_type)


SMALL = 256
"""Varints of the values a request's counters take (seats, rounds, counts), looked up rather than computed."""
_VARINTS = tuple(varint(v) for v in range(SMALL))


TWO_BYTES = 1 << 14
"""Varints below this take at most two bytes: the lengths of most observations and layouts."""
_LENGTHS = _VARINTS[:128] + tuple(bytes((value & 0x7F | 0x80, value >> 7)) for value in range(128, TWO_BYTES))
"""The varint of every length below :data:`TWO_BYTES`, looked up (some 600 kB, made in a few milliseconds)."""


def _uint(value: int) -> bytes:
    return _LENGTHS[value] if value < TWO_BYTES else varint(value)


def _scalars(fields: Iterable[tuple[bytes, int]]) -> bytes:
    """Non-negative integer fields (``(key, value)`` pairs) as proto3 writes them: zeros left out."""
    return b"".join([key + (_VARINTS[value] if value < SMALL else varint(value)) for key, value in fields if value])


GROWN_KEPT = 1024
"""How many (match, seat, part) joins :func:`_grown` keeps: three a seat of every game in flight (64 Draw games need
384); the oldest go first, so more games than that only encode from scratch. Bounded because a long Mexican Train
history joined is some 10 kB."""
_PACKED: dict[tuple[bytes, tuple[int, ...]], bytes] = {}


def _packed(key: bytes, values: tuple[int, ...]) -> bytes:
    """A packed repeated integer field, remembered: counts, scores and sides repeat from decision to decision."""
    data = _PACKED.get((key, values))
    if data is None:
        if len(_PACKED) >= GROWN_KEPT:
            del _PACKED[next(iter(_PACKED))]
        data = _PACKED[(key, values)] = _pack(key, values)
    return data


def _pack(key: bytes, values: tuple[int, ...]) -> bytes:
    """A packed repeated integer field (int64 values as two's complement, as protobuf writes negatives)."""
    payload = b"".join([(_VARINTS[v] if v < SMALL else varint(v)) if v >= 0 else varint(v & 0xFFFFFFFFFFFFFFFF)
                        for v in values])
    return key + _uint(len(payload)) + payload if payload else b""


_OBSERVATION_KEYS = tuple(_key(n) for n in range(1, 6)) + (_key(10),)  # seat .. leader, boneyard_count
_HAND_COUNTS, _SCORES, _SIDE_OF_SEAT = _key(9, LENGTH_DELIMITED), _key(11, LENGTH_DELIMITED), _key(12, LENGTH_DELIMITED)
_SEAT, _OBSERVATION, _TIME, _MOVE_NUMBER = _key(4), _key(5, LENGTH_DELIMITED), _key(6, LENGTH_DELIMITED), _key(7)
_LAYOUT = _key(7, LENGTH_DELIMITED)
_TIME_KEYS = (_key(1), _key(2), _key(3))  # move_ms, bank_ms, deadline_ms


_GROWN: dict[tuple[str, int, str], tuple[tuple[Any, ...], bytes]] = {}


def _grown(key: tuple[str, int, str], items: tuple[Any, ...], encode: Any) -> bytes:
    """``b"".join(map(encode, items))``, reusing the join made for ``key`` last time when ``items`` begins with
    what was joined then (a round's history, tiles played and connections only grow; a new round, or another
    match under a reused id, starts again). The check compares the items themselves, so it is never wrong."""
    entry = _GROWN.get(key)
    if entry is not None:
        done, data = entry
        n = len(done)
        if n == len(items) and (n == 0 or items[-1] == done[-1]) and items == done:
            return data
        if n < len(items) and items[:n] == done:
            data += b"".join([encode(item) for item in items[n:]])
            _GROWN[key] = (items, data)
            return data
    data = b"".join([encode(item) for item in items])
    if len(_GROWN) >= GROWN_KEPT:
        del _GROWN[next(iter(_GROWN))]
    _GROWN[key] = (items, data)
    return data


def _tile_fields(number: int) -> tuple[bytes, ...]:
    return tuple(field(number, pb.Tile(low=LOW[t], high=HIGH[t]).SerializeToString()) for t in range(len(LOW)))


HAND_TILES = _tile_fields(6)       # Observation.hand
PLAYED_TILES = _tile_fields(1)     # Layout.played
LINE_TILES = _tile_fields(2)       # Layout.line


class _Encoded(dict[K, bytes]):
    """Encodings by what they encode, each made on first use (``__missing__``): a hit is one lookup in C, which
    ``b"".join(map(encodings.__getitem__, items))`` makes without a Python step per item."""

    def __init__(self, encode: Callable[[K], bytes]) -> None:
        super().__init__()
        self.encode = encode

    def __missing__(self, key: K) -> bytes:
        data = self[key] = self.encode(key)
        return data


_EVENTS: _Encoded[tuple[int, Action]] = _Encoded(lambda event: field(8, event_pb(*event).SerializeToString()))
"""A history entry's field, by the (seat, action) entry itself."""
_LEGAL: _Encoded[Action] = _Encoded(lambda action: field(13, action_pb(action).SerializeToString()))
_CONNECTIONS: dict[tuple[Any, int], bytes] = {}
_ENDS: dict[tuple[Any, int], bytes] = {}
_OPTIONS: weakref.WeakKeyDictionary[Any, bytes] = weakref.WeakKeyDictionary()


def _event(seat: int, action: Action) -> bytes:
    return _EVENTS[(seat, action)]


def _legal(action: Action) -> bytes:
    return _LEGAL[action]


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


_LINE_ENDS: _Encoded[Any] = _Encoded(lambda end: _end(end, NO_TRAIN))
"""A line's open end, keyed by the (tile, point, value) end itself: no key to build per end."""
_LINE_CONNECTIONS: _Encoded[Any] = _Encoded(lambda c: _connection(c, NO_TRAIN))
"""A line's connection, keyed by the connection itself: no key to build per connection."""


def _line_end(end: Any) -> bytes:
    return _LINE_ENDS[end]


def _line_connection(c: Any) -> bytes:
    return _LINE_CONNECTIONS[c]


def _history_event(event: tuple[int, Action]) -> bytes:
    """A history entry: the (seat, action) pair is itself :data:`_EVENTS`' key, so a known one costs one lookup."""
    return _EVENTS[event]


def layout_bytes(view: Any, stream: tuple[str, int] | None = None) -> bytes:
    """The Layout message of any variant's view, in the field order of ``convert.layout_pb``; ``stream`` (match id,
    seat) lets the parts that only grow be joined incrementally (:func:`_grown`)."""
    if type(view) is LineView:
        return _line_layout_bytes(view, stream)
    if type(view) is TrainsView:
        return _trains_layout_bytes(view, stream)
    if type(view) is SpinnerView:
        return _line_layout_bytes(view, stream) + _spinner_extras(view)
    if stream is None:
        parts = [b"".join([PLAYED_TILES[t] for t in view.played])]
        parts.extend(LINE_TILES[t] for t in getattr(view, "line", ()))
        parts.extend(_connection(c, NO_TRAIN) for c in getattr(view, "connections", ()))
    else:
        match_id, seat = stream
        parts = [_grown((match_id, seat, "played"), view.played, PLAYED_TILES.__getitem__)]
        parts.extend(LINE_TILES[t] for t in getattr(view, "line", ()))
        connections = getattr(view, "connections", ())
        if connections:
            parts.append(_grown((match_id, seat, "connections"), connections, _line_connection))
    parts.extend([_line_end(e) for e in getattr(view, "open_ends", ())])
    for train in getattr(view, "trains", ()):
        parts.append(_end(train.end, train.train))
        parts.extend(_connection(c, train.train) for c in train.connections)
    if hasattr(view, "count") or hasattr(view, "engine"):  # a plain line has no extras: no message to build
        parts.append(layout_extras_pb(view).SerializeToString())
    return b"".join(parts)


SPINNER_TILES = _tile_fields(5)    # Layout.spinner
SIDE_C_TILES = _tile_fields(10)    # Layout.side_c
SIDE_D_TILES = _tile_fields(11)    # Layout.side_d
_COUNT = _key(6)                   # Layout.count


def _spinner_extras(view: SpinnerView) -> bytes:
    """All Fives' fields beyond the line's (the spinner, the count, arms C and D) as ``convert.layout_extras_pb``
    serializes them, in field number order, without building its message (some 10 µs a placement)."""
    return b"".join([SPINNER_TILES[view.spinner] if view.spinner >= 0 else b"",
                     _COUNT + _uint(view.count) if view.count else b"",
                     *[SIDE_C_TILES[t] for t in view.side_c], *[SIDE_D_TILES[t] for t in view.side_d]])


def _line_layout_bytes(view: LineView, stream: tuple[str, int] | None) -> bytes:
    """A line's Layout fields (all of Block's, Draw's and La Plaza's; All Fives' before its extras):
    :func:`layout_bytes`'s fields in its order, read from the view's own attributes (the general path's probes for
    attributes a line lacks cost more than the encoding)."""
    if stream is None:
        played = b"".join([PLAYED_TILES[t] for t in view.played])
        connections = b"".join([_line_connection(c) for c in view.connections])
    else:
        match_id, seat = stream
        played = _grown((match_id, seat, "played"), view.played, PLAYED_TILES.__getitem__)
        connections = (_grown((match_id, seat, "connections"), view.connections, _line_connection)
                       if view.connections else b"")
    return b"".join([played, *[LINE_TILES[t] for t in view.line], connections,
                     *[_line_end(e) for e in view.open_ends]])


_OBSERVATION_SCALARS: dict[tuple[int, ...], bytes] = {}


def _observation_scalars(values: tuple[int, ...]) -> bytes:
    """The Observation's scalar fields (seat, players, round index, turn, leader, boneyard count), remembered: a
    match's decisions repeat few of them."""
    data = _OBSERVATION_SCALARS.get(values)
    if data is None:
        if len(_OBSERVATION_SCALARS) >= GROWN_KEPT:
            del _OBSERVATION_SCALARS[next(iter(_OBSERVATION_SCALARS))]
        data = _OBSERVATION_SCALARS[values] = _scalars(zip(_OBSERVATION_KEYS, values, strict=True))
    return data


TRAINS_KEPT = 1024
"""How many trains' encodings :func:`_train` keeps, the oldest going first: a train is asked about again for a few
decisions after it last changed, and a game in flight changes one train a placement, so even 64 games in flight
find most of theirs. Kept small because every key is a live train with its connections, which the garbage
collector walks: with 8,192, each Mexican Train decision's observation took some 5 µs more (its allocations set
off those walks), with 1,024 some 3 µs, against some 15 µs the encoding saves."""
_TRAINS: dict[Any, tuple[bytes, bytes]] = {}
_ENGINES: dict[int, bytes] = {}
_OPEN_DOUBLES: dict[tuple[int, int], bytes] = {}


def _train(train: Any) -> tuple[bytes, bytes]:
    """:func:`_train_bytes`, keyed by the whole ``TrainView`` tuple: between two decisions most trains are
    unchanged, and the key is the train itself."""
    data = _TRAINS.get(train)
    if data is None:
        if len(_TRAINS) >= TRAINS_KEPT:
            del _TRAINS[next(iter(_TRAINS))]
        data = _TRAINS[train] = _train_bytes(train)
    return data


def _train_bytes(train: Any) -> tuple[bytes, bytes]:
    """A train's open end and connections (Layout fields 4 and 3), and its TrainView (field 8)."""
    ends = _end(train.end, train.train) + b"".join([_connection(c, train.train) for c in train.connections])
    return ends, pb.Layout(trains=[train_view_pb(train)]).SerializeToString()


def _engine(engine: int) -> bytes:
    data = _ENGINES.get(engine)
    if data is None:
        data = _ENGINES[engine] = pb.Layout(engine=tile_pb(engine)).SerializeToString()
    return data


def _open_double(train: int, tile: int) -> bytes:
    key = (train, tile)
    data = _OPEN_DOUBLES.get(key)
    if data is None:
        data = _OPEN_DOUBLES[key] = pb.Layout(open_doubles=[open_double_pb(train, tile)]).SerializeToString()
    return data


def _trains_layout_bytes(view: TrainsView, stream: tuple[str, int] | None) -> bytes:
    """A Mexican Train Layout: :func:`layout_bytes`'s fields, each train's parts and the extras (the engine, the
    trains' messages, the open doubles) remembered as bytes rather than built as messages for every decision."""
    if stream is None:
        parts = [b"".join([PLAYED_TILES[t] for t in view.played])]
    else:
        match_id, seat = stream
        parts = [_grown((match_id, seat, "played"), view.played, PLAYED_TILES.__getitem__)]
    trains = [_train(train) for train in view.trains]
    parts.extend([ends for ends, _ in trains])
    parts.append(_engine(view.engine))
    parts.extend([message for _, message in trains])
    parts.extend([_open_double(train, tile) for train, tile in view.open_doubles])
    return b"".join(parts)


def observation_bytes(obs: Observation, side_of_seat: Iterable[int], match_id: str | None = None) -> bytes:
    """The Observation message; with ``match_id``, the history and layout are joined incrementally per match and
    seat (:func:`_grown`)."""
    parts = [_observation_scalars((obs.seat, obs.players, obs.round_index, max(obs.turn, 0), obs.leader,
                                   obs.boneyard_count)),
             _packed(_HAND_COUNTS, obs.hand_counts), _packed(_SCORES, obs.scores),
             _packed(_SIDE_OF_SEAT, tuple(side_of_seat))]
    parts.extend([HAND_TILES[t] for t in obs.hand])
    if match_id is None:
        layout = layout_bytes(obs.layout)
        parts.extend((_LAYOUT, _uint(len(layout)), layout))
        parts.extend([_event(s, a) for s, a in obs.history])
    else:
        stream = (match_id, obs.seat)
        layout = layout_bytes(obs.layout, stream)
        parts.extend((_LAYOUT, _uint(len(layout)), layout))
        parts.append(_grown((match_id, obs.seat, "history"), obs.history, _history_event))
    parts.extend([_legal(a) for a in obs.legal_actions])
    return b"".join(parts)


MATCHES_KEPT = 256
"""How many matches' current rounds :func:`_sent` remembers what it encoded of, the oldest going first: one a game
in flight (64 games need 64). A match's next round takes its round's place, so the rounds kept alive (which the
garbage collector walks) are the ones still asked about, and the last of matches just finished."""


class _Sent:
    """What has been encoded of one round: per seat the history as that seat sees it and the request's first fields,
    the Layout field (the same for every seat) with the parts of it that only grow, and the fields that change only
    now and then (the scores). Counted, not compared: a round's history, a line's tiles, connections and arms, a
    train's tiles only grow, so what is new is what lies past the count."""

    __slots__ = ("state", "history", "seen", "prefixes", "heads", "sides", "counts_key", "small_counts", "points",
                 "start", "scores", "played", "played_bytes", "connections_bytes", "line_bytes", "left", "right",
                 "layout", "marks", "trains")

    def __init__(self, state: RoundState, match_id: str) -> None:
        self.state = state
        self.history = state.history
        """The round's history list itself: a round rebuilt from outside (:mod:`arena.rules.restore`) gets a new one."""
        game = state.game
        self.seen = [(0, b"")] * game.players
        """Per seat: how many history entries are encoded, and their bytes."""
        self.prefixes = [_head(match_id, game) + _seat_field(seat) + _OBSERVATION for seat in range(game.players)]
        """Per seat, the ActRequest's fields before the observation's length (match id, variant, options, seat)."""
        self.heads = [_scalars(zip(_OBSERVATION_KEYS[:5], (seat, game.players, state.round_index, seat,
                                                           state.deal.leader), strict=True))
                      for seat in range(game.players)]
        """Per seat, the Observation's first scalar fields when it is the seat's turn (seat, players, round index,
        turn, leader): the same all round."""
        self.sides = _packed(_SIDE_OF_SEAT, game.side_of)
        self.counts_key = _HAND_COUNTS + _uint(game.players)
        self.small_counts = set_size(game.double) < SMALL_VARINT
        """Whether no hand can hold more tiles than a one-byte varint holds: then the packed hand counts are the
        counts' bytes themselves."""
        self.points: list[int] | None = None
        self.start: tuple[int, ...] = ()
        """The round's points and starting scores when :attr:`scores` was encoded (in most variants the scores
        change only between rounds)."""
        self.scores = b""
        self.played = self.left = self.right = 0
        """How many tiles the layout held, and a line's left and right arms, when :attr:`layout` was encoded."""
        self.played_bytes = self.connections_bytes = self.line_bytes = b""
        self.layout = _LAYOUT + _VARINTS[0]
        """The Observation's Layout field: its key, its length and the Layout."""
        self.marks = 0
        """The markers on Mexican Train's trains when :attr:`layout` was encoded."""
        self.trains: list[_TrainSent] = []
        """Mexican Train's trains, as encoded."""


SMALL_VARINT = 128
"""Integers below this are one byte as varints: the byte is the integer."""

_ROUNDS: dict[str, _Sent] = {}
"""By match id: what is encoded of the match's round."""


def _sent(state: RoundState, match_id: str) -> _Sent:
    """What is encoded of ``state``, new for a round not seen (or rebuilt) since. The round itself is checked, so
    two matches under one id only encode from scratch."""
    sent = _ROUNDS.get(match_id)
    if sent is None or sent.state is not state or sent.history is not state.history:
        if sent is None and len(_ROUNDS) >= MATCHES_KEPT:
            del _ROUNDS[next(iter(_ROUNDS))]
        sent = _ROUNDS[match_id] = _Sent(state, match_id)
    return sent


def _history_grew(sent: _Sent, state: RoundState, seat: int, done: int, data: bytes) -> bytes:
    """The round's history as ``seat`` sees it, encoding only the entries added since the seat's last request (the
    first ``done``, whose bytes are ``data``)."""
    data += b"".join(map(_EVENTS.__getitem__, state.history_seen_by(seat, done)))
    sent.seen[seat] = (len(state.history), data)
    return data


def _scores_changed(sent: _Sent, state: RoundState) -> bytes:
    """The scores field, encoded again because the round's points or its starting scores changed."""
    sent.points, sent.start = state.play_points.copy(), state.start_scores
    sent.scores = _packed(_SCORES, state.scores())
    return sent.scores


def _layout_field(layout: bytes) -> bytes:
    return _LAYOUT + _uint(len(layout)) + layout


def _line_grew(sent: _Sent, line: Line) -> bytes:
    """The Layout field of ``line``, the same bytes as :func:`_line_layout_bytes` of its view, encoding only what
    was placed since :attr:`_Sent.layout` was: the tiles played and the connections appended, and the line's
    order, where a tile placed at the left end goes in front. Between two requests one tile is placed, most often."""
    tiles, done = line.tiles, sent.played
    if done and len(tiles) == done + 1:
        tile = tiles[done]
        sent.played_bytes += PLAYED_TILES[tile]
        sent.connections_bytes += _LINE_CONNECTIONS[line.connections[-1]]
        if len(line.right) != sent.right:
            sent.line_bytes += LINE_TILES[tile]
            sent.right += 1
        else:
            sent.line_bytes = LINE_TILES[tile] + sent.line_bytes
            sent.left += 1
        sent.played = done + 1
    else:
        _line_tiles_added(sent, line)
    layout = b"".join([sent.played_bytes, sent.line_bytes, sent.connections_bytes,
                       *map(_LINE_ENDS.__getitem__, line.ends)])
    sent.layout = b"".join((_LAYOUT, _uint(len(layout)), layout))
    return sent.layout


def _line_tiles_added(sent: _Sent, line: Line) -> None:
    """:func:`_line_grew`'s parts after any number of tiles placed since (the lead among them, or not)."""
    tiles, done = line.tiles, sent.played
    sent.played_bytes += b"".join(map(PLAYED_TILES.__getitem__, tiles[done:]))
    sent.connections_bytes += b"".join(map(_LINE_CONNECTIONS.__getitem__, line.connections[max(done - 1, 0):]))
    order = sent.line_bytes if done else LINE_TILES[tiles[0]]  # the lead, in neither arm
    for tile in line.left[sent.left:]:
        order = LINE_TILES[tile] + order
    order += b"".join(map(LINE_TILES.__getitem__, line.right[sent.right:]))
    sent.line_bytes, sent.played, sent.left, sent.right = order, len(tiles), len(line.left), len(line.right)


def _spinner_sent(sent: _Sent, spinner: Spinner) -> bytes:
    """All Fives' Layout field: its view's bytes, encoded again only when a tile was placed since (nothing else
    changes a spinner: its ends, arms and count move only with a placement)."""
    if len(spinner.tiles) != sent.played:
        sent.layout = _layout_field(layout_bytes(spinner.view()))
        sent.played = len(spinner.tiles)
    return sent.layout


def _trains_sent(sent: _Sent, trains: Trains) -> bytes:
    """Mexican Train's Layout field straight from the hub, the same bytes as :func:`_trains_layout_bytes` of its
    view: encoded again only when a tile was placed or a marker moved since, and then only the trains that changed
    (a train's picture depends on nothing else)."""
    if len(trains.tiles) != sent.played or trains.marks != sent.marks or not sent.trains:
        _trains_changed(sent, trains)
    return sent.layout


def _trains_changed(sent: _Sent, trains: Trains) -> None:
    """Encode the tiles played since, each train that changed (:meth:`_TrainSent.update`), and the Layout in
    :func:`_trains_layout_bytes`'s order: the trains' ends and connections, the engine, the trains' views, the open
    doubles."""
    tiles = trains.tiles
    sent.played_bytes += b"".join([PLAYED_TILES[t] for t in tiles[sent.played:]])
    sent.played, sent.marks = len(tiles), trains.marks
    if not sent.trains:
        sent.trains = [_TrainSent(name) for name in trains.names]
    for i, kept in enumerate(sent.trains):
        kept.update(trains, i)
    sent.layout = _layout_field(b"".join([
        sent.played_bytes, *[kept.ends for kept in sent.trains], _engine(trains.engine),
        *[kept.message for kept in sent.trains],
        *[_open_double(trains.names[i], trains.end_tile[i]) for i in trains.open_doubles]]))


_MARKER = _key(3) + _VARINTS[1]  # TrainView.marker, when set
TRAIN_TILES = _tile_fields(2)     # TrainView.tiles
_LAYOUT_TRAINS = _key(8, LENGTH_DELIMITED)


class _TrainSent:
    """What is encoded of one train of Mexican Train: its tiles and connections, which only grow, and from them
    its open end and connections (Layout fields 4 and 3) and its TrainView (field 8), the bytes
    :func:`_train_bytes` makes of its view."""

    __slots__ = ("name", "ref", "tiles", "marker", "tiles_bytes", "connections_bytes", "ends", "message")

    def __init__(self, name: int) -> None:
        self.name = name
        ref = train_pb(name)
        assert ref is not None  # every train of the hub has a reference
        self.ref = field(1, ref.SerializeToString())  # TrainView.train
        self.tiles = -1
        self.marker = False
        self.tiles_bytes = self.connections_bytes = self.ends = self.message = b""

    def update(self, trains: Trains, i: int) -> None:
        """Encode train ``i`` again if a tile joined it or its marker moved since."""
        train, marker = trains.trains[i], i < trains.players and trains.has_marker(i)
        if len(train) == self.tiles and marker == self.marker:
            return
        done = max(self.tiles, 0)
        self.tiles_bytes += b"".join([TRAIN_TILES[t] for t in train[done:]])
        self.connections_bytes += b"".join([_connection(c, self.name) for c in trains.connections[i][done:]])
        self.tiles, self.marker = len(train), marker
        end = (trains.end_tile[i], trains.end_point[i], trains.end_value[i])
        self.ends = _end(end, self.name) + self.connections_bytes
        view = b"".join([self.ref, self.tiles_bytes, _MARKER if marker else b""])
        self.message = _LAYOUT_TRAINS + _uint(len(view)) + view


def round_observation_bytes(state: RoundState, seat: int, match_id: str) -> bytes:
    """The Observation message of ``seat`` straight from the round: the same bytes as :func:`observation_bytes` of
    ``state.observation(seat)``, without building the observation, the layout's view or the history's copy (a test
    holds them equal in every variant). The history and the layout's growing parts are encoded once each
    (:class:`_Sent`)."""
    return _observation_of_round(_sent(state, match_id), state, seat, match_id)


def _observation_of_round(sent: _Sent, state: RoundState, seat: int, match_id: str) -> bytes:
    """:func:`round_observation_bytes`, with what was encoded of the round in hand: each field is kept bytes, a
    table's entry, or encoded from what changed since the seat's last request."""
    layout = state.layout
    if type(layout) is Line:
        layout_field = sent.layout if len(layout.tiles) == sent.played else _line_grew(sent, layout)
    elif type(layout) is Trains:
        layout_field = _trains_sent(sent, layout)
    elif type(layout) is Spinner:
        layout_field = _spinner_sent(sent, layout)
    else:
        layout_field = _layout_field(layout_bytes(layout.view(), (match_id, seat)))
    counts = state.counts
    if state.turn == seat:  # the referee's case
        head = sent.heads[seat] + _BONEYARD_FIELDS[len(state.boneyard)]
        legal: list[Action] = state.legal_actions()
    else:
        head = _observation_scalars((seat, state.game.players, state.round_index, max(state.turn, 0),
                                     state.deal.leader, len(state.boneyard)))
        legal = []
    done, history = sent.seen[seat]
    return b"".join([
        head, sent.counts_key + bytes(counts) if sent.small_counts else _packed(_HAND_COUNTS, tuple(counts)),
        sent.scores if state.play_points == sent.points and state.start_scores is sent.start
        else _scores_changed(sent, state),
        sent.sides, _hand(state.hands[seat]), layout_field,
        history if len(state.history) == done else _history_grew(sent, state, seat, done, history),
        *map(_LEGAL.__getitem__, legal)])


_BONEYARD_FIELDS = tuple(_scalars(((_OBSERVATION_KEYS[5], count),)) for count in range(SMALL))
"""The Observation's boneyard count field of every count a set leaves (none for an empty boneyard)."""


HAND_CHUNK = 8
"""Tiles a hand's mask is read by at a time: each chunk's 256 possible contents, encoded once."""
_CHUNK_MASK = (1 << HAND_CHUNK) - 1
_HAND_CHUNKS = tuple(tuple(b"".join([HAND_TILES[first + bit] for bit in range(HAND_CHUNK) if chunk >> bit & 1
                                     and first + bit < len(HAND_TILES)]) for chunk in range(1 << HAND_CHUNK))
                     for first in range(0, len(HAND_TILES), HAND_CHUNK))


THIRD_HAND = 10
"""A hand of the first 30 tiles (a double-six set has 28) is three lookups of its thirds' encodings, 1,024 each."""
_THIRD_MASK = (1 << THIRD_HAND) - 1
_TWO_THIRDS = 2 * THIRD_HAND
_THIRDS_HOLD = 1 << 3 * THIRD_HAND
"""The masks below this are of the first 30 tiles."""
_THIRDS = tuple(tuple(b"".join([HAND_TILES[first + bit] for bit in range(THIRD_HAND) if third >> bit & 1])
                      for third in range(1 << THIRD_HAND)) for first in range(0, 3 * THIRD_HAND, THIRD_HAND))


def _hand(mask: int) -> bytes:
    """The Observation's hand field of a tile mask: for a double-six set's, its thirds' encodings (:data:`_THIRDS`);
    for a larger set's, a byte of the mask at a time."""
    if mask < _THIRDS_HOLD:
        first, second, third = _THIRDS
        return b"".join((first[mask & _THIRD_MASK], second[mask >> THIRD_HAND & _THIRD_MASK], third[mask >> _TWO_THIRDS]))
    parts = []
    for chunks in _HAND_CHUNKS:
        if not mask:
            break
        if mask & _CHUNK_MASK:
            parts.append(chunks[mask & _CHUNK_MASK])
        mask >>= HAND_CHUNK
    return b"".join(parts)


_MOVE_NUMBERS: _Encoded[int] = _Encoded(lambda number: _MOVE_NUMBER + _uint(number) if number else b"")
"""The ActRequest's move number field, by the number (none for move 0)."""


def _options(game: Any) -> bytes:
    data = _OPTIONS.get(game)
    if data is None:
        data = _OPTIONS[game] = bot_pb2.ActRequest(options=options_pb(game.options)).SerializeToString()
    return data


def act_request_bytes(request: Any) -> bytes:
    """The encoded ``ActRequest`` for a :class:`~arena.players.base.DecisionRequest`."""
    game = request.game
    state = request.round
    seat = request.seat
    match_id = request.match_id
    if state is not None and state.game is game:  # the referee's request: the observation is not built, and need not be
        sent = _ROUNDS.get(match_id)
        if sent is None or sent.state is not state or sent.history is not state.history:
            sent = _sent(state, match_id)
        observation = _observation_of_round(sent, state, seat, match_id)
        head = sent.prefixes[seat]
    else:
        observation = observation_bytes(request.observation, game.side_of, match_id)
        head = _head(match_id, game) + _seat_field(seat) + _OBSERVATION
    length = len(observation)
    return b"".join((head, _LENGTHS[length] if length < TWO_BYTES else varint(length), observation,
                     _CLOCKS.get((request.move_ms, request.bank_ms, request.deadline_ms))
                     or _clock(request.move_ms, request.bank_ms, request.deadline_ms), _MOVE_NUMBERS[request.move_number]))


_SEAT_FIELDS = tuple(_scalars(((_SEAT, seat),)) for seat in range(SMALL))
"""The ActRequest's seat field of every seat (none for seat 0, as proto3 leaves zeros out)."""


def _seat_field(seat: int) -> bytes:
    return _SEAT_FIELDS[seat] if seat < SMALL else _scalars(((_SEAT, seat),))


_CLOCKS: dict[tuple[int, int, int], bytes] = {}


def _clock(move_ms: int, bank_ms: int, deadline_ms: int) -> bytes:
    """The TimeControl field: a tournament's requests carry few distinct clocks (the bank only shrinks)."""
    key = (move_ms, bank_ms, deadline_ms)
    data = _CLOCKS.get(key)
    if data is None:
        move, bank, deadline = _TIME_KEYS
        payload = _scalars(((move, move_ms), (bank, bank_ms), (deadline, deadline_ms)))
        data = _TIME + _uint(len(payload)) + payload
        if len(_CLOCKS) >= GROWN_KEPT:
            del _CLOCKS[next(iter(_CLOCKS))]
        _CLOCKS[key] = data
    return data


_HEADS: dict[tuple[str, Any], bytes] = {}


def _head(match_id: str, game: Any) -> bytes:
    """The match id, variant and options fields, encoded once per match and game (kept for the last
    :data:`GROWN_KEPT`): one lookup a request."""
    key = (match_id, game)
    data = _HEADS.get(key)
    if data is None:
        if len(_HEADS) >= GROWN_KEPT:
            del _HEADS[next(iter(_HEADS))]
        head = bot_pb2.ActRequest(match_id=match_id, variant=game.name).SerializeToString()
        data = _HEADS[key] = head + _options(game)
    return data
