"""A person's live Zotero library: the connection (API key encrypted at rest, the library
version synced, Zotero's backoff) and the items sync read or `/papers save` created.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "zotero_connections",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("platform", sa.String(16), nullable=False),
        sa.Column("workspace", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("channel_id", sa.String(128), nullable=False),
        sa.Column("library_type", sa.String(8), nullable=False),
        sa.Column("library_id", sa.String(32), nullable=False),
        sa.Column("key_encrypted", sa.Text(), nullable=False),
        sa.Column("collection_key", sa.String(16), nullable=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("backoff_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_zotero_connections")),
        sa.UniqueConstraint(
            "platform", "workspace", "user_id", name=op.f("uq_zotero_connections_platform")
        ),
    )
    op.create_table(
        "zotero_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("connection_id", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("paper_id", sa.String(128), nullable=True),
        sa.Column("added_like", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["connection_id"],
            ["zotero_connections.id"],
            name=op.f("fk_zotero_items_connection_id_zotero_connections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_zotero_items")),
        sa.UniqueConstraint(
            "connection_id", "item_key", "kind", name=op.f("uq_zotero_items_connection_id")
        ),
    )


def downgrade() -> None:
    op.drop_table("zotero_items")
    op.drop_table("zotero_connections")
