"""What the league's use cases (:class:`arena.league.core.LeagueCore`) answer: frozen dataclasses, one per shape a
client sees, whichever edge shows them (the gRPC service converts them to its messages once, in
arena/server/league_messages.py; the web reads them straight into its pages and JSON).

States are their names (a version's ``"ready"``, a table's ``"done"``: the database's own words); times are Unix
seconds, 0.0 for a moment not come yet (a table not started); ratings and intervals are 0.0 where none is known
yet (the row's ``fitted`` says whether the leaderboard's fit has it).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.league.play.table_logs import BotLog


@dataclass(frozen=True)
class AuthorView:
    """An author: its name, when it was created and, once its token is revoked, when (0.0 before)."""

    name: str
    created_at: float
    revoked_at: float


@dataclass(frozen=True)
class AddedAuthor:
    """A new author and its token (shown once: the server keeps only its hash)."""

    author: AuthorView
    token: str


@dataclass(frozen=True)
class MemberView:
    """A member of a team (never its token): its name, whether it is the captain, when added and revoked (0.0
    before)."""

    name: str
    captain: bool
    created_at: float
    revoked_at: float


@dataclass(frozen=True)
class TeamView:
    """A team: its name, state (active, pending, rejected), times, the league it signed up through ("" for the
    operator's) and its members, captain first."""

    name: str
    state: str
    created_at: float
    revoked_at: float
    league: str
    members: tuple[MemberView, ...]


@dataclass(frozen=True)
class SignedUp:
    """A team that signed up, and its captain's token (shown once)."""

    team: TeamView
    token: str


@dataclass(frozen=True)
class InviteMade:
    """An invite code (shown once), its league, uses and expiry."""

    code: str
    league: str
    uses: int
    expires_at: float


@dataclass(frozen=True)
class MemberAdded:
    """A new member of a team, and its token (shown once)."""

    team: str
    member: MemberView
    token: str


@dataclass(frozen=True)
class FeedAddress:
    """A team's private feed of a league: its path on the server's dashboard (with the team's secret feed token)."""

    league: str
    team: str
    path: str


@dataclass(frozen=True)
class WebhookView:
    """A team's webhook in a league after it was set (its secret shown this once) or cleared (``url`` empty)."""

    league: str
    team: str
    url: str
    secret: str = ""


@dataclass(frozen=True)
class MemberRevoked:
    """A member whose token was revoked, or who was removed."""

    team: str
    member: MemberView
    removed: bool


@dataclass(frozen=True)
class AuditView:
    """One audit entry: when, who (``the operator``, ``team/member``), what, on what, and the team ("" for none)."""

    at: float
    actor: str
    action: str
    detail: str
    team: str


@dataclass(frozen=True)
class VersionView:
    """A version as the league lists it, with its bot, league and author, and whether it is its bot's active one."""

    id: int
    league: str
    bot: str
    author: str
    number: int
    sha256: str
    state: str
    reason: str
    created_at: float
    updated_at: float
    active: bool
    dial_in: bool


@dataclass(frozen=True)
class Uploaded:
    """An upload's version, and whether it is new (False: the same archive was already that version)."""

    version: VersionView
    created: bool


@dataclass(frozen=True)
class DialInAdded:
    """A new dial-in version, its token (shown once) and the name its author's program connects as."""

    version: VersionView
    token: str
    connect_as: str


@dataclass(frozen=True)
class BotSummary:
    """A bot as the list of bots shows it: its versions' count and its active version's id (0 when none)."""

    league: str
    name: str
    author: str
    versions: int
    active_version: int


@dataclass(frozen=True)
class BuildLog:
    """A version with its build log and its check report (JSON text, empty before the check)."""

    version: VersionView
    build_log: str
    check_report: str


@dataclass(frozen=True)
class TableView:
    """A ladder table: its sides (names and version ids), why it was chosen, its state and times, its error, and
    each side's points and its games' keys once done (a table being played shows none: its games share their
    deals). A table the matchmaker proposes has no id yet (0)."""

    id: int
    versions: tuple[str, ...]
    version_ids: tuple[int, ...]
    reason: str
    state: str
    created_at: float = 0.0
    started_at: float = 0.0
    ended_at: float = 0.0
    error: str = ""
    points: tuple[float, ...] = ()
    games: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableLogView:
    """A version's bot logs at a table that ended."""

    table: TableView
    version: str
    """The version's name at the table (``bot-vN``)."""
    logs: tuple[BotLog, ...]


@dataclass(frozen=True)
class Standing:
    """One row of the leaderboard (a bot's active version on the board, any rated version in a watch's rows): its
    place and rank range, the fit's Elo and 95% interval (0.0 until ``fitted``), its online rating (mu and sigma,
    0.0 without one), the deal sets it was rated on, its games, its version's state, the rows it cannot yet be told
    apart from (``bot-vN``), and its form (:class:`arena.league.rules.board.Form`)."""

    rank: int
    version_id: int
    bot: str
    number: int
    author: str
    rating: float
    rating_low: float
    rating_high: float
    sigma: float
    online_mu: float
    deal_sets: int
    games: int
    state: str
    rank_best: int
    rank_worst: int
    fitted: bool
    tied_with: tuple[str, ...]
    form: tuple[float, ...] = ()
    """Its score in each of its last rated deal sets, oldest first (1.0 won outright, 0.0 lost to every other
    side)."""


@dataclass(frozen=True)
class Leaderboard:
    """A league's leaderboard: the rating system, the rows (one per bot: its active version, placed among the
    shown rows by the fit over every version, :func:`arena.league.rules.board.bots_board`), the deal sets the fit
    holds of those rated, and the rule by which ranks are told apart."""

    league: str
    rating: str
    standings: tuple[Standing, ...]
    deal_sets_fitted: int
    deal_sets_rated: int
    rank_rule: str
    title: str = ""
    """The league's title, as shown to people."""


@dataclass(frozen=True)
class LadderQueue:
    """The tables being played, the ones the matchmaker would choose next and the recently ended, with the number
    played at once and why fewer are (``note``)."""

    league: str
    concurrency: int
    playing: tuple[TableView, ...]
    next: tuple[TableView, ...]
    recent: tuple[TableView, ...]
    note: str


@dataclass(frozen=True)
class TableRated:
    """A table that ended, as a watch of the ladder sees it: the table, its versions' rows after it (none for a
    failed table), and the deal sets the leaderboard's fit holds."""

    table: TableView
    ratings: tuple[Standing, ...]
    deal_sets_fitted: int


@dataclass(frozen=True)
class BotPage:
    """A bot as the public sees it (:meth:`LeagueCore.bot_page`)."""

    league: str
    bot: str
    author: str
    versions: tuple[VersionView, ...]
    """Oldest first."""
    tables: tuple[TableView, ...]
    """Its versions' ended tables, newest first."""


@dataclass(frozen=True)
class ChallengeView:
    """A challenge: its versions, deal sets and state; once decided, the test's verdict and estimate."""

    id: int
    league: str
    author: str
    version_id: int
    version: str
    opponent_id: int
    opponent: str
    deal_sets: int
    state: str
    error: str
    created_at: float
    started_at: float
    ended_at: float
    verdict: str = ""
    sprt_state: str = ""
    elo: float = 0.0
    elo_low: float = 0.0
    elo_high: float = 0.0
    units: int = 0
    outcome: str = ""
    """Once done, what the data say (:mod:`arena.league.rules.verdict`): ``better``, ``worse``, ``not better by N
    Elo`` or ``not told apart after N deal sets``."""
    outcome_why: str = ""
    """Which numbers say so: the SPRT's decision, or the Elo difference's 95% interval when it did not stop."""


@dataclass(frozen=True)
class Frozen:
    """A frozen league: when, and its field (the versions active then, by name and by id)."""

    league: str
    frozen_at: float
    field: tuple[str, ...]
    field_ids: tuple[int, ...]


@dataclass(frozen=True)
class FinalsRank:
    """One version's place in the finals' ranking: a round robin's fit (rating and interval), or a Swiss's or a
    knockout's order (no rating: 0.0 for all three)."""

    rank: str
    """A place ("3"), or a range ("2–3") when the intervals leave it anywhere in it."""
    version: str
    version_id: int
    rating: float
    rating_low: float
    rating_high: float
    deal_sets: int
    tied_with: tuple[str, ...]


@dataclass(frozen=True)
class FinalsState:
    """The finals as the operator's call answers: their state (``"not frozen"``, ``"frozen"``, then their own),
    their format once started (what their ranking is: a fit's, a Swiss table's, a bracket's placements), their run
    folder, the games recorded and scheduled, the ranking once done, and their error."""

    league: str
    state: str
    folder: str = ""
    games: int = 0
    scheduled: int = 0
    ranking: tuple[FinalsRank, ...] = ()
    error: str = ""
    results_at: float = 0.0
    """When the ranking is published, while it is withheld from this caller (the timeline's ``results`` not come,
    the caller not the operator); 0.0 when it is shown."""
    format: str = ""
    """``round_robin``, ``swiss`` or ``knockout``, as the finals started; "" before."""


@dataclass(frozen=True)
class LeagueStatus:
    """Where a league is: its title and variant, its phase (:data:`arena.league.rules.timeline.PHASES`), the next
    phase and when it comes (0.0: when the operator moves it, or never), that in one line (``freezes in 2 h 14 min
    (at 2026-12-05 18:00 UTC)``), whether the finals' results are published, the moments its timeline gives (0.0:
    not given) and the server's clock."""

    league: str
    title: str
    variant: str
    phase: str
    next_phase: str
    next_at: float
    next: str
    results_published: bool
    opens: float = 0.0
    freeze: float = 0.0
    finals: float = 0.0
    results: float = 0.0
    now: float = 0.0
    variant_title: str = ""
    """The variant's title as people read it (``Draw (Pagat's individual Draw game)``)."""
    players: int = 0
    """Seats at each table."""
    time_control: str = ""
    """The time control in words (``2 s a move, a 30 s bank per seat per match``)."""
