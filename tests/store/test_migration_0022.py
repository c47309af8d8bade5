"""Migration 0022 moves every weekly-picture claim into the delivery ledger, on SQLite and
PostgreSQL, without losing one: posted stays posted (its message confirmed, with its
reference), empty and failed stay settled with their reason, a claim not yet uploaded stays
claimed (resumable: taken over once its lease lapses, then sent by the ledger), and one cut off
mid-upload (made before pictures carried a key to look them up by) is failed with that reason,
never shared twice. Monday's digest and Monday's picture then live side by side; a downgrade
gives the pictures back.

Breaks that turn this red (seen): the unique key left as (channel, day) (the picture row
collides with Monday's digest); a `sending` picture moved as `claimed` (it would be uploaded
again); no planned message for a claimed picture (the ledger resumes it with nothing to send:
the plan check fails); the rows not moved (lost)."""

from __future__ import annotations

from datetime import date, timedelta

import sqlalchemy as sa
from alembic import command

from digest.models import DeliveryKind, DeliveryState, MessageState
from digest.store import Store
from digest.store.database import alembic_config, make_engine, upgrade
from tests.support.migration_rows import NOW, channel, seed, votes

MONDAY = date(2026, 11, 30)


def _picture(id: int, channel_id: int, status: str, **extra: object) -> dict:
    row = dict(id=id, channel_id=channel_id, week=MONDAY, status=status, claimed_by="old")
    empty = dict(lease_until=NOW, last_error=None, message_ref=None, posted_at=None)
    return row | dict(fence=1, attempts=0) | empty | extra


def test_every_weekly_claim_moves_into_the_ledger(db_url):
    engine = make_engine(db_url)
    upgrade(engine, "0021")
    seed(engine, [channel(n, channel_id=f"c{n}") for n in range(1, 6)])
    meta = sa.MetaData()
    pictures = sa.Table("weekly_pictures", meta, autoload_with=engine)
    deliveries = sa.Table("deliveries", meta, autoload_with=engine)
    with engine.begin() as conn:
        conn.execute(
            pictures.insert(),
            [
                _picture(1, 1, "posted", message_ref="C1:F1", posted_at=NOW),
                _picture(2, 2, "sending"),
                _picture(3, 3, "claimed", lease_until=NOW - timedelta(days=1)),
                _picture(4, 4, "failed", last_error="missing_scope"),
                _picture(5, 5, "empty"),
            ],
        )
        conn.execute(  # Monday's digest of channel 1, claimed before the upgrade
            deliveries.insert(),
            [
                dict(channel_id=1, digest_date=MONDAY, status="posted", claimed_at=NOW)
                | dict(claimed_by="old", fence=1, near_misses=0, attempts=0)
            ],
        )
    upgrade(engine, "head")
    store = Store(engine)
    got = {n: store.deliveries.for_day(n, MONDAY, DeliveryKind.WEEKLY) for n in range(1, 6)}
    assert [got[n].status for n in range(1, 6)] == [
        DeliveryState.POSTED,
        DeliveryState.FAILED,
        DeliveryState.CLAIMED,
        DeliveryState.FAILED,
        DeliveryState.EMPTY,
    ]
    assert "cut off" in got[2].last_error and got[4].last_error == "missing_scope"
    (sent,) = store.ledger.messages(got[1].id)
    assert sent.status == MessageState.CONFIRMED and sent.message_ref == "C1:F1"
    assert store.deliveries.for_day(1, MONDAY).status == DeliveryState.POSTED  # the digest
    # the claim not yet uploaded is resumable: its lease lapsed, a sweep takes it over
    assert got[3].id in store.deliveries.expired(kinds={DeliveryKind.WEEKLY})
    assert store.deliveries.take_over(got[3].id, "new", 60).fence == 2
    (todo,) = store.ledger.messages(got[3].id)
    assert todo.status == MessageState.PLANNED and todo.paper_ids == ()
    assert votes(engine) == 1
    command.downgrade(alembic_config(engine), "0021")
    with engine.connect() as conn:
        back = conn.execute(sa.text("SELECT channel_id, status FROM weekly_pictures")).all()
        digests = conn.execute(sa.text("SELECT count(*) FROM deliveries")).scalar_one()
    assert sorted(back) == [
        (1, "posted"),
        (2, "failed"),
        (3, "claimed"),
        (4, "failed"),
        (5, "empty"),
    ]
    assert digests == 1 and votes(engine) == 1
    engine.dispose()
