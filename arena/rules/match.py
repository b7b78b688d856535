"""A match: a series of rounds of one variant until its end condition, with scores per side.

``apply`` plays an action in the current round and scores the round when it ends; ``next_round`` deals the next
one (seeded by the match seed and the round index), led by the variant's next-leader rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.rules.actions import Action
from arena.rules.deal import Deal
from arena.rules.errors import RulesError
from arena.rules.results import MatchResult, RoundResult
from arena.rules.state import Observation, RoundState

if TYPE_CHECKING:
    from arena.rules.game import Game


class Match:
    """Rounds of one game until the match is over."""

    __slots__ = ("game", "seed", "scores", "deals", "results", "round", "_result")

    def __init__(self, game: Game, seed: int | str, first_deal: Deal | None = None) -> None:
        self.game = game
        self.seed = seed
        self.scores: tuple[int, ...] = (0,) * game.num_sides
        self.deals: list[Deal] = []
        self.results: list[RoundResult] = []
        self._result: MatchResult | None = None
        self._start_round(first_deal if first_deal is not None else game.first_deal(seed))

    def _start_round(self, deal: Deal) -> None:
        self.deals.append(deal)
        self.round: RoundState = self.game.new_round(deal, self.scores, len(self.deals) - 1)

    @property
    def round_index(self) -> int:
        return len(self.deals) - 1

    @property
    def turn(self) -> int:
        """The seat to move, or -1 between rounds and after the match."""
        return self.round.turn

    def legal_actions(self) -> list[Action]:
        return self.round.legal_actions()

    def observation(self, seat: int) -> Observation:
        return self.round.observation(seat)

    def apply(self, action: Action) -> None:
        """Apply an action to the current round; score the round if it ended."""
        state = self.round
        state.apply(action)
        if state.is_over():
            self._score_if_over()

    def _score_if_over(self) -> None:
        if self.round.is_over() and len(self.results) < len(self.deals):
            result = self.round.result()
            self.results.append(result)
            self.scores = tuple(s + p for s, p in zip(self.scores, result.points, strict=True))
            self._result = self.game.match_result(self.scores, len(self.results))

    def round_over(self) -> bool:
        return self.round.is_over()

    def next_round(self, deal: Deal | None = None) -> RoundState:
        """Deal the next round (``deal``: play that one instead of the seeded deal; an environment whose chance
        player deals, as OpenSpiel's, gives it). Only between rounds of a match that is not over."""
        self._score_if_over()
        if not self.round.is_over():
            raise RulesError("the current round is not over yet")
        if self._result is not None:
            raise RulesError("the match is over")
        if deal is None:
            deal = self.game.next_deal(self.seed, len(self.deals), self.deals[-1], self.results[-1])
        self._start_round(deal)
        return self.round

    def is_over(self) -> bool:
        self._score_if_over()
        return self._result is not None

    def result(self) -> MatchResult:
        if not self.is_over():
            raise RulesError("the match is not over yet")
        result = self._result
        assert result is not None  # is_over() said so
        return result

    def clone(self) -> Match:
        other = object.__new__(Match)
        other.game = self.game
        other.seed = self.seed
        other.scores = self.scores
        other.deals = self.deals.copy()
        other.results = self.results.copy()
        other._result = self._result
        other.round = self.round.clone()
        return other
