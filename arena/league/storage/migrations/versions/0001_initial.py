"""The league's first schema: leagues, authors (token hashes only), bots, versions, the games' index and ratings.

Revision 0001, the first.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

STATES = ("uploaded", "building", "checking", "ready", "failed", "suspended", "retired")
MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "leagues",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("variant", sa.String(64), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_leagues"),
        sa.UniqueConstraint("name", name="uq_leagues_name"),
    )
    op.create_table(
        "authors",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("revoked_at", MOMENT, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_authors"),
        sa.UniqueConstraint("name", name="uq_authors_name"),
        sa.UniqueConstraint("token_hash", name="uq_authors_token_hash"),
    )
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("league_id", sa.Integer, nullable=False),
        sa.Column("author_id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_bots"),
        sa.ForeignKeyConstraint(["league_id"], ["leagues.id"], name="fk_bots_league_id_leagues"),
        sa.ForeignKeyConstraint(["author_id"], ["authors.id"], name="fk_bots_author_id_authors"),
        sa.UniqueConstraint("league_id", "name", name="uq_bots_league_id_name"),
    )
    op.create_index("ix_bots_author_id", "bots", ["author_id"])
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("bot_id", sa.Integer, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("updated_at", MOMENT, nullable=False),
        sa.Column("build_log", sa.Text, nullable=True),
        sa.Column("check_report", sa.JSON, nullable=True),
        sa.Column("start_failures", sa.Integer, nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("id", name="pk_versions"),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name="fk_versions_bot_id_bots"),
        sa.UniqueConstraint("bot_id", "sha256", name="uq_versions_bot_id_sha256"),
        sa.UniqueConstraint("bot_id", "number", name="uq_versions_bot_id_number"),
        sa.CheckConstraint(sa.column("state").in_(STATES), name="ck_versions_state"),
    )
    op.create_index("ix_versions_created_at", "versions", ["created_at"])
    op.create_table(
        "games",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("league_id", sa.Integer, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("game_key", sa.String(200), nullable=False),
        sa.Column("line", sa.Integer, nullable=True),
        sa.Column("played_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
        sa.ForeignKeyConstraint(["league_id"], ["leagues.id"], name="fk_games_league_id_leagues"),
        sa.UniqueConstraint("league_id", "record", "game_key", name="uq_games_league_id_record_game_key"),
    )
    op.create_index("ix_games_league_id_played_at", "games", ["league_id", "played_at"])
    op.create_table(
        "game_seats",
        sa.Column("game_id", sa.Integer, nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("points", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seat", name="pk_game_seats"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], name="fk_game_seats_game_id_games", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_game_seats_version_id_versions"),
    )
    op.create_index("ix_game_seats_version_id", "game_seats", ["version_id"])
    op.create_table(
        "ratings",
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.Column("system", sa.String(32), nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("updated_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("version_id", "system", name="pk_ratings"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_ratings_version_id_versions"),
    )


def downgrade() -> None:
    for table in ("ratings", "game_seats", "games", "versions", "bots", "authors", "leagues"):
        op.drop_table(table)
