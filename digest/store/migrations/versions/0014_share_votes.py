"""Channel option `share-votes`: a channel's 👍 count in `/papers top` and in other channels'
digest marks ("👍 in #ml-reading") unless it is turned off.

Revision ID: 0014
Revises: 0010
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("channels") as batch_op:
        batch_op.add_column(
            sa.Column("share_votes", sa.Boolean(), nullable=False, server_default=sa.true())
        )


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch_op:
        batch_op.drop_column("share_votes")
