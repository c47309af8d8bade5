"""The weekly picture: a channel option (NULL: the default) and one claim per channel and week.

Revision ID: 0013
Revises: 0010
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("channels") as batch_op:
        batch_op.add_column(sa.Column("weekly", sa.Boolean(), nullable=True))
    op.create_table(
        "weekly_pictures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey(
                "channels.id", ondelete="CASCADE", name="fk_weekly_pictures_channel_id_channels"
            ),
            nullable=False,
        ),
        sa.Column("week", sa.Date(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="claimed"),
        sa.Column("claimed_by", sa.String(128), nullable=False, server_default=""),
        sa.Column("fence", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("lease_until", sa.DateTime(timezone=True)),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text()),
        sa.Column("message_ref", sa.Text()),
        sa.Column("posted_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_weekly_pictures")),
        sa.UniqueConstraint("channel_id", "week", name="uq_weekly_pictures_channel_id"),
    )


def downgrade() -> None:
    op.drop_table("weekly_pictures")
    with op.batch_alter_table("channels") as batch_op:
        batch_op.drop_column("weekly")
