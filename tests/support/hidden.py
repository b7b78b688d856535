"""The seat scanner of the hidden-information tests: every tile anywhere inside a message, and the tiles a seat may
not see at a recorded game's move (the other seats' hands and the boneyard)."""

from __future__ import annotations

from arena.protocol import types_pb2 as pb
from arena.protocol.convert import tile_from_pb
from arena.records.replay import steps
from arena.rules.tiles import tiles_of


def tiles_in(message) -> list[int]:
    """Every Tile anywhere inside a message."""
    found = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            items = list(value.values())
        elif field.is_repeated:
            items = list(value)
        else:
            items = [value]
        for item in items:
            if isinstance(item, pb.Tile):
                found.append(tile_from_pb(item))
            elif hasattr(item, "ListFields"):
                found.extend(tiles_in(item))
    return found


def hidden_from(state, seat: int, players: int) -> set[int]:
    """The tiles seat ``seat`` may not know in a round's state: the other hands and the boneyard."""
    hidden = {t for s in range(players) if s != seat for t in tiles_of(state.hands[s])}
    return hidden | set(state.boneyard)


def hidden_at_moves(record: dict) -> dict[int, tuple[int, set[int]]]:
    """For a recorded game (its JSON, seed included): move number -> (the seat to move, the tiles it may not see)."""
    found = {}
    players = record.get("players") or len(record.get("seats", ()))
    for step in steps(record):
        if step.kind == "move":
            seat = step.match.turn
            found[step.number] = (seat, hidden_from(step.match.round, seat, players))
    return found
