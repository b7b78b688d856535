"""The league database's schema: every table as SQLAlchemy Core declares it (:data:`METADATA`).

This is the newest schema, the one the Alembic migrations (``migrations/``) build step by step; a change here goes
with a new migration. The states a ``state`` column may hold are the lifecycles' (:mod:`arena.league.rules.lifecycle`):
the database refuses any other.
"""

from __future__ import annotations

import sqlalchemy as sa

from arena.league.rules.lifecycle import STATES, TABLE_STATES
from arena.league.rules.model import ACTIVE, DELIVERY_STATES, TEAM_STATES

METADATA = sa.MetaData(naming_convention={
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
})
"""Named constraints, so a later migration can name the one it alters on SQLite and PostgreSQL alike."""

NAME_LENGTH = 64

leagues = sa.Table(
    "leagues", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False, unique=True),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("variant", sa.String(NAME_LENGTH), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
authors = sa.Table(
    "authors", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("name_key", sa.String(NAME_LENGTH), nullable=True, unique=True),
    sa.Column("state", sa.String(16), nullable=False, server_default=ACTIVE),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=True),
    sa.Column("signup_address", sa.String(64), nullable=True),
    sa.CheckConstraint(sa.column("state").in_(TEAM_STATES), name="state"),
    sa.Index(None, "league_id", "created_at"),
)
"""An author is a team of members (``members``). ``name_key`` is the name's lower case: no two teams have names that
differ only in case (it is NULL for an author named before that rule whose name was taken in another case).
``state``: active, pending (signed up, awaiting the operator's approval) or rejected. ``league_id`` and
``signup_address``: the league a team signed up through and the client's address (what the cap and the rate limits
count); NULL for a team the operator added."""
members = sa.Table(
    "members", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("captain", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    sa.UniqueConstraint("author_id", "name"),
)
"""A team's members, each with its own token: only the token's SHA-256 is stored (see :mod:`arena.league.authors`),
so the database alone lets no one act as an author. The first member is the team's captain."""
invites = sa.Table(
    "invites", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("code_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("uses", sa.Integer, nullable=False),
    sa.Column("used", sa.Integer, nullable=False, server_default="0"),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)
"""The operator's invite codes to sign up to a league (its ``[signup] mode = "invite"``): only a code's SHA-256 is
stored; ``used`` of its ``uses`` sign-ups taken, until ``expires_at``."""
audit = sa.Table(
    "audit", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=True),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=True),
    sa.Column("member_id", sa.Integer, nullable=True),
    sa.Column("actor", sa.String(2 * NAME_LENGTH + 1), nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Index(None, "author_id", "at"),
    sa.Index(None, "league_id", "at"),
)
"""The audit log: who did what, and when. ``actor`` is ``the operator`` or ``team/member`` as it was named then
(a removed member's rows stay; ``member_id`` keeps its id, no reference); ``author_id`` is the team acted for or
on."""
bots = sa.Table(
    "bots", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=False, index=True),
    sa.Column("name", sa.String(NAME_LENGTH), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("league_id", "name"),
)
"""A bot's name is unique in its league (standings show it), whoever its author."""
versions = sa.Table(
    "versions", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("number", sa.Integer, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("build_log", sa.Text, nullable=True),
    sa.Column("check_report", sa.JSON, nullable=True),
    sa.Column("start_failures", sa.Integer, nullable=False, server_default="0"),
    sa.Column("run_command", sa.JSON, nullable=True),
    sa.Column("run_folder", sa.Text, nullable=True),
    sa.Column("run_protocol", sa.String(16), nullable=True),
    sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("dial_in_sha256", sa.String(64), nullable=True),
    sa.UniqueConstraint("bot_id", "sha256"),
    sa.UniqueConstraint("bot_id", "number"),
    sa.CheckConstraint(sa.column("state").in_(STATES), name="state"),
)
"""One row per distinct archive of a bot: the same archive uploaded twice is one version (unique bot and SHA-256).
``run_*`` say how its built bot runs (set when its build succeeded): the command, its folder (relative to the league's
versions folder, so a moved data folder keeps working) and its protocol. ``deleted_at`` marks a version deleted to
keep its bot within ``authors.versions_kept``: the row stays (games and ratings refer to it), its files are gone.
``dial_in_sha256`` marks a dial-in version (no archive, no build: its author's machine plays it over a dial-in stream):
the SHA-256 of its bot token, the token itself never stored."""
games = sa.Table(
    "games", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("game_key", sa.String(200), nullable=False),
    sa.Column("line", sa.Integer, nullable=True),
    sa.Column("played_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("league_id", "record", "game_key"),
    sa.Index(None, "league_id", "played_at"),
)
"""The index of played games: where each one's record is (its file, its id there, its line when known)."""
game_seats = sa.Table(
    "game_seats", METADATA,
    sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False, index=True),
    sa.Column("score", sa.Integer, nullable=False),
    sa.Column("points", sa.Float, nullable=False),
)
"""Who sat where in each game and how it ended for them: the game's score and its share of the result (1 a win,
0.5 a draw of two, 0 a loss), what the rating fits read."""
ratings = sa.Table(
    "ratings", METADATA,
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), primary_key=True),
    sa.Column("system", sa.String(32), primary_key=True),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)
"""Each version's rating in each system (``openskill`` for matchmaking, a maximum-likelihood fit for the board)."""

ladder_tables = sa.Table(
    "tables", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("sequence", sa.Integer, nullable=True),
    sa.Column("single_games", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("league_id", "sequence"),
    sa.CheckConstraint(sa.column("state").in_(TABLE_STATES), name="state"),
    sa.Index(None, "league_id", "state"),
)
"""The ladder's queue: each table the matchmaker chose, with its one-line reason, queued -> playing -> done (or
failed, with why). ``sequence`` numbers the done tables in the order their results were rated (1, 2, 3...): the
online rating is a function of that order, so a recompute follows it. ``single_games`` says how a done table was
rated: false, its games as one deal set (one result); true, each game a result of its own, in the order of the games'
keys (a run without duplicate deals, each game a fresh deal: a table with a dial-in version). It is read from the
run when the table is rated, so that a recompute and the leaderboard's rebuild after a restart rate it the same.
Tables rated before the column existed were all rated as one result, which its default says."""
table_sides = sa.Table(
    "table_sides", METADATA,
    sa.Column("table_id", sa.Integer, sa.ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("side", sa.Integer, primary_key=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False, index=True),
)
"""The version of each side of a table (a side is a seat, or a team whose seats the version all holds)."""
challenges = sa.Table(
    "challenges", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=True),
    sa.Column("version_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
    sa.Column("opponent_id", sa.Integer, sa.ForeignKey("versions.id"), nullable=False),
    sa.Column("deal_sets", sa.Integer, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("result", sa.JSON, nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint(sa.column("state").in_(TABLE_STATES), name="state"),
    sa.Index(None, "league_id", "state"),
    sa.Index(None, "author_id", "created_at"),
)
"""Challenges (arena/league/play/challenges.py): an author's version against a named one, unrated, queued -> playing ->
done (``result``: the SPRT's verdict) or failed with why. ``author_id`` is None for the operator's."""
freezes = sa.Table(
    "freezes", METADATA,
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), primary_key=True),
    sa.Column("frozen_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("field", sa.JSON, nullable=False),
    sa.Column("finals", sa.JSON, nullable=True),
)
"""A frozen league (no more ladder tables or challenges): when, its field (the version ids active then) and its
finals (their settings, state and ranking, once started)."""
notices = sa.Table(
    "notices", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uid", sa.String(36), nullable=False, unique=True),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("link", sa.String(400), nullable=False),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    sa.Index(None, "league_id", "author_id", "id"),
)
"""What the league told (:mod:`arena.league.rules.notices`): each notice for one team (``author_id``) or everyone
(NULL), recorded in the transaction of the change it tells; ``uid`` is its stable id in feeds and webhooks."""
feed_tokens = sa.Table(
    "feed_tokens", METADATA,
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), primary_key=True),
    sa.Column("token", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
"""Each team's secret feed token, the key of its private feed's address: it reads the team's notices and nothing
else, and is kept as it is (the team's members are shown it again); a new one replaces it."""
webhooks = sa.Table(
    "webhooks", METADATA,
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), primary_key=True),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), primary_key=True),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("secret", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
"""A team's webhook in a league: where its notices (and the league's public ones) are posted, and the secret they
are signed with (the server signs with it, so it is kept as it is)."""
deliveries = sa.Table(
    "deliveries", METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("notice_id", sa.Integer, sa.ForeignKey("notices.id"), nullable=False),
    sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
    sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id"), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    sa.CheckConstraint(sa.column("state").in_(DELIVERY_STATES), name="state"),
    sa.Index(None, "league_id", "state", "next_at"),
    sa.Index(None, "author_id", "state"),
)
"""Each notice to post to a team's webhook, queued with the notice (same transaction), so a restart resumes the
pending ones: pending (tried ``attempts`` times, next at ``next_at``), delivered, failed (given up, ``error`` the last
try's) or dropped (past the team's queue, or its webhook cleared)."""
