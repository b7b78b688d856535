"""A stdio bot that misbehaves on purpose, one way per --mode, to test that every fault is recorded over stdio.

Modes: garbage (a line that is not JSON), not_reply (JSON that is not an ActReply), illegal_index, hang (never
answers an act), exit_mid (exits after 3 decisions), never_start (exits before the handshake), bad_version,
late_once (answers its 2nd decision after 1.5 s, then quickly: the arena must throw the late answer away), good.
"""

import argparse
import json
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--mode", required=True)
MODE = parser.parse_args().mode


def say(reply) -> None:
    sys.stdout.write((reply if isinstance(reply, str) else json.dumps(reply)) + "\n")
    sys.stdout.flush()


def main() -> None:
    if MODE == "never_start":
        print("stdio bad bot: refusing to start", file=sys.stderr, flush=True)
        sys.exit(4)
    decisions = 0
    for line in sys.stdin:
        message = json.loads(line)
        if "hello" in message:
            say({"name": f"stdio-{MODE}", "protocolVersion": 99 if MODE == "bad_version" else 1})
            continue
        if "act" not in message:
            continue
        decisions += 1
        if MODE == "garbage":
            say("this is not json")
        elif MODE == "not_reply":
            say({"move": "the heaviest, please"})
        elif MODE == "illegal_index":
            say({"index": 999})
        elif MODE == "hang":
            time.sleep(600)
        elif MODE == "exit_mid" and decisions > 3:
            sys.exit(3)
        elif MODE == "late_once" and decisions == 2:
            time.sleep(1.5)
            say({"index": 0, "comment": "late"})
        else:
            say({"index": 0, "comment": f"decision {decisions}"})


if __name__ == "__main__":
    main()
