"""The budgets of the built-in players that come in several strengths (``search10``, ``ismcts64``, ...), in a module
that imports nothing: the reference scale's list of players (and ``arena reference --help``) reads them without
loading the players."""

SEARCH_PLAYOUTS = (10, 50, 250)
"""The search player's budgets as built-in players (``search10``, ...): playouts a decision, no clock, so a game
between built-ins plays the same moves on any machine and under any load (the reference scale's players)."""
ISMCTS_SIMULATIONS = (16, 64)
"""IS-MCTS's budgets as built-in players (``ismcts16``, ``ismcts64``; ``ismcts`` is the default's), simulations a
decision."""
