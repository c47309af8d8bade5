"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-29 23:45:15.113691
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channels",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("channel_id", sa.String(length=128), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("timezone", sa.String(length=64), nullable=False),
        sa.Column("digest_time", sa.String(length=5), nullable=False),
        sa.Column("weekdays", sa.String(length=32), nullable=False),
        sa.Column("digest_size", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("paused_reason", sa.Text(), nullable=True),
        sa.Column("quiet_when_empty", sa.Boolean(), nullable=False),
        sa.Column("admin_only", sa.Boolean(), nullable=False),
        sa.Column("owner_user", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_channels")),
        sa.UniqueConstraint(
            "platform", "workspace", "channel_id", name=op.f("uq_channels_platform")
        ),
    )
    op.create_table(
        "kv",
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_kv")),
    )
    op.create_table(
        "papers",
        sa.Column("id", sa.String(length=128), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("title_derived", sa.Boolean(), nullable=False),
        sa.Column("title_key", sa.String(length=512), nullable=False),
        sa.Column("abstract_raw", sa.Text(), nullable=False),
        sa.Column("abstract", sa.Text(), nullable=False),
        sa.Column("authors", sa.JSON(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("venue", sa.String(length=200), nullable=True),
        sa.Column("year", sa.Integer(), nullable=True),
        sa.Column("pdf_url", sa.Text(), nullable=True),
        sa.Column("abs_url", sa.Text(), nullable=True),
        sa.Column("forum_url", sa.Text(), nullable=True),
        sa.Column("code_url", sa.Text(), nullable=True),
        sa.Column("arxiv_id", sa.String(length=32), nullable=True),
        sa.Column("openreview_id", sa.String(length=64), nullable=True),
        sa.Column("published", sa.Date(), nullable=True),
        sa.Column("ingested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_papers")),
    )
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_papers_arxiv_id"), ["arxiv_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_papers_content_hash"), ["content_hash"], unique=False)
        batch_op.create_index(batch_op.f("ix_papers_ingested_at"), ["ingested_at"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_papers_openreview_id"), ["openreview_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_papers_title_key"), ["title_key"], unique=False)
        batch_op.create_index(batch_op.f("ix_papers_year"), ["year"], unique=False)

    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("digest_date", sa.Date(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=128), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("message_ref", sa.Text(), nullable=True),
        sa.Column("near_misses", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_deliveries_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
        sa.UniqueConstraint("channel_id", "digest_date", name=op.f("uq_deliveries_channel_id")),
    )
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("user", sa.String(length=128), nullable=False),
        sa.Column("paper_id", sa.String(length=128), nullable=False),
        sa.Column("value", sa.SmallInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_feedback_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["paper_id"],
            ["papers.id"],
            name=op.f("fk_feedback_paper_id_papers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
        sa.UniqueConstraint("channel_id", "user", "paper_id", name=op.f("uq_feedback_channel_id")),
    )
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("text", sa.String(length=500), nullable=False),
        sa.Column("created_by", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_subscriptions_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
        sa.UniqueConstraint("channel_id", "kind", "text", name=op.f("uq_subscriptions_channel_id")),
    )
    op.create_table(
        "delivery_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("delivery_id", sa.Integer(), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("paper_id", sa.String(length=128), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        sa.Column("message_ref", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["channel_id"],
            ["channels.id"],
            name=op.f("fk_delivery_items_channel_id_channels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["deliveries.id"],
            name=op.f("fk_delivery_items_delivery_id_deliveries"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["paper_id"],
            ["papers.id"],
            name=op.f("fk_delivery_items_paper_id_papers"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_delivery_items")),
        sa.UniqueConstraint("channel_id", "paper_id", name=op.f("uq_delivery_items_channel_id")),
    )


def downgrade() -> None:
    op.drop_table("delivery_items")
    op.drop_table("subscriptions")
    op.drop_table("feedback")
    op.drop_table("deliveries")
    with op.batch_alter_table("papers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_papers_year"))
        batch_op.drop_index(batch_op.f("ix_papers_title_key"))
        batch_op.drop_index(batch_op.f("ix_papers_openreview_id"))
        batch_op.drop_index(batch_op.f("ix_papers_ingested_at"))
        batch_op.drop_index(batch_op.f("ix_papers_content_hash"))
        batch_op.drop_index(batch_op.f("ix_papers_arxiv_id"))

    op.drop_table("papers")
    op.drop_table("kv")
    op.drop_table("channels")
