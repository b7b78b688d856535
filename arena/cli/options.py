"""The options several commands share (a game, time limits, the sandbox) and what they turn into: each flag is
defined once here, so ``simulate``, ``play``, ``check-bot``, ``replay`` and ``bench`` spell them alike."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from arena.errors import UsageError
from arena.rules import VARIANTS
from arena.sandbox import Limits, SandboxUnavailable, host, limits_from_table
from arena.time_control import GRACE_MS, MAX_GRACE_MS, TimeControl, grace_problem


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` with the value read as an integer, true/false, or else text."""
    if "=" not in text:
        raise UsageError(f"expected an option like target=50, got {text!r}")
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


def time_control_from(args: argparse.Namespace) -> TimeControl:
    for name in ("move_ms", "bank_ms", "startup_ms", "first_move_ms"):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be non-negative, got {getattr(args, name)}")
    problem = grace_problem(args.grace_ms)
    if problem:
        raise UsageError(f"--grace-ms {problem}")
    return TimeControl(move_ms=args.move_ms, bank_ms=args.bank_ms, grace_ms=args.grace_ms,
                       first_move_ms=args.first_move_ms)


def log_dir_from(args: argparse.Namespace) -> Path:
    return Path(args.log_dir) if args.log_dir else Path(tempfile.mkdtemp(prefix="arena-logs-"))


def sandbox_from(args: argparse.Namespace, enabled: bool | None = None) -> tuple[bool, Any]:
    """Whether bots run sandboxed, and their limits, from ``--no-sandbox`` and the limit options. Refuses (one line
    naming the missing piece and the opt-out) when the sandbox cannot be made here; warns on the opt-out."""
    sandbox = not args.no_sandbox if enabled is None else enabled
    require_sandbox(sandbox)
    given = {key: getattr(args, key) for key in ("memory_mb", "pids", "log_mb", "tmp_mb", "cpus")
             if getattr(args, key, None) is not None}
    limits = limits_from_table(given, Limits(), where="--")
    return sandbox, limits


def require_sandbox(sandbox: bool, opt_out: str = "--no-sandbox") -> None:
    if not sandbox:
        print(f"warning: bots run without a sandbox ({opt_out}): each can read and do whatever the arena's user can",
              file=sys.stderr)
        return
    try:
        host().require_sandbox()
    except SandboxUnavailable as error:
        raise UsageError(str(error)) from None


def add_sandbox_arguments(p: argparse.ArgumentParser) -> None:
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
