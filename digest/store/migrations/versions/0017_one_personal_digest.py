"""One personal digest per person and platform: older versions made one per server. The oldest
is kept and takes over the others' subscriptions, votes (the newer of two on a paper wins) and
papers sent (never sent again: reactions on their messages vote on the kept one); the others are
paused, so nobody gets the same digest twice a day. Done once here, not on every lookup.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02
"""

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

#: digest.store.schema.LOOK_NOW, frozen here: the scheduler looks at the kept digest at once.
LOOK_NOW = datetime(1970, 1, 1, tzinfo=UTC)
SUBSCRIPTIONS = """INSERT INTO subscriptions (channel_id, kind, text, created_by, created_at)
SELECT :keep, kind, text, created_by, created_at FROM subscriptions s WHERE channel_id = :other
AND NOT EXISTS (SELECT 1 FROM subscriptions k WHERE k.channel_id = :keep AND k.kind = s.kind
AND k.text = s.text) ORDER BY id"""
NEW_VOTES = """INSERT INTO feedback (channel_id, "user", paper_id, value, created_at)
SELECT :keep, "user", paper_id, value, created_at FROM feedback o WHERE channel_id = :other
AND NOT EXISTS (SELECT 1 FROM feedback k WHERE k.channel_id = :keep AND k."user" = o."user"
AND k.paper_id = o.paper_id)"""
NEWER = """FROM feedback o WHERE o.channel_id = :other AND o."user" = feedback."user"
AND o.paper_id = feedback.paper_id"""
NEWER_VOTES = f"""UPDATE feedback SET value = (SELECT o.value {NEWER}),
created_at = (SELECT o.created_at {NEWER}) WHERE channel_id = :keep
AND EXISTS (SELECT 1 {NEWER} AND o.created_at > feedback.created_at AND o.value <> feedback.value)"""
# Papers of finished digests only (one still being sent keeps its own), never a duplicate.
ITEMS = """UPDATE delivery_items SET channel_id = :keep WHERE channel_id = :other
AND delivery_id IN (SELECT id FROM deliveries WHERE channel_id = :other
AND status NOT IN ('claimed', 'sending'))
AND paper_id NOT IN (SELECT paper_id FROM delivery_items WHERE channel_id = :keep)"""


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.text(
            "SELECT id, platform, channel_id, paused FROM channels "
            "WHERE channel_id LIKE '@%' ORDER BY id"
        )
    ).all()
    oldest: dict[tuple[str, str], int] = {}
    for id_, platform, channel_id, paused in rows:
        keep = oldest.setdefault((platform, channel_id), id_)
        if keep == id_ or paused:  # the oldest, or one its person paused: left alone
            continue
        ids = {"keep": keep, "other": id_}
        for statement in (SUBSCRIPTIONS, NEWER_VOTES, NEW_VOTES, ITEMS):
            conn.execute(sa.text(statement), ids)
        conn.execute(
            sa.text("UPDATE channels SET paused = :yes, paused_reason = :why WHERE id = :other"),
            {"yes": True, "why": "merged into your one personal digest", "other": id_},
        )
        look = sa.bindparam("look", LOOK_NOW, type_=sa.DateTime(timezone=True))
        conn.execute(
            sa.text("UPDATE channels SET next_due_at = :look WHERE id = :keep").bindparams(look),
            {"keep": keep},
        )


def downgrade() -> None:
    pass  # merged digests stay merged: nothing an older version would need undone
