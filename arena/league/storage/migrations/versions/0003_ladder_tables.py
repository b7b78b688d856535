"""The ladder's tables: each table the matchmaker chose (its versions per side, the reason, its state and times) and
the order in which finished tables were rated.

Revision 0003, after 0002.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TABLE_STATES = ("queued", "playing", "done", "failed")
MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("league_id", sa.Integer, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("started_at", MOMENT, nullable=True),
        sa.Column("ended_at", MOMENT, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("sequence", sa.Integer, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_tables"),
        sa.ForeignKeyConstraint(["league_id"], ["leagues.id"], name="fk_tables_league_id_leagues"),
        sa.UniqueConstraint("league_id", "sequence", name="uq_tables_league_id_sequence"),
        sa.CheckConstraint(sa.column("state").in_(TABLE_STATES), name="ck_tables_state"),
    )
    op.create_index("ix_tables_league_id_state", "tables", ["league_id", "state"])
    op.create_table(
        "table_sides",
        sa.Column("table_id", sa.Integer, nullable=False),
        sa.Column("side", sa.Integer, nullable=False),
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("table_id", "side", name="pk_table_sides"),
        sa.ForeignKeyConstraint(["table_id"], ["tables.id"], name="fk_table_sides_table_id_tables",
                                ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["version_id"], ["versions.id"], name="fk_table_sides_version_id_versions"),
    )
    op.create_index("ix_table_sides_version_id", "table_sides", ["version_id"])


def downgrade() -> None:
    op.drop_table("table_sides")
    op.drop_table("tables")
