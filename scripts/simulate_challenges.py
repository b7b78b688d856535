"""How often a league's challenge tells two bots apart, by simulation: results drawn from the Elo model, fed to the
arena's own SPRT (:class:`arena.tournament.sprt.Sprt`, pentanomial: a deal set is two games, seats swapped) and read
by the challenges' own verdict (:func:`arena.league.rules.verdict.verdict`). Pure and fast: no bot, no game.

Each game of a deal set is drawn on its own: the challenger wins with probability ``p - draws / 2``, draws with
``draws``, loses otherwise, where ``p = 1 / (1 + 10^(-elo / 400))`` is its expected score. Independent games are the
cautious model: duplicate deals make a deal set's two games cancel each other's luck, which only helps a test.

    .venv/bin/python scripts/simulate_challenges.py --elo 50 --elo 0 --elo -50
    .venv/bin/python scripts/simulate_challenges.py --elo 50 --max-deal-sets 400 --elo1 40 --runs 2000

prints, for each Elo difference, the share of challenges with each verdict and how many deal sets they took.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.league.rules.config import ChallengeSettings  # noqa: E402
from arena.league.rules.verdict import verdict  # noqa: E402
from arena.tournament.sprt import PENTANOMIAL, Sprt  # noqa: E402


def one_challenge(rng: random.Random, elo: float, draws: float, elo0: float, elo1: float,
                  max_deal_sets: int) -> tuple[str, int]:
    """One simulated challenge: its verdict's outcome (the count of units left out) and the deal sets it took."""
    p = 1.0 / (1.0 + 10.0 ** (-elo / 400.0))
    win = p - draws / 2.0
    test = Sprt(elo0, elo1, kind=PENTANOMIAL)
    while test.units < max_deal_sets and not test.decided:
        half_points = 0
        for _ in range(2):
            roll = rng.random()
            half_points += 2 if roll < win else 1 if roll < win + draws else 0
        test.add(half_points)
    estimate = test.elo_estimate()
    said = verdict(test.state, elo0, elo1, estimate.interval, test.units)
    outcome = said.outcome if not said.outcome.startswith("not told apart") else "not told apart"
    return outcome, test.units


def main(argv: list[str] | None = None) -> int:
    defaults = ChallengeSettings()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elo", type=float, action="append", help="the true Elo difference (repeatable; "
                        "default 50, 0 and -50)")
    parser.add_argument("--elo0", type=float, default=defaults.elo0)
    parser.add_argument("--elo1", type=float, default=defaults.elo1)
    parser.add_argument("--max-deal-sets", type=int, default=defaults.max_deal_sets)
    parser.add_argument("--draws", type=float, default=0.0, help="the chance a game is drawn (default 0)")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"elo0 = {args.elo0:g}, elo1 = {args.elo1:g}, max_deal_sets = {args.max_deal_sets}, draws = "
          f"{args.draws:g}, {args.runs} challenges each (seed {args.seed})")
    for elo in args.elo or [50.0, 0.0, -50.0]:
        rng = random.Random(f"{args.seed}:{elo}")
        runs = [one_challenge(rng, elo, args.draws, args.elo0, args.elo1, args.max_deal_sets)
                for _ in range(args.runs)]
        counts = Counter(outcome for outcome, _ in runs)
        units = sorted(n for _, n in runs)
        shares = ", ".join(f"{outcome} {100.0 * count / args.runs:.1f}%" for outcome, count in counts.most_common())
        print(f"Elo {elo:+g}: {shares}; deal sets: median {statistics.median(units):g}, 90th percentile "
              f"{units[int(0.9 * (len(units) - 1))]}, mean {statistics.fmean(units):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
