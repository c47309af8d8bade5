"""The reading group: a channel's weekly meeting, members' nominations, each week's poll and
its votes (one per person and poll). Its posts are deliveries of the one ledger (kinds
rg-poll, rg-pick, rg-thread, rg-remind, rg-recap), so no delivery table changes.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reading_groups",
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("weekday", sa.SmallInteger(), nullable=False),
        sa.Column("at", sa.String(5), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("set_by", sa.String(128), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_reading_groups_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("channel_id", name=op.f("pk_reading_groups")),
    )
    op.create_table(
        "reading_nominations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(128), nullable=False),
        sa.Column("user", sa.String(128), nullable=False),
        sa.Column("nominated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("read_on", sa.Date(), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_reading_nominations_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reading_nominations")),
        sa.UniqueConstraint(
            "channel_id", "paper_id", name=op.f("uq_reading_nominations_channel_id")
        ),
    )
    op.create_table(
        "reading_polls",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("meeting_date", sa.Date(), nullable=False),
        sa.Column("meeting_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closes_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("candidates", sa.JSON(), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("pick", sa.String(128), nullable=True),
        sa.Column("tied", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_reading_polls_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reading_polls")),
        sa.UniqueConstraint("channel_id", "meeting_date", name=op.f("uq_reading_polls_channel_id")),
    )
    op.create_table(
        "reading_votes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("poll_id", sa.Integer(), nullable=False),
        sa.Column("voter", sa.String(128), nullable=False),
        sa.Column("paper_id", sa.String(128), nullable=False),
        sa.Column("voted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["poll_id"],
            ["reading_polls.id"],
            name=op.f("fk_reading_votes_poll_id_reading_polls"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reading_votes")),
        sa.UniqueConstraint("poll_id", "voter", name=op.f("uq_reading_votes_poll_id")),
    )


def downgrade() -> None:
    op.drop_table("reading_votes")
    op.drop_table("reading_polls")
    op.drop_table("reading_nominations")
    op.drop_table("reading_groups")
