"""``arena play``: one match between bots given as commands, addresses or built-ins, printed move by move.

Seats are named after their bots, the seat number shown beside: a started bot by its handshake name
(``py-greedy``), a bot that never answered by its program (``greedy_bot``), a built-in as ``builtin:greedy``. A
result names the winning seat (``seat 1 (py-greedy) wins``); "team" is said only when a side holds several seats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import trio

from arena.display import safe_name
from arena.players.base import LocalPlayer, SeatPlayer
from arena.players.faults import BotFailure, Fault, FaultKind
from arena.players.process import BotProcess
from arena.players.remote import new_match_id
from arena.players.specs import program_name, seat_players
from arena.referee import MatchRecord, TimeControl, forfeit_before_start, play_match
from arena.rules import Game, RoundResult
from arena.rules.results import Ending
from arena.rules.tiles import NAMES
from arena.sandbox import DEFAULT_LIMITS, Limits


async def start_all(players: Sequence[BotProcess | LocalPlayer], variant: str | None = None
                    ) -> tuple[list[SeatPlayer], list[Fault]]:
    """Start every bot process (concurrently); a bot that does not start, or does not play the variant, is a fault
    of its seat."""
    started: list[SeatPlayer | None] = [None] * len(players)
    faults: list[Fault] = []

    async def start(seat: int, player: BotProcess | LocalPlayer) -> None:
        if isinstance(player, LocalPlayer):
            started[seat] = player
            return
        try:
            client = await player.ensure_running()
            if variant is not None and not client.plays(variant):
                assert client.hello is not None  # plays() is false only after a handshake that lists its variants
                raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=f"the bot does not play {variant!r} (it plays "
                                                                     f"{', '.join(client.hello.variants)})")
            started[seat] = client
        except BotFailure as failure:
            faults.append(Fault(failure.kind, seat, 0, f"{seat_name(player, None)}: {failure}"))

    async with trio.open_nursery() as nursery:
        for seat, player in enumerate(players):
            nursery.start_soon(start, seat, player)
    return [p for p in started if p is not None], sorted(faults, key=lambda f: f.seat)


def seat_name(player: BotProcess | LocalPlayer, text: str | None) -> str:
    """The name a seat is shown by: its bot's handshake name once it answered, else the name of what was typed."""
    if isinstance(player, LocalPlayer):
        return player.name
    if player.hello is not None and player.hello.name:
        return player.hello.name
    return program_name(text) if text is not None else player.name.split("-", 1)[-1]


async def play_once(game: Game, bots: Sequence[str], seed: int | str, time_control: TimeControl,
                    log_dir: Path, startup_s: float, sandbox: bool = True, limits: Limits = DEFAULT_LIMITS,
                    transport: str = "unix", protocol: str = "grpc") -> MatchRecord:
    """Start every seat's bot, play one match, stop the bots; the record names each seat by :func:`seat_name`."""
    players, processes = seat_players(bots, game.players, log_dir, startup_s, seed, sandbox=sandbox, limits=limits,
                                      transport=transport, protocol=protocol)
    match_id = new_match_id()
    try:
        ready, faults = await start_all(players, game.name)
        names = tuple(seat_name(p, bots[seat % len(bots)]) for seat, p in enumerate(players))
        if faults:
            return forfeit_before_start(game, names, faults, seed=seed, match_id=match_id)
        record = await play_match(game, ready, seed=seed, match_id=match_id, time_control=time_control)
        return replace(record, seats=names)
    finally:
        with trio.CancelScope(shield=True):
            for process in processes:
                await process.stop()


def side_label(game: Game, seats: Sequence[str], side: int) -> str:
    """``seat 1 (py-greedy)`` for a side of one seat; ``team 0 (seats 0+2: a, b)`` for a side of several."""
    held = [seat for seat, s in enumerate(game.side_of) if s == side]
    names = list(dict.fromkeys(safe_name(seats[seat]) for seat in held if seat < len(seats)))
    if len(held) == 1:
        return f"seat {held[0]} ({', '.join(names)})"
    return f"team {side} (seats {'+'.join(map(str, held))}: {', '.join(names)})"


def describe_round(result: RoundResult, game: Game, seats: Sequence[str]) -> str:
    """How a round ended, in the words of :meth:`RoundResult.describe` but naming the winning seat or team."""
    how = f"domino by seat {result.out_seat}" if result.ending is Ending.DOMINO else "block"
    extra = ", capicú" if result.capicu else ""
    who = "nobody scores" if result.winner is None else f"{side_label(game, seats, result.winner)} wins"
    hands = " ".join("".join(NAMES[t] for t in hand) or "-" for hand in result.hands)
    return f"{how}{extra}: {who}, points {list(result.points)}, hands {hands}"


def print_record(record: MatchRecord, game: Game, out: Callable[[str], None] = print) -> None:
    """The match move by move (with the size of each belief sent), round results, the result and any fault, the
    refused beliefs too (which never decide the match)."""
    out(f"{game.title}: {', '.join(f'seat {s}: {safe_name(n)}' for s, n in enumerate(record.seats))}")
    for index, rnd in enumerate(record.rounds):
        hands = "; ".join(f"seat {s}: {' '.join(NAMES[t] for t in h)}" for s, h in enumerate(rnd.deal.hands))
        out(f"round {index + 1}, seat {rnd.deal.leader} leads. {hands}")
        for move in rnd.moves:
            timing = "forced" if move.forced else f"{move.think_ms:.1f} ms"
            believed = f", a belief about {len(move.belief)} tiles" if move.belief is not None else ""
            out(f"  seat {move.seat}: {move.action} ({timing}{believed})")
        if rnd.result is not None:
            out(f"  {describe_round(rnd.result, game, record.seats)}; scores {list(rnd.scores_after)}")
    for fault in record.faults:
        out(f"FAULT {safe_name(str(fault), 2000)}")
    for fault in record.belief_faults:
        out(f"BELIEF REFUSED {safe_name(str(fault), 2000)}")
    result = record.result
    if result is not None:
        verdict = "drawn match" if result.winner is None else f"{side_label(game, record.seats, result.winner)} wins"
        out(f"result: {verdict}, scores {list(result.scores)}, ranking {list(result.ranking)}"
            + (" (by fault)" if record.faults else ""))
