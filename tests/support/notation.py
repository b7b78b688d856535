"""Tiles, deals and actions written as text, the way docs/reference/rules.md writes them."""

from __future__ import annotations

from arena.rules import Deal, parse_tile
from arena.rules.tiles import NAMES


def tiles(text: str) -> tuple[int, ...]:
    """``"[1|4] [6|6]"`` -> tile ids in that order."""
    return tuple(parse_tile(t) for t in text.split())


def t(text: str) -> int:
    """One tile id from ``"[3|5]"``."""
    return parse_tile(text)


def deal(*hands: str, boneyard: str = "", leader: int = 0, lead_tile: str | None = None) -> Deal:
    """A deal written as text, one string per hand, boneyard top first."""
    return Deal(
        tuple(tiles(h) for h in hands),
        tiles(boneyard) if boneyard else (),
        leader,
        parse_tile(lead_tile) if lead_tile else None,
    )


def names(ids) -> list[str]:
    return [NAMES[i] for i in ids]


def show(actions) -> list[str]:
    """Actions as the strings docs/reference/rules.md writes (docs/reference/rules.md#the-line)."""
    return [str(a) for a in actions]


def do(state, *moves: str) -> None:
    """Apply actions written as their strings (``"lead [6|6]"``, ``"[5|6] on [6|6] line B"``, ``"draw"``, ``"pass"``).

    Each must be among the legal actions of the moment; a draw matches whatever tile is drawn.
    """
    for move in moves:
        legal = state.legal_actions()
        wanted = [a for a in legal if str(a) == move or (move == "draw" and str(a).startswith("draw"))]
        assert wanted, f"{move!r} is not legal; legal: {show(legal)}"
        state.apply(wanted[0])
