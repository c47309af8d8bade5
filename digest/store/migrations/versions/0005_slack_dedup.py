"""Slack requests already handled (event retries, replayed button presses), shared by processes.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

At merge this must be rebased onto the head of 0003/0004 (its down_revision changes only).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "slack_seen_requests",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_slack_seen_requests_seen_at", "slack_seen_requests", ["seen_at"])


def downgrade() -> None:
    op.drop_index("ix_slack_seen_requests_seen_at", "slack_seen_requests")
    op.drop_table("slack_seen_requests")
