"""Every variant configuration worth a search, and the states of whole matches played at random in it."""

from __future__ import annotations

import random
from typing import Iterator

from arena.rules import new_game

CONFIGS = [
    ("draw", 2, {}),
    ("draw", 3, {"voluntary_draw": False, "protected_tiles": 0, "next_leader": "winner"}),
    ("block", 3, {}),
    ("la_plaza", 2, {}),
    ("la_plaza_teams", 4, {}),
    ("all_fives", 2, {}),
    ("all_fives", 4, {}),
    ("mexican_train", 4, {"set": 9, "rounds": 2}),
    ("mexican_train", 3, {"first_turn_train": True, "rounds": 2}),
    ("mexican_train", 5, {"satisfy_order": "reverse", "rounds": 1}),
]
IDS = [f"{v}-{p}{'-' + '-'.join(o) if o else ''}" for v, p, o in CONFIGS]


def random_states(variant: str, players: int, options: dict, seed: int) -> Iterator:
    """Every state of a whole match played with random legal actions (the match, before each action)."""
    game = new_game(variant, players, options)
    match = game.new_match(seed)
    rng = random.Random(seed)
    while True:
        state = match.round
        while not state.is_over():
            yield game, state
            match.apply(rng.choice(state.legal_actions()))
        if match.is_over():
            return
        match.next_round()
