"""A random-looking bot whose choice is a hash of what it sees (its observation and a salt): no random state, so a
tournament of such bots on seeded deals plays the same games every time, whatever the order the games run in.

Run: python tests/bots/hashed_bot.py --salt S --listen ...
"""

import argparse
import hashlib

from arena.botkit import serve


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--salt", default="")
    args, _ = parser.parse_known_args()  # --listen is botkit's
    salt = args.salt.encode()

    def choose(request) -> int:
        seen = request.observation.SerializeToString(deterministic=True)
        digest = hashlib.sha256(salt + seen).digest()
        return int.from_bytes(digest[:8], "big") % len(request.observation.legal_actions)

    serve(choose, name=f"hashed-{args.salt}"[:64], author="dominoes arena tests")


if __name__ == "__main__":
    main()
