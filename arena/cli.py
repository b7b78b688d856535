"""The ``arena`` command: one entry point, one subcommand per job.

Errors a user can cause (an unknown variant, a bad option) print one line ``error: ...`` and exit with status 2;
nothing a user types produces a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .cluster.options import add_backend_arguments, backend_from
from .display import safe_name
from .rules import VARIANTS, RulesError, new_game
from .server.cli import add_server_commands

EXIT_USAGE = 2


def make_console() -> Console:
    """A console that keeps tables readable when output goes to a file or a pipe (no terminal width)."""
    console = Console()
    return console if console.is_terminal else Console(width=120)


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as an integer, true/false, or else text."""
    if "=" not in text:
        raise RulesError(f"expected an option like target=50, got {text!r}")
    key, raw = (part.strip() for part in text.split("=", 1))
    value: Any = raw
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            pass
    return key, value


def options_from(args: argparse.Namespace) -> dict[str, Any]:
    return dict(parse_option(o) for o in args.option or [])


# --- arena variants ------------------------------------------------------------------------------------------


def cmd_variants(args: argparse.Namespace) -> int:
    facts = [cls.describe() for cls in VARIANTS.values()]
    if args.json:
        print(json.dumps(facts, indent=2))
        return 0
    table = Table(title="Variants", show_lines=True)
    table.add_column("variant")
    table.add_column("players")
    table.add_column("options (default; allowed)")
    for fact in facts:
        opts = "\n".join(f"{o['name']} = {o['default']}  ({o['allowed']}): {o['doc']}" for o in fact["options"])
        players = ", ".join(map(str, fact["players"])) + (" (teams)" if fact["teams"] else "")
        table.add_row(f"{fact['name']}\n{fact['title']}", players, opts or "-")
    make_console().print(table)
    return 0


# --- arena simulate ------------------------------------------------------------------------------------------


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate

    game = new_game(args.variant, args.players, options_from(args))
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    kinds = [kinds[i % len(kinds)] for i in range(game.players)]
    sim = simulate(game, kinds, args.games, args.seed)
    console = make_console()
    console.print(f"[bold]{game.title}[/], {game.players} players, options {game.options}")
    for i, m in enumerate(sim.matches, 1):
        result = f"winner {m.winner}" if m.winner else "drawn match"
        console.print(f"match {i} (seed {m.seed}): seats {', '.join(m.seats)}; {m.rounds} rounds; "
                      f"scores {list(m.scores)}; {result}")
    table = Table(title=f"{args.games} matches of {game.name}")
    for column in ("entrant", "matches", "wins", "draws", "losses", "points"):
        table.add_column(column, justify="left" if column == "entrant" else "right")
    for t in sorted(sim.tallies, key=lambda t: (-t.wins, t.name)):
        table.add_row(t.name, str(t.matches), str(t.wins), str(t.draws), str(t.losses), str(t.points))
    console.print(table)
    return 0


# --- arena play and check-bot ------------------------------------------------------------------------------


def time_control_from(args: argparse.Namespace):
    from .referee import TimeControl, grace_problem

    for name in ("move_ms", "bank_ms", "startup_ms", "first_move_ms"):
        if getattr(args, name) < 0:
            raise RulesError(f"--{name.replace('_', '-')} must be non-negative, got {getattr(args, name)}")
    problem = grace_problem(args.grace_ms)
    if problem:
        raise RulesError(f"--grace-ms {problem}")
    return TimeControl(move_ms=args.move_ms, bank_ms=args.bank_ms, grace_ms=args.grace_ms,
                       first_move_ms=args.first_move_ms)


def log_dir_from(args: argparse.Namespace) -> Path:
    import tempfile

    return Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="arena-logs-"))


def sandbox_from(args: argparse.Namespace, enabled: bool | None = None) -> tuple[bool, Any]:
    """Whether bots run sandboxed, and their limits, from ``--no-sandbox`` and the limit options. Refuses (one line
    naming the missing piece and the opt-out) when the sandbox cannot be made here; warns on the opt-out."""
    from .sandbox import Limits, limits_from_table

    sandbox = not args.no_sandbox if enabled is None else enabled
    require_sandbox(sandbox)
    given = {key: getattr(args, key) for key in ("memory_mb", "pids", "log_mb", "tmp_mb", "cpus")
             if getattr(args, key, None) is not None}
    limits = limits_from_table(given, Limits(), where="--")
    return sandbox, limits


def require_sandbox(sandbox: bool, opt_out: str = "--no-sandbox") -> None:
    from .sandbox import SandboxUnavailable, host

    if not sandbox:
        print(f"warning: bots run without a sandbox ({opt_out}): each can read and do whatever the arena's user can",
              file=sys.stderr)
        return
    try:
        host().require_sandbox()
    except SandboxUnavailable as error:
        raise RulesError(str(error)) from None


def cmd_play(args: argparse.Namespace) -> int:
    import trio

    from .play import play_once, print_record

    game = new_game(args.variant, args.players, options_from(args))
    sandbox, limits = sandbox_from(args)
    log_dir = log_dir_from(args)
    record = trio.run(play_once, game, args.bots, args.seed, time_control_from(args), log_dir,
                      args.startup_ms / 1000, sandbox, limits, args.transport, args.protocol)
    print_record(record, game)
    print(f"bot logs: {log_dir}")
    return 1 if record.faults else 0


def cmd_check_bot(args: argparse.Namespace) -> int:
    import trio

    from .check_bot import check_bot
    from .players.process import BotSpec

    command = [c for c in args.command if c != "--"]
    if bool(command) == bool(args.address):
        raise RulesError("expected a bot command after -- or --address ADDR (exactly one)")
    sandbox, limits = sandbox_from(args)
    spec = BotSpec(name="bot", command=tuple(command), address=args.address, sandbox=sandbox, limits=limits,
                   transport=args.transport, protocol=args.protocol)
    log_dir = log_dir_from(args)
    variants = [v.strip() for v in args.variants.split(",")] if args.variants else None
    for v in variants or []:
        if v not in VARIANTS:
            raise RulesError(f"unknown variant {v!r}; valid variants: {', '.join(VARIANTS)}")
    report = trio.run(check_bot, spec, args.matches, time_control_from(args), args.startup_ms / 1000, log_dir,
                      variants)
    console = make_console()
    console.print(f"bot: {report.bot}")
    if report.start_fault:
        console.print(f"[bold red]FAIL[/] {escape(safe_name(report.start_fault, 2000))}")
        console.print(f"bot log: {log_dir}")
        return 1
    console.print(f"handshake: {escape(report.hello)}; started in {report.startup_ms:.0f} ms", highlight=False)
    if report.containment:
        console.print(f"containment: {report.containment}", highlight=False)
    table = Table(title="compliance")
    for column in ("variant", "players", "result", "matches", "decisions", "median ms", "worst ms", "faults"):
        table.add_column(column)
    for v in report.variants:
        table.add_row(v.variant, str(v.players), "[green]PASS[/]" if v.passed else "[red]FAIL[/]", str(v.matches),
                      str(v.decisions), f"{v.median_ms:.2f}" if v.median_ms is not None else "-",
                      f"{v.worst_ms:.2f}" if v.worst_ms is not None else "-",
                      "\n".join(escape(safe_name(f, 400)) for f in v.faults) or "-")
    console.print(table)
    console.print("[bold green]PASS[/]" if report.passed else "[bold red]FAIL[/]")
    console.print(f"bot log: {log_dir}")
    return 0 if report.passed else 1


# --- arena run ------------------------------------------------------------------------------------------------


async def until_interrupted(work):
    """Run ``work()`` until it returns or SIGINT/SIGTERM arrives; on a signal, cancel it cleanly (bots are stopped,
    records stay whole) and return None. Not KeyboardInterrupt: that can land inside grpc and leave it stuck."""
    import signal

    import trio

    outcome: dict[str, object] = {}
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            async def run_work() -> None:
                try:
                    outcome["result"] = await work()
                except RulesError as error:  # a user's mistake: one line, not an exception group
                    outcome["error"] = error
                nursery.cancel_scope.cancel()

            async def watch_signals() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(run_work)
            nursery.start_soon(watch_signals)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome.get("result")


def holds_games(run: Path) -> bool:
    records = run / "games.jsonl"
    return records.exists() and records.stat().st_size > 0


def next_free_folder(run: Path) -> Path:
    """``runs/demo-2``, ``runs/demo-3``, ...: the first that holds no games."""
    number = 2
    while holds_games(run.with_name(f"{run.name}-{number}")):
        number += 1
    return run.with_name(f"{run.name}-{number}")


def cmd_run(args: argparse.Namespace) -> int:
    """``arena run``. Exit status: 0 when every game was played; 1 when a write to the run folder failed (one
    ``error:`` line with the ``--resume`` command) or an entrant was given up on mid-run (named at the end); 2 for a
    tournament that cannot start (a bad file, or an entrant whose bot does not start: one ``error:`` line naming it
    and its log's last lines); 130 when interrupted."""
    import shlex

    import trio

    from .tournament.runner import (RecordsNotWritten, arena_command, count_text, is_finished, print_summary,
                                    run_tournament)
    from .tournament.spec import load_spec, read_spec_text

    spec = load_spec(args.file)
    if any(b.command for b in spec.bots):
        require_sandbox(spec.sandbox, "sandbox = false in the tournament file")
    if args.concurrency is not None and args.concurrency < 1:
        raise RulesError(f"--concurrency must be at least 1, got {args.concurrency}")
    run = Path(args.out or spec.output)
    command = arena_command()
    console = make_console()
    if not args.out and not args.resume and holds_games(run):
        earlier, run = run, next_free_folder(run)
        before = ("a finished run" if is_finished(earlier) else
                  f"an unfinished run (continue that one with: {command} run {shlex.quote(args.file)} --resume)")
        console.print(f"note: {earlier} holds {before}; this run goes to {run}", highlight=False, markup=False,
                      soft_wrap=True)
    if spec.skipped:
        console.print(f"note: skipping {', '.join(spec.skipped)} (program not installed)", markup=False)
    text = read_spec_text(args.file)
    resume = f"{command} run {shlex.quote(args.file)} --out {shlex.quote(str(run))} --resume"
    if args.backend != "local":
        resume += f" --backend {args.backend}" + (f" --address {shlex.quote(args.address)}" if args.address else "")
    backend = backend_from(args.backend, args.address, args.concurrency or spec.concurrency)
    try:
        summary = trio.run(until_interrupted, lambda: run_tournament(spec, text, run, resume=args.resume,
                                                                      concurrency=args.concurrency, console=console,
                                                                      backend=backend))
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
    print_summary(summary, console, f"{spec.name}: {spec.variant}, {count_text(summary.recorded, 'game')}", command)
    return 1 if summary.given_up else 0


# --- arena replay ---------------------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    from .records.replay import RecordError, find_game, locate, repair_run, verify_run

    command = [c for c in (args.against or []) if c != "--"]
    if args.against is not None and not command:
        raise RulesError("expected a bot command after --against -- (e.g. --against -- python bots/python/greedy_bot.py)")
    if sum((args.verify, args.repair, args.game is not None)) > 1:
        raise RulesError("expected one of --verify, --repair or --game ID")
    try:
        if args.verify:
            import time

            started = time.perf_counter()
            report = verify_run(args.path, jobs=args.jobs)
            return print_verify(report, args.path, time.perf_counter() - started)
        if args.repair:
            return print_repair(repair_run(args.path))
        if args.game is None:
            raise RulesError("expected --verify, --repair, or --game ID (with --seat K, --step, --html FILE or "
                             "--against)")
        files = locate(args.path)
        record = find_game(files, args.game)
        if args.html:
            from .records.html import write_html

            write_html(record, Path(args.html))
            print(f"wrote {args.html}")
            return 0
        if command:
            from .records.against import replay_against, print_against

            require_sandbox(not args.no_sandbox)
            report = replay_against(record, command, seat=args.seat, startup_s=args.startup_ms / 1000,
                                    move_ms=args.move_ms, sandbox=not args.no_sandbox)
            print_against(report, make_console())
            return 0 if report.ok else 1
        from .records.terminal import show_game

        compact = True if args.compact else False if args.full else None
        show_game(record, seat=args.seat, step=args.step, console=make_console(), compact=compact)
        return 0
    except RecordError as error:
        raise RulesError(str(error)) from None


def print_verify(report, path: str, seconds: float) -> int:
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


def print_repair(report) -> int:
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


# --- arena export ---------------------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    """One CSV row per recorded game (see arena/records/export.py), to stdout or ``--out FILE``; unreadable lines
    are skipped with a warning on stderr. A server's tournament: ``arena games ID --csv``."""
    import os

    from .records.export import rows_of_file, save_csv, write_csv
    from .records.replay import RecordError, check_record_file, locate

    try:
        files = locate(args.path)
        report = rows_of_file(files.records)
        check_record_file(files, report.read)  # a tournament file given by mistake: one line, not one per line
    except RecordError as error:
        raise RulesError(str(error)) from None
    except OSError as error:
        raise RulesError(f"{args.path}: cannot read: {error.strerror or error}") from None
    for warning in report.warnings:
        print(f"warning: {safe_name(warning, 2000)}", file=sys.stderr)
    if args.out:
        print(f"wrote {save_csv(report.rows, args.out)} games to {args.out}", file=sys.stderr)
        return 0
    try:
        write_csv(report.rows, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # the output went to a pipe that closed (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


# --- arena bench ---------------------------------------------------------------------------------------------


def cmd_bench_engine(args: argparse.Namespace) -> int:
    from .benchmarks import bench_engine

    print(json.dumps(bench_engine(args.variant, args.players, args.seconds, args.seed, options_from(args))))
    return 0


def bench_sandboxes(choice: str) -> tuple[bool, ...]:
    """``both`` (the default: without, then with, in one run), ``on`` or ``off``."""
    sandboxes = {"both": (False, True), "on": (True,), "off": (False,)}[choice]
    if True in sandboxes:
        require_sandbox(True)
    return sandboxes


def cmd_bench_protocol(args: argparse.Namespace) -> int:
    import shlex

    import trio

    from .benchmarks import bench_protocol

    command = shlex.split(args.bot) if args.bot else [sys.executable, "bots/python/random_bot.py"]
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    sandboxes = bench_sandboxes(args.sandbox)
    print(json.dumps(trio.run(bench_protocol, command, args.seconds, concurrencies, sandboxes), indent=2))
    return 0


def cmd_bench_tournament(args: argparse.Namespace) -> int:
    import shlex

    from .benchmarks import bench_tournament

    bot = shlex.split(args.bot) if args.bot else [sys.executable, str(Path("bots/python/random_bot.py").resolve())]
    sizes = [int(g) for g in args.games.split(",")]
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    print(json.dumps(bench_tournament(sizes, concurrencies, bot, bench_sandboxes(args.sandbox)), indent=2))
    return 0


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (argparse turns the error into a usage line, exit status 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def cmd_bench_search(args: argparse.Namespace) -> int:
    from .bench_search import DEFAULT_CASES, bench_search

    cases = tuple(case for case in DEFAULT_CASES if not args.variant or case[0] in args.variant)
    print(json.dumps(bench_search(cases, move_ms=args.move_ms, decisions=args.decisions), indent=2))
    return 0


def cmd_bench_records(args: argparse.Namespace) -> int:
    from .benchmarks import bench_records

    print(json.dumps(bench_records(args.games, args.verify_games, args.jobs), indent=2))
    return 0


def cmd_bench_cluster(args: argparse.Namespace) -> int:
    from .cluster import require_ray
    from .cluster.bench import bench_cluster

    require_ray()
    nodes = [int(n) for n in args.nodes.split(",") if n.strip().isdigit()]
    if len(nodes) != len(args.nodes.split(",")) or min(nodes) < 1:
        raise RulesError(f"--nodes must be cluster sizes of at least 1, comma-separated, got {args.nodes!r}")
    if min(args.games, args.quick_games) < 2 or args.slots < 1 or args.sleep_ms < 0:
        raise RulesError(f"expected --games and --quick-games of at least 2, --slots of at least 1 and --sleep-ms of "
                         f"at least 0, got {args.games}, {args.quick_games}, {args.slots} and {args.sleep_ms}")
    sandbox = bench_sandboxes(args.sandbox)[0]
    print(json.dumps(bench_cluster(args.games, args.quick_games, nodes, args.sleep_ms, args.slots, sandbox),
                     indent=2))
    return 0


# --- the parser ----------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description="A tournament arena for dominoes bots.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("variants", help="list every variant with its player counts and options")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_variants)

    p = sub.add_parser("simulate", help="play matches in-process between built-in players")
    add_game_arguments(p)
    p.add_argument("--games", type=int, default=10, help="matches to play (default 10)")
    p.add_argument("--seed", type=int, default=1, help="seed of the first match; match g uses seed + g")
    p.add_argument("--bots", default="greedy,random",
                   help="built-in players, comma-separated, cycled over the seats (random, greedy)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("play", help="one match between bots (commands, addresses, or builtin:random)")
    add_game_arguments(p)
    p.add_argument("bots", nargs="+", metavar="BOT",
                   help="a command in quotes ('python bots/python/random_bot.py'), an address (127.0.0.1:50051, "
                        "unix:/path), or builtin:random / builtin:greedy; cycled over the seats")
    p.add_argument("--seed", default="1", help="the match seed (default 1)")
    add_time_arguments(p)
    add_sandbox_arguments(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("check-bot", help="compliance run of a bot: handshake, quick matches of every variant")
    p.add_argument("--address", help="check an already-running bot at this address instead of a command")
    p.add_argument("--matches", type=int, default=2, help="matches per variant (default 2)")
    p.add_argument("--variants", help="comma-separated variants to check (default: all the bot claims)")
    add_time_arguments(p)
    add_sandbox_arguments(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ... to start the bot")
    p.set_defaults(func=cmd_check_bot)

    p = sub.add_parser("run", help="run a tournament file (round robin, records, standings)")
    p.add_argument("file", help="a tournament file (TOML), e.g. tournaments/demo.toml")
    p.add_argument("--out", help="the run folder (default: the file's 'output')")
    p.add_argument("--concurrency", type=int, help="games at once (default: the file's 'concurrency')")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run in the same folder")
    add_backend_arguments(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="verify records, or show a recorded game (terminal, HTML, against a bot)")
    p.add_argument("path", help="a run folder or a record file (games.jsonl)")
    p.add_argument("--verify", action="store_true", help="re-simulate every game and report every mismatch")
    p.add_argument("--jobs", type=int, default=None, help="processes for --verify (default: one per core)")
    p.add_argument("--repair", action="store_true",
                   help="move every unreadable line of the record file to games.rejected.jsonl beside it (appended, "
                        "with its line number) and keep the rest")
    p.add_argument("--game", type=int, help="the game's index in the schedule")
    p.add_argument("--seat", type=int, help="show only what this seat knew at each moment")
    p.add_argument("--step", action="store_true", help="wait for a key between moves (on a terminal)")
    layout = p.add_mutually_exclusive_group()
    layout.add_argument("--full", action="store_true",
                        help="the layout and every hand after each move (the default on a terminal)")
    layout.add_argument("--compact", action="store_true",
                        help="one line a move, the layout at round ends (the default when the output is not a "
                             "terminal)")
    p.add_argument("--html", help="write a self-contained HTML viewer of the game to this file")
    p.add_argument("--move-ms", type=int, default=2000, help="with --against: time per decision (default 2000)")
    p.add_argument("--startup-ms", type=int, default=15000, help="with --against: time to start the bot")
    p.add_argument("--no-sandbox", action="store_true", help="with --against: run the bot without a sandbox")
    p.add_argument("--against", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help="replay the game to a bot (its command after --, last on the line) and report where its "
                        "choices differ")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("export", help="results for spreadsheets and scripts: one CSV row per game")
    p.add_argument("path", metavar="RUN", help="a run folder or a record file (games.jsonl)")
    p.add_argument("--csv", action="store_true", required=True,
                   help="CSV with a header: index, deal_key, rotation, seats, seed, scores, winner, ranking, faults, "
                        "duration_s (the only format; a server's tournament: arena games ID --csv)")
    p.add_argument("--out", metavar="FILE", help="write to this file instead of stdout")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("bench", help="benchmarks that print numbers")
    bench = p.add_subparsers(dest="bench", required=True, metavar="WHAT")
    b = bench.add_parser("engine", help="random-playout hands/s and moves/s of the rules engine (JSON)")
    add_game_arguments(b)
    b.add_argument("--seconds", type=float, default=5.0)
    b.add_argument("--seed", type=int, default=1)
    b.set_defaults(func=cmd_bench_engine)
    b = bench.add_parser("protocol", help="referee decisions/s against a bot next to plain gRPC ping-pong (JSON)")
    b.add_argument("--bot", help="the bot command (default: the random Python bot)")
    b.add_argument("--seconds", type=float, default=5.0, help="seconds per measurement")
    b.add_argument("--concurrency", default="1,16", help="comma-separated concurrent matches (default 1,16)")
    add_bench_sandbox_argument(b)
    b.set_defaults(func=cmd_bench_protocol)
    b = bench.add_parser("tournament", help="games/s and peak memory of quick tournaments (JSON)")
    b.add_argument("--games", default="1000,10000", help="tournament sizes (default 1000,10000)")
    b.add_argument("--concurrency", default="1,4,16", help="concurrent games (default 1,4,16)")
    b.add_argument("--bot", help="the bot command (default: the random Python bot)")
    add_bench_sandbox_argument(b)
    b.set_defaults(func=cmd_bench_tournament)
    b = bench.add_parser("records", help="record bytes per game for every variant, and --verify games/s (JSON)")
    b.add_argument("--games", type=int, default=50, help="games per variant for the sizes (default 50)")
    b.add_argument("--verify-games", type=int, default=3000, help="Draw games to verify (default 3000)")
    b.add_argument("--jobs", type=int, default=None, help="processes for verification (default: one per core)")
    b.set_defaults(func=cmd_bench_records)
    b = bench.add_parser("cluster", help="games/s in-process and through Ray, and games/s against the nodes of a "
                                         "local Ray cluster (JSON; the ray extra)")
    b.add_argument("--games", type=int, default=48, help="games per cluster size (default 48)")
    b.add_argument("--quick-games", type=int, default=200,
                   help="games of the in-process and Ray comparison, between random bots (default 200)")
    b.add_argument("--nodes", default="1,2,4", help="comma-separated cluster sizes (default 1,2,4)")
    b.add_argument("--sleep-ms", type=int, default=50, help="the sleepy bots' time per decision (default 50)")
    b.add_argument("--slots", type=int, default=4, help="games at once per node (default 4)")
    add_bench_sandbox_argument(b, both=False)
    b.set_defaults(func=cmd_bench_cluster)
    b = bench.add_parser("search", help="the search bot's decisions/s and playouts per decision at a move time (JSON)")
    b.add_argument("--move-ms", type=positive_int, default=100, help="the move time (default 100; it thinks half)")
    b.add_argument("--decisions", type=positive_int, default=200, help="decisions per variant (default 200)")
    b.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="only this variant (repeatable)")
    b.set_defaults(func=cmd_bench_search)
    add_server_commands(sub)
    return parser


def add_bench_sandbox_argument(p: argparse.ArgumentParser, both: bool = True) -> None:
    if not both:
        p.add_argument("--sandbox", choices=("on", "off"), default="on", help="bots sandboxed (default on) or not")
        return
    p.add_argument("--sandbox", choices=("both", "on", "off"), default="both",
                   help="measure bots without and with the sandbox in one run (default both), or one of them")


def add_sandbox_arguments(p: argparse.ArgumentParser) -> None:
    from .sandbox import Limits

    d = Limits()
    p.add_argument("--no-sandbox", action="store_true",
                   help="run the bots without a sandbox (they can do whatever your user can)")
    p.add_argument("--memory-mb", type=int, help=f"memory per bot in MiB (default {d.memory_mb})")
    p.add_argument("--pids", type=int, help=f"processes and threads per bot (default {d.pids})")
    p.add_argument("--log-mb", type=int, help=f"log kept per bot in MiB (default {d.log_mb})")
    p.add_argument("--tmp-mb", type=int, help=f"size of each bot's /tmp in MiB (default {d.tmp_mb})")
    p.add_argument("--cpus", type=float, help=f"CPU per bot, in cores (default {d.cpus:g})")
    p.add_argument("--transport", choices=("unix", "tcp"), default="unix",
                   help="where a started bot listens: a Unix socket (default), or a loopback TCP port for runtimes "
                        "without Unix sockets")
    p.add_argument("--protocol", choices=("grpc", "stdio"), default="grpc",
                   help="how a started bot talks: gRPC (default), or JSON lines on stdin and stdout")


def add_time_arguments(p: argparse.ArgumentParser) -> None:
    from .referee import GRACE_MS, MAX_GRACE_MS

    p.add_argument("--move-ms", type=int, default=2000, help="time per move in ms (default 2000)")
    p.add_argument("--bank-ms", type=int, default=0, help="extra time bank per seat per match in ms (default 0)")
    p.add_argument("--startup-ms", type=int, default=15000, help="time for a bot to start and answer (default 15000)")
    p.add_argument("--first-move-ms", type=int, default=0,
                   help="time for each seat's first decision of a match, when more than --move-ms (runtimes that "
                        "warm up, such as the JVM; default 0: none)")
    p.add_argument("--grace-ms", type=int, default=GRACE_MS,
                   help=f"ms added to every deadline for the reply's way back, 0 to {MAX_GRACE_MS} "
                        f"(default {GRACE_MS})")
    p.add_argument("--log-dir", help="folder for the bots' logs (default: a new temporary folder)")


def add_game_arguments(p: argparse.ArgumentParser, options: bool = True) -> None:
    p.add_argument("--variant", default="draw", help=f"one of {', '.join(VARIANTS)} (default draw)")
    p.add_argument("--players", type=int, default=None, help="player count (default: the variant's usual)")
    if options:
        p.add_argument("--option", action="append", metavar="KEY=VALUE", help="a variant option; repeatable")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--against" in argv:
        # argparse never gives `--` to an option that takes the rest of the line; `--against -- CMD` is documented.
        at = argv.index("--against")
        if argv[at + 1:at + 2] == ["--"]:
            del argv[at + 1]
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RulesError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
