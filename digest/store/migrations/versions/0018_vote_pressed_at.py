"""When each vote was last pressed, by the database's clock: a second press of the same button
within a second is the same click (a double click keeps the vote), later it withdraws it.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (see 0014): batch mode would copy the table on SQLite. Votes cast before
    # have none: long enough ago that pressing again withdraws them, as it always did.
    op.add_column("feedback", sa.Column("pressed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column("feedback", "pressed_at")
