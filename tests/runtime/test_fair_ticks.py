"""Due digests shared out among live replicas, on SQLite and PostgreSQL: three replicas' schedulers
on one database tick together; each posts within 1.5x of an even third, every digest once. A
replica starved of posting speed takes fewer and loses no claim to another replica's take-over.

Breaks that turn this red (tried): batches of CHUNK (500) whatever the live replicas (the first
replica takes everything: 300 / 0 / 0, the slow one included).
"""

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, select

from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler, shares
from digest.delivery.steps import Deliveries
from digest.store import Store
from digest.store.schema import LOOK_NOW, ChannelRow, DeliveryRow, SubscriptionRow
from tests.fakes.recording import RecordingAdapter
from tests.support.corpus import synthetic_records

NINE = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)
TOPICS = ("graph neural networks", "diffusion models", "federated learning")


class Platform(RecordingAdapter):
    """Answers each post after ``delay`` seconds (a replica's posting speed)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def post_part(self, ref, reply, position, key, parent, degrade=False):  # noqa: ANN001
        await asyncio.sleep(self.delay)
        return await super().post_part(ref, reply, position, key, parent, degrade)


def _seed(store: Store, n: int) -> None:
    made = datetime(2026, 12, 2, tzinfo=UTC)
    store.papers.upsert(synthetic_records())
    rows = [
        dict(
            platform="console",
            workspace="",
            channel_id=f"c{i}",
            timezone="UTC",
            digest_time="09:00",
            weekdays="mon,tue,wed,thu,fri,sat,sun",
            created_at=made,
            next_due_at=LOOK_NOW,
        )
        for i in range(n)
    ]
    with store.engine.begin() as conn:
        conn.execute(insert(ChannelRow), rows)
        ids = list(conn.scalars(select(ChannelRow.__table__.c.id)))
        conn.execute(
            insert(SubscriptionRow),
            [dict(channel_id=c, kind="topic", text=TOPICS[c % 3], created_at=made) for c in ids],
        )


def _replica(app, store: Store, name: str, delay: float, lease: float = 120.0):
    deliveries = Deliveries(app.papers, name, lease=timedelta(seconds=lease))
    platform = Platform(delay)
    runner = DigestRunner(deliveries, {"console": platform})
    return DigestScheduler(runner, clock=lambda: NINE, concurrency=8), platform


def _ticks(app, delays: list[float], n: int, lease: float = 120.0) -> tuple[list[int], list]:
    store = app.store
    _seed(store, n)
    replicas = [_replica(app, store, f"r{i}", d, lease) for i, d in enumerate(delays)]
    for i in range(len(delays)):
        store.leases.beat(f"r{i}", 60)  # each replica's presence, as `digestbot run` renews it

    async def replica(sched: DigestScheduler) -> None:
        await sched.tick()
        # then as its sweep does: take over claims whose lease lapsed (another's, held too long)
        while any(s._ticking for s, _ in replicas):
            await sched.runner.recover()
            await asyncio.sleep(0.2)

    async def together():
        return await asyncio.gather(*(replica(s) for s, _ in replicas))

    asyncio.run(together())
    posted = [len(p.digests) for _, p in replicas]
    with store.engine.connect() as conn:
        rows = conn.execute(select(DeliveryRow.claimed_by, DeliveryRow.fence)).all()
    return posted, rows


def test_three_replicas_split_due_digests_within_1_5x_of_even(store, tmp_path):
    from tests.conftest import make_app

    app = make_app(str(store.engine.url.render_as_string(hide_password=False)), tmp_path, [])
    try:
        posted, rows = _ticks(app, [0.01, 0.01, 0.01], 300)
    finally:
        app.close()
    assert sum(posted) == 300 == len(rows), posted  # every digest, once
    even = 300 / 3
    assert all(even / 1.5 <= p <= even * 1.5 for p in posted), posted
    assert Counter(owner for owner, _ in rows) == Counter(
        {f"r{i}": p for i, p in enumerate(posted)}
    )


def test_a_slow_replica_takes_fewer_and_loses_no_claim(store, tmp_path):
    """r2 posts 40x slower; claims last 15 s, and the others take over any that lapses."""
    from tests.conftest import make_app

    app = make_app(str(store.engine.url.render_as_string(hide_password=False)), tmp_path, [])
    try:
        posted, rows = _ticks(app, [0.005, 0.005, 0.2], 300, lease=15.0)
    finally:
        app.close()
    assert sum(posted) == 300 == len(rows), posted
    assert posted[2] < min(posted[0], posted[1]), posted
    assert all(fence == 1 for _, fence in rows)  # no claim changed hands


def test_batches_share_out_among_live_replicas():
    assert shares(300, 3) == (100, 25)
    assert shares(10_000, 1) == (10_000, 500)  # alone: the bulk size it always had
    assert shares(10, 3) == (4, 16)
    assert shares(1000, 0) == (1000, 250)  # no presence seen: counted as one
