"""Challenges and the freeze: each challenge an author asked for (its version, the opponent, the deal sets, its
state and SPRT result), and each league's freeze (when, and the field: the active version of each bot then).

Revision 0004, after 0003.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

CHALLENGE_STATES = ("queued", "playing", "done", "failed")
MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "challenges",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("league_id", sa.Integer, nullable=False),
        sa.Column("author_id", sa.Integer, nullable=True),
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.Column("opponent_id", sa.Integer, nullable=False),
        sa.Column("deal_sets", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("started_at", MOMENT, nullable=True),
        sa.Column("ended_at", MOMENT, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_challenges"),
        sa.ForeignKeyConstraint(["league_id"], ["leagues.id"], name="fk_challenges_league_id_leagues"),
        sa.ForeignKeyConstraint(["author_id"], ["authors.id"], name="fk_challenges_author_id_authors"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_challenges_version_id_versions"),
        sa.ForeignKeyConstraint(["opponent_id"], ["versions.id"], name="fk_challenges_opponent_id_versions"),
        sa.CheckConstraint(sa.column("state").in_(CHALLENGE_STATES), name="ck_challenges_state"),
    )
    op.create_index("ix_challenges_league_id_state", "challenges", ["league_id", "state"])
    op.create_index("ix_challenges_author_id_created_at", "challenges", ["author_id", "created_at"])
    op.create_table(
        "freezes",
        sa.Column("league_id", sa.Integer, nullable=False),
        sa.Column("frozen_at", MOMENT, nullable=False),
        sa.Column("field", sa.JSON, nullable=False),
        sa.Column("finals", sa.JSON, nullable=True),
        sa.PrimaryKeyConstraint("league_id", name="pk_freezes"),
        sa.ForeignKeyConstraint(["league_id"], ["leagues.id"], name="fk_freezes_league_id_leagues"),
    )


def downgrade() -> None:
    op.drop_table("freezes")
    op.drop_table("challenges")
