"""The arXiv version a stored paper's text comes from, so v2 replaces v1 and never the reverse.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("papers") as batch_op:
        batch_op.add_column(sa.Column("arxiv_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("papers") as batch_op:
        batch_op.drop_column("arxiv_version")
