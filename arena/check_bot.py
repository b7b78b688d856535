"""``arena check-bot``: a compliance run, like fastchess's. Starts the bot, checks the handshake, plays a few
quick matches of every variant it claims against the built-in random player, and reports a pass/fail table with
median and worst reply time and every fault seen."""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from arena.display import move_label, safe_name
from arena.players import RandomPlayer
from arena.players.base import Decision, DecisionRequest, LocalPlayer, SeatPlayer
from arena.players.client import BotClient
from arena.players.faults import BotFailure, Fault
from arena.players.process import BotProcess, BotSpec
from arena.players.remote import new_match_id
from arena.referee import TimeControl, play_match
from arena.rules import VARIANTS, Game, new_game
from arena.sandbox import Limits


@dataclass
class VariantCheck:
    variant: str
    players: int
    matches: int = 0
    decisions: int = 0
    reply_ms: list[float] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.faults and self.matches > 0

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.reply_ms) if self.reply_ms else None

    @property
    def worst_ms(self) -> float | None:
        return max(self.reply_ms) if self.reply_ms else None


@dataclass
class CheckReport:
    bot: str
    startup_ms: float | None = None
    hello: str = ""
    containment: str = ""
    """How the bot was contained: sandbox, user, what enforces the limits, and the limits."""
    start_fault: str | None = None
    variants: list[VariantCheck] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.start_fault is None and bool(self.variants) and all(v.passed for v in self.variants)


class _Timed:
    """Wraps the bot's seat to collect reply times."""

    def __init__(self, bot: BotClient, check: VariantCheck) -> None:
        self.bot, self.check, self.name = bot, check, bot.name

    async def act(self, request: DecisionRequest, timeout_s: float) -> Decision:
        decision = await self.bot.act(request, timeout_s)
        self.check.decisions += 1
        self.check.reply_ms.append(decision.think_s * 1000)
        return decision

    async def round_ended(self, *args: Any) -> None:
        await self.bot.round_ended(*args)

    async def match_ended(self, *args: Any) -> None:
        await self.bot.match_ended(*args)


async def check_bot(spec: BotSpec, matches: int, time_control: TimeControl, startup_s: float, log_dir: Path,
                    variants: list[str] | None = None, games: Mapping[str, Game] | None = None) -> CheckReport:
    """``matches`` matches of each variant the bot claims (of ``variants`` only, when given) against the random
    player. ``games`` gives a variant's game (its players and options; a league checks its own); by default a
    variant is played with its usual players and options."""
    report = CheckReport(bot=" ".join(spec.command) or spec.address or spec.name)
    process = BotProcess(spec, log_dir, startup_s)
    try:
        started = time.perf_counter()
        try:
            bot = await process.ensure_running()
        except BotFailure as failure:
            report.start_fault = str(failure)
            return report
        report.startup_ms = process.startup_ms if process.startup_ms is not None else (
            time.perf_counter() - started) * 1000
        report.containment = describe_containment(process.containment_report)
        hello = bot.hello
        assert hello is not None
        report.hello = safe_name(f"{hello.name} {hello.version} by {hello.author or '?'}, protocol "
                                 f"{hello.protocol_version}, plays {', '.join(hello.variants) or 'every variant'}", 400)
        unknown = [v for v in hello.variants if v not in VARIANTS]
        if unknown:
            report.start_fault = f"the bot claims unknown variants: {', '.join(unknown)}"
            return report
        claimed = [v for v in VARIANTS if bot.plays(v) and (not variants or v in variants)]
        for name in claimed:
            game = games[name] if games and name in games else new_game(name)
            check = VariantCheck(name, game.players)
            report.variants.append(check)
            for m in range(matches):
                try:
                    bot = await process.ensure_running()
                except BotFailure as failure:
                    check.faults.append(f"restart failed: {failure}")
                    break
                seat_of_bot = m % game.players
                seats: list[SeatPlayer] = [
                    _Timed(bot, check) if s == seat_of_bot else
                    LocalPlayer(RandomPlayer(seed=f"{m}/{s}"), name="builtin:random")
                    for s in range(game.players)
                ]
                record = await play_match(game, seats, seed=f"check/{name}/{m}", match_id=new_match_id(),
                                          time_control=time_control)
                check.matches += 1
                check.faults.extend(_describe(f) for f in record.faults)
                check.faults.extend(_describe(f) for f in record.belief_faults)  # the game went on; the check fails
    finally:
        with trio.CancelScope(shield=True):
            await process.stop()
    return report


def describe_containment(report: dict[str, Any] | None) -> str:
    """One line for people: ``bubblewrap 0.8.0, user 1234567, limits by cgroup v1: memory 1024 MiB, ...``."""
    if not report:
        return "none (a bot given by address is outside the arena's control)"
    limits = Limits(**report["limits"]).describe()
    return f"sandbox {report['sandbox']}, user {report['user']}, limits by {report['limits_by']}: {limits}"


def _describe(fault: Fault) -> str:
    """One fault as the report lists it, its move counted from 1 as every view counts it."""
    return f"{fault.kind.value} at {move_label(fault.move_number)}: {fault.message}"
