"""The arena's side of a seat: in-process players (this package) and, later, remote bots over gRPC."""

from arena.players.builtin import BUILTIN_PLAYERS as BUILTIN_PLAYERS
from arena.players.builtin import GreedyPlayer as GreedyPlayer
from arena.players.builtin import Player as Player
from arena.players.builtin import RandomPlayer as RandomPlayer
from arena.players.builtin import builtin_player as builtin_player
