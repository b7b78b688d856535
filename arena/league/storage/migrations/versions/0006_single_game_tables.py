"""Tables rated game by game: ``tables.single_games`` says that a done table's games were each rated as a result of
their own (its run had no duplicate deals, each game a fresh deal: a table with a dial-in version), not as one deal
set. False for every table rated before, as each of them was rated as one result.

Revision 0006, after 0005.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:  # batch: SQLite alters a table by copying it
        batch.add_column(sa.Column("single_games", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("single_games")
