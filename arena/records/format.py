"""A referee's :class:`~arena.referee.MatchRecord` as the protocol's ``GameRecord`` message: the reference encoding,
which the direct JSON writer of :mod:`.jsonform` must match (a test compares them).

One JSON line per game (protobuf's JSON mapping, compact), so records are readable by any language and by ``jq``.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format

from arena.protocol import tournament_pb2 as tpb
from arena.protocol import types_pb2 as pb
from arena.protocol.convert import action_pb, match_result_pb, options_pb, round_result_pb, tile_pb, tiles_pb
from arena.records.jsonform import RECORD_VERSION  # noqa: E402
from arena.referee import MatchRecord
from arena.rules import Deal
from arena.rules.beliefs import recorded


def deal_pb(deal: Deal) -> tpb.DealRecord:
    message = tpb.DealRecord(hands=[pb.Hand(tiles=tiles_pb(h)) for h in deal.hands], boneyard=tiles_pb(deal.boneyard),
                             leader=deal.leader)
    if deal.lead_tile is not None:
        message.lead_tile.CopyFrom(tile_pb(deal.lead_tile))
    if deal.engine is not None:
        message.engine.CopyFrom(tile_pb(deal.engine))
    for seat, tile in deal.lot:
        message.lot.append(pb.Event(seat=seat, action=pb.Action(tile=tile_pb(tile))))
    return message


def record_action_pb(action: Any) -> pb.Action:
    """An action as records keep it: without the display text (records stay small; viewers render it)."""
    message = pb.Action()
    message.CopyFrom(action_pb(action))
    message.ClearField("text")
    return message


def game_record_pb(record: MatchRecord, *, index: int, tournament: str, deal_key: str, rotation: int,
                   side_of: tuple[int, ...]) -> tpb.GameRecord:
    """The complete record of one game."""
    message = tpb.GameRecord(
        record_version=RECORD_VERSION, index=index, match_id=record.match_id, tournament=tournament,
        variant=record.variant, players=record.players, options=options_pb(record.options), seed=str(record.seed),
        deal_key=deal_key, rotation=rotation, seats=list(record.seats), side_of_seat=list(side_of),
        started_at=record.started_at, duration_s=round(record.duration_s, 4),
    )
    for number, rnd in enumerate(record.rounds):
        r = message.rounds.add(deal=deal_pb(rnd.deal))
        for move in rnd.moves:
            m = r.moves.add(seat=move.seat, action=record_action_pb(move.action), think_ms=move.think_ms,
                            forced=move.forced, comment=move.comment)
            if move.belief is not None:
                m.belief.CopyFrom(tpb.BeliefRecord(tiles=tiles_pb(move.belief.tiles),
                                                   thousandths=recorded(move.belief)))
        if rnd.result is not None:
            r.result.CopyFrom(round_result_pb(rnd.result, number, rnd.scores_after))
    if record.result is not None:
        message.result.CopyFrom(match_result_pb(record.result, by_fault=record.by_fault))
    for fault in record.faults:
        message.faults.add(kind=fault.kind.value, seat=fault.seat, move_number=fault.move_number,
                           message=fault.message)
    for fault in record.belief_faults:
        message.belief_faults.add(kind=fault.kind.value, seat=fault.seat, move_number=fault.move_number,
                                  message=fault.message)
    return message


def full_tiles(data: dict[str, Any], descriptor: Any = tpb.GameRecord.DESCRIPTOR) -> dict[str, Any]:
    """A message's JSON mapping (``json_format.MessageToDict``) with every ``Tile`` written in full, as
    :mod:`.jsonform` writes records (``[0|0]`` as ``{"low": 0, "high": 0}``, not ``{}``): for ``arena fetch`` and for
    comparing with protobuf's own mapping. Walks the message's descriptor, so a map key named like a tile field
    (the option ``target``) is left alone. Returns a new dict."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        field = descriptor.fields_by_camelcase_name.get(key) or descriptor.fields_by_name.get(key)
        message = field.message_type if field is not None else None
        if message is None or message.GetOptions().map_entry:
            out[key] = value
        elif message.full_name == TILE:
            out[key] = [_full_tile(t) for t in value] if field.is_repeated else _full_tile(value)
        else:
            out[key] = [full_tiles(m, message) for m in value] if field.is_repeated else full_tiles(value, message)
    return out


TILE = pb.Tile.DESCRIPTOR.full_name


def _full_tile(tile: dict[str, Any]) -> dict[str, Any]:
    return {"low": tile.get("low", 0), "high": tile.get("high", 0)}


def to_json_line(record: tpb.GameRecord | dict[str, Any]) -> str:
    """One line of JSON, no newline inside (from the message, or from the dict of :mod:`.jsonform`); a message's
    tiles are written in full, as :mod:`.jsonform` writes them."""
    data = record if isinstance(record, dict) else full_tiles(json_format.MessageToDict(record))
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


__all__ = ["deal_pb", "game_record_pb", "full_tiles", "to_json_line",
           "RECORD_VERSION", "tile_pb"]
