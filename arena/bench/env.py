"""``arena bench env``: environment steps per second of the PettingZoo and OpenSpiel environments against the bare
engine, on the same games (whole matches of one configured variant, uniformly random legal actions).

A *step* is one player's decision applied. Each loop does what a training loop of its framework must:

* ``engine``: the rules engine alone (:class:`arena.rules.Match`): the legal actions, a random one applied, the next
  round dealt when one ends. The ceiling.
* ``pettingzoo``: ``arena.env.pettingzoo.env(...)`` as PettingZoo's users run it (its wrappers included):
  ``agent_iter``, ``last()`` (the observation vector and the action mask), a random legal index, ``step``. The
  agents' closing steps (``None`` once the match is over) are not counted.
* ``pettingzoo_raw``: the same without PettingZoo's wrappers (``raw_env``).
* ``openspiel``: a state of the registered game: chance outcomes dealt at random, then ``legal_actions()`` and
  ``apply_action`` for each decision (chance steps are not counted: ``chance_per_s`` says how many there were).
* ``openspiel_tensor``: the same, reading the mover's ``observation_tensor()`` before each decision, as a learner
  does.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from arena.bench.frameworks import FRAMEWORKS
from arena.rules import new_game


def _timed(play_one: Callable[[int], tuple[int, int]], seconds: float) -> dict[str, Any]:
    """Play matches (``play_one(seed)`` returns its steps and chance steps) until ``seconds`` have passed."""
    matches = steps = chance = 0
    started = time.perf_counter()
    while True:
        done, dealt = play_one(matches + 1)
        steps += done
        chance += dealt
        matches += 1
        if time.perf_counter() - started >= seconds:
            break
    elapsed = time.perf_counter() - started
    result = {"seconds": round(elapsed, 3), "matches": matches, "steps": steps,
              "steps_per_s": round(steps / elapsed, 1), "us_per_step": round(elapsed / steps * 1e6, 2)}
    if chance:
        result["chance_per_s"] = round(chance / elapsed, 1)
    return result


def engine_loop(variant: str, players: int | None, options: Mapping[str, Any] | None) -> Callable[[int], tuple[int, int]]:
    game = new_game(variant, players, options)
    rng = random.Random(0)

    def play_one(seed: int) -> tuple[int, int]:
        match = game.new_match(seed)
        steps = 0
        while True:
            state = match.round
            while not state.is_over():
                actions = state.legal_actions()
                match.apply(actions[int(rng.random() * len(actions))])
                steps += 1
            if match.is_over():
                return steps, 0
            match.next_round()

    return play_one


def pettingzoo_loop(variant: str, players: int | None, options: Mapping[str, Any] | None,
                    raw: bool) -> Callable[[int], tuple[int, int]]:
    from arena.env import pettingzoo as pz  # the pettingzoo extra, loaded when this benchmark runs

    env = (pz.raw_env if raw else pz.env)(variant, players, options)
    rng = np.random.default_rng(0)

    def play_one(seed: int) -> tuple[int, int]:
        env.reset(seed=seed)
        steps = 0
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[int(rng.random() * len(legal))]))
            steps += 1
        return steps, 0

    return play_one


def openspiel_loop(variant: str, players: int | None, options: Mapping[str, Any] | None,
                   tensor: bool) -> Callable[[int], tuple[int, int]]:
    from arena.env.openspiel import load  # the openspiel extra, loaded when this benchmark runs

    game = load(variant, players, options)
    rng = random.Random(0)

    def play_one(seed: int) -> tuple[int, int]:
        state = game.new_initial_state()
        steps = chance = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
                chance += 1
                continue
            if tensor:
                state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            steps += 1
        return steps, chance

    return play_one


def bench_env(variant: str, players: int | None, seconds: float, options: Mapping[str, Any] | None = None,
              frameworks: tuple[str, ...] = FRAMEWORKS) -> dict[str, Any]:
    """Steps/s of each framework's loop over ``seconds`` each, and its share of the engine's rate."""
    game = new_game(variant, players, options)
    loops: dict[str, Callable[[], Callable[[int], tuple[int, int]]]] = {
        "engine": lambda: engine_loop(variant, players, options),
        "pettingzoo": lambda: pettingzoo_loop(variant, players, options, raw=False),
        "pettingzoo_raw": lambda: pettingzoo_loop(variant, players, options, raw=True),
        "openspiel": lambda: openspiel_loop(variant, players, options, tensor=False),
        "openspiel_tensor": lambda: openspiel_loop(variant, players, options, tensor=True),
    }
    results: dict[str, Any] = {}
    for name in ("engine", *[f for f in frameworks if f != "engine"]):
        results[name] = _timed(loops[name](), seconds)
    engine_rate = results["engine"]["steps_per_s"]
    for result in results.values():
        result["of_engine"] = round(result["steps_per_s"] / engine_rate, 3)
    return {"variant": variant, "players": game.players, "options": game.options, "frameworks": results}
