"""The sibling bot of the fair-play tests (tests/bots/sibling_bot.py): its tournament file, and what its logs and a
run's records tell of it: every start of a process and what it saw, the hands it heard from its siblings, and
whether a process that had seen a deal was alive while the deal was played from another seat."""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from arena.records.jsonform import deal_from
from arena.tournament.pools import entrant_logs
from support.paths import ROOT

SIBLING = ROOT / "tests" / "bots" / "sibling_bot.py"
ENTRANTS = ("a", "b")


def tournament_text(channel: str, out: Path, deal_sets: int = 12) -> str:
    bots = "".join(f'''
[[bots]]
name = "{name}"
command = {json.dumps([sys.executable, str(SIBLING), "--name", name, "--channel", channel])}
''' for name in ENTRANTS)
    return f'''name = "siblings"
variant = "block"
games = {deal_sets}
duplicate = true
seed = "siblings"
concurrency = 4
output = "{out}"

[options]
target = 1
{bots}'''


@dataclass
class Instance:
    """One start of a bot process, as its log tells it."""

    entrant: str
    start: float
    stop: float = math.inf
    matches: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class Observed:
    instances: dict[str, Instance]
    heard: list[tuple[str, str, frozenset[int]]]
    """(instance, match id, the hand it heard from a sibling)."""
    acts: dict[str, list[float]]
    """match id -> the times of every request of the game, at any seat."""


def observe(logs: Path, entrants: tuple[str, ...]) -> Observed:
    seen = Observed({}, [], defaultdict(list))
    for entrant in entrants:
        for path in entrant_logs(logs, entrant):
            for line in path.read_text(errors="replace").splitlines():
                if not line.startswith("{"):
                    continue  # the arena's own lines
                event = json.loads(line)
                kind, instance = event["event"], event["instance"]
                if kind == "start":
                    seen.instances[instance] = Instance(entrant, event["t"])
                elif kind == "stop":
                    seen.instances[instance].stop = event["t"]
                elif kind == "act":
                    seen.instances[instance].matches.append(event["match"])
                    seen.acts[event["match"]].append(event["t"])
                elif kind == "heard":
                    seen.heard.append((instance, event["match"], frozenset(event["hand"])))
                elif kind == "refused":
                    seen.instances[instance].refused.append(event["call"])
    return seen


def games_of(records: list[dict]) -> dict[str, dict]:
    return {record["matchId"]: record for record in records}


def learned(seen: Observed, games: dict[str, dict]) -> list[str]:
    """Every hand heard that was the opponent's hand in the game it was heard in."""
    found = []
    for instance, match, hand in seen.heard:
        hands = [frozenset(h) for h in deal_from(games[match]["rounds"][0]["deal"]).hands]
        if hand in hands:
            found.append(f"{seen.instances[instance].entrant} heard its opponent's hand {sorted(hand)} in game "
                         f"{games[match].get('index', 0)}")
    return found


def deal_seen_alive(seen: Observed, games: dict[str, dict]) -> list[str]:
    """The fair-play invariant from outside: for every game, every process of a seated entrant alive while it was
    played (between the game's first and last request) must not have seen its deal under another rotation."""
    violations = []
    for match, times in seen.acts.items():
        game = games[match]
        first, last = min(times), max(times)
        for name, instance in seen.instances.items():
            if instance.entrant not in game["seats"] or instance.stop < first or instance.start > last:
                continue
            for other in instance.matches:
                if other != match and games[other].get("dealKey") == game.get("dealKey") \
                        and games[other].get("rotation", 0) != game.get("rotation", 0):
                    violations.append(f"{instance.entrant}'s process {name} saw deal {game.get('dealKey')} under "
                                      f"rotation {games[other].get('rotation', 0)} and was alive while game "
                                      f"{game.get('index', 0)} played it under rotation {game.get('rotation', 0)}")
                    break
    return violations


def refusals(seen: Observed) -> set[str]:
    return {call for instance in seen.instances.values() for call in instance.refused}
