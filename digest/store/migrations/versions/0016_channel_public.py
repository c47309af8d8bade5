"""Each channel's visibility as its platform last said (public to its whole workspace or
server, or not): a digest's "👍 in #name" mark names only a public channel. Unknown (every
channel until its platform says) counts as private.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Batch mode: on SQLite an ADD COLUMN needs no table copy, so no row is touched (env.py
    # turns foreign keys off around migrations in case a copy ever happens).
    with op.batch_alter_table("channels") as batch:
        batch.add_column(sa.Column("public", sa.Boolean(), nullable=True))
    # The console's channels are one operator's, public as ChannelService makes new ones: left
    # unknown they would drop out of other channels' 👍 marks until each got a command.
    op.execute(
        "UPDATE channels SET public = true WHERE platform = 'console' AND channel_id NOT LIKE '@%'"
    )


def downgrade() -> None:
    with op.batch_alter_table("channels") as batch:
        batch.drop_column("public")
