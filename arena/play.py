"""``arena play``: one match between bots given as commands, addresses or built-ins, printed move by move."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import trio

from .players.base import LocalPlayer, SeatPlayer
from .players.faults import BotFailure, Fault, FaultKind
from .players.process import BotProcess
from .players.remote import new_match_id
from .players.specs import seat_players
from .referee import MatchRecord, TimeControl, forfeit_before_start, play_match
from .rules import Game
from .sandbox import Limits
from .rules.tiles import NAMES


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
                raise BotFailure(FaultKind.HANDSHAKE_FAILED, detail=f"the bot does not play {variant!r} (it plays "
                                                                     f"{', '.join(client.hello.variants)})")
            started[seat] = client
        except BotFailure as failure:
            faults.append(Fault(failure.kind, seat, 0, f"{player.name}: {failure}"))

    async with trio.open_nursery() as nursery:
        for seat, player in enumerate(players):
            nursery.start_soon(start, seat, player)
    return [p for p in started if p is not None], sorted(faults, key=lambda f: f.seat)


async def play_once(game: Game, bots: Sequence[str], seed: int | str, time_control: TimeControl,
                    log_dir: Path, startup_s: float, sandbox: bool = True, limits: Limits = Limits(),
                    transport: str = "unix", protocol: str = "grpc") -> MatchRecord:
    players, processes = seat_players(bots, game.players, log_dir, startup_s, seed, sandbox=sandbox, limits=limits,
                                      transport=transport, protocol=protocol)
    match_id = new_match_id()
    try:
        ready, faults = await start_all(players, game.name)
        if faults:
            names = tuple(getattr(p, "name", "?") for p in players)
            return forfeit_before_start(game, names, faults, seed=seed, match_id=match_id)
        return await play_match(game, ready, seed=seed, match_id=match_id, time_control=time_control)
    finally:
        with trio.CancelScope(shield=True):
            for process in processes:
                await process.stop()


def print_record(record: MatchRecord, game: Game, out: Callable[[str], None] = print) -> None:
    """The match move by move, round results, the result and any fault."""
    out(f"{game.title}: {', '.join(f'seat {s}: {n}' for s, n in enumerate(record.seats))}")
    for index, rnd in enumerate(record.rounds):
        hands = "; ".join(f"seat {s}: {' '.join(NAMES[t] for t in h)}" for s, h in enumerate(rnd.deal.hands))
        out(f"round {index + 1}, seat {rnd.deal.leader} leads. {hands}")
        for move in rnd.moves:
            timing = "forced" if move.forced else f"{move.think_ms:.1f} ms"
            out(f"  seat {move.seat}: {move.action} ({timing})")
        if rnd.result is not None:
            out(f"  {rnd.result.describe()}; scores {list(rnd.scores_after)}")
    for fault in record.faults:
        out(f"FAULT {fault}")
    result = record.result
    if result is not None:
        verdict = "drawn match" if result.winner is None else f"side {result.winner} wins"
        out(f"result: {verdict}, scores {list(result.scores)}, ranking {list(result.ranking)}"
            + (" (by fault)" if record.faults else ""))
