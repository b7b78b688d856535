"""A bot that sends a belief about the hidden tiles with every choice (always the first legal action), one kind of
belief per --mode, over gRPC (botkit) or, with --stdio, over stdin and stdout (JSON lines).

Modes: valid (every hidden tile, 1/4 at the first place and 3/4 at the last for even tile ids, 1/2 and 1/2 for odd
ones: exact in thousandths), not_distribution (0.5 and 0.6), too_many (every tile of the set), visible (a tile of
its own hand), unknown_place (one probability too many), garbage (a tile [5|2]), not_a_message (over stdio: a
belief that is a string, not a Belief).
"""

import argparse
import json
import sys

from google.protobuf import json_format

from arena.botkit import belief_places, reply, serve
from arena.protocol import bot_pb2, types_pb2
from arena.protocol.convert import observation_from_pb, options_from_pb
from arena.rules import new_game
from arena.rules.restore import PublicRound
from arena.rules.tiles import HIGH, LOW, iter_tiles

parser = argparse.ArgumentParser()
parser.add_argument("--mode", required=True)
parser.add_argument("--stdio", action="store_true")
ARGS, _ = parser.parse_known_args()


def hidden_tiles(request) -> list[int]:
    game = new_game(request.variant, request.observation.players, options_from_pb(request.options))
    return list(iter_tiles(PublicRound(game, observation_from_pb(request.observation, game)).unseen))


def belief(request):
    width = len(belief_places(request))
    hidden = hidden_tiles(request)
    pair = lambda t: (LOW[t], HIGH[t])  # noqa: E731
    if ARGS.mode == "valid":
        return {pair(t): ([0.25] + [0.0] * (width - 2) + [0.75]) if t % 2 == 0 else
                ([0.5] + [0.0] * (width - 2) + [0.5]) for t in hidden}
    if ARGS.mode == "not_distribution":
        return {pair(hidden[0]): [0.5] + [0.0] * (width - 2) + [0.6]}
    if ARGS.mode == "too_many":
        game = new_game(request.variant, request.observation.players, options_from_pb(request.options))
        return {pair(t): [1.0] + [0.0] * (width - 1) for t in iter_tiles(game.all_tiles)}
    if ARGS.mode == "visible":
        own = request.observation.hand[0]
        return {(own.low, own.high): [1.0] + [0.0] * (width - 1)}
    if ARGS.mode == "unknown_place":
        return {pair(hidden[0]): [1.0] + [0.0] * width}
    if ARGS.mode == "garbage":
        return [(types_pb2.Tile(low=5, high=2), [1.0] + [0.0] * (width - 1))]
    return {}


def policy(request):
    return reply(0, belief=belief(request), comment=ARGS.mode)


def stdio() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "hello" in message:
            answer = {"name": f"belief-{ARGS.mode}", "protocolVersion": 1}
        elif "act" in message:
            request = json_format.ParseDict(message["act"], bot_pb2.ActRequest())
            answer = json_format.MessageToDict(policy(request))
            if ARGS.mode == "not_a_message":
                answer["belief"] = "the boneyard, probably"
        else:
            continue
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if ARGS.stdio:
        stdio()
    else:
        serve(policy, name=f"belief-{ARGS.mode}")
