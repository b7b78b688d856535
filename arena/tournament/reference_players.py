"""The reference scale's players and its run sizes (:mod:`arena.tournament.reference` rates and places with them), in
a module that loads no player and no fit: ``arena reference --help`` and ``arena gauntlet --help`` show them.
"""

from __future__ import annotations

from arena.players.budgets import ISMCTS_SIMULATIONS, SEARCH_PLAYOUTS

ANCHOR = "random"
"""The reference player rated 0 Elo on every scale."""
REFERENCE_KINDS: tuple[str, ...] = ("random", "mixed", "greedy", *(f"search{n}" for n in SEARCH_PLAYOUTS),
                                    *(f"ismcts{n}" for n in ISMCTS_SIMULATIONS))
"""The reference players, each a built-in player's kind (its name on the scale); the IS-MCTS ones need the
``openspiel`` extra."""
SCALE_DEAL_SETS = 200
"""Deal sets per pairing of the round robin that rates the references (each under every seat rotation)."""
PLACEMENT_DEAL_SETS = 24
"""Deal sets a placement plays against each reference by default: a bounded run (with five references and two
players, 240 games) whose interval is some ±60 Elo near the middle of the scale."""
