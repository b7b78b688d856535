"""Measure two peer dominoes rules engines side by side with ours.

Usage::

    python bench/peers.py [--seconds S] [--venv DIR] [--seed N]
                          [--arena CMD] [--peers-only]

What it does, and why:

1. The peers (``open-spiel`` and ``dominoes`` from PyPI) must never become
   dependencies of the project, so they are installed into a throwaway
   virtual environment: a fresh one under a temp dir (deleted afterwards), or
   ``--venv DIR`` to create once and reuse (nothing is re-installed when the
   pinned versions are already there).
2. Inside that venv a small snippet per peer plays complete random hands for
   S seconds (default 10) and prints one JSON line:

   * OpenSpiel ``python_block_dominoes`` (2 players): chance nodes (the deal,
     one node per tile) are sampled with their probabilities and counted as
     ``chance``; every other ``apply_action`` is a ``move``.
   * ``dominoes`` partnership game (4 players, ``dominoes.Game.new()``): each
     ``make_move`` of a uniformly random ``valid_moves`` entry is a ``move``.
     That library passes for blocked players by itself inside ``make_move``;
     those passes are reported as ``passes`` and are not moves.

3. Our engine is measured with the project's own venv:
   ``<repo>/.venv/bin/arena bench engine --variant V --players P --seconds S``
   for ``block``/2 and ``la_plaza_teams``/4 (falling back to
   ``python -m arena`` with this interpreter). ``--arena CMD`` overrides the
   command, e.g. to test the parsing with a script that prints fake JSON.
4. One JSON object goes to stdout with each peer's numbers, ours and the two
   ratios (``block_2p_hands_ratio``: goal >= 3; ``teams_moves_ratio``: goal
   >= 1); a short human-readable summary goes to stderr.

Exit status: 0 when everything ran, 1 when some part failed (the JSON is
still printed, with an ``error`` for the part that failed and null ratios).

Only the Python 3.11 standard library is used here.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# Pinned so that numbers stay comparable between runs.
PEER_PACKAGES = {"open-spiel": "2.0.2", "dominoes": "6.1.0"}

# Keys our `arena bench engine` JSON must have for the comparison to work.
OUR_KEYS = ("variant", "players", "seconds", "hands", "moves", "hands_per_s", "moves_per_s")

# Each snippet runs as `python -I -c SNIPPET SECONDS SEED` inside the peer venv
# (-I: isolated, so nothing in the repo or in PYTHON* variables shadows a peer).
# The clock starts after imports and game loading, and stops at the end of the
# last complete hand, so rates are over whole hands only.
OPENSPIEL_SNIPPET = r'''
import json, platform, random, sys, time
from importlib.metadata import version
import open_spiel.python.games  # registers the Python games with pyspiel
import pyspiel

seconds, rng = float(sys.argv[1]), random.Random(int(sys.argv[2]))
game = pyspiel.load_game("python_block_dominoes")
hands = moves = chance = 0
start = time.perf_counter()
deadline = start + seconds
while True:
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, probs)[0])
            chance += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
            moves += 1
    hands += 1
    now = time.perf_counter()
    if now >= deadline:
        break
elapsed = now - start
print(json.dumps({
    "peer": "open_spiel", "version": version("open-spiel"), "game": "python_block_dominoes",
    "players": game.num_players(), "python": platform.python_version(),
    "seconds": round(elapsed, 3), "hands": hands, "moves": moves,
    "chance": chance, "hands_per_s": round(hands / elapsed, 1),
    "moves_per_s": round(moves / elapsed, 1),
    "chance_per_s": round(chance / elapsed, 1),
}))
'''

DOMINOES_SNIPPET = r'''
import json, platform, random, sys, time
from importlib.metadata import version
import dominoes

seconds = float(sys.argv[1])
random.seed(int(sys.argv[2]))  # the library deals with the global RNG
rng = random.Random(int(sys.argv[2]))
hands = moves = passes = 0
start = time.perf_counter()
deadline = start + seconds
while True:
    game = dominoes.Game.new()  # partnership: 4 players, 0+2 vs 1+3
    while game.result is None:
        game.make_move(*rng.choice(game.valid_moves))
        moves += 1
    passes += sum(1 for m in game.moves if m is None)
    hands += 1
    now = time.perf_counter()
    if now >= deadline:
        break
elapsed = now - start
print(json.dumps({
    "peer": "dominoes", "version": version("dominoes"), "game": "partnership",
    "players": len(game.hands), "python": platform.python_version(),
    "seconds": round(elapsed, 3), "hands": hands, "moves": moves,
    "passes": passes, "hands_per_s": round(hands / elapsed, 1),
    "moves_per_s": round(moves / elapsed, 1),
    "passes_per_s": round(passes / elapsed, 1),
}))
'''


def log(message: str) -> None:
    """Progress and summary go to stderr so stdout stays one JSON object."""
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="seconds to play per engine (default 10)")
    parser.add_argument("--venv", type=Path, default=None,
                        help="peer venv to create or reuse (default: a throwaway temp dir)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the peers' random play")
    parser.add_argument("--arena", default=None,
                        help="command to run instead of <repo>/.venv/bin/arena (shell-split)")
    parser.add_argument("--peers-only", action="store_true",
                        help="measure the peers only, not our engine")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    return args


def venv_python(venv_dir: Path) -> Path:
    """Path of the interpreter inside a venv (POSIX or Windows layout)."""
    posix = venv_dir / "bin" / "python"
    return posix if posix.exists() or os.name != "nt" else venv_dir / "Scripts" / "python.exe"


def peers_installed(python: Path) -> bool:
    """True when the venv already has the pinned peers, so reuse skips pip."""
    check = ("import importlib.metadata as m, sys; sys.exit(0 if all("
             "m.version(n) == v for n, v in %r.items()) else 1)" % PEER_PACKAGES)
    try:
        return subprocess.run([str(python), "-c", check], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def ensure_venv(venv_dir: Path) -> tuple[Path, float]:
    """Create the venv and pip-install the peers into it unless already there.

    Returns the venv's interpreter and the seconds spent creating/installing
    (0 when an existing venv was reused as is).
    """
    python = venv_python(venv_dir)
    if python.exists() and peers_installed(python):
        log(f"reusing peer venv {venv_dir}")
        return python, 0.0
    start = time.perf_counter()
    if not python.exists():
        log(f"creating peer venv {venv_dir}")
        venv.EnvBuilder(with_pip=True).create(venv_dir)
    specs = [f"{name}=={version}" for name, version in PEER_PACKAGES.items()]
    log(f"pip install {' '.join(specs)} ...")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                    "--disable-pip-version-check", *specs], check=True)
    took = time.perf_counter() - start
    log(f"peer venv ready in {took:.1f}s")
    return python, took


def last_json_object(text: str) -> dict[str, Any]:
    """The JSON object a command printed: whole stdout, else its last JSON line.

    Tolerates log lines before the JSON so a chatty command still parses.
    """
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    except json.JSONDecodeError:
        pass
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise ValueError(f"no JSON object in output: {text.strip()[-300:]!r}")


def run_json(cmd: list[str], seconds: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a measuring command and return its JSON, or a dict with `error`.

    The timeout leaves room for slow imports (OpenSpiel takes a few seconds).
    """
    timeout = seconds * 3 + 120
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=env, cwd=REPO)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"error": f"{shlex.join(cmd)}: {exc}"}
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        return {"error": f"{shlex.join(cmd)} exited {proc.returncode}: " + " | ".join(tail)}
    try:
        return last_json_object(proc.stdout)
    except ValueError as exc:
        return {"error": f"{shlex.join(cmd)}: {exc}"}


def measure_peer(python: Path, snippet: str, seconds: float, seed: int) -> dict[str, Any]:
    """Run one peer's snippet inside the peer venv."""
    return run_json([str(python), "-I", "-c", snippet, str(seconds), str(seed)], seconds)


def arena_commands(override: str | None) -> list[tuple[list[str], dict[str, str] | None]]:
    """Candidate commands for our benchmark, in order of preference.

    The project's own venv is preferred (that is how the project runs); the
    fallback imports `arena` with this interpreter from the repo (or src/).
    """
    if override:
        return [(shlex.split(override), None)]
    candidates: list[tuple[list[str], dict[str, str] | None]] = []
    arena = REPO / ".venv" / "bin" / "arena"
    if arena.exists():
        candidates.append(([str(arena)], None))
    env = dict(os.environ)
    paths = [str(REPO), str(REPO / "src"), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    candidates.append(([sys.executable, "-m", "arena"], env))
    return candidates


def measure_ours(variant: str, players: int, seconds: float, override: str | None) -> dict[str, Any]:
    """Run `arena bench engine` for one variant and check the keys we need."""
    args = ["bench", "engine", "--variant", variant, "--players", str(players),
            "--seconds", f"{seconds:g}"]
    errors = []
    if not override and not (REPO / ".venv" / "bin" / "arena").exists():
        errors.append(f"{REPO / '.venv' / 'bin' / 'arena'} not found (is the project venv set up?)")
    for base, env in arena_commands(override):
        result = run_json(base + args, seconds, env)
        if "error" not in result:
            missing = [key for key in OUR_KEYS if key not in result]
            if not missing:
                return result
            result = {"error": f"{shlex.join(base + args)}: JSON lacks keys {missing}"}
        errors.append(result["error"])
    return {"error": "could not benchmark our engine: " + " || ".join(errors)}


def ratio(ours: dict[str, Any], peer: dict[str, Any], key: str) -> float | None:
    """ours[key] / peer[key], or None when either side failed or is zero."""
    try:
        return round(float(ours[key]) / float(peer[key]), 3)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def with_passes(peer: dict[str, Any]) -> dict[str, Any]:
    """The peer's numbers with its automatic passes counted as moves, as ours are."""
    if "error" in peer:
        return peer
    return {**peer, "moves_per_s": float(peer["moves_per_s"]) + float(peer.get("passes_per_s", 0))}


def summarize(report: dict[str, Any]) -> None:
    """Human-readable lines on stderr, one per engine plus the two goals."""
    def line(name: str, r: dict[str, Any]) -> str:
        if "error" in r:
            return f"  {name:<28} ERROR {r['error']}"
        return (f"  {name:<28} {r['hands_per_s']:>10.1f} hands/s {r['moves_per_s']:>11.1f} moves/s"
                f"  ({r['hands']} hands in {float(r['seconds']):.1f}s)")
    log("\nengine throughput (random play):")
    log(line("open_spiel block 2p", report["peers"]["open_spiel"]))
    log(line("dominoes partnership 4p", report["peers"]["dominoes"]))
    if "ours" in report:
        log(line("ours block 2p", report["ours"]["block_2p"]))
        log(line("ours la_plaza_teams 4p", report["ours"]["la_plaza_teams_4p"]))
        for key, goal in (("block_2p_hands_ratio", 3.0), ("teams_moves_ratio", 1.0),
                          ("teams_placements_ratio", 1.0)):
            value = report["ratios"][key]
            verdict = "n/a" if value is None else ("ok" if value >= goal else "BELOW GOAL")
            log(f"  {key:<28} {value if value is not None else '-':>10} (goal >= {goal:g}) {verdict}")


def measure_peers(args: argparse.Namespace) -> tuple[dict[str, Any], float]:
    """Set up the peer venv, run both peers, and drop a throwaway venv after."""
    tmp = None if args.venv else Path(tempfile.mkdtemp(prefix="arena-peers-"))
    try:
        python, install_s = ensure_venv(args.venv or tmp / "venv")
        log(f"measuring open_spiel python_block_dominoes for {args.seconds:g}s ...")
        open_spiel = measure_peer(python, OPENSPIEL_SNIPPET, args.seconds, args.seed)
        log(f"measuring dominoes partnership game for {args.seconds:g}s ...")
        dominoes = measure_peer(python, DOMINOES_SNIPPET, args.seconds, args.seed)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return {"open_spiel": open_spiel, "dominoes": dominoes}, install_s


def main(argv: list[str] | None = None) -> int:
    """Measure, print the JSON report on stdout, and return the exit status."""
    args = parse_args(argv)
    try:
        peers, install_s = measure_peers(args)
    except (OSError, subprocess.CalledProcessError) as exc:
        log(f"error: could not set up the peer venv: {exc}")
        return 1
    report: dict[str, Any] = {"seconds": args.seconds, "venv_install_s": round(install_s, 1),
                              "peers": peers}
    if not args.peers_only:
        log(f"measuring our engine (block 2p, la_plaza_teams 4p) for {args.seconds:g}s each ...")
        block = measure_ours("block", 2, args.seconds, args.arena)
        teams = measure_ours("la_plaza_teams", 4, args.seconds, args.arena)
        report["ours"] = {"block_2p": block, "la_plaza_teams_4p": teams}
        report["ratios"] = {
            "block_2p_hands_ratio": ratio(block, peers["open_spiel"], "hands_per_s"),
            # Like for like: our moves include passes, so the peer's automatic passes count as moves too.
            "teams_moves_ratio": ratio(teams, with_passes(peers["dominoes"]), "moves_per_s"),
            # Tiles put down per second on both sides (no passes, no draws).
            "teams_placements_ratio": ratio({"x": teams.get("placements_per_s")}, {"x": peers["dominoes"].get(
                "moves_per_s")}, "x"),
        }
    print(json.dumps(report, indent=2))
    summarize(report)
    failed = [r for r in (*peers.values(), *report.get("ours", {}).values()) if "error" in r]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
