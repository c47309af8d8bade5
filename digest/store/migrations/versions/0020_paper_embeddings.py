"""Paper embeddings live in the database (``paper_embeddings``), computed once by whichever
process claims them (``embedding_claims``, a lease on the database clock) and read by every
other: no replica embeds a paper another has embedded, and no folder is shared.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02

Nothing existing changes: vectors saved beside an old index folder are not read; the papers are
embedded again once, in the background, by whichever process claims them.
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "paper_embeddings",
        sa.Column("paper_id", sa.String(128), nullable=False),
        sa.Column("model", sa.String(64), nullable=False),
        sa.Column("text_hash", sa.String(16), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(128), nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"],
            ["papers.id"],
            name="fk_paper_embeddings_paper_id_papers",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_id", "model", name="pk_paper_embeddings"),
    )
    op.create_index("ix_paper_embeddings_seq", "paper_embeddings", ["seq"])
    op.create_table(
        "embedding_claims",
        sa.Column("paper_id", sa.String(128), nullable=False),
        sa.Column("model", sa.String(64), nullable=False),
        sa.Column("claimed_by", sa.String(128), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["paper_id"],
            ["papers.id"],
            name="fk_embedding_claims_paper_id_papers",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("paper_id", "model", name="pk_embedding_claims"),
    )
    op.execute("INSERT INTO counters (name, value) VALUES ('embeddings', 0)")


def downgrade() -> None:
    op.execute("DELETE FROM counters WHERE name = 'embeddings'")
    op.drop_table("embedding_claims")
    op.drop_index("ix_paper_embeddings_seq", "paper_embeddings")
    op.drop_table("paper_embeddings")
