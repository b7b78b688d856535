"""Dial-in versions: a version that is neither uploaded nor built, played by its author's own machine over a dial-in
stream while it is connected. ``dial_in_sha256`` is the SHA-256 of its bot token (the token itself is never stored);
NULL for every uploaded version.

Revision 0005, after 0004.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("versions") as batch:  # batch: SQLite alters a table by copying it
        batch.add_column(sa.Column("dial_in_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.drop_column("dial_in_sha256")
