"""The search example's player (arena/players/search.py) held to 100 playouts a decision: it still guesses the
hidden tiles and plays each action out, stronger than the greedy example, in milliseconds rather than half the move
time, so the league tests that field a search bot play their games in seconds. Uploaded as a bot's bot.py."""

import arena.protocol.convert  # noqa: F401  (loaded now rather than at the first decision)
from arena.botkit import serve
from arena.players.search import SearchPlayer

player = SearchPlayer(seed=0, max_playouts=100)

if __name__ == "__main__":
    serve(player.choose_request, name="quick-search", version="1.0.0", author="dominoes arena tests")
