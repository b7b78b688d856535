"""The teams' notices: ``notices`` (what the league told, to one team or everyone), ``feed_tokens`` (each team's
private feed's key), ``webhooks`` (a team's receiver in a league and its signing secret) and ``deliveries`` (each
notice to post to a webhook, and how its tries went).

Revision 0010, after 0008.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "notices",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("uid", sa.String(36), nullable=False),
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id", name="fk_notices_league_id_leagues"),
                  nullable=False),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", name="fk_notices_author_id_authors"),
                  nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("link", sa.String(400), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_notices"),
        sa.UniqueConstraint("uid", name="uq_notices_uid"),
    )
    op.create_index("ix_notices_league_id_author_id_id", "notices", ["league_id", "author_id", "id"])
    op.create_table(
        "feed_tokens",
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", name="fk_feed_tokens_author_id_authors"),
                  nullable=False),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("author_id", name="pk_feed_tokens"),
        sa.UniqueConstraint("token", name="uq_feed_tokens_token"),
    )
    op.create_table(
        "webhooks",
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id", name="fk_webhooks_league_id_leagues"),
                  nullable=False),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", name="fk_webhooks_author_id_authors"),
                  nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("league_id", "author_id", name="pk_webhooks"),
    )
    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("notice_id", sa.Integer, sa.ForeignKey("notices.id", name="fk_deliveries_notice_id_notices"),
                  nullable=False),
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id", name="fk_deliveries_league_id_leagues"),
                  nullable=False),
        sa.Column("author_id", sa.Integer, sa.ForeignKey("authors.id", name="fk_deliveries_author_id_authors"),
                  nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_deliveries"),
        sa.CheckConstraint(sa.column("state").in_(("pending", "delivered", "failed", "dropped")),
                           name="ck_deliveries_state"),
    )
    op.create_index("ix_deliveries_league_id_state_next_at", "deliveries", ["league_id", "state", "next_at"])
    op.create_index("ix_deliveries_author_id_state", "deliveries", ["author_id", "state"])


def downgrade() -> None:
    op.drop_table("deliveries")
    op.drop_table("webhooks")
    op.drop_table("feed_tokens")
    op.drop_table("notices")
