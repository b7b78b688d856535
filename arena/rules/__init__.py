"""The pure rules of every variant: no I/O, no clock, no randomness but the seeded shuffle.

Public API (see docs/engine.md)::

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
from . import draw as _draw  # noqa: F401  isort: skip
from . import block as _block  # noqa: F401  isort: skip
from . import la_plaza as _la_plaza  # noqa: F401  isort: skip
from . import all_fives as _all_fives  # noqa: F401  isort: skip
from . import mexican_train as _mexican_train  # noqa: F401  isort: skip
from .actions import DRAW as DRAW
from .actions import MEXICAN_TRAIN as MEXICAN_TRAIN
from .actions import NO_TILE as NO_TILE
from .actions import NO_TRAIN as NO_TRAIN
from .actions import PASS as PASS
from .actions import Action as Action
from .actions import Kind as Kind
from .actions import Point as Point
from .actions import lead as lead
from .actions import placement as placement
from .deal import Deal as Deal
from .errors import IllegalActionError as IllegalActionError
from .errors import OptionError as OptionError
from .errors import RulesError as RulesError
from .game import Game as Game
from .match import Match as Match
from .registry import VARIANTS as VARIANTS
from .registry import new_game as new_game
from .registry import variant as variant
from .results import Ending as Ending
from .results import MatchResult as MatchResult
from .results import RoundResult as RoundResult
from .state import Observation as Observation
from .state import RoundState as RoundState
from .tiles import parse_tile as parse_tile
from .tiles import tile_id as tile_id
from .tiles import tile_name as tile_name
