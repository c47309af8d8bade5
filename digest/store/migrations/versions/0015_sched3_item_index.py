"""Index delivery items by their digest and message: confirming a message finds its papers
without reading every item ever sent (each confirmation did, so a tick's cost grew with the
history: 10,000 digests of 3 papers made each confirmation scan 30,000 rows).

Revision ID: 0015
Revises: 0010
Create Date: 2026-12-01
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_delivery_items_delivery", "delivery_items", ["delivery_id", "position"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_delivery_items_delivery", table_name="delivery_items")
