"""Issue 21, item 3 (and issue 23's console item): what scheduling costs does not grow with the
number of channels, due digests start together, and no catch-up reaches before a channel existed.

Counted, not timed: channel rows the ORM loads, jobs APScheduler holds, posts in flight at once.
"""

import asyncio
from datetime import UTC, datetime

import time_machine
from sqlalchemy import event, select

from bot.commands import Context
from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.clock.times import next_due
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.schema import ChannelRow
from tests.fakes.recording import RecordingAdapter

MANY = 40


def _mark(app, channel_id: int) -> datetime:
    """A channel's stored next due time, read without the ORM (not counted)."""
    with app.store.engine.connect() as conn:
        stmt = select(ChannelRow.__table__.c.next_due_at).where(
            ChannelRow.__table__.c.id == channel_id
        )
        return conn.scalar(stmt)


class LoadCounter:
    """Channel rows materialised by the ORM while active (a walk over every channel loads all)."""

    def __init__(self) -> None:
        self.n = 0
        event.listen(ChannelRow, "load", self._count)

    def _count(self, *_: object) -> None:
        self.n += 1

    def close(self) -> None:
        event.remove(ChannelRow, "load", self._count)


def _scheduler(app, adapter, clock=None, concurrency=16):
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": adapter})
    kw = {"clock": clock} if clock else {}
    return DigestScheduler(runner, concurrency=concurrency, **kw)


def test_a_settings_change_reads_that_channel_alone_and_there_is_no_job_per_channel(app):
    """40 channels; a schedule change through the command core, then the production hook
    (poke: the timer fires a tick). Breaks that turn this red: poke() walking every channel
    (the old sync: 40+ rows loaded); ChannelRepo.due ignoring next_due_at (every channel read
    each tick); ChannelRepo.update not marking a schedule change (the changed channel is never
    looked at, so its next due time stays the old one); a job per channel added back at start."""
    refs = [ChannelRef("console", f"c{i}") for i in range(MANY)]
    for ref in refs:
        app.channels.channel(ref)  # set up, following nothing: a tick only moves it on
    adapter = RecordingAdapter()
    changed = app.store.channels.get(refs[7])

    async def scenario():
        sched = _scheduler(app, adapter)
        sched.start(first_tick=False)
        await sched.tick()  # every channel looked at once: each gets its next due time
        jobs_at_start = len(sched.scheduler.get_jobs())
        old = _mark(app, changed.id)
        counter = LoadCounter()
        try:
            ctx = Context(changed.ref, "u1")
            reply = app.commands.handle("schedule 23:59 Pacific/Kiritimati daily", ctx)
            assert reply.schedule_changed == changed.ref
            sched.poke()
            want = (
                next_due(
                    datetime.now(UTC), "23:59", "mon,tue,wed,thu,fri,sat,sun", "Pacific/Kiritimati"
                )
                .astimezone(UTC)
                .replace(tzinfo=None)
            )
            for _ in range(200):  # the poked tick gives the channel its new due time
                seen = _mark(app, changed.id).replace(tzinfo=None)
                if seen == want:
                    break
                await asyncio.sleep(0.05)
            loads = counter.n
        finally:
            counter.close()
        jobs_after = len(sched.scheduler.get_jobs())
        sched.shutdown()
        return jobs_at_start, jobs_after, loads, seen, want, old

    jobs_at_start, jobs_after, loads, seen, want, old = asyncio.run(scenario())
    assert seen == want  # moved to the new schedule's next time by the poked tick
    assert jobs_at_start <= 2 and jobs_after <= 2  # the sweep and the one due timer
    ch = app.store.channels.get(changed.ref)
    assert ch.timezone == "Pacific/Kiritimati" and seen != old.replace(tzinfo=None)
    # The command's reads of the channel (its owner and name checks included) and the tick's one
    # row: a constant handful, where walking every channel loads 40+.
    assert loads <= 8, loads


def test_a_settings_change_alone_costs_the_same_with_many_channels(app):
    """The store side of a change and the following tick, counted for 1 and for 40 other
    channels: the same number of channel rows. Breaks that turn this red: ChannelRepo.due
    without its next_due_at condition; DigestScheduler.tick reading store.channels.all()."""

    def cost(n_others: int, name: str) -> int:
        for i in range(n_others):
            app.channels.channel(ChannelRef("console", f"{name}{i}"))
        target = ChannelRef("console", f"{name}-target")
        app.channels.follows.add(target, SubscriptionKind.EXCLUDE, "quantum")  # follows nothing
        sched = _scheduler(app, RecordingAdapter())
        asyncio.run(sched.tick())  # all looked at once
        counter = LoadCounter()
        try:
            app.channels.settings.set_schedule(target, "07:00", "Asia/Tokyo", "daily")
            asyncio.run(sched.tick())
            return counter.n
        finally:
            counter.close()

    assert cost(1, "a") == cost(MANY, "b") <= 3


class GatedAdapter(RecordingAdapter):
    """Holds each post until ``want`` posts are in flight together (or ``wait_s`` passes, a
    generous bound on the thing held), recording the most in flight at once."""

    def __init__(self, want: int, wait_s: float = 10.0) -> None:
        super().__init__()
        self.want, self.wait_s = want, wait_s
        self.in_flight = self.most = 0
        self.enough = asyncio.Event()

    async def post_part(self, ref, reply, position, key, parent, degrade=False):
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if self.in_flight >= self.want:
            self.enough.set()
        try:
            if position == 0:
                await asyncio.wait_for(self.enough.wait(), self.wait_s)
        except TimeoutError:
            pass
        finally:
            self.in_flight -= 1
        return await super().post_part(ref, reply, position, key, parent, degrade)


def test_channels_due_together_are_posted_together(app):
    """8 channels due at the same minute start together, not one after another. Breaks that turn
    this red: the tick awaiting each channel's digest in turn (the old catch-up loop); the
    runner holding its composing semaphore (or one lock) for the whole post; concurrency 1."""
    refs = [ChannelRef("console", f"due{i}") for i in range(8)]
    with time_machine.travel(
        datetime(2026, 12, 2, tzinfo=UTC), tick=False
    ):  # set up the day before
        for ref in refs:
            app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
            app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
    adapter = GatedAdapter(want=len(refs))
    nine = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)
    sched = _scheduler(app, adapter, clock=lambda: nine)
    done = asyncio.run(sched.tick())
    assert sorted(done) == sorted(str(r) for r in refs)
    assert all(o.startswith("posted") for o in done.values()), done
    assert adapter.most == len(refs)  # every header in flight at once


def test_a_schedule_change_never_catches_up_a_day_before_the_channel_existed(app):
    """Issue 23: set up at 10:35 UTC on 1 Dec (its 09:00 digest caught up at once), then moved to
    20:00 New York at 10:40: 30 Nov 20:00 New York (01:00 UTC on 1 Dec) is within the grace
    window but before the channel existed; nothing is posted for it, and `list` names the
    next one, not a missed one. Break that turns this red: catch_up_due without its
    set-up-day check (the 30 Nov digest is posted and `list` says "missed: caught up")."""
    ref = ChannelRef("console", "new")
    with time_machine.travel(datetime(2026, 12, 1, 10, 35, tzinfo=UTC), tick=False):
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "graph neural networks")
        app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
    adapter = RecordingAdapter()
    at = datetime(2026, 12, 1, 10, 40, tzinfo=UTC)
    sched = _scheduler(app, adapter, clock=lambda: at)
    assert list(asyncio.run(sched.tick()).values()) == ["posted 5 papers"]
    ctx = Context(ref, "u1", now=at)
    app.commands.handle("schedule 20:00 America/New_York daily", ctx)
    assert asyncio.run(sched.tick()) == {}
    channel = app.store.channels.get(ref)
    days = {k.split("-", 2)[2][:10] for k in adapter.keys()}  # noqa: SIM118
    assert days == {"2026-12-01"}, days
    assert app.store.deliveries.for_day(channel.id, datetime(2026, 11, 30).date()) is None
    listed = app.commands.handle("list", ctx).text
    assert "missed" not in listed, listed
    assert "Next digest: Wed 02 Dec 20:00" in listed, listed  # 1 Dec has its digest


class StatementCounter:
    """SQL statements sent to the database while active (an executemany counts once)."""

    def __init__(self, engine) -> None:
        self.engine, self.n = engine, 0
        event.listen(engine, "before_cursor_execute", self._count)

    def _count(self, *_: object) -> None:
        self.n += 1

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._count)


def test_a_tick_claims_its_due_channels_in_statements_that_do_not_grow_with_them(app):
    """3 and then 15 channels due at 09:00, each following its own topic: the digest side of
    the tick (reads, composing, claims) sends the same number of statements for both, and the
    whole tick grows per channel only by the posting writes (one confirmation a message, 2
    messages a digest: at most 4 statements each when confirmed alone, fewer when grouped with
    other digests' confirmations, tests/runtime/test_group_commit.py). Breaks that turn this red: Ticks.claim
    composing through compose_digest (a Source per channel, not the BulkSource); the scheduler
    claiming with runner.run_channel per channel (the old tick); BatchRepo.advance or
    BatchRepo.claim running a statement per channel; the runner writing `sending` before each
    message again (not folded into the previous confirmation)."""
    topics = [
        "graph neural networks",
        "diffusion models",
        "reinforcement learning",
        "sparse autoencoders",
        "LLM alignment",
    ]
    nine = datetime(2026, 12, 3, 9, 0, 5, tzinfo=UTC)

    def setup(n: int, name: str) -> list[ChannelRef]:
        refs = [ChannelRef("console", f"{name}{i}") for i in range(n)]
        with time_machine.travel(datetime(2026, 12, 2, tzinfo=UTC), tick=False):
            for i, ref in enumerate(refs):
                app.channels.follows.add(ref, SubscriptionKind.TOPIC, f"{topics[i % 5]} {i}")
                app.channels.settings.set_schedule(ref, "09:00", "UTC", "daily")
        return refs

    def claim_cost(n: int, name: str) -> int:
        refs = setup(n, name)
        runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": RecordingAdapter()})
        ticks = _scheduler(app, RecordingAdapter()).ticks
        due = [(app.store.channels.get(r), nine.date()) for r in refs]
        counter = StatementCounter(app.store.engine)
        try:
            claims = ticks.claim(due, runner.render)
        finally:
            counter.close()
        assert len(claims) == n
        return counter.n

    def tick_cost(n: int, name: str) -> int:
        refs = setup(n, name)
        adapter = RecordingAdapter()
        sched = _scheduler(app, adapter, clock=lambda: nine)
        counter = StatementCounter(app.store.engine)
        try:
            done = asyncio.run(sched.tick())
        finally:
            counter.close()
        assert sorted(done) == sorted(str(r) for r in refs)
        assert all(o.startswith("posted") for o in done.values()), done
        assert len(adapter.keys()) == 2 * n  # a header and one message of papers each
        return counter.n

    small, big = tick_cost(3, "a"), tick_cost(15, "b")  # each tick sees its own channels alone
    assert (big - small) / 12 <= 8, (small, big)
    assert claim_cost(3, "c") == claim_cost(15, "d")
