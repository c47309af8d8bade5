"""Delivery you can trust: ingest sequence, leases with fencing, a message-level ledger.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("papers") as batch_op:
        batch_op.add_column(sa.Column("seq", sa.BigInteger()))
        batch_op.create_index("ix_papers_seq", ["seq"])
    op.create_table(
        "counters",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("value", sa.BigInteger(), nullable=False, server_default="0"),
    )
    with op.batch_alter_table("deliveries") as batch_op:
        batch_op.add_column(sa.Column("fence", sa.Integer(), nullable=False, server_default="1"))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True)))
        batch_op.add_column(sa.Column("give_up_at", sa.DateTime(timezone=True)))
        batch_op.add_column(sa.Column("retry_at", sa.DateTime(timezone=True)))
        batch_op.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("last_error", sa.Text()))
        batch_op.add_column(sa.Column("upto_seq", sa.BigInteger()))
    with op.batch_alter_table("delivery_items") as batch_op:
        batch_op.add_column(sa.Column("position", sa.Integer()))
    op.create_table(
        "delivery_messages",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "delivery_id",
            sa.Integer(),
            sa.ForeignKey(
                "deliveries.id",
                ondelete="CASCADE",
                name="fk_delivery_messages_delivery_id_deliveries",
            ),
            nullable=False,
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("paper_ids", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="planned"),
        sa.Column("message_ref", sa.Text()),
        sa.UniqueConstraint("delivery_id", "position", name="uq_delivery_messages_delivery_id"),
    )
    _backfill()


def _backfill() -> None:
    """Number existing papers in ingest order; each old digest covered what was ingested by then."""
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id FROM papers ORDER BY ingested_at, id")).fetchall()
    for n, (pid,) in enumerate(rows, 1):
        conn.execute(sa.text("UPDATE papers SET seq = :n WHERE id = :id"), {"n": n, "id": pid})
    conn.execute(
        sa.text("INSERT INTO counters (name, value) VALUES ('ingest', :n)"), {"n": len(rows)}
    )
    conn.execute(
        sa.text(
            "UPDATE deliveries SET upto_seq = (SELECT COALESCE(MAX(p.seq), 0) FROM papers p"
            " WHERE p.ingested_at <= deliveries.claimed_at)"
        )
    )


def downgrade() -> None:
    op.drop_table("delivery_messages")
    with op.batch_alter_table("delivery_items") as batch_op:
        batch_op.drop_column("position")
    with op.batch_alter_table("deliveries") as batch_op:
        for col in (
            "upto_seq",
            "last_error",
            "attempts",
            "retry_at",
            "give_up_at",
            "lease_until",
            "fence",
        ):
            batch_op.drop_column(col)
    op.drop_table("counters")
    with op.batch_alter_table("papers") as batch_op:
        batch_op.drop_index("ix_papers_seq")
        batch_op.drop_column("seq")
