"""Faults are data, not crashes: every way a bot can fail, with one message template each (fastchess's habit)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from arena.display import move_label


# str and Enum, not StrEnum: a StrEnum prints as its value ("timeout"), not as FaultKind.TIMEOUT
class FaultKind(str, Enum):  # noqa: UP042
    """What went wrong with a seat's bot."""

    TIMEOUT = "timeout"
    ILLEGAL_ACTION = "illegal_action"
    MALFORMED_REPLY = "malformed_reply"
    CRASHED = "crashed"
    START_FAILED = "start_failed"
    HANDSHAKE_FAILED = "handshake_failed"
    BOT_ERROR = "bot_error"
    RESOURCE_LIMIT = "resource_limit"
    MALFORMED_BELIEF = "malformed_belief"
    """A belief the protocol does not allow: a fault of the belief alone, never of the move (the referee records it
    apart, and the game goes on)."""


TEMPLATES: dict[FaultKind, str] = {
    FaultKind.TIMEOUT: "no reply within {allowed_ms} ms",
    FaultKind.ILLEGAL_ACTION: "chose {choice}, which is not a legal action",
    FaultKind.MALFORMED_REPLY: "sent a reply the protocol does not allow: {detail}",
    FaultKind.CRASHED: "the bot is unreachable or crashed: {detail}",
    FaultKind.START_FAILED: "the bot did not start: {detail}",
    FaultKind.HANDSHAKE_FAILED: "the handshake failed: {detail}",
    FaultKind.BOT_ERROR: "the bot answered with an error: {detail}",
    FaultKind.RESOURCE_LIMIT: "the bot went over its {limit} limit and was stopped ({detail})",
    FaultKind.MALFORMED_BELIEF: "sent a belief the protocol does not allow: {detail}; the move stands",
}


@dataclass(frozen=True)
class Fault:
    """A recorded fault: its kind, the seat, the decision number, and the message (including the bot's own)."""

    kind: FaultKind
    seat: int
    move_number: int
    """The game's move that faulted, from 0 as records and ``ActRequest.move_number`` count it (a bot that never
    started faults at 0); shown from 1, as every view numbers moves (:func:`~arena.display.move_label`)."""
    message: str

    @classmethod
    def make(cls, kind: FaultKind, seat: int, move_number: int, **values: object) -> Fault:
        return cls(kind, seat, move_number, TEMPLATES[kind].format(**values))

    def __str__(self) -> str:
        return f"seat {self.seat}, {move_label(self.move_number)}: {self.kind.value}: {self.message}"


class BotFailure(Exception):
    """Raised by a player when it cannot decide; carries what the referee records."""

    def __init__(self, kind: FaultKind, **values: object) -> None:
        super().__init__(TEMPLATES[kind].format(**values))
        self.kind = kind
        self.values = values
