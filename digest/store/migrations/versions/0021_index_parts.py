"""The fitted ranking index lives in the database as a base and appended segments
(``index_parts``), each piece of work claimed once (``index_claims``, a lease on the database
clock): replicas on separate volumes, or separate hosts, fit once and load each other's work.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02

Nothing existing changes: an index saved in a folder by an older version is not read; the
first process to claim the fit after the upgrade fits it once for everyone.
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "index_parts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("format", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("base_id", sa.Integer(), nullable=True),
        sa.Column("merged_from", sa.Integer(), nullable=True),
        sa.Column("seq_from", sa.BigInteger(), nullable=False),
        sa.Column("seq_to", sa.BigInteger(), nullable=False),
        sa.Column("papers", sa.Integer(), nullable=False),
        sa.Column("text_epoch", sa.BigInteger(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("blob", sa.LargeBinary(), nullable=False),
        sa.Column("created_by", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_index_parts"),
    )
    op.create_index("ix_index_parts_format", "index_parts", ["format"])
    op.create_index("ix_index_parts_base_id", "index_parts", ["base_id"])
    op.create_table(
        "index_claims",
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("claimed_by", sa.String(128), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_index_claims"),
    )
    op.execute("INSERT INTO counters (name, value) VALUES ('index_texts', 0)")


def downgrade() -> None:
    op.execute("DELETE FROM counters WHERE name = 'index_texts'")
    op.drop_table("index_claims")
    op.drop_index("ix_index_parts_base_id", "index_parts")
    op.drop_index("ix_index_parts_format", "index_parts")
    op.drop_table("index_parts")
