"""Train the zstd dictionary of compact record files (arena/records/compact.py) and write it into the package.

Run once per dictionary version, never at set-up: a dictionary in use is data that must never change (every record
compressed with it names its id). To make a new one: pick the next id, run this, add the file to
``compact.DICTIONARIES`` (keeping every earlier one) and point ``compact.CURRENT`` at it.

    .venv/bin/python scripts/train_record_dictionary.py --id 32769 --games 40

The samples are random players' games of every variant (Mexican Train with its default and with four players), the
same games ``arena bench records`` plays, packed as compact files pack them (tiles as numbers, think times in microseconds). In-process players
answer in microseconds, so each move's think time is replaced by one drawn as real bots' are spread (log-uniform,
0.3 ms to 300 ms, to the microsecond as the referee rounds it): the dictionary then learns what real records hold.
Training with fixed cover parameters (``K``, ``D``) takes seconds; zstd's own search of them took minutes for
records no smaller.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import tempfile
from pathlib import Path

import trio
import zstandard

from arena.bench.referee import write_local_records
from arena.records import compact
from arena.rules import VARIANTS

SIZE = 112_640
"""zstd's default dictionary size (110 KiB): 32 KiB and 256 KiB ones measured larger records."""
K, D = 200, 8
OUT = Path(__file__).resolve().parent.parent / "arena" / "records" / "dictionaries"


def samples(games: int, seed: str) -> list[bytes]:
    """The JSON lines of ``games`` random games of every variant."""
    lines: list[bytes] = []
    chance = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        for name in VARIANTS:
            for players in ((None, 4) if name == "mexican_train" else (None,)):
                path = Path(folder) / f"{name}-{players}.jsonl"
                trio.run(write_local_records, path, name, players, games, seed)
                lines += [packed(json.loads(line), chance) for line in path.read_bytes().splitlines()]
    return lines


def packed(record: dict, chance: random.Random) -> bytes:
    """The record as a compact file packs it, with think times as real bots' are spread."""
    for rnd in record.get("rounds", ()):
        for move in rnd.get("moves", ()):
            if not move.get("forced"):
                move["thinkMs"] = round(math.exp(chance.uniform(math.log(0.3), math.log(300))), 3)
    return json.dumps(compact._walk(record, compact._PLAN, compact._packed), separators=(",", ":"),
                      ensure_ascii=False).encode() + b"\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--id", type=int, required=True, help="the dictionary's id (32768 and up: private ids)")
    parser.add_argument("--games", type=int, default=40, help="games of each variant to train on")
    parser.add_argument("--seed", default="train", help="the games' seed")
    args = parser.parse_args()
    trained = zstandard.train_dictionary(SIZE, samples(args.games, args.seed), dict_id=args.id, k=K, d=D)
    path = OUT / f"records-{args.id - 32768}.dict"
    path.write_bytes(trained.as_bytes())
    print(f"wrote {path} ({len(trained.as_bytes())} bytes, id {trained.dict_id()})")


if __name__ == "__main__":
    main()
