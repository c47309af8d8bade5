"""Weekly pictures become deliveries of kind 'weekly' in the one delivery ledger.

Each weekly_pictures row becomes a deliveries row (kind 'weekly', digest_date = its Monday) with
its one planned message, and the table is dropped. Sent stays sent (posted, with the message's
reference, confirmed); settled stays settled (empty, failed with its reason); a claim not yet
uploaded stays claimed with its lease as it was, so a sweep takes it over once it lapses. A
picture whose upload was under way (``sending``) was made before pictures carried a key the
platform can be searched for: it cannot be looked up, so it is failed with that reason rather
than shared a second time.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

UNSURE = "its upload was cut off before this version; not shared again in case it arrived"


def upgrade() -> None:
    with op.batch_alter_table("deliveries") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="digest"))
        batch.drop_constraint("uq_deliveries_channel_id", type_="unique")
        batch.create_unique_constraint(
            "uq_deliveries_channel_id", ["channel_id", "kind", "digest_date"]
        )
    sending = "status = 'sending'"
    op.get_bind().execute(
        sa.text(
            "INSERT INTO deliveries (channel_id, digest_date, kind, status, claimed_by,"
            " claimed_at, posted_at, message_ref, near_misses, fence, lease_until, attempts,"
            " last_error) SELECT channel_id, week, 'weekly',"
            f" CASE WHEN {sending} THEN 'failed' ELSE status END, claimed_by,"
            " COALESCE(posted_at, lease_until, CURRENT_TIMESTAMP), posted_at, message_ref, 0,"
            f" fence, lease_until, attempts, CASE WHEN {sending} THEN :unsure ELSE last_error END"
            " FROM weekly_pictures ORDER BY id"
        ),
        {"unsure": UNSURE},
    )
    # the one message: to send (claimed), or sent (posted, with the platform's reference)
    op.execute(
        "INSERT INTO delivery_messages (delivery_id, position, paper_ids, status, message_ref)"
        " SELECT id, 0, '[]', CASE WHEN status = 'posted' THEN 'confirmed' ELSE 'planned' END,"
        " CASE WHEN status = 'posted' THEN message_ref END FROM deliveries"
        " WHERE kind = 'weekly' AND status IN ('claimed', 'posted')"
    )
    op.drop_table("weekly_pictures")


def downgrade() -> None:
    op.create_table(
        "weekly_pictures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey(
                "channels.id", ondelete="CASCADE", name="fk_weekly_pictures_channel_id_channels"
            ),
            nullable=False,
        ),
        sa.Column("week", sa.Date(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False, server_default="claimed"),
        sa.Column("claimed_by", sa.String(128), nullable=False, server_default=""),
        sa.Column("fence", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("lease_until", sa.DateTime(timezone=True)),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text()),
        sa.Column("message_ref", sa.Text()),
        sa.Column("posted_at", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_weekly_pictures")),
        sa.UniqueConstraint("channel_id", "week", name="uq_weekly_pictures_channel_id"),
    )
    op.execute(
        "INSERT INTO weekly_pictures (channel_id, week, status, claimed_by, fence, lease_until,"
        " attempts, last_error, message_ref, posted_at) SELECT channel_id, digest_date, status,"
        " claimed_by, fence, lease_until, attempts, last_error, message_ref, posted_at"
        " FROM deliveries WHERE kind = 'weekly'"
    )
    op.execute(
        "DELETE FROM delivery_messages WHERE delivery_id IN"
        " (SELECT id FROM deliveries WHERE kind = 'weekly')"
    )
    op.execute("DELETE FROM deliveries WHERE kind = 'weekly'")
    with op.batch_alter_table("deliveries") as batch:
        batch.drop_constraint("uq_deliveries_channel_id", type_="unique")
        batch.create_unique_constraint("uq_deliveries_channel_id", ["channel_id", "digest_date"])
        batch.drop_column("kind")
