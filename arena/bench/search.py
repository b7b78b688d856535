"""How much the search bot thinks: decisions per second and playouts per decision at a given move time.

:func:`bench_search` plays the search player (:mod:`arena.players.search`, with the bot's own time budget: about
half the move time) in seat 0 against the greedy built-in player in the other seats, in process, until it has made
the given number of decisions in each variant, and reports per variant: decisions per second (of search time, i.e.
how fast it answers), playouts and guesses (worlds) per decision, playouts per second, and think times. The bot
process adds the request's conversion and gRPC (about 1 ms) on top. Results are a dict (JSON-ready).
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Sequence
from typing import Any

from arena.players import GreedyPlayer
from arena.players.search import SearchPlayer, think_seconds
from arena.rules import VARIANTS, new_game

DEFAULT_CASES: tuple[tuple[str, int | None, dict[str, Any]], ...] = tuple((name, None, {}) for name in VARIANTS)
"""Every variant with its default player count and options."""


def bench_search(cases: Sequence[tuple[str, int | None, dict[str, Any]]] = DEFAULT_CASES, *, move_ms: int = 100,
                 decisions: int = 200, seed: int = 1) -> dict[str, Any]:
    """Measure the search player at ``move_ms`` per move over ``decisions`` decisions per (variant, players,
    options) case; see the module docstring."""
    rows = []
    for variant, players, options in cases:
        game = new_game(variant, players, options)
        player = SearchPlayer(seed=seed, max_playouts=10**9, move_ms=move_ms)
        greedy = GreedyPlayer()
        think: list[float] = []
        playouts: list[int] = []
        worlds: list[int] = []
        match_index = 0
        while len(think) < decisions:
            match = game.new_match(f"bench-search/{variant}/{match_index}")
            match_index += 1
            while not match.is_over() and len(think) < decisions:
                state = match.round
                while not state.is_over() and len(think) < decisions:
                    seat = state.turn
                    legal = state.legal_actions()
                    if len(legal) == 1:
                        match.apply(legal[0])
                    elif seat == 0:
                        started = time.perf_counter()
                        index = player.choose(state.observation(seat), started=started)
                        think.append(time.perf_counter() - started)
                        stats = player.last
                        assert stats is not None
                        playouts.append(stats.playouts)
                        worlds.append(stats.worlds)
                        match.apply(legal[index])
                    else:
                        match.apply(greedy(state.observation(seat)))
                if state.is_over() and not match.is_over():
                    match.next_round()
        total = sum(think)
        rows.append({
            "variant": variant,
            "players": game.players,
            "options": {k: v for k, v in (options or {}).items()},
            "decisions": len(think),
            "decisions_per_s": round(len(think) / total, 1),
            "playouts_per_decision": round(statistics.mean(playouts), 1),
            "playouts_per_decision_median": statistics.median(playouts),
            "playouts_per_decision_min": min(playouts),
            "worlds_per_decision": round(statistics.mean(worlds), 1),
            "playouts_per_s": round(sum(playouts) / total),
            "think_ms_mean": round(1000 * total / len(think), 1),
            "think_ms_max": round(1000 * max(think), 1),
        })
    return {
        "move_ms": move_ms,
        "budget_ms": round(1000 * think_seconds(move_ms), 1),
        "machine": f"{platform.python_implementation()} {platform.python_version()}, {_cpus()} CPUs",
        "variants": rows,
    }


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


if __name__ == "__main__":  # python -m arena.bench.search
    import json

    print(json.dumps(bench_search(), indent=2))
