"""Tournament files: TOML parsed once at the edge, validated, and handed on as a :class:`TournamentSpec`.

The TOML maps onto the protocol's ``TournamentSpec`` message (``proto/dominoes/v1/tournament.proto``), the schema
the control API shares. A malformed file gets one message naming the key, the problem and the allowed values::

    name = "Draw round robin"
    variant = "draw"            # see `arena variants`
    players = 2                 # optional: the variant's usual count
    games = 4                   # per pairing; deal sets per pairing with duplicate on
    duplicate = true            # off, as many games of fresh deals, when a bot dials in or is given by address
    seed = "2026-11-30"         # optional: random, revealed at the end
    concurrency = 4
    output = "runs/demo"
    fault_policy = "forfeit"
    format = "round_robin"      # or "gauntlet": every table has one of the candidates; or "balanced", "swiss",
                                # "knockout" (two-sided variants)
    rounds = 3                  # a Swiss event's rounds (1 to the bots less one)
    elimination = "single"      # a knockout's: "single" or "double"
    tiebreak_games = 2          # a knockout's sudden-death deal sets for a tied match (0 to 50)
    candidates = ["py-search"]  # a gauntlet's candidates (names of [[bots]])
    tables = 200                # a balanced schedule's tables, drawn from the seed (games: deal sets per table)
    apart = [["a-v1", "a-v2"]]  # optional: groups of bots (names) of which no table seats two (round robin, balanced)

    [options]                   # variant options
    target = 100

    [sprt]                      # optional: stop as soon as a sequential test decides (two-sided match-ups only)
    elo0 = 0                    # H0: the candidate is elo0 stronger than its opponent
    elo1 = 10                   # H1: elo1 stronger
    alpha = 0.05                # false positive rate
    beta = 0.05                 # false negative rate
    model = "logistic"          # or "normalized"

    sandbox = true              # every started bot in a sandbox (docs/explanation/security.md)

    [time]
    move_ms = 2000
    bank_ms = 0
    startup_ms = 15000
    first_move_ms = 0           # optional: time for each seat's first decision, for runtimes that warm up
    grace_ms = 250              # optional: added to every deadline for the reply's way back (0 to 60000)

    [limits]                    # per bot process; these are the defaults
    memory_mb = 1024
    pids = 128
    log_mb = 10
    tmp_mb = 64
    cpus = 1.0

    [[bots]]
    name = "py-random"
    command = "python bots/python/random_bot.py"   # or a list; or address = "127.0.0.1:50051"
    env = { KEY = "value" }     # optional
    cwd = "."                   # optional
    folder = "bots/python"      # optional: the bot's own folder, read-only in its sandbox (default: its program's)
    limits = { memory_mb = 2048 }   # optional: over the tournament's [limits]
    transport = "unix"          # optional: "tcp" for a runtime without Unix sockets (a loopback port)
    protocol = "grpc"           # optional: "stdio" for a bot that speaks JSON lines on stdin/stdout
    skip_if_missing = false     # optional: leave the bot out when its program is not installed

    [[bots]]                    # a bot that dials in to the arena server (`arena connect`), on its owner's machine
    name = "lab-b"
    dial_in = true
    token_sha256 = "9f86d0..."  # the SHA-256 of its token (64 hex digits): `arena new-token FILE`
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from arena.display import escaped, seconds_label
from arena.errors import read_named_file
from arena.players.process import BotSpec
from arena.players.specs import builtin_kind, is_address
from arena.referee import GRACE_MS, MAX_GRACE_MS
from arena.rules import VARIANTS, Game, RulesError, new_game
from arena.sandbox import Limits, LimitsError, limits_from_table
from arena.sandbox.contain import TRANSPORTS
from arena.tournament.errors import SpecError as SpecError  # its home is light: the league's errors subclass it
from arena.tournament.knockout import ELIMINATIONS, SINGLE, TIEBREAK_BOUNDS
from arena.tournament.rounds import event_games
from arena.tournament.schedule import (
    BALANCED,
    EVENT_FORMATS,
    FORMATS,
    GAUNTLET,
    INTERLEAVED,
    KNOCKOUT,
    ROUND_ROBIN,
    SWISS,
    Schedule,
    seat_rotations,
)
from arena.tournament.sprt import ELO_LIMITS, ERROR_RATE_BOUNDS, LOGISTIC, MODELS, Sprt, SprtError

FAULT_POLICIES = ("forfeit",)
MAX_GAMES = 10_000_000
"""The most games one tournament may schedule (the schedule is lazy, but a run should end)."""
MAX_TABLES = 20_000
"""The most tables of a balanced schedule: they are drawn one after the other when the run starts (and again when it
is resumed), about 0.3 ms a table for 50 entrants at 8 seats on a loaded 2-core machine."""
TOP_KEYS = ("name", "variant", "players", "options", "bots", "games", "duplicate", "seed", "time", "fault_policy",
            "concurrency", "output", "sandbox", "limits", "format", "candidates", "tables", "sprt", "apart", "rounds",
            "elimination", "tiebreak_games")
TOP_BOUNDS: dict[str, tuple[int, int | None]] = {"games": (1, None), "concurrency": (1, 256), "tables": (1, MAX_TABLES),
                                                 "rounds": (1, None), "tiebreak_games": TIEBREAK_BOUNDS}
"""The least and the most of each number at the top level (None: no maximum of its own; ``games`` is held to
:data:`MAX_GAMES` in all, ``rounds`` to the bots less one)."""
PLAYER_COUNTS = (min(min(v.player_counts) for v in VARIANTS.values()),
                 max(max(v.player_counts) for v in VARIANTS.values()))
"""The fewest and the most ``players`` any variant is played by: the rules engine holds each file to its variant's
own counts (``arena variants``), and this parser only to a positive integer before it."""
SPRT_NUMBERS: tuple[Literal["elo0", "elo1", "alpha", "beta"], ...] = ("elo0", "elo1", "alpha", "beta")
"""An SPRT's numbers, typed as names of SprtSpec's fields (a protobuf message's HasField takes only those)."""
SPRT_KEYS = (*SPRT_NUMBERS, "model")
SPRT_GAMES = 10_000
"""Deal sets (or games) per pairing when a file with [sprt] does not say: the test's cap, rarely reached."""
BOT_KEYS = ("name", "command", "address", "env", "cwd", "folder", "limits", "transport", "protocol",
            "skip_if_missing", "dial_in", "token_sha256")
DIAL_IN_KEYS = ("name", "dial_in", "token_sha256")
"""What a dial-in entry may say: the arena starts and calls nothing for it."""
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
PROTOCOLS = ("grpc", "stdio")
TIME_KEYS = ("move_ms", "bank_ms", "startup_ms", "first_move_ms", "grace_ms")
TIME_BOUNDS: dict[str, tuple[int, int | None]] = {"move_ms": (1, None), "bank_ms": (0, None), "startup_ms": (1, None),
                                                  "first_move_ms": (0, None), "grace_ms": (0, MAX_GRACE_MS)}
"""The least and the most of each key of ``[time]``, in milliseconds (None: no maximum)."""
SPRT_BOUNDS: dict[str, tuple[float, float]] = {
    "elo0": (-ELO_LIMITS[LOGISTIC], ELO_LIMITS[LOGISTIC]), "elo1": (-ELO_LIMITS[LOGISTIC], ELO_LIMITS[LOGISTIC]),
    "alpha": ERROR_RATE_BOUNDS, "beta": ERROR_RATE_BOUNDS}
"""``[sprt]``'s numbers as the test holds them (:mod:`arena.tournament.sprt`): the hypotheses within the default
model's Elo limit (:data:`~arena.tournament.sprt.ELO_LIMITS` gives the other's), the error rates strictly between
their bounds."""
KEYS_WITHOUT_FIELD = {
    "skip_if_missing": "Leave the entrant out, rather than stop the run, when its program is not installed (not on "
                       "the PATH); the run names it among the skipped.",
}
"""The meaning of each key the parser reads but keeps no field for (the field's docstring is every other key's)."""


@dataclass(frozen=True)
class TimeSpec:
    """A file's [time] table: the time control of every game, in milliseconds."""

    move_ms: int = 2000
    """Milliseconds a bot has for each decision."""
    bank_ms: int = 0
    """Milliseconds of extra time per seat per match, spent by decisions that take longer than ``move_ms``."""
    startup_ms: int = 15000
    """Milliseconds for a bot to start and answer its handshake."""
    first_move_ms: int = 0
    """Milliseconds for each seat's first decision of a match, when more than ``move_ms`` (runtimes that warm up)."""
    grace_ms: int = GRACE_MS
    """Milliseconds added to every decision's deadline for the reply's way back and a busy machine; 0 for none."""

    def describe(self) -> str:
        """The time control in the words a spectator reads (``2 s a move, a 30 s bank per seat per match``); the
        start-up time and the grace, which no move spends, are left out."""
        parts = [f"{seconds_label(self.move_ms / 1000)} a move"]
        if self.first_move_ms > self.move_ms:
            parts.append(f"{seconds_label(self.first_move_ms / 1000)} for a seat's first move")
        if self.bank_ms:
            parts.append(f"a {seconds_label(self.bank_ms / 1000)} bank per seat per match")
        return ", ".join(parts)


@dataclass(frozen=True)
class SprtSpec:
    """A file's [sprt] table: the hypotheses and error rates of the sequential test (see arena/tournament/sprt.py)."""

    elo0: float = 0.0
    """H0, in Elo: the candidate is this much stronger than its opponent; less than ``elo1``."""
    elo1: float = 10.0
    """H1, in Elo: the candidate is this much stronger than its opponent."""
    alpha: float = 0.05
    """The chance of accepting H1 when H0 holds (a false positive)."""
    beta: float = 0.05
    """The chance of accepting H0 when H1 holds (a false negative)."""
    model: str = LOGISTIC
    """The Elo of ``elo0`` and ``elo1``: ``logistic`` (as the standings' Elo) or ``normalized`` (independent of the
    draw rate; within ±200)."""

    def new_test(self, meetings: int) -> Sprt:
        """A fresh test whose unit holds ``meetings`` meetings (a game, or a duplicate deal set)."""
        return Sprt(self.elo0, self.elo1, self.alpha, self.beta, meetings, self.model)


@dataclass(frozen=True)
class TournamentSpec:
    """A validated tournament. ``bots`` holds only the entrants that will play (skipped ones are in ``skipped``)."""

    name: str
    """The tournament's name, in the standings and the records (``"tournament"`` when the file gives none)."""
    variant: str
    """The variant of the rules every game plays (``arena variants`` lists them); required."""
    players: int
    """Players at a table (the variant's usual count when the file gives none)."""
    options: dict[str, Any]
    """The variant's options, every one resolved (the file's ``[options]``, the variant's defaults for the rest)."""
    bots: tuple[BotSpec, ...]
    """The entrants, one ``[[bots]]`` table each, at least two that can run (skipped ones are in ``skipped``)."""
    games: int = 2
    """Per pairing: deal sets when ``duplicate`` is on, each played under every seat rotation (10,000 with [sprt]:
    the test's cap); at most 10,000,000 games in the whole tournament."""
    duplicate: bool = True
    """Duplicate deals: every deal set is played under every rotation of the seats. Off, with as many games of
    fresh deals, when a bot dials in or is given by address."""
    seed: str | None = None
    """The master seed every game's seed derives from, a text or an integer (random when absent, revealed at the
    end)."""
    time: TimeSpec = TimeSpec()
    """The time control of every game: see [time]."""
    fault_policy: str = "forfeit"
    """What a fault (a timeout, an illegal move, a crash) does: ``forfeit``, the faulting side loses the match."""
    concurrency: int = 4
    """Games played at once."""
    output: str = "runs/tournament"
    """The run folder, where the records, standings and logs go (``runs/<variant>`` when the file gives none)."""
    skipped: tuple[str, ...] = field(default=())
    sandbox: bool = True
    """Whether every bot the arena starts runs in a sandbox (docs/explanation/security.md)."""
    limits: Limits = Limits()
    """Every started bot's resource limits, unless its entry's own ``limits`` say otherwise: see [limits]."""
    format: str = ROUND_ROBIN
    """The schedule: ``round_robin``, ``gauntlet`` (with ``candidates``), ``balanced`` (with ``tables``), ``swiss``
    (with ``rounds``) or ``knockout`` (``elimination``, ``tiebreak_games``); Swiss and knockout for two-sided variants
    only (2 players, or teams), without ``apart``, ``candidates``, ``tables`` or ``[sprt]``."""
    candidates: tuple[str, ...] = ()
    """A gauntlet's candidates, by entrant name: every table has one of them. Refused with the other formats."""
    sprt: SprtSpec | None = None
    """A sequential test that stops the run as soon as it decides (one match-up only): see [sprt]."""
    tables: int = 0
    """A balanced schedule's number of tables, drawn from the seed; required with ``format = "balanced"``, refused
    with the other formats."""
    apart: tuple[tuple[str, ...], ...] = ()
    """Groups of two or more bot names of which no table seats two (round robin and balanced; refused with the other
    formats)."""
    rounds: int = 0
    """A Swiss event's rounds, required with ``format = "swiss"``: 1 to the number of bots less one (no two bots
    meet twice); each round pairs every bot once (one bye with an odd number), each pairing ``games`` deal sets."""
    elimination: str = SINGLE
    """A knockout's bracket: ``single`` (a match lost is the end) or ``double`` (a losers' bracket, a grand final,
    and a bracket reset when the losers' bracket's finalist wins it). Refused with the other formats."""
    tiebreak_games: int = 2
    """A knockout match tied on its ``games`` deal sets plays up to this many more, one at a time, the first that is
    not tied deciding; still tied, the higher seed (the earlier bot in the file) advances. Refused with the other
    formats."""
    duplicate_off: str = ""
    """Why the file's duplicate deals are not played (:func:`duplicate_off_notice`), in the one line ``arena run``
    prints and ``arena serve`` logs; "" when the file's ``duplicate`` is what is played."""

    def game(self) -> Game:
        return new_game(self.variant, self.players, self.options)

    @property
    def event(self) -> bool:
        """Whether the format is played in waves decided by the results before them (Swiss, knockout)."""
        return self.format in EVENT_FORMATS

    def expected_games(self) -> int:
        """The games the tournament plays: its schedule's; a Swiss event's rounds; a knockout's most (every match
        to its last tie-break deal set)."""
        if self.event:
            return event_games(self.format, self.game(), len(self.bots), self.games, self.duplicate, self.rounds,
                               self.elimination, self.tiebreak_games)
        return self.schedule().total()

    def schedule(self, master_seed: str = "", order: str = INTERLEAVED) -> Schedule:
        """The tournament's schedule under ``master_seed`` (an empty seed for counting games)."""
        names = [b.name for b in self.bots]
        return Schedule(len(self.bots), self.game(), self.games, self.duplicate, master_seed, order=order,
                        candidates=tuple(names.index(name) for name in self.candidates), tables=self.tables,
                        apart=tuple(tuple(names.index(name) for name in group) for group in self.apart))


def read_spec_text(path: str | Path) -> str:
    """A tournament file's text, or one clear error."""
    return read_named_file(path, "tournament file", SpecError)


def load_spec(path: str | Path) -> TournamentSpec:
    """Read and validate a tournament file."""
    path = Path(path)
    text = read_spec_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}: not valid TOML: {error}") from None
    try:
        return spec_from_dict(data)
    except SpecError as error:
        raise SpecError(f"{path}: {error}") from None


def spec_from_dict(data: Mapping[str, Any]) -> TournamentSpec:
    """Validate a parsed tournament (TOML tables, or the control API's message as a dict)."""
    _no_unknown(data, TOP_KEYS, "at the top level")
    variant = _text(data, "variant", required=True)
    game = game_from_table(data)
    time_spec = time_from_table(data.get("time", {}))
    policy = _text(data, "fault_policy", default="forfeit")
    if policy not in FAULT_POLICIES:
        raise SpecError(f"key 'fault_policy' must be one of {', '.join(FAULT_POLICIES)}, got {policy!r}")
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (str, int)) or seed == ""):
        raise SpecError(f"key 'seed' must be a non-empty text or an integer, got {seed!r}")
    sandbox = _boolean(data, "sandbox", default=True)
    try:
        limits = limits_from_table(data.get("limits", {}))
    except LimitsError as error:
        raise SpecError(str(error)) from None
    bots, skipped = _bots(data.get("bots"), sandbox, limits)
    minimum_entrants = 2
    if len(bots) < minimum_entrants:
        extra = f" ({', '.join(skipped)} skipped: not installed)" if skipped else ""
        raise SpecError(f"key 'bots' must list at least {minimum_entrants} bots that can run, got {len(bots)}{extra}")
    tournament_format, candidates = _format(data, [b.name for b in bots])
    sprt = _sprt(data.get("sprt"))
    games = _bounded(data, "games", TOP_BOUNDS, default=SPRT_GAMES if sprt is not None else 2)
    duplicate = _boolean(data, "duplicate", default=True)
    notice = duplicate_off_notice(bots) if duplicate else ""
    if notice:  # as many games, each with its own deal: the deal sets' rotations become games of fresh deals
        duplicate, games = False, games * seat_rotations(game)
    names = [b.name for b in bots]
    tables = _tables(data, tournament_format, game, len(bots))
    apart = _apart(data.get("apart"), tournament_format, names, 2 if game.teams else game.players)
    rounds, elimination, tiebreak_games = _event(data, tournament_format, game, len(bots), sprt)
    schedule = Schedule(len(bots), game, games, duplicate, "", candidates=tuple(names.index(c) for c in candidates),
                        tables=tables, apart=tuple(tuple(names.index(n) for n in group) for group in apart))
    if sprt is not None and schedule.table_count() != 1:
        raise SpecError(f"[sprt] tests one match-up: two bots, or a gauntlet of one candidate against one other "
                        f"bot; this file has {schedule.table_count()} tables ({len(bots)} bots"
                        f"{f', {len(candidates)} candidates' if candidates else ''})")
    total = schedule.total()
    if tournament_format in EVENT_FORMATS:
        total = event_games(tournament_format, game, len(bots), games, duplicate, rounds, elimination,
                            tiebreak_games)
    if total > MAX_GAMES:
        raise SpecError(f"key 'games': this tournament would play {total:,} games ({len(bots)} bots, "
                        f"{game.players} seats); at most {MAX_GAMES:,}")
    return TournamentSpec(
        name=_text(data, "name", default="tournament"),
        variant=variant,
        players=game.players,
        options=dict(game.options),
        bots=tuple(bots),
        games=games,
        duplicate=duplicate,
        seed=None if seed is None else str(seed),
        time=time_spec,
        fault_policy=policy,
        concurrency=_bounded(data, "concurrency", TOP_BOUNDS, default=4),
        output=_system_text(data, "output", default=f"runs/{variant}"),
        skipped=tuple(skipped),
        sandbox=sandbox,
        limits=limits,
        format=tournament_format,
        candidates=candidates,
        sprt=sprt,
        tables=tables,
        apart=apart,
        rounds=rounds,
        elimination=elimination,
        tiebreak_games=tiebreak_games,
        duplicate_off=notice,
    )


def duplicate_off_notice(bots: list[BotSpec]) -> str:
    """Why duplicate deals cannot be played with these bots, in one line ("" when they can).

    Duplicate deals deal each deal set again under every seat rotation. The arena keeps a bot it starts from
    carrying a deal from one rotation to the next (docs/explanation/security.md), but a bot that runs outside it (dials in, or
    is given by address) keeps whatever its author's machine keeps: at a duplicate table it would hold, in rotation
    1, the hand its opponent held in rotation 0. So every game gets a fresh deal instead, the seats still rotating
    from game to game; the tournament plays as many games as it would have (``games`` deal sets times the
    rotations), each rated as the single game it is."""
    outside = [(bot.name, bot.remembers) for bot in bots if bot.remembers]
    if not outside:
        return ""
    who = "; ".join(f"bot {escaped(name)!r} {why}" for name, why in outside)
    return f"duplicate deals are off: {who}, which would remember every deal; each game gets a fresh deal"


def game_from_table(data: Mapping[str, Any]) -> Game:
    """The game of a file's ``variant``, ``players`` and ``[options]`` keys, each checked by the rules engine (shared
    by tournament files and league files, so both refuse the same mistakes with the same words)."""
    variant = _text(data, "variant", required=True)
    players = _integer(data, "players", minimum=1, default=0)
    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise SpecError(f"key 'options' must be a table of variant options, got {options!r}")
    try:
        return new_game(variant, players or None, dict(options))
    except RulesError as error:
        raise SpecError(f"{_key_of(error)}{error}") from None


def time_from_table(time: Any) -> TimeSpec:
    """A file's ``[time]`` table, each key checked (shared by tournament files and league files)."""
    if not isinstance(time, Mapping):
        raise SpecError(f"key 'time' must be a table with {', '.join(TIME_KEYS)}, got {time!r}")
    _no_unknown(time, TIME_KEYS, "in [time]")
    defaults = TimeSpec()
    return TimeSpec(**{key: _bounded(time, key, TIME_BOUNDS, default=getattr(defaults, key), where="time.")
                       for key in TIME_KEYS})


def _format(data: Mapping[str, Any], names: list[str]) -> tuple[str, tuple[str, ...]]:
    """The format and a gauntlet's candidates (names of bots that play, at least one, and not every bot)."""
    tournament_format = _text(data, "format", default=ROUND_ROBIN)
    if tournament_format not in FORMATS:
        raise SpecError(f"key 'format' must be one of {', '.join(FORMATS)}, got {tournament_format!r}")
    candidates = data.get("candidates")
    if tournament_format != GAUNTLET:
        if candidates is not None:
            raise SpecError(f"key 'candidates' is for format = \"{GAUNTLET}\", got it with {tournament_format!r}")
        return tournament_format, ()
    if (not isinstance(candidates, list) or not candidates
            or not all(isinstance(c, str) for c in candidates)):
        raise SpecError(f"key 'candidates' must list the names of the gauntlet's candidates, got {candidates!r}")
    for name in candidates:
        if name not in names:
            raise SpecError(f"key 'candidates' names {name!r}, which is not a bot that plays "
                            f"(bots: {', '.join(names)})")
    if len(set(candidates)) != len(candidates):
        raise SpecError(f"key 'candidates' must name each bot once, got {candidates!r}")
    if len(candidates) == len(names):
        raise SpecError("key 'candidates' names every bot: a gauntlet needs at least one bot that is not a candidate")
    return tournament_format, tuple(candidates)


def _tables(data: Mapping[str, Any], tournament_format: str, game: Game, entrants: int) -> int:
    """A balanced schedule's number of tables (1 to :data:`MAX_TABLES`, with at least as many bots as a table has
    sides); 0 for the other formats, which must not set it."""
    if tournament_format != BALANCED:
        if "tables" in data:
            raise SpecError(f"key 'tables' is for format = \"{BALANCED}\", got it with {tournament_format!r} (which "
                            f"plays every table it has)")
        return 0
    if "tables" not in data:
        raise SpecError(f"key 'tables' is missing: format = \"{BALANCED}\" plays the number of tables it names")
    tables = _bounded(data, "tables", TOP_BOUNDS, default=0)
    sides = 2 if game.teams else game.players
    if entrants < sides:
        raise SpecError(f"format = \"{BALANCED}\" seats distinct bots at every table: {sides} seats need at least "
                        f"{sides} bots, got {entrants} (a round robin fills the seats in turn)")
    return tables


def _apart(value: Any, tournament_format: str, names: list[str], sides: int) -> tuple[tuple[str, ...], ...]:
    """The groups of bots no table seats two of (none when absent): lists of two or more names of bots that play,
    each bot in one group at most, for a round robin or a balanced schedule, with at least as many houses (groups,
    and bots in none) as a table has sides."""
    if value is None:
        return ()
    if tournament_format not in (ROUND_ROBIN, BALANCED):
        raise SpecError(f"key 'apart' is for format = \"{ROUND_ROBIN}\" or \"{BALANCED}\", got it with "
                        f"'{tournament_format}'")
    if (not isinstance(value, list) or not all(isinstance(group, list) and len(group) >= 2
                                               and all(isinstance(n, str) for n in group) for group in value)):
        raise SpecError(f"key 'apart' must list groups of two or more bot names (no table seats two bots of one "
                        f"group), got {value!r}")
    seen: set[str] = set()
    for group in value:
        for name in group:
            if name not in names:
                raise SpecError(f"key 'apart' names {name!r}, which is not a bot that plays (bots: "
                                f"{', '.join(names)})")
            if name in seen:
                raise SpecError(f"key 'apart' names {name!r} twice: a bot is in one group at most")
            seen.add(name)
    houses = len(value) + len(names) - len(seen)
    if houses < sides:
        raise SpecError(f"key 'apart' leaves {houses} houses (its groups, and the bots in none) and a table seats "
                        f"{sides} sides of distinct houses: no table can be played")
    return tuple(tuple(group) for group in value)


def _event(data: Mapping[str, Any], tournament_format: str, game: Game, entrants: int,
           sprt: SprtSpec | None) -> tuple[int, str, int]:
    """A Swiss event's ``rounds``, a knockout's ``elimination`` and ``tiebreak_games`` (each refused with the other
    formats); Swiss and knockout only for two-sided variants and without [sprt]."""
    for key, home in (("rounds", SWISS), ("elimination", KNOCKOUT), ("tiebreak_games", KNOCKOUT)):
        if key in data and tournament_format != home:
            raise SpecError(f"key '{key}' is for format = \"{home}\", got it with {tournament_format!r}")
    if tournament_format not in EVENT_FORMATS:
        return 0, SINGLE, TournamentSpec.tiebreak_games
    if not (game.teams or game.players == 2):
        raise SpecError(f"format = \"{tournament_format}\" pairs two sides (2 players, or two teams); this variant "
                        f"seats {game.players} sides: use round_robin, gauntlet or balanced")
    if sprt is not None:
        raise SpecError(f"[sprt] tests one match-up of a round robin or a gauntlet, not a {tournament_format} event")
    if tournament_format == KNOCKOUT:
        elimination = _text(data, "elimination", default=SINGLE)
        if elimination not in ELIMINATIONS:
            raise SpecError(f"key 'elimination' must be one of {', '.join(ELIMINATIONS)}, got {elimination!r}")
        return 0, elimination, _bounded(data, "tiebreak_games", TOP_BOUNDS, default=TournamentSpec.tiebreak_games)
    if "rounds" not in data:
        raise SpecError(f"key 'rounds' is missing: format = \"{SWISS}\" plays the number of rounds it names "
                        f"(1 to {entrants - 1} for {entrants} bots)")
    rounds = _bounded(data, "rounds", TOP_BOUNDS, default=0)
    if rounds > entrants - 1:
        raise SpecError(f"key 'rounds' must be at most {entrants - 1} for {entrants} bots (no two bots meet twice), "
                        f"got {rounds}")
    return rounds, SINGLE, TournamentSpec.tiebreak_games


def _sprt(table: Any) -> SprtSpec | None:
    """The [sprt] table, checked by building the test it describes."""
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise SpecError(f"key 'sprt' must be a table with {', '.join(SPRT_KEYS)}, got {table!r}")
    _no_unknown(table, SPRT_KEYS, "in [sprt]")
    model = _text(table, "model", default=LOGISTIC, where="sprt.")
    if model not in MODELS:
        raise SpecError(f"key 'sprt.model' must be one of {', '.join(MODELS)}, got {model!r}")
    for key in SPRT_NUMBERS:
        value = table.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise SpecError(f"key 'sprt.{key}' must be a number, got {value!r}")
    defaults = SprtSpec()
    spec = SprtSpec(**{key: float(table.get(key, getattr(defaults, key))) for key in SPRT_NUMBERS},
                    model=model)
    try:
        spec.new_test(1)
    except SprtError as error:
        raise SpecError(f"[sprt]: {error}") from None
    return spec


def _bots(entries: Any, sandbox: bool, limits: Limits) -> tuple[list[BotSpec], list[str]]:
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise SpecError("key 'bots' must be a list of [[bots]] tables, each with a name and a command or an address")
    bots: list[BotSpec] = []
    skipped: list[str] = []
    names: set[str] = set()
    for number, entry in enumerate(entries, 1):
        where = f"bots[{number}]."
        _no_unknown(entry, BOT_KEYS, f"in [[bots]] number {number}")
        name = _text(entry, "name", required=True, where=where)
        if name in names:
            raise SpecError(f"key '{where}name' must be unique, got {name!r} twice")
        names.add(name)
        if _boolean(entry, "dial_in", default=False, where=where):
            bots.append(_dial_in_bot(entry, name, where))
            continue
        if "token_sha256" in entry:
            raise SpecError(f"key '{where}token_sha256' is for a bot that dials in (dial_in = true)")
        command = _command(entry.get("command"), where)
        address = _system_text(entry, "address", default="", where=where)
        if bool(command) == bool(address):
            raise SpecError(f"bot {name!r} needs exactly one of 'command' or 'address'")
        if address and not is_address(address):
            raise SpecError(f"key '{where}address' must be like 127.0.0.1:50051 or unix:/path, got {address!r}")
        env = entry.get("env", {})
        if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
            raise SpecError(f"key '{where}env' must be a table of text values, got {env!r}")
        for key, value in env.items():  # what exec would refuse, refused here rather than at the bot's start
            if not isinstance(key, str) or not key or "=" in key or "\0" in key or "\0" in value:
                raise SpecError(f"key '{where}env' must map variable names (not empty, no '=' or NUL character) to "
                                f"texts without NUL characters, got {key!r} = {value!r}")
        cwd = _system_text(entry, "cwd", default="", where=where) or None
        folder = _system_text(entry, "folder", default="", where=where) or None
        transport = _text(entry, "transport", default="unix", where=where)
        if transport not in TRANSPORTS:
            raise SpecError(f"key '{where}transport' must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        protocol = _text(entry, "protocol", default="grpc", where=where)
        if protocol not in PROTOCOLS:
            raise SpecError(f"key '{where}protocol' must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
        if protocol == "stdio" and not command:
            raise SpecError(f"bot {name!r}: protocol = \"stdio\" needs a command (the arena talks on its stdin)")
        try:
            own_limits = limits_from_table(entry.get("limits", {}), limits, where=f"{where}limits.")
        except LimitsError as error:
            raise SpecError(str(error)) from None
        try:
            builtin = builtin_kind(command)
        except RulesError as error:
            raise SpecError(f"key '{where}command': {error}") from None
        if builtin and (protocol != "grpc" or folder or cwd):
            raise SpecError(f"bot {name!r}: the built-in player {builtin!r} runs inside the arena, so it takes no "
                            f"protocol, folder or cwd")
        if command and not builtin and _boolean(entry, "skip_if_missing", default=False, where=where):
            if shutil.which(command[0]) is None:
                skipped.append(name)
                continue
        bots.append(BotSpec(name=name, command=tuple(command), address=address or None, env=dict(env), cwd=cwd,
                            folder=folder, sandbox=sandbox, limits=own_limits, transport=transport,
                            protocol=protocol))
    return bots, skipped


def _dial_in_bot(entry: Mapping[str, Any], name: str, where: str) -> BotSpec:
    """A ``dial_in = true`` entry: a name and the SHA-256 of the bot's token, nothing the arena would start."""
    extra = sorted(set(entry) - set(DIAL_IN_KEYS))
    if extra:
        raise SpecError(f"key '{where}{extra[0]}': bot {name!r} dials in (dial_in = true), so the arena starts and "
                        f"calls nothing for it; its entry has only {', '.join(DIAL_IN_KEYS)}")
    digest = _text(entry, "token_sha256", required=True, where=where)
    if not SHA256_RE.match(digest):
        raise SpecError(f"key '{where}token_sha256' must be the SHA-256 of the bot's token as 64 lowercase hex "
                        f"digits (`arena new-token FILE` makes one and prints its hash), got {digest!r}")
    return BotSpec(name=name, dial_in=True, token_sha256=digest)


def _command(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as error:
            raise SpecError(f"key '{where}command' cannot be read as a command line: {error}") from None
        if not value:
            return []
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if any("\0" in v for v in value):  # exec cannot pass a NUL: refuse it here, not at the bot's start
            raise SpecError(f"key '{where}command' must not hold a NUL character, got {value!r}")
        return list(value)
    raise SpecError(f"key '{where}command' must be a command line (text) or a list of texts, got {value!r}")


def _no_unknown(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise SpecError(f"unknown key '{escaped(unknown[0])}' {where}; valid keys: {', '.join(allowed)}")


def _text(table: Mapping[str, Any], key: str, *, required: bool = False, default: str = "", where: str = "") -> str:
    if key not in table:
        if required:
            raise SpecError(f"key '{where}{key}' is missing")
        return default
    value = table[key]
    if not isinstance(value, str) or (required and not value):
        raise SpecError(f"key '{where}{key}' must be a non-empty text, got {value!r}")
    return value


def _system_text(table: Mapping[str, Any], key: str, *, default: str, where: str = "") -> str:
    """A text the system is given (a path, an address): as :func:`_text`, without a NUL character, which every
    system call refuses with an exception (refused here rather than when the run or the bot starts)."""
    value = _text(table, key, default=default, where=where)
    if "\0" in value:
        raise SpecError(f"key '{where}{key}' must not hold a NUL character, got {value!r}")
    return value


def _integer(table: Mapping[str, Any], key: str, *, minimum: int, default: int, maximum: int | None = None,
             where: str = "") -> int:
    if key not in table:
        return default
    value = table[key]
    bounds = f">= {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (
            maximum is not None and value > maximum):
        raise SpecError(f"key '{where}{key}' must be an integer {bounds}, got {value!r}")
    return value


def _bounded(table: Mapping[str, Any], key: str, bounds: Mapping[str, tuple[int, int | None]], *, default: int,
             where: str = "") -> int:
    """An integer key held to its entry of a bounds table (the reference shows the same table: it cannot drift)."""
    low, high = bounds[key]
    return _integer(table, key, minimum=low, maximum=high, default=default, where=where)


def _boolean(table: Mapping[str, Any], key: str, *, default: bool, where: str = "") -> bool:
    if key not in table:
        return default
    value = table[key]
    if not isinstance(value, bool):
        raise SpecError(f"key '{where}{key}' must be true or false, got {value!r}")
    return value


def _key_of(error: RulesError) -> str:
    """Which key a rules error is about, to prefix the message."""
    text = str(error)
    if text.startswith("unknown variant"):
        return "key 'variant': "
    if " is played by " in text:
        return "key 'players': "
    return "key 'options': "
