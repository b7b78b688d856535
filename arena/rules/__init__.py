"""The pure rules of every variant: no I/O, no clock, no randomness but the seeded shuffle.

Public API (see docs/reference/engine.md)::

    from arena.rules import new_game, Deal, parse_tile
    game = new_game("draw", players=2)
    match = game.new_match(seed=7)            # or game.new_round(Deal(hands, boneyard, leader))
    while not match.is_over():
        state = match.round
        while not state.is_over():
            action = state.legal_actions()[0]
            match.apply(action)
        ...
"""

# Importing a variant module registers it; this order is the order `arena variants` lists them in.
from arena.rules import draw as _draw  # noqa: F401  isort: skip
from arena.rules import block as _block  # noqa: F401  isort: skip
from arena.rules import la_plaza as _la_plaza  # noqa: F401  isort: skip
from arena.rules import all_fives as _all_fives  # noqa: F401  isort: skip
from arena.rules import mexican_train as _mexican_train  # noqa: F401  isort: skip
from arena.rules.actions import DRAW as DRAW
from arena.rules.actions import MEXICAN_TRAIN as MEXICAN_TRAIN
from arena.rules.actions import NO_TILE as NO_TILE
from arena.rules.actions import NO_TRAIN as NO_TRAIN
from arena.rules.actions import PASS as PASS
from arena.rules.actions import Action as Action
from arena.rules.actions import Kind as Kind
from arena.rules.actions import Point as Point
from arena.rules.actions import lead as lead
from arena.rules.actions import placement as placement
from arena.rules.deal import Deal as Deal
from arena.rules.errors import IllegalActionError as IllegalActionError
from arena.rules.errors import OptionError as OptionError
from arena.rules.errors import RulesError as RulesError
from arena.rules.game import Game as Game
from arena.rules.match import Match as Match
from arena.rules.registry import VARIANTS as VARIANTS
from arena.rules.registry import new_game as new_game
from arena.rules.registry import variant as variant
from arena.rules.results import Ending as Ending
from arena.rules.results import MatchResult as MatchResult
from arena.rules.results import RoundResult as RoundResult
from arena.rules.state import Observation as Observation
from arena.rules.state import RoundState as RoundState
from arena.rules.tiles import parse_tile as parse_tile
from arena.rules.tiles import tile_id as tile_id
from arena.rules.tiles import tile_name as tile_name
