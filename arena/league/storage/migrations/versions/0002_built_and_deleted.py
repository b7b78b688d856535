"""Where a version's built bot is and how it runs (so a ready version is playable after a restart, by the ladder),
and when a version was deleted to keep its bot within ``authors.versions_kept`` (its row stays: games and ratings
refer to it; its archive and built folder are gone).

Revision 0002, after 0001.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:  # batch: SQLite alters a table by copying it
        batch.add_column(sa.Column("run_command", sa.JSON, nullable=True))
        batch.add_column(sa.Column("run_folder", sa.Text, nullable=True))
        batch.add_column(sa.Column("run_protocol", sa.String(16), nullable=True))
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        for column in ("deleted_at", "run_protocol", "run_folder", "run_command"):
            batch.drop_column(column)
