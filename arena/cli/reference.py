"""``arena reference`` and ``arena gauntlet --reference``: the reference scale made, and a bot placed on it
(:mod:`arena.tournament.reference`)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.cli.options import options_from, require_sandbox
from arena.cli.runs import check_where_games_run, play_run, where_flags
from arena.display import make_console
from arena.errors import UsageError
from arena.invocation import arena_command
from arena.players.specs import program_name
from arena.records.run_folder import RunFolder
from arena.rules import new_game
from arena.tournament.console import print_summary
from arena.tournament.reference import (
    ANCHOR,
    REFERENCE_KINDS,
    Placement,
    Scale,
    extension_file,
    gauntlet_file,
    interval_text,
    placement,
    playable,
    published_scale,
    read_scale_file,
    round_robin_file,
    scale_file_name,
    scale_of,
    standings_of_runs,
    unavailable,
    within,
    write_scale,
)
from arena.tournament.spec import spec_from_dict
from arena.tournament.summary import RunSummary


def cmd_reference(args: argparse.Namespace) -> int:
    """``arena reference VARIANT``: the round robin of the reference players, then their scale (written to
    ``--write``, by default beside the run folder); with ``--add KINDS --base RUN``, the added players' games
    against those of an earlier round robin and one another, then the scale of them all from both runs."""
    options = options_from(args)
    game = new_game(args.variant, args.players, options)
    positive("--deal-sets", args.deal_sets)
    name = scale_file_name(args.variant, game.players).removesuffix(".json")
    command = (f"{arena_command()} reference {args.variant} --players {game.players}{option_flags(options)} "
               f"--deal-sets {args.deal_sets}")
    if args.add:
        if not args.base:
            raise UsageError("--add needs --base, the run folder of the round robin to extend")
        added = kinds_of(args.add)
        refuse_unavailable(added)
        base = Path(args.base)
        rated = entrants_of(base)
        run = Path(args.out or f"{base}-extended")
        text = extension_file(args.variant, game.players, options, rated, added, args.deal_sets, str(run), args.seed)
        command = (f"{base_command(base, args.variant, game.players, rated)} --out {shlex.quote(str(base))}\n"
                   f"{command} --add {','.join(added)} --base {shlex.quote(str(base))}")  # one command a line
        folders = [base, run]
    else:
        kinds = kinds_of(args.kinds) if args.kinds else REFERENCE_KINDS
        if ANCHOR not in kinds:
            raise UsageError(f"--kinds must include {ANCHOR}, the scale's 0")
        refuse_unavailable(kinds)
        run = Path(args.out or f"runs/reference-{name}")
        text = round_robin_file(args.variant, game.players, options, args.deal_sets, str(run), args.seed, kinds)
        if args.kinds:
            command += f" --kinds {','.join(kinds)}"
        folders = [run]
    summary = play(args, text, run, command)
    if isinstance(summary, int):
        return summary
    assert summary.standings is not None and summary.seed is not None
    standings = summary.standings if len(folders) == 1 else standings_of_runs(folders, summary.standings.group_size)
    scale = scale_of(standings.fit(), args.variant, game.players, options, args.deal_sets, summary.seed.seed,
                     f"{command} --seed {shlex.quote(summary.seed.seed)}")
    target = Path(args.write or run.with_suffix(".json"))
    write_scale(scale, target)
    print_scale(scale)
    print(f"scale written to {target}")
    return 0


def refuse_unavailable(kinds: tuple[str, ...]) -> None:
    missing = unavailable(kinds)
    if missing:
        kind, why = next(iter(missing.items()))
        raise UsageError(f"the reference player {kind} cannot be played here: {why} (or leave it out with --kinds)")


def base_command(base: Path, variant: str, players: int, rated: tuple[str, ...]) -> str:
    """The command that played the round robin of ``base`` again (its deal sets, players and revealed seed)."""
    folder = RunFolder(base)
    if not folder.is_finished():
        raise UsageError(f"{base}: the round robin to extend has not finished (its seed is not revealed): finish it "
                         f"with --resume first")
    spec = tomllib.loads(folder.spec_copy.read_text())
    kinds = "" if rated == REFERENCE_KINDS else f" --kinds {','.join(rated)}"
    return (f"{arena_command()} reference {variant} --players {players}{option_flags(spec.get('options', {}))} "
            f"--deal-sets {spec['games']}{kinds} "
            f"--seed {shlex.quote(folder.revealed_seed())}")


def option_flags(options: Mapping[str, Any]) -> str:
    """The ``--option`` flags that give ``options`` again, for the command a scale keeps."""
    return "".join(f" --option {key}={str(value).lower() if isinstance(value, bool) else value}"
                   for key, value in options.items())


def kinds_of(text: str) -> tuple[str, ...]:
    return tuple(kind.strip() for kind in text.split(",") if kind.strip())


def entrants_of(run: Path) -> tuple[str, ...]:
    """The entrants a run folder's tournament was started with (refused in a line when it holds none)."""
    try:
        return tuple(json.loads(RunFolder(run).entrants.read_text())["entrants"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UsageError(f"{run}: not a run folder of a round robin to extend ({error})") from None


def cmd_gauntlet(args: argparse.Namespace) -> int:
    """``arena gauntlet --reference VARIANT -- COMMAND``: the bot against every reference player, then its rating
    on the scale."""
    if not args.command:
        raise UsageError("give the bot's command after --, e.g. arena gauntlet --reference draw -- python bot.py")
    positive("--deal-sets", args.deal_sets)
    scale = read_scale_file(Path(args.scale)) if args.scale else published_scale(args.reference, args.players)
    scale, left_out = playable(scale)
    if left_out:
        print(f"note: without {', '.join(left_out)}: {unavailable(left_out)[left_out[0]]}", file=sys.stderr)
    command = list(args.command[1:] if args.command[0] == "--" else args.command)
    name = args.name or program_name(shlex.join(command))
    run = Path(args.out or f"runs/gauntlet-{args.reference}-{name}")
    text = gauntlet_file(scale, name, command, args.deal_sets, str(run), args.seed)
    require_sandbox(True, "the candidate bot")
    summary = play(args, text, run, f"{arena_command()} gauntlet --reference {args.reference} "
                   f"--deal-sets {args.deal_sets} --name {shlex.quote(name)} -- {shlex.join(command)}")
    if isinstance(summary, int):
        return summary
    assert summary.standings is not None
    placed = placement(summary.standings.deal_set_results, scale, name)
    print_placement(placed, scale)
    return 1 if summary.given_up else 0


def play(args: argparse.Namespace, text: str, run: Path, command: str) -> RunSummary | int:
    """The generated tournament played into ``run`` as ``arena run`` plays a file; its standings printed."""
    spec = spec_from_dict(tomllib.loads(text))
    check_where_games_run(args, spec.concurrency)
    console = make_console()
    resume = f"{command} --out {shlex.quote(str(run))} --resume" + where_flags(args)
    summary = play_run(args, spec, text, run, resume, console)
    if not isinstance(summary, int):
        print_summary(summary, console, f"{spec.name}: {summary.recorded} games", arena_command())
    return summary


def positive(flag: str, value: int) -> None:
    if value < 1:
        raise UsageError(f"{flag} must be at least 1, got {value}")


def print_scale(scale: Scale) -> None:
    print(f"reference scale of {scale.variant}, {scale.players} players (Elo above random, 95% interval, deal sets)")
    for point in scale.points:
        print(f"  {point.name:<12} {point.elo:+7.0f}  {interval_text(point.low, point.high):<16} {point.deal_sets:>6,}")


def print_placement(placed: Placement, scale: Scale) -> None:
    near = [point.name for point in scale.points if within(placed, point)]
    print(f"{placed.name} on the {scale.variant} reference scale: {placed.elo:+.0f} Elo "
          f"{interval_text(placed.low, placed.high)} above random, from {placed.deal_sets} deal sets"
          + (f"; not told apart from {', '.join(near)}" if near else ""))


