"""A dominoes bot over stdin and stdout, in Python with the standard library only: the stdio protocol's kit.

The arena writes one JSON object per line: {"hello": HelloRequest}, {"act": ActRequest} or {"notify": Notification},
each in protobuf's JSON mapping of proto/dominoes/v1/bot.proto (field names in lowerCamelCase, enums as their names,
64-bit numbers as strings). Answer "hello" and "act" with one line each; never answer "notify". Print nothing else
on stdout: write your debugging to stderr (it goes to your log).

Run: .venv/bin/arena check-bot --protocol stdio -- python3 bots/stdio/bot.py [--policy heaviest]
"""

import argparse
import json
import random
import sys


def pips(tile):
    """A tile is {"low": a, "high": b} (the arena writes every field, zeros too)."""
    return tile["low"] + tile["high"]


def choose(request, policy):
    """The policy: the index of one legal action. Edit this."""
    legal = request["observation"]["legalActions"]
    if policy == "heaviest":
        placements = [i for i, a in enumerate(legal) if a.get("kind") == "ACTION_KIND_PLACE"]
        if placements:
            return max(placements, key=lambda i: pips(legal[i]["tile"]))
        return 0
    return random.randrange(len(legal))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--policy", choices=("random", "heaviest"), default="random")
    parser.add_argument("--name")
    args = parser.parse_args()
    name = args.name or f"stdio-{args.policy}"
    for line in sys.stdin:
        message = json.loads(line)
        if "hello" in message:
            reply = {"name": name, "version": "1.0.0", "author": "dominoes arena", "protocolVersion": 1}
        elif "act" in message:
            reply = {"index": choose(message["act"], args.policy)}
        else:
            continue  # a notification: no answer
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
