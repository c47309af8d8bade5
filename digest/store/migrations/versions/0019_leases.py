"""Leases in the database's clock: each running replica's presence (for sharing out due digests)
and each Discord shard's owner (taken over when the owner stops renewing).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(128)),
        sa.Column("until", sa.DateTime(timezone=True)),
        sa.Column("fence", sa.BigInteger(), nullable=False, server_default="0"),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )


def downgrade() -> None:
    op.drop_table("leases")
