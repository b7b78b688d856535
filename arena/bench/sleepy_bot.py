"""A bot that takes a fixed time per decision, then plays a random legal action: the bot of ``arena bench cluster``,
so that how fast a cluster plays depends on how many games its nodes hold at once, not on this machine's cores.

Run: ``python arena/bench/sleepy_bot.py --sleep-ms 20 [--seed S] [--listen ADDR]``. Its gRPC server has enough
threads for many games at once (each decision sleeps in its own thread).
"""

from __future__ import annotations

import argparse
import random
import time

from arena.botkit import serve
from arena.protocol import bot_pb2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sleep-ms", type=int, default=20, help="time per decision in ms (default 20)")
    parser.add_argument("--seed", type=int, help="seed of its random choices (default: random)")
    args, rest = parser.parse_known_args()
    if args.sleep_ms < 0:
        parser.error(f"--sleep-ms must be at least 0, got {args.sleep_ms}")
    rng = random.Random(args.seed)
    pause = args.sleep_ms / 1000

    def choose(request: bot_pb2.ActRequest) -> int:
        time.sleep(pause)
        return rng.randrange(len(request.observation.legal_actions))

    serve(choose, name="sleepy", author="dominoes arena", argv=rest)


if __name__ == "__main__":
    main()
