"""In-process matches between built-in players: ``arena simulate``, the quickest way to watch the rules work.

The players rotate seats from match to match (entrant ``e`` sits at seat ``(e + g) % n`` in match ``g``), so a
win table over many matches is not biased by seat order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.players import Player, builtin_player
from arena.rules import Game, Match


@dataclass
class EntrantTally:
    """One entrant's totals over a simulation."""

    name: str
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    points: int = 0


@dataclass
class MatchSummary:
    seed: int
    seats: tuple[str, ...]
    rounds: int
    scores: tuple[int, ...]
    winner: str | None
    """The winning entrant (or team, written ``a+b``), None for a drawn match."""


@dataclass
class Simulation:
    matches: list[MatchSummary] = field(default_factory=list)
    tallies: list[EntrantTally] = field(default_factory=list)


def play_local_match(game: Game, players: Sequence[Player], seed: int | str) -> Match:
    """Play one whole match in-process, each seat asking its player for every decision."""
    match = game.new_match(seed)
    while True:
        state = match.round
        while not state.is_over():
            seat = state.turn
            match.apply(players[seat](state.observation(seat)))
        if match.is_over():
            return match
        match.next_round()


def simulate(game: Game, kinds: Sequence[str], games: int, seed: int) -> Simulation:
    """Play ``games`` matches between built-in players of the given kinds (one entrant per seat)."""
    n = game.players
    names = [f"{kind}#{i}" for i, kind in enumerate(kinds)]
    sim = Simulation(tallies=[EntrantTally(name) for name in names])
    for g in range(games):
        match_seed = seed + g
        entrant_at = [(s - g) % n for s in range(n)]
        players = [builtin_player(kinds[e], seed=f"{match_seed}/{e}") for e in entrant_at]
        result = play_local_match(game, players, match_seed).result()
        winners = {s for s in range(n) if result.winner is not None and game.side_of[s] == result.winner}
        for seat, entrant in enumerate(entrant_at):
            tally = sim.tallies[entrant]
            tally.matches += 1
            tally.points += result.scores[game.side_of[seat]]
            if result.winner is None:
                tally.draws += 1
            elif seat in winners:
                tally.wins += 1
            else:
                tally.losses += 1
        winner = "+".join(names[entrant_at[s]] for s in sorted(winners)) or None
        sim.matches.append(
            MatchSummary(match_seed, tuple(names[e] for e in entrant_at), result.rounds, result.scores, winner)
        )
    return sim
