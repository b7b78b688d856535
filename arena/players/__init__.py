"""The arena's side of a seat: in-process players (this package) and, later, remote bots over gRPC."""

from .builtin import BUILTIN_PLAYERS as BUILTIN_PLAYERS
from .builtin import GreedyPlayer as GreedyPlayer
from .builtin import Player as Player
from .builtin import RandomPlayer as RandomPlayer
from .builtin import builtin_player as builtin_player
