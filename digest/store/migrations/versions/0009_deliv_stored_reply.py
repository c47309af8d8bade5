"""A digest's plan keeps what it takes to render its messages again identically.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01

``deliveries.rendered`` holds the digest as it was planned (the platform-neutral reply, JSON),
stored with the plan in one transaction; a retry or take-over replays it instead of rendering
from the channel's settings of the moment. Older plans have none and are checked
against a fresh rendering instead.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deliveries") as batch_op:
        batch_op.add_column(sa.Column("rendered", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("deliveries") as batch_op:
        batch_op.drop_column("rendered")
