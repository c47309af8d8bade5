"""Exactly-once delivery: leases, fencing, the message ledger, retries, sequence candidates.

Every count below comes from the fake platform's own record (``RecordingAdapter.messages``),
never from the bot's ledger. Deliberate breaks tried (each made the named test go red):
- held_by() without owner/fence (begin/finish ignoring the lease owner):
  test_a_worker_that_lost_its_lease_can_neither_post_nor_record
- _deliver() treating a `sending` message as confirmed without find_part():
  test_recovery_resumes_from_the_first_unconfirmed_message
- UniqueConstraint(channel_id, paper_id) removed from delivery_items:
  test_a_paper_is_reserved_once_per_channel_even_when_two_days_race
- the sweep job removed from DigestScheduler.start (no later retry in the same process):
  test_a_transient_failure_is_retried_in_the_same_process
- candidates by `ingested_at > last claim` again: test_a_paper_committed_during_a_claim_is_delivered_next
- (races between workers, clock skew and slow posts: tests/delivery/test_delivery_races.py)
"""

import asyncio
import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.ports import PostError
from bot.runtime.runner import LOST, DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import CLAIMED, POSTED, ItemClaim
from tests.conftest import make_app
from tests.fakes.recording import RecordingAdapter
from tests.support.corpus import synthetic_records

DAY = date(2026, 12, 1)
LEASE = timedelta(seconds=0.6)


def channel_with_topic(app, name="lab", topic="diffusion models"):
    ref = ChannelRef("console", name)
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def deliveries(app, worker, lease=LEASE, backoff=(0.3,)):
    return Deliveries(app.papers, worker, lease=lease, backoff=backoff)


def runner(app, worker, adapter, **kw):
    return DigestRunner(deliveries(app, worker, **kw), {"console": adapter})


def once_each(adapter, channel="lab"):
    papers = adapter.papers(channel)
    return len(papers) == len(set(papers)), set(papers)


def test_one_digest_per_channel_and_day_and_never_a_paper_twice(app):
    ch = channel_with_topic(app)
    app.channels.settings.set_option(
        ch.ref, "backlog", False
    )  # new papers only (tests/delivery/test_backlog.py)
    adapter = RecordingAdapter(per_message=2)
    r = runner(app, "w1", adapter)
    assert asyncio.run(r.run_channel(ch.id, DAY)) == "posted 5 papers"
    assert asyncio.run(r.run_channel(ch.id, DAY)) == "already delivered"
    assert len(adapter.messages) == 4  # header + 2 + 2 + 1
    first = set(adapter.papers())
    asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1)))  # nothing ingested since day 1
    assert adapter.papers() == list(first) or set(adapter.papers()) == first
    fresh = [rec for rec in synthetic_records(per_topic=32) if rec.id.endswith(("-30", "-31"))]
    app.store.papers.upsert(fresh)
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=2))) == "posted 2 papers"
    unique, papers = once_each(adapter)
    assert unique and papers - first == {"syn-diffusion-30", "syn-diffusion-31"}


def test_a_lapsed_claim_is_posted_once_and_the_user_is_told_the_truth(app):
    ch = channel_with_topic(app)
    dead = deliveries(app, "host-1", lease=timedelta(seconds=3))
    claim = dead.claim(ch, DAY)  # ...and the process dies here
    adapter = RecordingAdapter()
    r = runner(app, "host-2", adapter)
    said = asyncio.run(r.run_channel(ch.id, DAY))  # the lease still runs: host-1 has it
    assert said.startswith("another digestbot process is sending") and "being prepared" in said
    assert asyncio.run(r.recover()) == []  # the lease still runs
    asyncio.run(asyncio.sleep(3.1))
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    assert asyncio.run(r.recover()) == []
    assert adapter.papers() == [i.paper_id for i in claim.delivery.items]


@pytest.mark.parametrize("reached_platform", [True, False])
def test_recovery_resumes_from_the_first_unconfirmed_message(app, reached_platform):
    """A dead worker confirmed messages 0-1 and was sending message 2 (which did or did not reach
    the platform); message 3 was never sent. Recovery asks the platform about 2, posts the rest."""
    from bot.commands.replies import digest_reply

    ch = channel_with_topic(app)
    adapter = RecordingAdapter(per_message=2)
    dead = deliveries(app, "host-1")
    claim = dead.claim(ch, DAY)
    reply = digest_reply(claim.digest)
    plan = dead.plan(claim, adapter.plan(reply))
    for m in plan[:3]:
        assert dead.sending(claim, m.position)
        if m.position < 2 or reached_platform:
            key = claim.part_key(m.position)
            ref = asyncio.run(adapter.post_part(ch.ref, reply, m.position, key, None))
        if m.position < 2:
            dead.confirm(claim, m.position, ref)
    assert app.store.ledger.delivered(ch.id) == [p for m in plan[:2] for p in m.paper_ids]
    asyncio.run(asyncio.sleep(LEASE.total_seconds() + 0.1))
    assert asyncio.run(runner(app, "host-2", adapter).recover()) == ["posted 5 papers"]
    unique, papers = once_each(adapter)
    assert unique and papers == {i.paper_id for i in claim.delivery.items}
    assert app.store.deliveries.for_day(ch.id, DAY).status == POSTED


def test_a_worker_that_lost_its_lease_can_neither_post_nor_record(app):
    ch = channel_with_topic(app)
    old = deliveries(app, "host-1")
    claim = old.claim(ch, DAY)
    asyncio.run(asyncio.sleep(LEASE.total_seconds() + 0.1))
    [taken] = deliveries(app, "host-2").take_over()
    assert taken.lease.fence == claim.lease.fence + 1
    asyncio.run(asyncio.sleep(LEASE.total_seconds() + 0.1))
    [again] = deliveries(app, "host-1").take_over()  # same id back (a retry in the same process)
    assert again.lease.fence == claim.lease.fence + 2 and again.lease.owner == claim.lease.owner
    assert not old.plan(claim, [()])
    assert not old.sending(claim, 0) and not old.confirm(claim, 0, "x") and not old.finish(claim)
    assert not old.retry_later(claim, "boom") and not old.fail(claim, "boom")
    adapter = RecordingAdapter()
    assert asyncio.run(runner(app, "host-1", adapter).send(claim, adapter)) == LOST
    assert adapter.messages == []
    assert app.store.deliveries.for_day(ch.id, DAY).status == CLAIMED


def test_a_paper_is_reserved_once_per_channel_even_when_two_days_race(app):
    ch = channel_with_topic(app)
    items = [ItemClaim(pid, n, 1.0, "") for n, pid in enumerate(app.store.papers.ids_between(0, 3))]
    repo = app.store.deliveries
    assert repo.claim(ch.id, DAY, "w1", items) is not None
    assert repo.claim(ch.id, DAY + timedelta(days=1), "w2", items) is None  # both composed first


def test_a_transient_failure_is_retried_in_the_same_process(app):
    """One process, no restart: the scheduler's sweep retries once the backoff has passed."""
    from bot.runtime.scheduler import DigestScheduler

    ch = channel_with_topic(app)
    adapter = RecordingAdapter()
    adapter.fail["lab"] = PostError("ratelimited")
    r = runner(app, "solo", adapter, backoff=(0.5,))
    sched = DigestScheduler(r, sweep_every=timedelta(seconds=0.2))

    async def scenario() -> str:
        outcome = await r.run_channel(ch.id, DAY)
        state = await asyncio.to_thread(r.deliveries.state, ch.id, DAY)
        del adapter.fail["lab"]
        sched.start()
        for _ in range(100):  # until the retry has finished (all its messages), not just begun
            await asyncio.sleep(0.1)
            done = await asyncio.to_thread(app.store.deliveries.for_day, ch.id, DAY)
            if adapter.messages and done.status == POSTED:
                break
        sched.shutdown()
        return outcome, state

    outcome, state = asyncio.run(scenario())
    assert outcome.startswith("retrying at ") and "Console error ratelimited" in outcome
    assert state.startswith("retrying at ") and state.endswith("after Console error ratelimited")
    assert adapter.papers() and once_each(adapter)[0]
    assert app.store.deliveries.for_day(ch.id, DAY).status == POSTED


def test_a_rejected_digest_pauses_the_channel_and_frees_its_papers(app):
    ch = channel_with_topic(app)
    adapter = RecordingAdapter()
    adapter.fail["lab"] = PostError("invalid_blocks", "rejected")
    r = runner(app, "w1", adapter)
    assert "channel paused" in asyncio.run(r.run_channel(ch.id, DAY))
    ch = app.store.channels.by_id(ch.id)
    assert ch.paused and ch.paused_reason == "invalid_blocks"
    kept = app.store.deliveries.for_day(ch.id, DAY)  # the record and its reason stay (issue 26)
    assert kept.status == "failed" and kept.last_error == "Console error invalid_blocks"
    assert app.store.deliveries.delivered_paper_ids(ch.id) == set()
    other = channel_with_topic(app, "other")
    assert asyncio.run(r.run_channel(other.id, DAY)).startswith("posted")  # others unaffected


def test_a_paper_committed_during_a_claim_is_delivered_next(db_url, tmp_path):
    """An ingest transaction open while a digest is claimed commits after it: next digest has it."""
    app = make_app(db_url, tmp_path)
    ch = channel_with_topic(app)
    app.channels.settings.set_option(
        ch.ref, "backlog", False
    )  # new papers only: the backlog would hide it
    adapter = RecordingAdapter()
    r = runner(app, "w1", adapter)
    # late papers above the default threshold (calibrated 0.49 and 0.56; -35 is at 0.25, under it)
    late = [
        r
        for r in synthetic_records(per_topic=40)
        if r.id in ("syn-diffusion-32", "syn-diffusion-34")
    ]
    go = threading.Event()

    def records():
        yield late[0]
        go.wait(10)  # the first paper is in the open transaction while the digest is claimed
        yield late[1]

    ingest = threading.Thread(target=app.store.papers.upsert, args=(records(),))
    ingest.start()
    try:
        assert asyncio.run(r.run_channel(ch.id, DAY)) == "posted 5 papers"
    finally:
        go.set()
        ingest.join()
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1))) == "posted 2 papers"
    unique, papers = once_each(adapter)
    assert unique and {"syn-diffusion-32", "syn-diffusion-34"} <= papers
    app.close()


def test_a_digest_due_in_a_dst_gap_fires_right_after_it_and_next_due_agrees():
    # The scheduler stores next_due's answer as the channel's next due time (bot/runtime/scheduler.py).
    from digest.clock.times import next_due

    days = "mon,tue,wed,thu,fri,sat,sun"
    before = datetime(2026, 3, 8, 4, 0, tzinfo=UTC)  # 23:00 on the 7th in Havana
    fire = next_due(before, "00:30", days, "America/Havana")
    assert fire.astimezone(UTC) == datetime(2026, 3, 8, 5, 0, tzinfo=UTC)  # 01:00, gap's end
    after = next_due(fire, "00:30", days, "America/Havana")
    assert after.astimezone(UTC) == datetime(2026, 3, 9, 4, 30, tzinfo=UTC)


def test_next_digest_skips_a_day_already_delivered_and_list_says_so(app):
    from bot.commands import Context

    ch = channel_with_topic(app)
    app.channels.settings.set_schedule(ch.ref, "09:00", "UTC", "daily")
    ch = app.store.channels.by_id(ch.id)
    early = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)  # `digest now` before the 09:00 tick
    assert app.digests.next_digest(ch, early) == datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    asyncio.run(runner(app, "w1", RecordingAdapter()).run_channel(ch.id, DAY))
    assert app.digests.next_digest(ch, early) == datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
    text = app.commands.handle("list", Context(ref=ch.ref, user="u", now=early)).text
    assert "Next digest: Wed 02 Dec 09:00" in text and "Today's digest: already delivered" in text


def test_retries_stop_at_the_end_of_the_grace_window_and_free_the_papers(app):
    ch = channel_with_topic(app)
    adapter = RecordingAdapter()
    adapter.fail["lab"] = PostError("internal_error")
    d = Deliveries(app.papers, "w1", lease=LEASE, grace=timedelta(seconds=0.5), backoff=(5.0,))
    r = DigestRunner(d, {"console": adapter})
    outcome = asyncio.run(r.run_channel(ch.id, DAY))
    assert outcome == "failed: gave up after Console error internal_error (grace window over)"
    kept = app.store.deliveries.for_day(ch.id, DAY)  # nothing reached the channel; it says why
    assert (
        kept.status == "failed" and kept.last_error == "gave up after Console error internal_error"
    )
    assert app.store.deliveries.delivered_paper_ids(ch.id) == set()


def test_quiet_channel_stays_silent_on_an_empty_day(app):
    ch = channel_with_topic(app)
    app.channels.settings.set_option(ch.ref, "quiet", True)
    app.channels.settings.set_option(ch.ref, "backlog", False)
    adapter = RecordingAdapter()
    r = runner(app, "w1", adapter)
    asyncio.run(r.run_channel(ch.id, DAY))
    sent = len(adapter.messages)
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=1))) == "empty (quiet)"
    assert len(adapter.messages) == sent  # nothing reached the channel
    app.channels.settings.set_option(ch.ref, "quiet", False)
    assert asyncio.run(r.run_channel(ch.id, DAY + timedelta(days=2))) == "posted 0 papers"
    assert len(adapter.messages) == sent + 1  # the "nothing new" note
