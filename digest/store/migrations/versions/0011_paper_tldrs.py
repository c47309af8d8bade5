"""Papers get a cached abstractive TL;DR (``paper_tldrs``), one row per paper.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01

The row records the model that wrote the line and the abstract's content hash, so a change of
model or of text is seen as stale and written again. Nothing existing changes: without a row a
paper shows its extractive TL;DR, as every paper did before.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paper_tldrs",
        sa.Column("paper_id", sa.String(128), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"],
            ["papers.id"],
            name="fk_paper_tldrs_paper_id_papers",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_id", name="pk_paper_tldrs"),
    )


def downgrade() -> None:
    op.drop_table("paper_tldrs")
