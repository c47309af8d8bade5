"""Three real `digestbot run` replicas on one PostgreSQL share due digests out evenly: once all three
are running (their presence leases live), 300 Slack channels come due in the same minute; each
digest is posted once, and each replica posts within 1.5x of an even third.

Breaks that turn this red (tried in tests/runtime/test_fair_ticks.py, the same rule in one
process): batches of 500 whatever the live replicas (the first replica to tick takes them all).
"""

import os
import signal
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, insert, select, update

from digest.store.schema import LOOK_NOW, ChannelRow, DeliveryRow, LeaseRow, SubscriptionRow
from tests.conftest import make_app
from tests.fakes.slack import FakeSlack
from tests.reliability.test_two_replicas import QUERIES, free_port, replica, until, up

N = 300
FAR = datetime(2099, 1, 1, tzinfo=UTC)
pytestmark = pytest.mark.postgres


def test_three_replicas_split_due_digests_within_1_5x_of_even(tmp_path):
    if not os.environ.get("DIGESTBOT_TEST_POSTGRES_URL"):
        pytest.skip("DIGESTBOT_TEST_POSTGRES_URL not set")
    from tests.conftest import _postgres_url

    db_url = _postgres_url()
    app = make_app(db_url, tmp_path)
    now = datetime.now(UTC)
    at = max(now - timedelta(minutes=2), now.replace(hour=0, minute=0)).strftime("%H:%M")
    channels = [f"C{i}" for i in range(N)]
    made = now - timedelta(days=1)
    with app.store.engine.begin() as conn:
        rows = [
            dict(
                platform="slack",
                workspace="T1",
                channel_id=c,
                timezone="UTC",
                digest_time=at,
                weekdays="mon,tue,wed,thu,fri,sat,sun",
                created_at=made,
                next_due_at=FAR,  # not due until every replica is up
            )
            for c in channels
        ]
        conn.execute(insert(ChannelRow), rows)
        ids = list(conn.scalars(select(ChannelRow.__table__.c.id)))
        subs = [
            dict(channel_id=cid, kind="topic", text=QUERIES[cid % len(QUERIES)], created_at=made)
            for cid in ids
        ]
        conn.execute(insert(SubscriptionRow), subs)
    app.papers.ranker()
    engine = app.store.engine

    def live() -> int:
        with engine.connect() as conn:
            stmt = select(func.count()).where(
                LeaseRow.name.startswith("replica:"), LeaseRow.until >= func.now()
            )
            return conn.scalar(stmt)

    def by_replica() -> Counter:
        with engine.connect() as conn:
            stmt = select(DeliveryRow.claimed_by).where(DeliveryRow.status == "posted")
            return Counter(conn.scalars(stmt))

    procs: list[subprocess.Popen] = []
    with FakeSlack() as slack:
        slack.join(*channels)
        slack.latency = 0.02
        try:
            bases = []
            for name in ("a", "b", "c"):
                port = free_port()
                procs.append(replica(db_url, slack, port, tmp_path, name))
                bases.append(f"http://127.0.0.1:{port}")
            assert until(lambda: all(up(b) for b in bases), 60), "a replica did not start"
            assert until(lambda: live() == 3, 30), live()
            with engine.begin() as conn:  # all due now: the next sweep of each sees them
                conn.execute(update(ChannelRow).values(next_due_at=LOOK_NOW))
            assert until(lambda: sum(by_replica().values()) == N, 120), by_replica()
            time.sleep(3)  # more sweeps: room for a late duplicate to show
            split = by_replica()
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)
    app.close()
    with engine.connect() as conn:
        claims = conn.scalar(select(func.count()).select_from(DeliveryRow))
    assert claims == N and sum(split.values()) == N, split
    even = N / 3
    print(f"\nthree replicas, {N} due: {sorted(split.values())}")
    assert len(split) == 3 and all(even / 1.5 <= n <= even * 1.5 for n in split.values()), split
