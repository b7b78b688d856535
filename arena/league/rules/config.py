"""League files: a league is configured, not coded. TOML parsed once at the edge, validated, and handed on as a
frozen :class:`LeagueConfig`; nothing past this module reads the file or sees a raw table.

The game keys (``variant``, ``players``, ``[options]``), ``[time]`` and ``[limits]`` mean what they mean in a
tournament file and are checked by the same functions (:mod:`arena.tournament.spec`, :mod:`arena.sandbox.limits`),
so both kinds of file refuse the same mistakes with the same words. A malformed file gets one line naming the file,
the key, the problem and the allowed values::

    name = "draw-ladder"        # the league's identifier: lowercase letters, digits, '-' and '_'
    title = "Draw ladder"       # optional: shown to people (default: the name)
    variant = "draw"            # see `arena variants`
    players = 2                 # optional: the variant's usual count
    duplicate = true            # each table plays one deal set under every rotation of the seats
    kits = ["python", "go"]     # optional: the kits whose uploads it accepts (default: all of KITS)
    interpreters = ["python3", "perl"]  # optional: what the stdio kit's bot.toml may name as its interpreter
                                # (default: python3 and the other candidates this machine has in /usr/bin)
    dial_in = true              # optional: authors may add dial-in versions, played from their own machines
                                # while connected (`arena league dial-in`); default false
    same_author_tables = false  # optional: whether two versions of one author may sit at one table of three or
                                # more sides (the ladder's and the finals'); default false. Two-sided tables are
                                # not concerned: one author's versions meet there head to head

    [options]                   # variant options
    target = 100

    [time]                      # as a tournament's
    move_ms = 2000
    bank_ms = 0
    startup_ms = 15000
    first_move_ms = 0

    [limits]                    # per bot process while it plays, as a tournament's
    memory_mb = 1024

    [upload]                    # what one uploaded archive may hold (sizes in MiB, as every *_mb key)
    archive_mb = 16             # the archive's own size
    unpacked_mb = 64            # all its files unpacked (a decompression bomb stops here)
    files = 2000                # its files and folders

    [build]                     # one version's build, in the sandbox, offline (arena.sandbox.build.BuildLimits)
    time_s = 600                # wall-clock time for the whole build
    disk_mb = 1024              # its build folder (a tmpfs of this size when the arena is root)
    memory_mb = 2048            # and the other keys of [limits]: pids, log_mb, tmp_mb (its /tmp), cpus
    pids = 256

    [authors]                   # per author
    uploads_per_day = 20        # new versions in any 24 hours
    versions_kept = 10          # versions kept per bot; the oldest retired ones go first

    [ladder]                    # the games the league plays by itself (arena/league/play/ladder.py)
    concurrency = 2             # tables played at once (each one deal set under every seat rotation)
    coverage = 4                # deal sets per hour every active version should play
    placement = 3               # a new version's first deal sets, its placement
    pairing_penalty = 3.0       # rating points one recent meeting costs a pairing (OpenSkill's scale)

    [challenges]                # an author's unrated test of a version against another (arena/league/play/challenges.py)
    per_day = 5                 # challenges per author in any 24 hours
    max_deal_sets = 300         # the most deal sets one challenge may ask for (its SPRT's cap)
    concurrency = 1             # challenges played at once, beside the ladder's tables
    elo0 = 0.0                  # the SPRT's hypotheses, as a tournament file's [sprt]
    elo1 = 40.0

    [signup]                    # how teams (authors) join (arena/league/teams.py)
    mode = "invite"             # "operator" (the default: arena league add-author only), "invite" (with a code of
                                # arena league invite) or "approval" (anyone; the operator approves each team)
    max_teams = 50              # teams that may sign up through this league (0: no cap)
    per_address_per_hour = 3    # sign-ups from one client address in any hour
    per_league_per_hour = 20    # sign-ups to this league in any hour

    [timeline]                  # optional: the league moves through its phases by itself (UTC times)
    opens = 2026-11-01T12:00:00Z        # before it: uploads are built and checked, nothing is played
    freeze = 2026-12-05T18:00:00Z       # the field is frozen, the ladder and the challenges stop
    finals = 2026-12-06T09:00:00Z       # the finals start, with [finals]
    results = "2026-12-07T12:00:00Z"    # the finals' ranking is published (a string ending in Z also works)

    [finals]                    # the finals the timeline starts (and the defaults of `arena league finals --start`)
    format = "round_robin"      # "round_robin" (every pair meets; a balanced schedule for k-player tables),
                                # or, for two sides, "swiss" or "knockout", seeded by the leaderboard at the freeze
    deal_sets = 10              # deal sets per table (round robin), per pairing (Swiss), per match (knockout)
    tables = 0                  # a balanced schedule's tables, k-player tables only (0: every pair meets about once)
    rounds = 0                  # Swiss only: its rounds (0: enough to find a winner, ceil(log2(field)))
    elimination = "single"      # knockout only: "single" or "double" (a losers' bracket and a grand final)
    tiebreak_deal_sets = 2      # knockout only: a tied match's sudden-death deal sets (then the better seed)

    [notices]                   # the teams' notices: feeds and webhooks (arena/league/rules/notices.py)
    allow_private_webhooks = false  # webhooks to loopback or private addresses, and plain http (tests, a lab)
    retry_s = 30.0              # the first retry of a failed delivery; each next one waits twice as long
    attempts = 8                # tries of one delivery before it is given up
    timeout_s = 10.0            # one try's time to connect, send and be answered
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from datetime import time as time_of_day
from types import MappingProxyType
from typing import Any

from arena.league.rules.errors import ConfigError
from arena.league.rules.manifest import DEFAULT_INTERPRETER, Manifest, interpreter_problem
from arena.league.rules.manifest import KITS as KIT_RECIPES
from arena.rules import Game, new_game
from arena.sandbox import LIMIT_KEYS, Limits, LimitsError, limits_from_table
from arena.sandbox.build import BuildLimits
from arena.tournament.spec import (  # the file helpers: one wording for both files
    SpecError,
    TimeSpec,
    _boolean,
    _integer,
    _no_unknown,
    _text,
    game_from_table,
    time_from_table,
)

MIB = 1024 * 1024
"""The one size unit of the league's limits (a league file's ``archive_mb`` and ``unpacked_mb``, as the sandbox's
``memory_mb``): a mebibyte, written MiB in every message."""


@dataclass(frozen=True)
class ArchiveLimits:
    """How much an upload may hold; the league's configuration fills these in (:func:`archive_limits`), the archive
    reader (:mod:`arena.league.intake.archive`) holds an upload to them."""

    max_compressed_bytes: int = 50 * MIB
    """The archive file as uploaded (a folder has no compressed size)."""
    max_uncompressed_bytes: int = 200 * MIB
    """Every byte inflated from the archive (headers and left-out members included), or a folder's kept files."""
    max_files: int = 5000
    """Files kept in the version (left-out build output does not count)."""


KITS = tuple(KIT_RECIPES)
"""The kits a league may accept: every kit a manifest may name (:data:`arena.league.rules.manifest.KITS`)."""
"""The kits an uploaded bot may name in its ``bot.toml``: every starter kit the project ships (``bots/``) and a
prebuilt static Linux binary."""
TOP_KEYS = ("name", "title", "variant", "players", "options", "duplicate", "kits", "interpreters", "dial_in",
            "same_author_tables",
            "time", "limits", "upload", "build", "authors", "ladder", "challenges", "signup", "timeline",
            "finals", "notices")
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
"""A league's name appears in URLs, folder names and the database: a short identifier."""


@dataclass(frozen=True)
class UploadLimits:
    """What one uploaded archive may hold; an archive over any of them is refused before anything is stored."""

    archive_mb: int = 16
    """MiB of the uploaded archive itself, counted while its chunks arrive."""
    unpacked_mb: int = 64
    """MiB of all its files unpacked (a decompression bomb stops here); at least ``archive_mb``."""
    files: int = 2000
    """Files kept in the version (left-out build output does not count)."""

    @property
    def archive_bytes(self) -> int:
        return self.archive_mb * MIB

    @property
    def unpacked_bytes(self) -> int:
        return self.unpacked_mb * MIB


UPLOAD_KEYS = ("archive_mb", "unpacked_mb", "files")
UPLOAD_BOUNDS = {"archive_mb": (1, 4096), "unpacked_mb": (1, 65536), "files": (1, 1_000_000)}
WIDEST_UPLOAD = UploadLimits(**{key: high for key, (_low, high) in UPLOAD_BOUNDS.items()})
"""The most any league file may allow: what ``arena league upload`` packs a folder within before sending it. Only the
server knows its league's own ``[upload]``, and it enforces them; a client with limits of its own would refuse what
a league allows."""

BUILD_TIME_BOUNDS = (1, 24 * 3600)
BUILD_DISK_BOUNDS = (16, 65536)
BUILD_KEYS = ("time_s", "disk_mb", *LIMIT_KEYS)
"""``[build]``: the fields of :class:`arena.sandbox.build.BuildLimits` (``time_s`` is its ``timeout_s``); the keys
of ``[limits]`` mean what they mean there (``tmp_mb`` the build's ``/tmp``), ``disk_mb`` is its build folder."""


@dataclass(frozen=True)
class AuthorLimits:
    """What each author may do: the upload rate (against a flood of builds) and the versions kept per bot."""

    uploads_per_day: int = 20
    """New versions per author in this league in any 24 hours (each costs a sandboxed build); the operator has no
    quota."""
    versions_kept: int = 10
    """Versions kept per bot; the oldest retired ones go first."""


AUTHOR_BOUNDS = {"uploads_per_day": (1, 100_000), "versions_kept": (1, 10_000)}
AUTHOR_KEYS = tuple(AUTHOR_BOUNDS)


@dataclass(frozen=True)
class LadderSettings:
    """How the league plays its ladder: tables at once, the coverage every version is owed, the placement of a new
    version, and how much a repeated pairing is avoided (the matchmaker's rules, arena/league/rules/matchmaking.py)."""

    concurrency: int = 2
    """Ladder tables played at once, each one deal set under every seat rotation."""
    coverage: int = 4
    """Deal sets per hour every active version should play, the top ones included; with too little concurrency,
    every version gets an even share."""
    placement: int = 3
    """A new version's first deal sets, its placement: it anchors tables against the middle of the field before
    placed versions do."""
    pairing_penalty: float = 3.0
    """Rating points (OpenSkill's scale, where a new version's sigma is 8.3) one recent meeting costs a pairing."""


LADDER_BOUNDS = {"concurrency": (1, 256), "coverage": (0, 10_000), "placement": (0, 1000)}
LADDER_KEYS = (*LADDER_BOUNDS, "pairing_penalty")
PENALTY_BOUNDS = (0.0, 1000.0)


@dataclass(frozen=True)
class ChallengeSettings:
    """What challenges may ask for: a per-author rate (each one costs bot processes and games), a cap on deal sets,
    their own slots beside the ladder's, and the SPRT's hypotheses (Elo, as a tournament file's ``[sprt]``)."""

    per_day: int = 5
    """Challenges per author in any 24 hours."""
    max_deal_sets: int = 300
    """The most deal sets one challenge may ask for: its SPRT's cap."""
    concurrency: int = 1
    """Challenges played at once, beside the ladder's tables."""
    elo0: float = 0.0
    """The SPRT's H0 in Elo, as a tournament file's ``[sprt] elo0``; less than ``elo1``."""
    elo1: float = 40.0
    """The SPRT's H1 in Elo, as a tournament file's ``[sprt] elo1``."""


SIGNUP_MODES = ("operator", "invite", "approval")
"""How teams join a league: the operator adds each one; a team signs up with an operator's invite code; anyone
signs up and the operator approves each team before it can do anything."""


@dataclass(frozen=True)
class SignupSettings:
    """How teams join the league by themselves (``arena league sign-up``, the web's sign-up page): whether they may,
    how many, and how fast. A team is an author of one or more members, each with a token of its own."""

    mode: str = "operator"
    """``"operator"``: no sign-up, the operator adds each team (``arena league add-author``); ``"invite"``: a team
    signs up with an invite code the operator made (``arena league invite``), which expires and has a number of
    uses; ``"approval"``: anyone signs up, and the team can do nothing until the operator approves it (``arena
    league approve TEAM``, or ``reject TEAM``)."""
    max_teams: int = 0
    """Teams that may sign up through this league, those awaiting approval and rejected ones included; 0: no cap.
    Teams the operator adds do not count."""
    per_address_per_hour: int = 3
    """Sign-ups to this league from one client address in any hour."""
    per_league_per_hour: int = 20
    """Sign-ups to this league, from every address, in any hour."""


SIGNUP_BOUNDS = {"max_teams": (0, 1_000_000), "per_address_per_hour": (1, 100_000),
                 "per_league_per_hour": (1, 1_000_000)}
SIGNUP_KEYS = ("mode", *SIGNUP_BOUNDS)


@dataclass(frozen=True)
class NoticeSettings:
    """How the league tells teams what happened (``arena league feed-url``, ``arena league webhook``): which
    webhook addresses it posts to, and how it retries a delivery that failed."""

    allow_private_webhooks: bool = False
    """Whether a webhook may reach a loopback, private, link-local or otherwise non-public address, and use plain
    ``http://``: off, so that a team's webhook cannot make the server post into its own network; a test's local
    receiver, or a league inside a lab, turns it on."""
    retry_s: float = 30.0
    """Seconds before a failed delivery is tried again; each next retry waits twice as long (at most an hour)."""
    attempts: int = 8
    """Tries of one delivery before it is given up (each team's feed still shows the notice)."""
    timeout_s: float = 10.0
    """Seconds one try may take to connect, send and be answered."""


NOTICE_BOUNDS = {"attempts": (1, 100)}
NOTICE_SECONDS = {"retry_s": (0.01, 3600.0), "timeout_s": (0.5, 60.0)}
NOTICE_KEYS = ("allow_private_webhooks", *NOTICE_BOUNDS, *NOTICE_SECONDS)


CHALLENGE_BOUNDS = {"per_day": (1, 100_000), "max_deal_sets": (1, 10_000), "concurrency": (1, 64)}
CHALLENGE_KEYS = (*CHALLENGE_BOUNDS, "elo0", "elo1")
ELO_BOUNDS = (-1000.0, 1000.0)


TIMELINE_KEYS = ("opens", "freeze", "finals", "results")
"""``[timeline]``'s keys, in the order their times must come."""


@dataclass(frozen=True)
class Timeline:
    """When the league moves from one phase to the next by itself (arena/league/rules/timeline.py), each moment an
    aware UTC datetime, each optional; those given come in this order. A step left out is the operator's
    (``arena league freeze``, ``arena league finals --start``); a league file without ``[timeline]`` leaves every
    step to the operator."""

    opens: datetime | None = None
    """When the ladder starts (UTC); before it nothing is played."""
    freeze: datetime | None = None
    """When the league freezes itself (UTC)."""
    finals: datetime | None = None
    """When the finals start, with ``[finals]`` (UTC)."""
    results: datetime | None = None
    """When all may see the finals' ranking (UTC)."""

    def given(self) -> list[tuple[str, datetime]]:
        """The steps the timeline gives, in order, with their moments."""
        return [(key, moment) for key in TIMELINE_KEYS if (moment := getattr(self, key)) is not None]


DEAL_SETS = 10
"""Deal sets per table of the finals when neither the league file's ``[finals]`` nor the operator says."""
MAX_DEAL_SETS = 10_000
FINALS_BOUNDS = {"deal_sets": (1, MAX_DEAL_SETS), "tables": (0, 1_000_000), "rounds": (0, 1000),
                 "tiebreak_deal_sets": (0, 50)}
ROUND_ROBIN, SWISS, KNOCKOUT = "round_robin", "swiss", "knockout"
FINALS_FORMATS = (ROUND_ROBIN, SWISS, KNOCKOUT)
"""The finals' formats: the first for any league, the others for two sides only (two players or two teams)."""
ELIMINATIONS = ("single", "double")
FINALS_KEYS = ("format", *FINALS_BOUNDS, "elimination")
FORMAT_KEYS = {"rounds": SWISS, "elimination": KNOCKOUT, "tiebreak_deal_sets": KNOCKOUT}
"""The ``[finals]`` keys that mean something in one format only: given for another, they are refused, never
silently ignored."""


@dataclass(frozen=True)
class FinalsSettings:
    """How the finals are played when the timeline starts them (and the defaults of ``arena league finals
    --start`` without its flags)."""

    format: str = ROUND_ROBIN
    """``"round_robin"``: every pair meets (two sides), or a balanced schedule of ``tables`` tables (k-player
    tables), ranked by the maximum-likelihood fit. Two-sided leagues only (two players or two teams):
    ``"swiss"``, ``rounds`` rounds paired by score, no pairing repeated, ranked by points then the Swiss table's
    tie-breaks; ``"knockout"``, a bracket of ``elimination`` elimination, ranked by placement. Both are seeded by
    the leaderboard at the freeze (its first is seed 1)."""
    deal_sets: int = DEAL_SETS
    """Deal sets per finals table: per pairing of a round robin or a Swiss round, per knockout match."""
    tables: int = 0
    """k-player finals' tables (0: each pair meets about once)."""
    rounds: int = 0
    """Swiss finals' rounds (0: ``ceil(log2(field))``, the rounds that can leave one version alone on top)."""
    tiebreak_deal_sets: int = 2
    """Knockout finals: a match tied on match points over its ``deal_sets`` plays up to this many more deal sets,
    one at a time, the first not tied deciding it; still tied (or 0), the better seed goes through."""
    elimination: str = "single"
    """Knockout finals: ``"single"`` (a match lost is out) or ``"double"`` (a first loss drops to the losers'
    bracket, a second is out; the winners' and the losers' bracket winners meet in a grand final)."""


@dataclass(frozen=True)
class LeagueConfig:
    """A validated league file."""

    name: str
    """The league's identifier: 1 to 64 lowercase letters, digits, ``-`` and ``_``. It keys the database, so
    renaming a league starts a new one; required."""
    title: str
    """The league's name shown to people (default: ``name``); changing it later is fine."""
    variant: str
    """The variant every table plays (``arena variants``); required, and fixed once the league has a database."""
    players: int
    """Seats per table, also at a version's check (the variant's usual count when the file gives none)."""
    options: Mapping[str, Any]
    """The variant's options, every one resolved (the file's ``[options]``, the variant's defaults for the rest)."""
    duplicate: bool = True
    """Each table plays one deal set under every rotation of the seats, rated as one result; off (or at a table
    with a dial-in version), as many games of fresh deals, rated as single games."""
    kits: tuple[str, ...] = KITS
    """The kits whose uploads the league accepts, each named once."""
    interpreters: tuple[str, ...] = (DEFAULT_INTERPRETER,)
    """The interpreters a stdio kit's ``bot.toml`` may name (its key ``interpreter``), each once: a program's name,
    found on the bot sandbox's ``PATH`` (``perl``), or an absolute path (``/usr/bin/perl``). When the file gives
    none: ``python3`` (the arena's own Python, in every sandbox), then each of ``perl``, ``ruby``, ``lua``,
    ``bash``, ``node``, ``php``, ``tclsh``, ``guile``, ``Rscript`` (``arena.sandbox.contain.INTERPRETER_CANDIDATES``)
    that is an executable file in ``/usr/bin`` of the machine that reads the league file, in that order. A version's
    build refuses an interpreter that its sandbox does not hold read-only (one outside the system folders and the
    arena's Python), whatever this list says."""
    dial_in: bool = False
    """Whether authors may add dial-in versions (bots played from their own machines, outside the arena's sandbox,
    the network's latency on their clock): the operator's choice, off unless the file says so."""
    same_author_tables: bool = False
    """Whether two versions of one author may sit at one table of three or more sides, where they could share what
    they see against the others: off unless the file says so (the ladder's matchmaker and the finals keep them
    apart). Two-sided tables are not concerned."""
    time: TimeSpec = TimeSpec()
    """The time control of every game, also of a version's check: see [time]."""
    limits: Limits = Limits()
    """Each bot process's resource limits while it plays and while it is checked: see [limits]."""
    upload: UploadLimits = UploadLimits()
    """What one uploaded archive may hold: see [upload]."""
    build: BuildLimits = BuildLimits()
    """What one version's build may use, in its sandbox: see [build]."""
    authors: AuthorLimits = AuthorLimits()
    """What each author may do: see [authors]."""
    ladder: LadderSettings = LadderSettings()
    """How the league plays its ladder: see [ladder]."""
    challenges: ChallengeSettings = ChallengeSettings()
    """What an author's challenges may ask for: see [challenges]."""
    signup: SignupSettings = SignupSettings()
    """How teams join the league by themselves: see [signup]."""
    timeline: Timeline = Timeline()
    """Its phases' moments: see [timeline]."""
    finals: FinalsSettings = FinalsSettings()
    """The timeline's finals: see [finals]."""
    notices: NoticeSettings = NoticeSettings()
    """How teams are told what happened, by feeds and webhooks: see [notices]."""

    def game(self) -> Game:
        return new_game(self.variant, self.players, dict(self.options))

    def accepts_kit(self, kit: str) -> bool:
        return kit in self.kits

    def interpreter_refusal(self, manifest: Manifest) -> str | None:
        """Why an upload's ``bot.toml`` names an interpreter this league does not allow, in one line, or None."""
        if manifest.interpreter is None or manifest.interpreter in self.interpreters:
            return None
        return (f"the {manifest.kit} kit's interpreter {manifest.interpreter!r} is not one this league allows: "
                f"{', '.join(self.interpreters)}")



def league_from_text(text: str, interpreters: Sequence[str] = (DEFAULT_INTERPRETER,)) -> LeagueConfig:
    """Validate a league file's text, or raise one :class:`ConfigError` (reading the file is the caller's:
    :mod:`arena.league.files`). ``interpreters``: what the file's ``interpreters`` is when it gives none; the
    machine's (:func:`arena.sandbox.contain.installed_interpreters`) for a league file read from disk
    (:func:`arena.league.files.load_league`), ``python3`` alone otherwise (the rules look at no machine)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"not valid TOML: {error}") from None
    return league_from_dict(data, interpreters)


def league_from_dict(data: Mapping[str, Any], interpreters: Sequence[str] = (DEFAULT_INTERPRETER,)) -> LeagueConfig:
    """Validate a parsed league file, or raise one :class:`ConfigError` (the checks it shares with tournament files
    raise their :class:`SpecError`, turned into one here). ``interpreters`` as for :func:`league_from_text`."""
    try:
        return _league(data, tuple(interpreters))
    except ConfigError:
        raise
    except SpecError as error:
        raise ConfigError(str(error)) from None


def _league(data: Mapping[str, Any], machine_interpreters: tuple[str, ...]) -> LeagueConfig:
    _no_unknown(data, TOP_KEYS, "at the top level")
    name = _text(data, "name", required=True)
    if not NAME_PATTERN.fullmatch(name):
        raise ConfigError(f"key 'name' must be 1 to 64 lowercase letters, digits, '-' or '_' (starting with a letter "
                          f"or digit), got {name!r}")
    game = game_from_table(data)
    try:
        limits = limits_from_table(data.get("limits", {}))
    except LimitsError as error:
        raise ConfigError(str(error)) from None
    return LeagueConfig(
        name=name,
        title=_text(data, "title", default=name) or name,
        variant=game.name,
        players=game.players,
        options=MappingProxyType(dict(game.options)),
        duplicate=_boolean(data, "duplicate", default=True),
        kits=_kits(data.get("kits", list(KITS))),
        interpreters=_interpreters(data.get("interpreters", list(machine_interpreters))),
        dial_in=_boolean(data, "dial_in", default=False),
        same_author_tables=_boolean(data, "same_author_tables", default=False),
        time=time_from_table(data.get("time", {})),
        limits=limits,
        upload=_upload(_table(data, "upload", UPLOAD_KEYS)),
        build=_build(_table(data, "build", BUILD_KEYS)),
        authors=_authors(_table(data, "authors", AUTHOR_KEYS)),
        ladder=_ladder(_table(data, "ladder", LADDER_KEYS)),
        challenges=_challenges(_table(data, "challenges", CHALLENGE_KEYS)),
        signup=_signup(_table(data, "signup", SIGNUP_KEYS)),
        timeline=_timeline(_table(data, "timeline", TIMELINE_KEYS)),
        finals=_finals(_table(data, "finals", FINALS_KEYS), game.num_sides),
        notices=_notices(_table(data, "notices", NOTICE_KEYS)),
    )



def _table(data: Mapping[str, Any], key: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    """A sub-table (absent: empty), with no key it does not know."""
    table = data.get(key, {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"key '{key}' must be a table with {', '.join(keys)}, got {table!r}")
    _no_unknown(table, keys, f"in [{key}]")
    return table


def _kits(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(kit, str) for kit in value):
        raise ConfigError(f"key 'kits' must list at least one of {', '.join(KITS)}, got {value!r}")
    for kit in value:
        if kit not in KITS:
            raise ConfigError(f"key 'kits' names an unknown kit {kit!r}; valid kits: {', '.join(KITS)}")
    if len(set(value)) != len(value):
        raise ConfigError(f"key 'kits' must name each kit once, got {value!r}")
    return tuple(value)


def _interpreters(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"key 'interpreters' must list at least one interpreter like [\"python3\", \"perl\"], "
                          f"got {value!r}")
    for name in value:
        problem = interpreter_problem(name)
        if problem:
            raise ConfigError(f"key 'interpreters': each {problem}, got {name!r}")
    if len(set(value)) != len(value):
        raise ConfigError(f"key 'interpreters' must name each interpreter once, got {value!r}")
    return tuple(value)


def _upload(table: Mapping[str, Any]) -> UploadLimits:
    defaults = UploadLimits()
    values = {key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key), where="upload.")
              for key, (low, high) in UPLOAD_BOUNDS.items()}
    upload = UploadLimits(**values)
    if upload.unpacked_mb < upload.archive_mb:
        raise ConfigError(f"key 'upload.unpacked_mb' must be at least upload.archive_mb ({upload.archive_mb}), "
                          f"got {upload.unpacked_mb}")
    return upload


def _build(table: Mapping[str, Any]) -> BuildLimits:
    """``[build]`` as the build sandbox's own limits (one class for both: what the file says is what a build gets)."""
    defaults = BuildLimits()
    low, high = BUILD_TIME_BOUNDS
    time_s = _integer(table, "time_s", minimum=low, maximum=high, default=int(defaults.timeout_s), where="build.")
    low, high = BUILD_DISK_BOUNDS
    disk_mb = _integer(table, "disk_mb", minimum=low, maximum=high, default=defaults.disk_mb, where="build.")
    try:
        limits = limits_from_table({k: v for k, v in table.items() if k in LIMIT_KEYS}, defaults.as_bot_limits(),
                                   where="build.")
    except LimitsError as error:
        raise ConfigError(str(error)) from None
    return dataclasses.replace(defaults, **dataclasses.asdict(limits), disk_mb=disk_mb, timeout_s=float(time_s))


def _authors(table: Mapping[str, Any]) -> AuthorLimits:
    defaults = AuthorLimits()
    return AuthorLimits(
        **{key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key), where="authors.")
           for key, (low, high) in AUTHOR_BOUNDS.items()})


def _ladder(table: Mapping[str, Any]) -> LadderSettings:
    defaults = LadderSettings()
    values: dict[str, Any] = {key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key),
                                            where="ladder.") for key, (low, high) in LADDER_BOUNDS.items()}
    penalty = table.get("pairing_penalty", defaults.pairing_penalty)
    low, high = PENALTY_BOUNDS
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not low <= penalty <= high:
        raise ConfigError(f"key 'ladder.pairing_penalty' must be a number from {low:g} to {high:g} (rating points "
                          f"a recent meeting costs a pairing), got {penalty!r}")
    return LadderSettings(**values, pairing_penalty=float(penalty))


def _challenges(table: Mapping[str, Any]) -> ChallengeSettings:
    defaults = ChallengeSettings()
    values: dict[str, Any] = {key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key),
                                            where="challenges.") for key, (low, high) in CHALLENGE_BOUNDS.items()}
    low, high = ELO_BOUNDS
    for key in ("elo0", "elo1"):
        value = table.get(key, getattr(defaults, key))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ConfigError(f"key 'challenges.{key}' must be a number of Elo from {low:g} to {high:g} (the SPRT's "
                              f"hypotheses, as a tournament file's [sprt]), got {value!r}")
        values[key] = float(value)
    if values["elo1"] <= values["elo0"]:
        raise ConfigError(f"key 'challenges.elo1' must be greater than challenges.elo0 ({values['elo0']:g}), got "
                          f"{values['elo1']:g}")
    return ChallengeSettings(**values)


def _signup(table: Mapping[str, Any]) -> SignupSettings:
    defaults = SignupSettings()
    mode = table.get("mode", defaults.mode)
    if mode not in SIGNUP_MODES:
        raise ConfigError(f"key 'signup.mode' must be one of {', '.join(repr(m) for m in SIGNUP_MODES)}, got "
                          f"{mode!r}")
    values: dict[str, Any] = {key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key),
                                            where="signup.") for key, (low, high) in SIGNUP_BOUNDS.items()}
    return SignupSettings(mode=mode, **values)


def _timeline(table: Mapping[str, Any]) -> Timeline:
    """``[timeline]``: each key a UTC moment, those given in the order of :data:`TIMELINE_KEYS`."""
    timeline = Timeline(**{key: _moment(key, table[key]) for key in TIMELINE_KEYS if key in table})
    given = timeline.given()
    for (before, earlier), (key, later) in zip(given, given[1:], strict=False):
        if later <= earlier:
            raise ConfigError(f"key 'timeline.{key}' ({shown_moment(later)}) must come after timeline.{before} "
                              f"({shown_moment(earlier)}): the steps are opens, freeze, finals, results, in that "
                              f"order")
    return timeline


def _moment(key: str, value: Any) -> datetime:
    """A TOML datetime with an offset, or an ISO 8601 string ending in Z, as an aware UTC datetime; a time without
    its offset is refused (whose midnight would it be?)."""
    example = "2026-12-05T18:00:00Z"
    if isinstance(value, str):
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text) if text.endswith(("Z", "z")) else None
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            raise ConfigError(f"key 'timeline.{key}' must be a UTC time, a TOML datetime with its offset or an ISO "
                              f"8601 string ending in Z ({example}), got {value!r}")
        return moment.astimezone(UTC)
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ConfigError(f"key 'timeline.{key}' must say its offset (UTC: {example}), got {value.isoformat()} "
                              f"without one: a time without an offset is no one moment")
        return value.astimezone(UTC)
    if isinstance(value, (date, time_of_day)):
        raise ConfigError(f"key 'timeline.{key}' must be a date and a time with its offset ({example}), got "
                          f"{value.isoformat()}")
    raise ConfigError(f"key 'timeline.{key}' must be a UTC time ({example}), got {value!r}")


def shown_moment(moment: datetime) -> str:
    """A moment as every message of the league writes it: ``2026-12-05 18:00 UTC`` (seconds when it has any)."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%d %H:%M:%S UTC" if utc.second else "%Y-%m-%d %H:%M UTC")


def _finals(table: Mapping[str, Any], sides: int) -> FinalsSettings:
    defaults = FinalsSettings()
    values: dict[str, Any] = {key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key),
                                            where="finals.") for key, (low, high) in FINALS_BOUNDS.items()}
    for key, allowed in (("format", FINALS_FORMATS), ("elimination", ELIMINATIONS)):
        values[key] = table.get(key, getattr(defaults, key))
        if values[key] not in allowed:
            raise ConfigError(f"key 'finals.{key}' must be one of {', '.join(repr(v) for v in allowed)}, got "
                              f"{values[key]!r}")
    if sides == 2 and values["tables"]:
        raise ConfigError(f"key 'finals.tables' is for k-player tables: the finals of two sides are a round robin, "
                          f"a Swiss or a knockout (every table seats two), got {values['tables']}")
    if sides != 2 and values["format"] != ROUND_ROBIN:
        raise ConfigError(f"key 'finals.format' {values['format']!r} is for two sides (two players or two teams): "
                          f"the finals of {sides} sides are a round robin (a balanced schedule), "
                          f"format = {ROUND_ROBIN!r}")
    for key, fmt in FORMAT_KEYS.items():
        if key in table and values["format"] != fmt:
            raise ConfigError(f"key 'finals.{key}' is for {fmt} finals (format = {fmt!r}), got it with format = "
                              f"{values['format']!r}")
    return FinalsSettings(**values)


def _notices(table: Mapping[str, Any]) -> NoticeSettings:
    defaults = NoticeSettings()
    values: dict[str, Any] = {key: _integer(table, key, minimum=low, maximum=high, default=getattr(defaults, key),
                                            where="notices.") for key, (low, high) in NOTICE_BOUNDS.items()}
    for key, (low, high) in NOTICE_SECONDS.items():
        value = table.get(key, getattr(defaults, key))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ConfigError(f"key 'notices.{key}' must be a number of seconds from {low:g} to {high:g}, got "
                              f"{value!r}")
        values[key] = float(value)
    allow = _boolean(table, "allow_private_webhooks", default=defaults.allow_private_webhooks, where="notices.")
    return NoticeSettings(allow_private_webhooks=allow, **values)


def archive_limits(config: LeagueConfig) -> ArchiveLimits:
    """The league's ``[upload]`` as the archive checker's limits."""
    return upload_archive_limits(config.upload)


def upload_archive_limits(upload: UploadLimits) -> ArchiveLimits:
    """An ``[upload]`` table as the archive checker's limits (the league's, or :data:`WIDEST_UPLOAD`)."""
    return ArchiveLimits(max_compressed_bytes=upload.archive_bytes, max_uncompressed_bytes=upload.unpacked_bytes,
                         max_files=upload.files)
