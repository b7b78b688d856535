"""Conversions between the rules engine's plain values and the protocol's messages, both ways.

Everything a bot receives is built here from an :class:`~arena.rules.Observation` (which already holds only what
the seat may know), and everything a bot sends is parsed here into an engine :class:`~arena.rules.Action`, with a
:class:`ProtocolError` for anything malformed.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any, cast

from arena.protocol import bot_pb2
from arena.protocol import types_pb2 as pb
from arena.rules import MEXICAN_TRAIN, NO_TILE, NO_TRAIN, Action, Deal, Game, Kind, Observation, Point, RoundResult
from arena.rules.beliefs import Belief
from arena.rules.layout import LineLayout
from arena.rules.results import Ending, MatchResult
from arena.rules.tiles import HIGH, LOW, MAX_DOUBLE, set_size, tile_id
from arena.rules.trains import Trains


class ProtocolError(ValueError):
    """A message that does not say what the protocol allows."""


# --- tiles and actions ---------------------------------------------------------------------------------------


_TILES = tuple(pb.Tile(low=LOW[t], high=HIGH[t]) for t in range(len(LOW)))
"""One message per tile, built once: messages are copied when placed in another message, so sharing is safe."""


def tile_pb(tile: int) -> pb.Tile:
    return _TILES[tile]


def tiles_pb(tiles: Iterable[int]) -> list[pb.Tile]:
    return [_TILES[t] for t in tiles]


def tile_from_pb(message: pb.Tile) -> int:
    if message.low > message.high or message.high > MAX_DOUBLE:
        raise ProtocolError(f"expected a tile with low <= high <= {MAX_DOUBLE}, got [{message.low}|{message.high}]")
    return tile_id(message.low, message.high)


def train_pb(train: int) -> pb.TrainRef | None:
    if train == NO_TRAIN:
        return None
    if train == MEXICAN_TRAIN:
        return pb.TrainRef(kind=pb.TRAIN_KIND_MEXICAN)
    return pb.TrainRef(kind=pb.TRAIN_KIND_PERSONAL, seat=train)


def train_from_pb(message: pb.TrainRef) -> int:
    if message.kind == pb.TRAIN_KIND_NONE:
        return NO_TRAIN
    if message.kind == pb.TRAIN_KIND_MEXICAN:
        return MEXICAN_TRAIN
    if message.kind == pb.TRAIN_KIND_PERSONAL:
        return message.seat
    raise ProtocolError(f"expected a train kind among NONE, PERSONAL, MEXICAN, got {message.kind}")


_ACTIONS: dict[Action, pb.Action] = {}


def action_pb(action: Action) -> pb.Action:
    """The message of an action; built once per distinct action (they are few) and never mutated."""
    message = _ACTIONS.get(action)
    if message is None:
        message = _ACTIONS[action] = _build_action_pb(action)
    return message


_EVENTS: dict[tuple[int, Action], pb.Event] = {}


def event_pb(seat: int, action: Action) -> pb.Event:
    """The history entry message, built once per (seat, action) and never mutated."""
    key = (seat, action)
    message = _EVENTS.get(key)
    if message is None:
        message = _EVENTS[key] = pb.Event(seat=seat, action=action_pb(action))
    return message


def _build_action_pb(action: Action) -> pb.Action:
    message = pb.Action(kind=pb.ActionKind.ValueType(action.kind), text=str(action))
    if action.tile != NO_TILE:
        message.tile.CopyFrom(tile_pb(action.tile))
    if action.target != NO_TILE:
        message.target.CopyFrom(tile_pb(action.target))
    if action.point:
        message.point = pb.Point.ValueType(action.point)
    train = train_pb(action.train)
    if train is not None:
        message.train.CopyFrom(train)
    return message


def action_from_pb(message: pb.Action) -> Action:
    """The engine action a message names (not yet checked for legality)."""
    if message.kind == pb.ACTION_KIND_DRAW:
        # A record's draw carries the drawn tile; a bot's chosen draw has none.
        return Action(Kind.DRAW, tile_from_pb(message.tile)) if message.HasField("tile") else Action(Kind.DRAW)
    if message.kind == pb.ACTION_KIND_PASS:
        return Action(Kind.PASS)
    if message.kind != pb.ACTION_KIND_PLACE:
        raise ProtocolError(f"expected an action kind among PLACE, DRAW, PASS, got {message.kind}")
    if not message.HasField("tile"):
        raise ProtocolError("a PLACE action must name its tile")
    if message.point not in Point._value2member_map_:
        raise ProtocolError(f"expected a point between 0 and 6, got {message.point}")
    target = tile_from_pb(message.target) if message.HasField("target") else NO_TILE
    train = train_from_pb(message.train) if message.HasField("train") else NO_TRAIN
    return Action(Kind.PLACE, tile_from_pb(message.tile), target, Point(message.point), train)


# --- beliefs --------------------------------------------------------------------------------------------------

MAX_BELIEF_ENTRIES = set_size(MAX_DOUBLE)
"""No belief is read with more entries than the largest set has tiles (190): the round's own cap, one per hidden
tile, is checked by the referee (:func:`arena.rules.beliefs.belief_problem`)."""
MAX_BELIEF_PLACES = 64
"""Nor with more probabilities per tile than this: far more than any table has places."""


def belief_pb(belief: Belief) -> bot_pb2.Belief:
    """A belief as a bot sends it."""
    return bot_pb2.Belief(tiles=[bot_pb2.TileBelief(tile=_TILES[t], probabilities=list(row))
                                 for t, row in zip(belief.tiles, belief.probabilities, strict=True)])


def belief_from_pb(message: bot_pb2.Belief) -> Belief:
    """The belief a message states (not yet checked against the round); a :class:`ProtocolError` for one that cannot
    be read: too many entries, an entry without a tile or with too many probabilities, a tile that is no tile."""
    entries = message.tiles
    if len(entries) > MAX_BELIEF_ENTRIES:
        raise ProtocolError(f"it has {len(entries)} entries; no set has more than {MAX_BELIEF_ENTRIES} tiles")
    tiles = []
    rows = []
    for number, entry in enumerate(entries):
        if not entry.HasField("tile"):
            raise ProtocolError(f"entry {number} names no tile")
        if len(entry.probabilities) > MAX_BELIEF_PLACES:
            raise ProtocolError(f"entry {number} has {len(entry.probabilities)} probabilities; at most "
                                f"{MAX_BELIEF_PLACES}")
        tiles.append(tile_from_pb(entry.tile))
        rows.append(tuple(entry.probabilities))
    return Belief(tuple(tiles), tuple(rows))


# --- observations ---------------------------------------------------------------------------------------------


def option_value_pb(value: Any) -> pb.OptionValue:
    if isinstance(value, bool):
        return pb.OptionValue(bool_value=value)
    if isinstance(value, int):
        return pb.OptionValue(int_value=value)
    return pb.OptionValue(string_value=str(value))


def options_pb(options: Mapping[str, Any]) -> dict[str, pb.OptionValue]:
    return {key: option_value_pb(value) for key, value in options.items()}


def option_value_from_pb(message: pb.OptionValue) -> Any:
    field = message.WhichOneof("value")
    return getattr(message, field) if field else None


def layout_pb(view: Any) -> pb.Layout:
    """The public layout of any variant (line, spinner or trains view)."""
    layout = pb.Layout(played=tiles_pb(view.played))
    for c in getattr(view, "connections", ()):
        layout.connections.append(_connection_pb(c, NO_TRAIN))
    for end in getattr(view, "open_ends", ()):
        layout.open_ends.append(_open_end_pb(end))
    layout.line.extend(tiles_pb(getattr(view, "line", ())))
    for train in getattr(view, "trains", ()):
        layout.open_ends.append(_open_end_pb(train.end, train.train))
        for c in train.connections:
            layout.connections.append(_connection_pb(c, train.train))
    layout.MergeFrom(layout_extras_pb(view))
    return layout


def layout_extras_pb(view: Any) -> pb.Layout:
    """The parts of a layout beyond played, line, connections and open ends: the spinner's arms and the count
    (All Fives), the engine, the trains and the open doubles (Mexican Train)."""
    layout = pb.Layout(count=getattr(view, "count", 0))
    spinner = getattr(view, "spinner", None)
    if spinner is not None and spinner >= 0:
        layout.spinner.CopyFrom(tile_pb(spinner))
        layout.side_c.extend(tiles_pb(view.side_c))
        layout.side_d.extend(tiles_pb(view.side_d))
    engine = getattr(view, "engine", None)
    if engine is not None:
        layout.engine.CopyFrom(tile_pb(engine))
        for train in view.trains:
            layout.trains.append(train_view_pb(train))
        for train, tile in view.open_doubles:
            layout.open_doubles.append(open_double_pb(train, tile))
    return layout


def train_view_pb(train: Any) -> pb.TrainView:
    """One train of a Mexican Train layout (a ``TrainView``): whose, its tiles, its marker."""
    return pb.TrainView(train=train_pb(train.train), tiles=tiles_pb(train.tiles), marker=train.marker)


def open_double_pb(train: int, tile: int) -> pb.OpenDouble:
    return pb.OpenDouble(tile=tile_pb(tile), train=train_pb(train))


_CONNECTIONS: dict[tuple[Any, int], pb.Connection] = {}


def _connection_pb(c: Any, train: int) -> pb.Connection:
    key = (c, train)
    message = _CONNECTIONS.get(key)
    if message is None:
        message = _CONNECTIONS[key] = _build_connection_pb(c, train)
    return message


def _build_connection_pb(c: Any, train: int) -> pb.Connection:
    message = pb.Connection(target=tile_pb(c.target), target_point=pb.Point.ValueType(c.target_point),
                            tile=tile_pb(c.tile), tile_point=pb.Point.ValueType(c.tile_point))
    if train != NO_TRAIN:
        ref = train_pb(train)
        assert ref is not None  # every train but NO_TRAIN has a reference
        message.train.CopyFrom(ref)
    return message


def _open_end_pb(end: Any, train: int = NO_TRAIN) -> pb.OpenEnd:
    tile, point, value = end[0], end[1], end[2]
    message = pb.OpenEnd(tile=tile_pb(tile), point=pb.Point.ValueType(point), value=value)
    if train != NO_TRAIN:
        ref = train_pb(train)
        assert ref is not None  # every train but NO_TRAIN has a reference
        message.train.CopyFrom(ref)
    return message


def observation_pb(obs: Observation, side_of_seat: Iterable[int]) -> pb.Observation:
    return pb.Observation(
        seat=obs.seat,
        players=obs.players,
        round_index=obs.round_index,
        turn=max(obs.turn, 0),
        leader=obs.leader,
        hand=tiles_pb(obs.hand),
        layout=layout_pb(obs.layout),
        history=[event_pb(s, a) for s, a in obs.history],
        hand_counts=list(obs.hand_counts),
        boneyard_count=obs.boneyard_count,
        scores=list(obs.scores),
        side_of_seat=list(side_of_seat),
        legal_actions=[action_pb(a) for a in obs.legal_actions],
    )


def options_from_pb(options: Mapping[str, pb.OptionValue]) -> dict[str, Any]:
    """A request's variant options as plain values (the inverse of :func:`options_pb`)."""
    return {key: option_value_from_pb(value) for key, value in options.items()}


def observation_from_pb(message: pb.Observation, game: Game) -> Observation:
    """The engine's :class:`~arena.rules.Observation` of a request's observation (the inverse of
    :func:`observation_pb`), for Python bots that use the rules engine on what they are sent. ``game`` is the
    request's variant with its options (``new_game(request.variant, message.players,
    options_from_pb(request.options))``). The layout view is rebuilt from the history (in Mexican Train from the
    engine, the history and the markers of the message), so it is the engine's own."""
    history = tuple((event.seat, action_from_pb(event.action)) for event in message.history)
    engine = tile_from_pb(message.layout.engine) if message.layout.HasField("engine") else None
    layout = game.new_layout(Deal(hands=(), boneyard=(), leader=0, engine=engine))
    if engine is not None:
        hub = cast(Trains, layout)  # a deal with an engine is Mexican Train's: its layout is the hub and its trains
        for _, action in history:
            if action.kind == Kind.PLACE:
                hub.place(action.tile, action.train, action.target, action.point)
        for train in message.layout.trains:
            if train.marker and train.train.kind == pb.TRAIN_KIND_PERSONAL:
                hub.set_marker(train.train.seat, True)
    else:
        line = cast(LineLayout, layout)  # every other variant plays on a line (the line, or All Fives' spinner)
        for _, action in history:
            if action.kind != Kind.PLACE:
                continue
            if action.target == NO_TILE:
                line.lead(action.tile)
            else:
                line.place(action.tile, action.target, action.point)
    return Observation(
        variant=game.name,
        players=message.players,
        seat=message.seat,
        round_index=message.round_index,
        turn=message.turn,
        leader=message.leader,
        hand=tuple(sorted(tile_from_pb(t) for t in message.hand)),
        layout=layout.view(),
        history=history,
        hand_counts=tuple(message.hand_counts),
        boneyard_count=message.boneyard_count,
        scores=tuple(message.scores),
        legal_actions=tuple(action_from_pb(a) for a in message.legal_actions),
        options=dict(game.options),
    )


# --- results --------------------------------------------------------------------------------------------------

ENDINGS = {Ending.DOMINO: pb.ENDING_DOMINO, Ending.BLOCK: pb.ENDING_BLOCK}


def round_result_pb(result: RoundResult, round_index: int, scores: Iterable[int]) -> pb.RoundResult:
    message = pb.RoundResult(
        round_index=round_index,
        ending=ENDINGS[result.ending],
        points=list(result.points),
        play_points=list(result.play_points),
        pips=list(result.pips),
        hands=[pb.Hand(tiles=tiles_pb(h)) for h in result.hands],
        capicu=result.capicu,
        scores=list(scores),
    )
    if result.winner is not None:
        message.winner = result.winner
    if result.out_seat is not None:
        message.out_seat = result.out_seat
    if result.last_placer is not None:
        message.last_placer = result.last_placer
    return message


def match_result_pb(result: MatchResult, by_fault: bool = False) -> pb.MatchResult:
    message = pb.MatchResult(scores=list(result.scores), ranking=list(result.ranking), rounds=result.rounds,
                             by_fault=by_fault)
    if result.winner is not None:
        message.winner = result.winner
    return message


# --- the decision request -------------------------------------------------------------------------------------


_OPTIONS: weakref.WeakKeyDictionary[Game, dict[str, pb.OptionValue]] = weakref.WeakKeyDictionary()


def _options_of(game: Game) -> dict[str, pb.OptionValue]:
    """The options map of a game, converted once per game object."""
    options = _OPTIONS.get(game)
    if options is None:
        options = _OPTIONS[game] = options_pb(game.options)
    return options


def act_request_pb(request: Any) -> bot_pb2.ActRequest:
    """The decision request (a :class:`~arena.players.base.DecisionRequest`) exactly as a bot receives it: the
    reference encoding, which :func:`arena.protocol.wire.act_request_bytes` must match byte for byte."""
    game = request.game
    return bot_pb2.ActRequest(
        match_id=request.match_id,
        variant=game.name,
        options=_options_of(game),
        seat=request.seat,
        observation=observation_pb(request.observation, game.side_of),
        time=bot_pb2.TimeControl(move_ms=request.move_ms, bank_ms=request.bank_ms,
                                 deadline_ms=request.deadline_ms),
        move_number=request.move_number,
    )
