"""Channels get ``next_due_at``: the scheduler reads only channels now due, not every channel.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01

Every existing channel starts with a "look now" mark, so the first tick after the upgrade looks
at each once (a missed digest still in the grace window is caught up, as before) and sets its
real next due time.
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

#: digest.store.schema.LOOK_NOW, frozen here: the migration must not change with the code.
LOOK_NOW = datetime(1970, 1, 1, tzinfo=UTC)


def upgrade() -> None:
    with op.batch_alter_table("channels") as batch_op:
        batch_op.add_column(sa.Column("next_due_at", sa.DateTime(timezone=True), nullable=True))
    channels = sa.table(
        "channels",
        sa.column("id", sa.Integer),
        sa.column("next_due_at", sa.DateTime(timezone=True)),
    )
    # A bound value, not SQL text: SQLite compares these as strings, so they must be formatted
    # exactly as the application writes them (its compare-and-set reads them back).
    op.get_bind().execute(channels.update().values(next_due_at=LOOK_NOW))
    op.create_index("ix_channels_due", "channels", ["paused", "next_due_at"])


def downgrade() -> None:
    op.drop_index("ix_channels_due", "channels")
    with op.batch_alter_table("channels") as batch_op:
        batch_op.drop_column("next_due_at")
