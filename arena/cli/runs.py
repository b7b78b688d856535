"""``arena run``, ``arena replay`` and ``arena export``: a tournament into its run folder, and what is read back
from one."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from arena import guest
from arena.cli.options import require_sandbox
from arena.cluster.options import backend_from, check_backend_arguments
from arena.display import count_text, make_console, safe_name
from arena.errors import ArenaError, UsageError
from arena.futures import until_interrupted as interruptible
from arena.invocation import arena_command
from arena.league.play.folders import league_folder, run_folders
from arena.records.against import print_against, replay_against
from arena.records.dataset import PARQUET_FILES, write_dataset
from arena.records.export import lines_of_file, rows_of_file, save_csv, save_lines, write_csv
from arena.records.html import write_html
from arena.records.replay import RecordError, VerifyReport, check_record_file, find_game, locate, repair_run, verify_run
from arena.records.run_folder import RunFolder
from arena.records.store import RepairReport
from arena.records.terminal import show_game
from arena.tournament.console import print_summary
from arena.tournament.errors import RecordsNotWritten
from arena.tournament.runner import run_tournament
from arena.tournament.spec import TournamentSpec, load_spec, read_spec_text
from arena.tournament.summary import RunSummary
from arena.tournament.workers import check_workers, workers_factory

T = TypeVar("T")


async def until_interrupted(work: Callable[[], Awaitable[T]]) -> T | None:
    """:func:`arena.futures.until_interrupted`, a user's mistake (an ArenaError) raised as its one line."""
    return await interruptible(work, (ArenaError,))


def next_free_folder(run: Path) -> Path:
    """``runs/demo-2``, ``runs/demo-3``, ...: the first that holds no games."""
    number = 2
    while RunFolder(run.with_name(f"{run.name}-{number}")).holds_games():
        number += 1
    return run.with_name(f"{run.name}-{number}")


def cmd_run(args: argparse.Namespace) -> int:
    """``arena run``. Exit status: 0 when every game was played; 1 when a write to the run folder failed (one
    ``error:`` line with the ``--resume`` command) or an entrant was given up on mid-run (named at the end); 2 for a
    tournament that cannot start (a bad file, or an entrant whose bot does not start: one ``error:`` line naming it
    and its log's last lines); 130 when interrupted."""
    spec = load_spec(args.file)
    dialing = [b.name for b in spec.bots if b.dial_in]
    if dialing:
        raise UsageError(f"bot {dialing[0]!r} dials in (dial_in = true): a tournament with dial-in bots runs on an "
                         f"arena server, which they connect to (arena serve, then arena submit {args.file})")
    if any(b.command and not b.builtin for b in spec.bots):
        require_sandbox(spec.sandbox, "sandbox = false in the tournament file")
    if args.concurrency is not None and args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    check_where_games_run(args, spec.concurrency)  # before the folder is touched
    run = Path(args.out or spec.output)
    command = arena_command()
    console = make_console()
    if not args.out and not args.resume and RunFolder(run).holds_games():
        earlier, run = run, next_free_folder(run)
        before = ("a finished run" if RunFolder(earlier).is_finished() else
                  f"an unfinished run (continue that one with: {command} run {shlex.quote(args.file)} --resume)")
        console.print(f"note: {earlier} holds {before}; this run goes to {run}", highlight=False, markup=False,
                      soft_wrap=True)
    if spec.duplicate_off:
        console.print(f"note: {spec.duplicate_off}", highlight=False, markup=False, soft_wrap=True)
    if spec.skipped:
        console.print(f"note: skipping {', '.join(spec.skipped)} (program not installed)", markup=False)
    text = read_spec_text(args.file)
    resume = f"{command} run {shlex.quote(args.file)} --out {shlex.quote(str(run))} --resume" + where_flags(args)
    summary = play_run(args, spec, text, run, resume, console)
    if isinstance(summary, int):
        return summary
    print_summary(summary, console, f"{spec.name}: {spec.variant}, {count_text(summary.recorded, 'game')}", command)
    return 1 if summary.given_up else 0


def where_flags(args: argparse.Namespace) -> str:
    """The flags of where the games run (``--backend``, ``--address``, ``--workers``), for a resume command."""
    flags = ""
    if args.backend != "local":
        flags += f" --backend {args.backend}" + (f" --address {shlex.quote(args.address)}" if args.address else "")
    if args.workers != 1:
        flags += f" --workers {args.workers}"
    return flags


def play_run(args: argparse.Namespace, spec: TournamentSpec, text: str, run: Path, resume: str,
             console: Any) -> RunSummary | int:
    """Play a tournament into its run folder as ``arena run`` does (``args``: its ``--resume``, ``--concurrency``
    and where the games run); the summary, or the exit status of a run that did not finish: 1 when a write to the
    run folder failed (one ``error:`` line with the ``resume`` command), 130 when interrupted."""
    backend = run_backend(args, args.concurrency or spec.concurrency)
    try:
        summary: RunSummary | None = guest.run(
            until_interrupted, lambda: run_tournament(spec, text, run, resume=args.resume, concurrency=args.concurrency,
                                                      console=console, backend=backend))
    except RecordsNotWritten as error:
        for line in error.given_up:
            print(f"warning: {line}", file=sys.stderr)
        print(f"error: {error}; {error.remedy}, then continue with: {resume}", file=sys.stderr)
        return 1
    if summary is None:
        console.print(f"interrupted: every finished game is recorded in {run}; continue with: {resume}",
                      highlight=False, markup=False, soft_wrap=True)
        return 130
    if summary.dropped_bytes:
        console.print(f"resume: dropped a torn last record line ({summary.dropped_bytes} bytes)")
    if summary.resumed_from:
        were = "was" if summary.resumed_from == 1 else "were"
        console.print(f"resume: {count_text(summary.resumed_from, 'game')} {were} already recorded; played "
                      f"{summary.played_now}", highlight=False)
    return summary


def check_where_games_run(args: argparse.Namespace, file_concurrency: int) -> None:
    """``--address`` without ``--backend ray``, or a ``--workers`` count the run cannot use (0, negative, huge, more
    than the games in flight), as one :class:`UsageError` line, before anything is written or started. With
    ``--backend ray`` the count is per node, so it is held to the games in flight as on one machine (a node's N
    actors need N games at once); more actors than games over the whole cluster is only noted in ``arena.log``
    (``actors_idle``), since the cluster's size is known once joined, and changes mid-run."""
    check_backend_arguments(args.backend, args.address)
    if args.workers == 1:
        return
    try:
        check_workers(args.workers, args.concurrency or file_concurrency)
    except ValueError as error:
        raise UsageError(str(error)) from None


def run_backend(args: argparse.Namespace, concurrency: int) -> Any:
    """Where the games are played: this process (None), ``--workers N`` referee processes here, or N actors on
    every node of the Ray cluster joined now (``--backend ray``)."""
    if args.backend == "local" and args.workers != 1:
        return workers_factory(args.workers)
    return backend_from(args.backend, args.address, concurrency, args.workers)


def cmd_replay(args: argparse.Namespace) -> int:
    command = [c for c in (args.against or []) if c != "--"]
    if args.against is not None and not command:
        raise UsageError("expected a bot command after --against -- (e.g. --against -- python bots/python/greedy_bot.py)")
    if sum((args.verify, args.repair, args.game is not None)) > 1:
        raise UsageError("expected one of --verify, --repair or --game ID")
    try:
        if args.verify:
            started = time.perf_counter()
            report = verify_run(args.path, jobs=args.jobs)
            return print_verify(report, args.path, time.perf_counter() - started)
        if args.repair:
            return print_repair(repair_run(args.path))
        if args.game is None:
            raise UsageError("expected --verify, --repair, or --game ID (with --seat K, --step, --html FILE or "
                             "--against)")
        files = locate(args.path)
        record = find_game(files, args.game)
        if args.html:
            write_html(record, Path(args.html))
            print(f"wrote {args.html}")
            return 0
        if command:
            require_sandbox(not args.no_sandbox)
            against = replay_against(record, command, seat=args.seat, startup_s=args.startup_ms / 1000,
                                     move_ms=args.move_ms, sandbox=not args.no_sandbox)
            print_against(against, make_console())
            return 0 if against.ok else 1
        compact = True if args.compact else False if args.full else None
        show_game(record, seat=args.seat, step=args.step, console=make_console(), compact=compact)
        return 0
    except RecordError as error:
        raise UsageError(str(error)) from None


def print_verify(report: VerifyReport, path: str, seconds: float) -> int:
    """Every mismatch, a note for games whose seed is not revealed yet, and the summary; the exit status."""
    console = make_console()
    for mismatch in report.mismatches:
        console.print(f"MISMATCH {mismatch}", highlight=False, markup=False, soft_wrap=True)
    if report.unseeded:
        games = "1 game carries" if report.unseeded == 1 else f"{report.unseeded} games carry"
        console.print(f"note: {games} no seed: it is not revealed until the tournament ends (a game fetched while its "
                      f"tournament runs), so the shuffle of their deals could not be checked; everything else was. "
                      f"Fetch them again once the tournament has finished to check the deals too.", highlight=False,
                      markup=False, soft_wrap=True)
    seed = "deals checked against the revealed master seed" if report.seed_checked else (
        "no revealed master seed (deals checked against each game's own seed"
        + (", where it has one)" if report.unseeded else ")"))
    verdict = "OK" if not report.mismatches else f"{len(report.mismatches)} mismatches"
    rate = report.games / seconds if seconds > 0 else 0.0
    console.print(f"verified {report.games} games, {report.moves} moves in {path}: {verdict}; {seed}; "
                  f"{seconds:.2f} s, {rate:.0f} games/s", highlight=False, markup=False)
    return 0 if not report.mismatches else 1


def print_repair(report: RepairReport) -> int:
    """What ``--repair`` moved, and where to."""
    if not report.moved:
        print(f"nothing to repair: every line of {report.path} is a record ({report.kept} records)")
        return 0
    count = len(report.moved)
    print(f"moved {count} unreadable line{'s' if count != 1 else ''} of {report.path} to {report.side_file} "
          f"(appended, each with its line number and problem); kept {report.kept} records:")
    for number, problem in report.moved:
        print(f"  line {number}: {safe_name(problem, 300)}")
    return 0


def _reading_error(path: str, error: Exception) -> str:
    """The one line of an export that could not read its records: the records' own words, or the OS's."""
    if isinstance(error, OSError):
        return f"{path}: cannot read: {error.strerror or error}"
    return str(error)


def _print_warnings(warnings: Iterable[str]) -> None:
    """The lines an export skipped, one warning each on stderr."""
    for warning in warnings:
        print(f"warning: {safe_name(warning, 2000)}", file=sys.stderr)


def cmd_export(args: argparse.Namespace) -> int:
    """One CSV row per recorded game, or with ``--jsonl`` every record as a JSON line (see
    arena/records/export.py), to stdout or ``--out FILE``, or the games and their decisions as Parquet tables
    (``--parquet DIR``, arena/records/dataset.py); unreadable lines are skipped with a warning on stderr. A server's
    tournament: ``arena games ID --csv``."""
    if args.parquet is not None:
        return export_parquet(args)
    if args.league is not None:
        raise UsageError("--league exports a league's games with --parquet DIR")
    try:
        files = locate(args.path)
        if args.jsonl:
            lines, report = lines_of_file(files.records)
        else:
            report = rows_of_file(files.records)
        check_record_file(files, report.read)  # a tournament file given by mistake: one line, not one per line
    except (RecordError, OSError) as error:
        raise UsageError(_reading_error(args.path, error)) from None
    _print_warnings(report.warnings)
    if args.out:
        count = save_lines(lines, args.out) if args.jsonl else save_csv(report.rows, args.out)
        print(f"wrote {count} games to {args.out}", file=sys.stderr)
        return 0
    try:
        if args.jsonl:
            sys.stdout.buffer.writelines(lines)
        else:
            write_csv(report.rows, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # the output went to a pipe that closed (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def export_parquet(args: argparse.Namespace) -> int:
    """``arena export RUN --parquet DIR``, or every run of a league (``arena export DATA --league NAME --parquet
    DIR``: its ladder's tables, challenges and finals, each named in the ``run`` column by its folder)."""
    if args.out:
        raise UsageError("--out is for --csv or --jsonl; --parquet names its folder itself")
    if args.league is None:
        sources = [(".", Path(args.path))]
    else:
        folder = league_folder(Path(args.path), args.league)
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder (is {args.path} a server's --data folder, and "
                             f"{args.league!r} one of its leagues?)")
        sources = run_folders(folder)
        if not sources:
            raise UsageError(f"{folder}: the league has no recorded games yet")
    try:
        report = write_dataset(sources, args.parquet)
    except (RecordError, OSError) as error:
        raise UsageError(_reading_error(args.path, error)) from None
    _print_warnings(report.warnings)
    beliefs = f" with {report.beliefs} tiles of beliefs" if report.beliefs else ""
    print(f"wrote {report.games} games and {report.decisions} decisions{beliefs} to {args.parquet} "
          f"({', '.join(PARQUET_FILES)})", file=sys.stderr)
    return 0


