"""Channel option `share-votes`: a channel's 👍 count in `/papers top` and in other channels'
digest marks ("👍 in #ml-reading") unless it is turned off.

Revision ID: 0014
Revises: 0010
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: on SQLite batch mode copies the table and drops the old
    # one, and with foreign keys on that drop deletes every channel's votes and deliveries.
    op.add_column(
        "channels", sa.Column("share_votes", sa.Boolean(), nullable=False, server_default=sa.true())
    )


def downgrade() -> None:
    op.drop_column("channels", "share_votes")  # SQLite 3.35+ drops a column in place
