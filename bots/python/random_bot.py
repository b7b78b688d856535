"""A bot that plays a uniformly random legal action. Run: python bots/python/random_bot.py --listen 127.0.0.1:50051"""

import random

from arena.botkit import serve

rng = random.Random()


def choose(request):
    return rng.randrange(len(request.observation.legal_actions))


if __name__ == "__main__":
    serve(choose, name="py-random", author="dominoes arena")
