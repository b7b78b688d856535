"""A search bot for every variant: determinized Monte Carlo over the rules engine (arena/players/search.py).

At each decision it guesses the hidden tiles many times, consistently with what its seat has seen, plays every legal
action out in each guess, and picks the best mean value for the match; it uses about half of the move time. With
each choice it sends its belief about the hidden tiles: the share of its guesses that put each tile at each place.

Run: python bots/python/search_bot.py [--seed N] [--playouts-cap N] [--no-beliefs] --listen 127.0.0.1:50053
"""

import argparse

import arena.protocol.convert  # noqa: F401  (loaded now rather than at the first decision)
from arena.botkit import serve
from arena.players.search import SearchPlayer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="the search's seed (same seed and request: same answer "
                        "when the cap is reached before the time is up)")
    parser.add_argument("--playouts-cap", type=int, default=1_000_000, help="most playouts per decision")
    parser.add_argument("--no-beliefs", action="store_true", help="send the choice alone, without the belief")
    args, _ = parser.parse_known_args()  # --listen is botkit's
    player = SearchPlayer(seed=args.seed, max_playouts=args.playouts_cap)
    policy = player.choose_request if args.no_beliefs else player.reply_request
    serve(policy, name="py-search", version="1.0.0", author="dominoes arena")


if __name__ == "__main__":
    main()
