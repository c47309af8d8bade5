"""Mentions: members who asked to be mentioned on a channel's picks that fit their own digest,
and the mentions each delivered pick carries (fixed when its digest was composed).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mention_optins",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("personal_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_mention_optins_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["personal_id"],
            ["channels.id"],
            name=op.f("fk_mention_optins_personal_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mention_optins")),
        sa.UniqueConstraint("channel_id", "user_id", name=op.f("uq_mention_optins_channel_id")),
    )
    op.create_index("ix_mention_optins_personal_id", "mention_optins", ["personal_id"])
    with op.batch_alter_table("delivery_items") as batch:
        batch.add_column(sa.Column("mentions", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("delivery_items") as batch:
        batch.drop_column("mentions")
    op.drop_index("ix_mention_optins_personal_id", table_name="mention_optins")
    op.drop_table("mention_optins")
