"""Benchmarks that print numbers (``arena bench ...``); speed goals are checked here, never by timed tests."""

from __future__ import annotations

import random
import time
from typing import Any

from .rules import new_game


def bench_engine(variant: str, players: int | None, seconds: float, seed: int = 1) -> dict[str, Any]:
    """Random playouts of whole hands: deal from a seed, then uniformly random legal actions to the end.

    ``moves`` counts every applied action (placements, draws, passes); ``placements`` only tiles put down.
    """
    game = new_game(variant, players)
    rng = random.Random(seed)
    rand = rng.random
    hands = moves = placements = 0
    started = time.perf_counter()
    deadline = started + seconds
    while True:
        for _ in range(50):
            state = game.new_round(game.deal(seed, hands, hands % game.players))
            legal_actions = state.legal_actions
            apply = state.apply
            while state._result is None:
                actions = legal_actions()
                apply(actions[int(rand() * len(actions))])
                moves += 1
            placements += len(state.layout.tiles)
            hands += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - started
    return {
        "variant": variant,
        "players": game.players,
        "seconds": round(elapsed, 3),
        "hands": hands,
        "moves": moves,
        "placements": placements,
        "hands_per_s": round(hands / elapsed, 1),
        "moves_per_s": round(moves / elapsed, 1),
        "placements_per_s": round(placements / elapsed, 1),
        "us_per_move": round(elapsed / moves * 1e6, 3),
    }
