"""Exactly-once delivery: claims, crash recovery, failures, and two workers on one database."""

import asyncio
import threading
from datetime import date, timedelta

from bot.ports import PostError
from bot.runner import DigestRunner
from digest.delivery import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import CLAIMED, POSTED, SENDING
from tests.conftest import make_app
from tests.corpus import synthetic_records
from tests.fakes import RecordingAdapter

DAY = date(2026, 12, 1)


def channel_with_topic(app, name="lab", topic="diffusion models"):
    ref = ChannelRef("console", name)
    app.channels.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def runner(app, worker, adapter):
    return DigestRunner(Deliveries(app.channels, worker), {"console": adapter})


def test_one_digest_per_channel_and_day_and_never_a_paper_twice(app):
    ch = channel_with_topic(app)
    app.channels.set_option(ch.ref, "backlog", False)  # new papers only (tests/test_backlog.py)
    adapter = RecordingAdapter()
    r = runner(app, "w1", adapter)
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("posted 5")
    assert asyncio.run(r.run_channel(ch.id, DAY)) == "already delivered"
    d = app.store.deliveries.for_day(ch.id, DAY)
    assert d.status == POSTED and d.message_ref == f"msg-{adapter.keys()[0]}"
    first = {c.paper_id for c in adapter.posts[0][1].cards}
    asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1)))  # nothing ingested since day 1
    day2 = adapter.posts[1][1]
    assert day2.cards == () and day2.text.startswith("No new papers matched today")
    fresh = [rec for rec in synthetic_records(per_topic=32) if rec.id.endswith(("-30", "-31"))]
    app.store.papers.upsert(fresh)
    asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=2)))
    day3 = {c.paper_id for c in adapter.posts[2][1].cards}
    assert day3 == {"syn-diffusion-30", "syn-diffusion-31"} and not day3 & first


def test_crash_after_claim_before_post_is_posted_once_at_next_start(app):
    ch = channel_with_topic(app)
    dead = Deliveries(app.channels, "host:1")
    claim = dead.claim(ch, DAY)  # ...and the process dies here
    assert claim and app.store.deliveries.for_day(ch.id, DAY).status == CLAIMED
    adapter = RecordingAdapter()
    r = runner(app, "host:2", adapter)
    assert asyncio.run(r.run_channel(ch.id, DAY)) == "already delivered"  # the claim holds the day
    assert asyncio.run(r.recover(stale_after=timedelta(0))) == ["posted 5 papers"]
    assert asyncio.run(r.recover(stale_after=timedelta(0))) == []
    assert len(adapter.posts) == 1
    assert [c.paper_id for c in adapter.posts[0][1].cards] == [
        i.paper_id for i in claim.delivery.items
    ]


def test_crash_after_post_before_record_is_recorded_not_reposted(app):
    ch = channel_with_topic(app)
    adapter = RecordingAdapter()
    dead = Deliveries(app.channels, "host:1")
    claim = dead.claim(ch, DAY)
    dead.begin(claim)
    from bot.commands.replies import digest_reply

    asyncio.run(
        adapter.post_digest(ch.ref, digest_reply(claim.digest), claim.key)
    )  # posted, then crash
    r = runner(app, "host:2", adapter)
    assert asyncio.run(r.recover(stale_after=timedelta(0))) == ["recorded"]
    assert len(adapter.posts) == 1 and app.store.deliveries.for_day(ch.id, DAY).status == POSTED


def test_fresh_claims_of_a_live_worker_are_left_alone(app):
    ch = channel_with_topic(app)
    Deliveries(app.channels, "other-host:1").claim(ch, DAY)
    r = runner(app, "host:2", RecordingAdapter())
    assert asyncio.run(r.recover(stale_after=timedelta(minutes=10))) == []


def test_permanent_failure_pauses_channel_and_releases_its_papers(app):
    ch = channel_with_topic(app)
    adapter = RecordingAdapter()
    adapter.fail["lab"] = PostError("channel_not_found", permanent=True)
    r = runner(app, "w1", adapter)
    assert "channel paused" in asyncio.run(r.run_channel(ch.id, DAY))
    ch = app.store.channels.by_id(ch.id)
    assert ch.paused and ch.paused_reason == "channel_not_found"
    assert app.store.deliveries.for_day(ch.id, DAY) is None
    assert app.store.deliveries.delivered_paper_ids(ch.id) == set()
    other = channel_with_topic(app, "other")
    assert asyncio.run(r.run_channel(other.id, DAY)).startswith("posted")  # others unaffected


def test_transient_failure_is_retried_by_recovery_exactly_once(app):
    ch = channel_with_topic(app)
    adapter = RecordingAdapter()
    adapter.fail["lab"] = PostError("ratelimited", permanent=False)
    r = runner(app, "host:1", adapter)
    assert "will retry" in asyncio.run(r.run_channel(ch.id, DAY))
    assert app.store.deliveries.for_day(ch.id, DAY).status == SENDING
    del adapter.fail["lab"]
    r2 = runner(app, "host:2", adapter)
    assert asyncio.run(r2.recover(stale_after=timedelta(0))) == ["posted 5 papers"]
    assert len(adapter.posts) == 1


def test_quiet_channel_stays_silent_on_an_empty_day(app):
    ch = channel_with_topic(app)
    app.channels.set_option(ch.ref, "quiet", True)
    app.channels.set_option(ch.ref, "backlog", False)
    adapter = RecordingAdapter()
    r = runner(app, "w1", adapter)
    asyncio.run(r.run_channel(ch.id, DAY))
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1))) == "empty (quiet)"
    app.channels.set_option(ch.ref, "quiet", False)
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=2))) == "posted 0 papers"
    assert adapter.posts[-1][1].text.startswith("No new papers matched today")


def test_two_workers_on_one_database_never_double_post(db_url, tmp_path):
    """Two processes' worth of engines and runners racing over 12 channels for 3 days."""
    a = make_app(db_url, tmp_path / "a")
    b = make_app(db_url, tmp_path / "b", records=[])
    topics = [
        "diffusion models",
        "graph neural networks",
        "federated learning",
        "sparse autoencoders",
    ]
    channels = [channel_with_topic(a, f"c{i}", topics[i % 4]) for i in range(12)]
    adapter_a, adapter_b = RecordingAdapter(), RecordingAdapter()
    runners = [runner(a, "host-a:1", adapter_a), runner(b, "host-b:1", adapter_b)]

    def work(r):
        for day in (DAY, DAY + timedelta(days=1), DAY + timedelta(days=2)):
            for ch in channels:
                asyncio.run(r.run_channel(ch.id, day))

    threads = [threading.Thread(target=work, args=(r,)) for r in runners]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = adapter_a.keys() + adapter_b.keys()
    assert len(keys) == len(set(keys)) == 36  # 12 channels x 3 days, each exactly once
    for ch in channels:
        papers = [
            c.paper_id
            for ad in (adapter_a, adapter_b)
            for ref, reply, _ in ad.posts
            if ref.channel_id == ch.ref.channel_id
            for c in reply.cards
        ]
        assert len(papers) == len(set(papers))  # no paper twice to one channel
    a.close()
    b.close()


def test_two_schedulers_catching_up_on_one_database_post_each_digest_once(db_url, tmp_path):
    """Two bot processes restart after downtime at the same moment and both run catch-up."""
    from datetime import UTC, datetime

    from bot.scheduler import DigestScheduler

    a = make_app(db_url, tmp_path / "a")
    b = make_app(db_url, tmp_path / "b", records=[])
    channels = [channel_with_topic(a, f"s{i}", "graph neural networks") for i in range(8)]
    for ch in channels:
        a.channels.set_schedule(ch.ref, "09:00", "Europe/Berlin", "daily")
    back = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)  # 10:30 in Berlin, 90 minutes late
    adapters = [RecordingAdapter(), RecordingAdapter()]
    schedulers = [
        DigestScheduler(app.store, runner(app, f"host-{n}:1", ad), clock=lambda: back)
        for n, (app, ad) in enumerate(zip((a, b), adapters, strict=True))
    ]
    results = [None, None]

    def work(i):
        results[i] = asyncio.run(schedulers[i].catch_up())

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    keys = adapters[0].keys() + adapters[1].keys()
    assert sorted(keys) == sorted(f"digest-{ch.id}-2026-12-04" for ch in channels)
    outcomes = list(results[0].values()) + list(results[1].values())
    assert (
        outcomes.count("already delivered") == 8
        and sum(o.startswith("posted") for o in outcomes) == 8
    )
    a.close()
    b.close()
