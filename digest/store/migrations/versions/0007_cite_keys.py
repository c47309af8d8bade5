"""Each paper keeps the BibTeX key first issued for it (a real title arriving later changes nothing).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30

Stored papers get the key exports gave them until now (from their current title and authors),
issued in storage order so that, should two share a short tag, the earlier paper keeps it.
It runs before 0008 renames papers stored under versioned arXiv ids (``2611.00002v2``), so
their keys are made from the ids the exports showed, and a renamed paper keeps its key.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from digest.store.paper_rows import issue_key

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("papers") as batch_op:
        batch_op.add_column(sa.Column("cite_key", sa.String(200), nullable=True))
        batch_op.create_index("ix_papers_cite_key", ["cite_key"])
    conn = op.get_bind()
    papers = sa.table(
        "papers",
        sa.column("id", sa.String),
        sa.column("title", sa.Text),
        sa.column("authors", sa.JSON),
        sa.column("year", sa.Integer),
        sa.column("seq", sa.BigInteger),
        sa.column("ingested_at", sa.DateTime),
        sa.column("cite_key", sa.String),
    )
    c = papers.c
    order = (c.seq.is_not(None), c.seq, c.ingested_at, c.id)  # rows from before 0003 first
    taken: set[str] = set()
    keys = []
    for row in conn.execute(sa.select(c.id, c.title, c.authors, c.year).order_by(*order)):
        keys.append({"pid": row.id, "key": issue_key(row, taken)})
    if keys:
        stmt = (
            papers.update().where(c.id == sa.bindparam("pid")).values(cite_key=sa.bindparam("key"))
        )
        conn.execute(stmt, keys)


def downgrade() -> None:
    with op.batch_alter_table("papers") as batch_op:
        batch_op.drop_index("ix_papers_cite_key")
        batch_op.drop_column("cite_key")
