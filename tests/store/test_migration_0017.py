"""Migration 0017 merges older per-server personal digests into the oldest, once, on SQLite and
PostgreSQL (when configured): votes (one per person and paper, the newer winning), papers sent
(finished digests only, never a duplicate), subscriptions; the others are paused.

Breaks that turn this red: the newer-vote rule reversed (the older 👍 stays); a second vote row
added instead of one updated; papers of a digest still being sent moved; papers the kept digest
was sent too moved (a duplicate); the merged digest left running (two digests a day); a paused
older digest merged (its owner paused it, not us).
"""

from datetime import UTC, date, datetime, timedelta

from sqlalchemy import update
from sqlalchemy.orm import Session

from digest.ingest.parse import make_record
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import ItemClaim
from digest.store.schema import DeliveryRow, FeedbackRow
from tests.support.migration_rows import merge_personal_digests


def test_merge_on_every_backend(store):
    store.papers.upsert(
        make_record(source="jsonl", id=f"p{n}", title=f"Paper {n}", abstract=f"About {n}.")
        for n in range(3)
    )
    keep, other, stopped = (
        store.channels.ensure(ChannelRef("discord", "@7", ws)) for ws in ("77", "88", "99")
    )
    store.channels.update(stopped.id, paused=True, paused_reason="paused by 7")
    store.channels.add_subscription(keep.id, SubscriptionKind.TOPIC, "RLHF")
    store.channels.add_subscription(other.id, SubscriptionKind.AUTHOR, "Ada Lovelace")
    store.channels.add_subscription(other.id, SubscriptionKind.TOPIC, "RLHF")
    store.channels.add_subscription(stopped.id, SubscriptionKind.TOPIC, "never merged")
    store.channels.set_feedback(keep.id, "7", "p0", 1)
    store.channels.set_feedback(other.id, "7", "p0", 1)
    store.channels.set_feedback(keep.id, "7", "p1", 1)
    store.channels.set_feedback(other.id, "7", "p1", -1)  # newer: it wins
    with Session(store.engine) as session:
        later = datetime.now(UTC) + timedelta(minutes=1)
        session.execute(
            update(FeedbackRow).where(FeedbackRow.channel_id == other.id).values(created_at=later)
        )
        session.commit()
    sent = store.deliveries.claim(
        other.id, date(2026, 12, 1), "w", [ItemClaim("p0", 1, 1.0, ""), ItemClaim("p2", 2, 1.0, "")]
    )
    store.deliveries.claim(keep.id, date(2026, 12, 1), "w", [ItemClaim("p0", 1, 1.0, "")])
    store.deliveries.claim(other.id, date(2026, 12, 2), "w", [ItemClaim("p1", 1, 1.0, "")])
    with Session(store.engine) as session:
        session.execute(
            update(DeliveryRow).where(DeliveryRow.id == sent.id).values(status="posted")
        )
        session.commit()

    merge_personal_digests(store.engine)
    merge_personal_digests(store.engine)  # once: a second run finds the others paused

    assert sorted((v.paper_id, v.value) for v in store.channels.feedback(keep.id)) == [
        ("p0", 1),
        ("p1", -1),
    ]
    assert [s.text for s in store.channels.subscriptions(keep.id)] == ["RLHF", "Ada Lovelace"]
    assert store.deliveries.delivered_paper_ids(keep.id) == {"p0", "p2"}
    assert store.deliveries.delivered_paper_ids(other.id) == {"p0", "p1"}  # p1: still sending
    assert store.channels.by_id(other.id).paused and not store.channels.by_id(keep.id).paused
    assert store.channels.by_id(stopped.id).paused_reason == "paused by 7"
    assert [s.text for s in store.channels.subscriptions(stopped.id)] == ["never merged"]
