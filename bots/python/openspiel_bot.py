"""Any OpenSpiel bot in the arena, as a kit bot: OpenSpiel's information-set MCTS (ISMCTSBot) by default.

Each request's observation becomes a state of the variant's registered OpenSpiel game (arena/env/openspiel.py) that
the seat cannot tell from the real one, and the bot's step on it is the answer (arena/env/spiel_player.py). To seat a
bot of your own, change make_bot: it gets the loaded pyspiel game, the seat and a numpy random generator, and
returns any pyspiel.Bot. Needs the openspiel extra (pip install 'dominoes-arena[openspiel]').

Run: python bots/python/openspiel_bot.py [--seed N] [--simulations N] --listen 127.0.0.1:50054
"""

import argparse

from arena.botkit import serve
from arena.env.spiel_player import SpielPlayer, ismcts_bot
from arena.protocol.convert import observation_from_pb, options_from_pb
from arena.rules import new_game


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="the bot's seed (same seed and requests: same answers)")
    parser.add_argument("--simulations", type=int, default=64, help="IS-MCTS simulations per decision")
    args, _ = parser.parse_known_args()  # --listen is botkit's

    def make_bot(game, seat, rng):
        return ismcts_bot(game, seat, rng, simulations=args.simulations)

    player = SpielPlayer(make_bot, seed=args.seed, name="py-openspiel-ismcts")

    def choose(request):
        message = request.observation
        game = new_game(request.variant, message.players, options_from_pb(request.options))
        return player.choose(observation_from_pb(message, game))

    serve(choose, name="py-openspiel-ismcts", version="1.0.0", author="dominoes arena")


if __name__ == "__main__":
    main()
