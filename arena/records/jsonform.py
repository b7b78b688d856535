"""GameRecord in protobuf's JSON mapping, written and read directly as Python dicts.

Records are "protobuf JSON of a GameRecord": any language can read them with its protobuf library. Going through
Python's ``json_format`` costs milliseconds per game (it walks every field in Python), which would make the
tournament's record writer and ``arena replay --verify`` slow, so this module builds and reads the same JSON
directly. The mapping rules it follows: lowerCamelCase names; enums by name; int64/uint64 as strings; fields at
their default value (0, false, "", empty list, enum zero, unset message) left out; ``optional`` fields and oneof
members present when set, even at zero. One exception, on purpose: a ``Tile`` always has both fields, so ``[0|0]``
is ``{"low": 0, "high": 0}`` and not ``{}`` (records written before this still read: a missing half is 0). A test
checks it against ``json_format`` for games of every variant, tiles aside (:func:`.format.full_tiles` writes
``json_format``'s output the same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena.errors import ArenaError
from arena.players.faults import Fault
from arena.referee import MatchRecord
from arena.rules import MEXICAN_TRAIN, NO_TILE, NO_TRAIN, Action, Deal, Kind, Point, RoundResult
from arena.rules.beliefs import Belief, from_recorded, recorded
from arena.rules.results import Ending, MatchResult
from arena.rules.tiles import HIGH, LOW, MAX_DOUBLE

RECORD_VERSION = 1
KIND_NAMES = {Kind.PLACE: "ACTION_KIND_PLACE", Kind.DRAW: "ACTION_KIND_DRAW", Kind.PASS: "ACTION_KIND_PASS"}
KINDS = {name: kind for kind, name in KIND_NAMES.items()}
POINT_NAMES = {p: f"POINT_{p.name}" for p in Point}
POINTS = {name: p for p, name in POINT_NAMES.items()}
ENDING_NAMES = {Ending.DOMINO: "ENDING_DOMINO", Ending.BLOCK: "ENDING_BLOCK"}


class FormatError(ArenaError, ValueError):
    """A record that does not follow the GameRecord schema."""


# --- writing ------------------------------------------------------------------------------------------------------


def _tile(t: int) -> dict[str, int]:
    """Both halves, zeros too (``[0|0]`` is ``{"low": 0, "high": 0}``, never ``{}``): a tile reads the same in any
    language and to a person, and protobuf's parsers read the explicit zeros as the defaults they are."""
    return {"low": LOW[t], "high": HIGH[t]}


TILES = tuple(_tile(t) for t in range(len(LOW)))


def tiles(ts: Iterable[int]) -> list[dict[str, int]]:
    return [TILES[t] for t in ts]


def train_dict(train: int) -> dict[str, Any]:
    if train == MEXICAN_TRAIN:
        return {"kind": "TRAIN_KIND_MEXICAN"}
    d: dict[str, Any] = {"kind": "TRAIN_KIND_PERSONAL"}
    if train:
        d["seat"] = train
    return d


_ACTIONS: dict[Action, dict[str, Any]] = {}


def action_dict(action: Action) -> dict[str, Any]:
    """A recorded action (no display text: records stay small; replay tools render it)."""
    d = _ACTIONS.get(action)
    if d is None:
        d = {"kind": KIND_NAMES[action.kind]}
        if action.tile != NO_TILE:
            d["tile"] = TILES[action.tile]
        if action.target != NO_TILE:
            d["target"] = TILES[action.target]
        if action.point:
            d["point"] = POINT_NAMES[action.point]
        if action.train != NO_TRAIN:
            d["train"] = train_dict(action.train)
        _ACTIONS[action] = d
    return d


def _put(d: dict[str, Any], key: str, value: Any) -> None:
    """Set a non-optional field unless it is at its default value."""
    if value:
        d[key] = value


def _int64s(values: Iterable[int]) -> list[str]:
    return [str(v) for v in values]


def option_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def deal_dict(deal: Deal) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put(d, "hands", [({"tiles": tiles(h)} if h else {}) for h in deal.hands])
    _put(d, "boneyard", tiles(deal.boneyard))
    _put(d, "leader", deal.leader)
    if deal.lead_tile is not None:
        d["leadTile"] = TILES[deal.lead_tile]
    if deal.engine is not None:
        d["engine"] = TILES[deal.engine]
    lot = []
    for seat, tile in deal.lot:
        event: dict[str, Any] = {}
        _put(event, "seat", seat)
        event["action"] = {"tile": TILES[tile]}
        lot.append(event)
    _put(d, "lot", lot)
    return d


def round_result_dict(result: RoundResult, index: int, scores: Iterable[int]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put(d, "roundIndex", index)
    d["ending"] = ENDING_NAMES[result.ending]
    if result.winner is not None:
        d["winner"] = result.winner
    _put(d, "points", _int64s(result.points))
    _put(d, "playPoints", _int64s(result.play_points))
    _put(d, "pips", _int64s(result.pips))
    _put(d, "hands", [({"tiles": tiles(h)} if h else {}) for h in result.hands])
    if result.out_seat is not None:
        d["outSeat"] = result.out_seat
    if result.last_placer is not None:
        d["lastPlacer"] = result.last_placer
    _put(d, "capicu", result.capicu)
    _put(d, "scores", _int64s(scores))
    return d


def match_result_dict(result: MatchResult, by_fault: bool) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _put(d, "scores", _int64s(result.scores))
    if result.winner is not None:
        d["winner"] = result.winner
    _put(d, "ranking", list(result.ranking))
    _put(d, "rounds", result.rounds)
    _put(d, "byFault", by_fault)
    return d


def game_record_dict(record: MatchRecord, *, index: int, tournament: str, deal_key: str, rotation: int,
                     side_of: tuple[int, ...]) -> dict[str, Any]:
    """The record of one game, exactly as ``json_format.MessageToDict`` would give it."""
    d: dict[str, Any] = {"recordVersion": RECORD_VERSION}
    _put(d, "index", str(index) if index else "")
    _put(d, "matchId", record.match_id)
    _put(d, "tournament", tournament)
    _put(d, "variant", record.variant)
    _put(d, "players", record.players)
    _put(d, "options", {k: option_dict(v) for k, v in record.options.items()})
    _put(d, "seed", str(record.seed))
    _put(d, "dealKey", deal_key)
    _put(d, "rotation", rotation)
    _put(d, "seats", list(record.seats))
    _put(d, "sideOfSeat", list(side_of))
    rounds = []
    for number, rnd in enumerate(record.rounds):
        r: dict[str, Any] = {"deal": deal_dict(rnd.deal)}
        moves = []
        for move in rnd.moves:
            m: dict[str, Any] = {}
            _put(m, "seat", move.seat)
            m["action"] = action_dict(move.action)
            _put(m, "thinkMs", move.think_ms)
            _put(m, "forced", move.forced)
            _put(m, "comment", move.comment)
            if move.belief is not None:
                m["belief"] = belief_dict(move.belief)
            moves.append(m)
        _put(r, "moves", moves)
        if rnd.result is not None:
            r["result"] = round_result_dict(rnd.result, number, rnd.scores_after)
        rounds.append(r)
    _put(d, "rounds", rounds)
    if record.result is not None:
        d["result"] = match_result_dict(record.result, record.by_fault)
    _put(d, "faults", [fault_dict(fault) for fault in record.faults])
    _put(d, "startedAt", record.started_at)
    _put(d, "durationS", round(record.duration_s, 4))
    _put(d, "beliefFaults", [fault_dict(fault) for fault in record.belief_faults])
    return d


def fault_dict(fault: Fault) -> dict[str, Any]:
    f: dict[str, Any] = {"kind": fault.kind.value}
    _put(f, "seat", fault.seat)
    _put(f, "moveNumber", fault.move_number)
    _put(f, "message", fault.message)
    return f


def belief_dict(belief: Belief) -> dict[str, Any]:
    """A quantised belief as a ``BeliefRecord`` (:func:`arena.rules.beliefs.recorded`)."""
    d: dict[str, Any] = {}
    _put(d, "tiles", tiles(belief.tiles))
    _put(d, "thousandths", recorded(belief))
    return d


# --- reading ------------------------------------------------------------------------------------------------------


_TILE_IDS = {(LOW[t], HIGH[t]): t for t in range(len(LOW))}


def tile_from(d: Mapping[str, Any]) -> int:
    try:
        return _TILE_IDS[(d.get("low", 0), d.get("high", 0))]
    except (KeyError, AttributeError, TypeError):
        raise FormatError(f"expected a tile like {{'low': 3, 'high': 5}} with low <= high <= {MAX_DOUBLE}, "
                          f"got {d!r}") from None


def train_from(d: Mapping[str, Any] | None) -> int:
    if not d:
        return NO_TRAIN
    kind = d.get("kind", "TRAIN_KIND_NONE")
    if kind == "TRAIN_KIND_MEXICAN":
        return MEXICAN_TRAIN
    if kind == "TRAIN_KIND_PERSONAL":
        return int(d.get("seat", 0))
    if kind == "TRAIN_KIND_NONE":
        return NO_TRAIN
    raise FormatError(f"expected a train kind, got {kind!r}")


def action_from(d: Mapping[str, Any]) -> Action:
    try:
        kind = KINDS[d.get("kind", "")]
    except (KeyError, AttributeError, TypeError):
        raise FormatError(f"expected an action kind among {', '.join(KINDS)}, got {d!r}") from None
    tile = tile_from(d["tile"]) if "tile" in d else NO_TILE
    if kind != Kind.PLACE:
        return Action(kind, tile)
    if tile == NO_TILE:
        raise FormatError("a PLACE action must name its tile")
    try:
        point = POINTS[d.get("point", "POINT_NONE")]
    except KeyError:
        raise FormatError(f"expected a point name, got {d.get('point')!r}") from None
    target = tile_from(d["target"]) if "target" in d else NO_TILE
    return Action(Kind.PLACE, tile, target, point, train_from(d.get("train")))


def deal_from(d: Mapping[str, Any]) -> Deal:
    return Deal(
        hands=tuple(tuple(tile_from(t) for t in h.get("tiles", ())) for h in d.get("hands", ())),
        boneyard=tuple(tile_from(t) for t in d.get("boneyard", ())),
        leader=int(d.get("leader", 0)),
        lead_tile=tile_from(d["leadTile"]) if "leadTile" in d else None,
        engine=tile_from(d["engine"]) if "engine" in d else None,
        lot=tuple((int(e.get("seat", 0)), tile_from(e.get("action", {}).get("tile", {}))) for e in d.get("lot", ())),
    )


def option_from(d: Mapping[str, Any]) -> Any:
    if "boolValue" in d:
        return bool(d["boolValue"])
    if "intValue" in d:
        return int(d["intValue"])
    if "stringValue" in d:
        return str(d["stringValue"])
    raise FormatError(f"expected an option value, got {d!r}")


def belief_from(d: Mapping[str, Any], players: int) -> Belief:
    """A move's recorded belief (a ``BeliefRecord``), one value per place of a seat among ``players``."""
    try:
        return from_recorded([tile_from(t) for t in d.get("tiles", ())], d.get("thousandths", ()), players)
    except ValueError as error:
        raise FormatError(f"a recorded belief does not fit its tiles: {error}") from None


def index_of(d: Mapping[str, Any]) -> int:
    return int(d.get("index", 0))
