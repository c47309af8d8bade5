"""Weekly pictures become deliveries of kind 'weekly' in the one delivery ledger.

Each weekly_pictures row becomes a deliveries row (kind 'weekly', digest_date = its Monday) with
its one planned message, and the table is dropped. Sent stays sent (posted, with the message's
reference, confirmed); settled stays settled (empty, failed with its reason); a claim not yet
uploaded stays claimed with its lease as it was, so a sweep takes it over once it lapses. A
picture whose upload was under way (``sending``) was made before pictures carried a key the
platform can be searched for: it cannot be looked up, so it is failed with that reason rather
than shared a second time.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
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
    conn = op.get_bind()
    pictures = conn.execute(
        sa.text(
            "SELECT id, channel_id, week, status, claimed_by, fence, lease_until, attempts,"
            " last_error, message_ref, posted_at FROM weekly_pictures ORDER BY id"
        )
    ).mappings()
    deliveries = sa.table(
        "deliveries",
        *(
            sa.column(c)
            for c in (
                "id",
                "channel_id",
                "digest_date",
                "kind",
                "status",
                "claimed_by",
                "claimed_at",
                "posted_at",
                "message_ref",
                "near_misses",
                "fence",
                "lease_until",
                "give_up_at",
                "attempts",
                "last_error",
                "upto_seq",
            )
        ),
    )
    messages = sa.table(
        "delivery_messages",
        sa.column("delivery_id"),
        sa.column("position"),
        sa.column("paper_ids", sa.JSON),
        sa.column("status"),
        sa.column("message_ref"),
    )
    for p in list(pictures):
        status, error = p["status"], p["last_error"]
        if status == "sending":
            status, error = "failed", UNSURE
        at = p["posted_at"] or p["lease_until"]
        did = conn.execute(
            deliveries.insert()
            .values(
                channel_id=p["channel_id"],
                digest_date=p["week"],
                kind="weekly",
                status=status,
                claimed_by=p["claimed_by"],
                claimed_at=at,
                posted_at=p["posted_at"],
                message_ref=p["message_ref"],
                near_misses=0,
                fence=p["fence"],
                lease_until=p["lease_until"],
                give_up_at=None,
                attempts=p["attempts"],
                last_error=error,
                upto_seq=None,
            )
            .returning(deliveries.c.id)
        ).scalar_one()
        if status in ("claimed", "posted"):  # the one message: to send, or sent
            sent = status == "posted"
            conn.execute(
                messages.insert().values(
                    delivery_id=did,
                    position=0,
                    paper_ids=[],
                    status="confirmed" if sent else "planned",
                    message_ref=p["message_ref"] if sent else None,
                )
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
