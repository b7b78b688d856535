"""What the Gymnasium-style environments share (:mod:`arena.env.pettingzoo`, :mod:`arena.env.gymnasium`): an episode
is one match, each seat's reward is the change in its side's score, and an unseeded reset draws the match seed.
"""

from __future__ import annotations

from arena.rules import Game, Match

SEED_BOUND = 2**63
"""Match seeds drawn for an unseeded reset are below this."""


def standing(match: Match) -> tuple[int, ...]:
    """Each side's match score as it stands: the scored rounds plus the current round's points in play."""
    return match.scores if match.round.is_over() else match.round.scores()


def seat_rewards(game: Game, before: tuple[int, ...], now: tuple[int, ...]) -> list[float]:
    """Each seat's reward from one standing to the next: its side's change in score, negated where fewer points are
    better (Mexican Train), so a higher reward is always better."""
    sign = 1 if game.higher_scores_win else -1
    return [float(sign * (now[side] - before[side])) for side in game.side_of]
