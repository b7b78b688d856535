"""A greedy bot: the heaviest tile; in All Fives the placement that scores most (then the heaviest).

Run: python bots/python/greedy_bot.py --listen 127.0.0.1:50052
"""

from arena.botkit import is_placement, pips, serve
from arena.botkit import all_fives_score


def choose(request):
    legal = request.observation.legal_actions
    placements = [i for i, a in enumerate(legal) if is_placement(a)]
    if not placements:
        return 0  # draw or pass: the only legal action
    if request.variant == "all_fives":
        return max(placements, key=lambda i: (all_fives_score(request.observation, legal[i]), pips(legal[i].tile)))
    return max(placements, key=lambda i: pips(legal[i].tile))


if __name__ == "__main__":
    serve(choose, name="py-greedy", author="dominoes arena")
