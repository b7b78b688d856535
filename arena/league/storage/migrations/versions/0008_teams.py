"""Teams of members, sign-ups, invites and the audit log. Each author becomes a team whose one member, its captain,
keeps the author's token hash (so every token given before keeps working); the authors' names get a lower-case key
(unique: no two teams' names differ only in case; NULL for an older author whose name another took in another
case), a state (every older author is active), and the league and address of a sign-up (NULL for the operator's).
New tables: ``members``, ``invites`` and ``audit``.

Revision 0008, after 0006.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0006"
branch_labels = None
depends_on = None

NAME_LENGTH = 64


def upgrade() -> None:
    op.create_table(
        "members",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", name="fk_members_author_id_authors"),
                  nullable=False),
        sa.Column("name", sa.String(NAME_LENGTH), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("captain", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_members"),
        sa.UniqueConstraint("author_id", "name", name="uq_members_author_id_name"),
        sa.UniqueConstraint("token_hash", name="uq_members_token_hash"),
    )
    connection = op.get_bind()
    authors = sa.table("authors", sa.column("id", sa.Integer), sa.column("name", sa.String),
                       sa.column("token_hash", sa.String), sa.column("created_at", sa.DateTime(timezone=True)),
                       sa.column("name_key", sa.String))
    members = sa.table("members", sa.column("author_id", sa.Integer), sa.column("name", sa.String),
                       sa.column("token_hash", sa.String), sa.column("captain", sa.Boolean),
                       sa.column("created_at", sa.DateTime(timezone=True)))
    rows = connection.execute(sa.select(authors.c.id, authors.c.name, authors.c.token_hash,
                                        authors.c.created_at).order_by(authors.c.id)).all()
    if rows:
        connection.execute(sa.insert(members), [
            {"author_id": row.id, "name": "captain", "token_hash": row.token_hash, "captain": True,
             "created_at": row.created_at} for row in rows])
    with op.batch_alter_table("authors") as batch:  # batch: SQLite alters a table by copying it
        batch.drop_constraint("uq_authors_token_hash", type_="unique")
        batch.drop_column("token_hash")
        batch.add_column(sa.Column("name_key", sa.String(NAME_LENGTH), nullable=True))
        batch.add_column(sa.Column("state", sa.String(16), nullable=False, server_default="active"))
        batch.add_column(sa.Column("league_id", sa.Integer, nullable=True))
        batch.add_column(sa.Column("signup_address", sa.String(64), nullable=True))
        batch.create_foreign_key("fk_authors_league_id_leagues", "leagues", ["league_id"], ["id"])
        batch.create_check_constraint("ck_authors_state", sa.column("state").in_(("active", "pending", "rejected")))
    keys: set[str] = set()
    for row in rows:  # the first author of a name keeps its key; a later one differing only in case has none
        key = row.name.lower()
        if key not in keys:
            keys.add(key)
            connection.execute(sa.update(authors).where(authors.c.id == row.id).values(name_key=key))
    with op.batch_alter_table("authors") as batch:
        batch.create_unique_constraint("uq_authors_name_key", ["name_key"])
        batch.create_index("ix_authors_league_id_created_at", ["league_id", "created_at"])
    op.create_table(
        "invites",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id", name="fk_invites_league_id_leagues"),
                  nullable=False),
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("uses", sa.Integer, nullable=False),
        sa.Column("used", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_invites"),
        sa.UniqueConstraint("code_hash", name="uq_invites_code_hash"),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id", name="fk_audit_league_id_leagues"),
                  nullable=True),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", name="fk_audit_author_id_authors"),
                  nullable=True),
        sa.Column("member_id", sa.Integer, nullable=True),
        sa.Column("actor", sa.String(2 * NAME_LENGTH + 1), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit"),
    )
    op.create_index("ix_audit_author_id_at", "audit", ["author_id", "at"])
    op.create_index("ix_audit_league_id_at", "audit", ["league_id", "at"])


def downgrade() -> None:
    op.drop_table("audit")
    op.drop_table("invites")
    with op.batch_alter_table("authors") as batch:
        batch.drop_index("ix_authors_league_id_created_at")
        batch.drop_constraint("uq_authors_name_key", type_="unique")
        batch.drop_constraint("ck_authors_state", type_="check")
        batch.drop_constraint("fk_authors_league_id_leagues", type_="foreignkey")
        batch.drop_column("signup_address")
        batch.drop_column("league_id")
        batch.drop_column("state")
        batch.drop_column("name_key")
        batch.add_column(sa.Column("token_hash", sa.String(64), nullable=True))
    connection = op.get_bind()
    connection.execute(sa.text("UPDATE authors SET token_hash = (SELECT token_hash FROM members WHERE "
                               "members.author_id = authors.id AND members.captain ORDER BY members.id LIMIT 1)"))
    op.drop_table("members")
