"""Scheduling on a controlled clock: timezones, weekday rules, DST, downtime catch-up, real ticks."""

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine

from bot.runtime.runner import DigestRunner
from bot.runtime.scheduler import DigestScheduler
from digest.clock.times import last_due, next_due
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fakes.recording import RecordingAdapter

BERLIN = ZoneInfo("Europe/Berlin")


def fires(channel, start: datetime, n: int) -> list[datetime]:
    """The scheduler's next ``n`` due times after ``start`` (what a tick moves a channel on to)."""
    out, now = [], start
    for _ in range(n):
        now = next_due(now, channel.digest_time, channel.weekdays, channel.timezone)
        out.append(now)
    return out


#: When the test channels are set up: before every clock these tests use (catch-up never goes
#: before a channel's first day, so the real date must not decide what is caught up).
SET_UP = datetime(2026, 11, 30, 11, 20, tzinfo=UTC)  # Monday 12:20 in Berlin


@pytest.fixture
def lab(app):
    ref = ChannelRef("console", "lab")
    with time_machine.travel(SET_UP, tick=False):
        app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_schedule(ref, "09:00", "Europe/Berlin", "weekdays")
    return app.store.channels.get(ref)


def test_cron_follows_local_time_across_the_dst_change(lab):
    # Europe/Berlin leaves summer time on Sunday 2026-10-25.
    times = fires(lab, datetime(2026, 10, 22, 12, 0, tzinfo=UTC), 4)
    local = [t.astimezone(BERLIN) for t in times]
    assert [t.strftime("%a %H:%M") for t in local] == [
        "Fri 09:00",
        "Mon 09:00",
        "Tue 09:00",
        "Wed 09:00",
    ]
    assert [t.astimezone(UTC).hour for t in times] == [7, 8, 8, 8]  # UTC+2 before, UTC+1 after


def test_weekday_rules_and_spring_forward_gap(app):
    ref = ChannelRef("console", "night")
    app.channels.settings.set_schedule(
        ref, "02:30", "Europe/Berlin", "sun"
    )  # 02:30 does not exist on 2026-03-29
    ch = app.store.channels.get(ref)
    due = next_due(
        datetime(2026, 3, 28, 12, 0, tzinfo=UTC), ch.digest_time, ch.weekdays, ch.timezone
    )
    assert due.astimezone(UTC) == datetime(
        2026, 3, 29, 1, 0, tzinfo=UTC
    )  # 03:00 CEST: right after the gap
    assert [
        f.astimezone(BERLIN).weekday() for f in fires(ch, datetime(2026, 4, 1, tzinfo=UTC), 3)
    ] == [6, 6, 6]


def test_last_due_skips_days_off():
    monday_morning = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)  # Monday 07:00 in Berlin
    due = last_due(monday_morning, "09:00", "mon,tue,wed,thu,fri", "Europe/Berlin")
    assert due.astimezone(BERLIN).strftime("%a %d %H:%M") == "Fri 27 09:00"


def make(app, clock, grace_hours=12):
    adapter = RecordingAdapter()
    runner = DigestRunner(Deliveries(app.papers, "w1"), {"console": adapter})
    return DigestScheduler(runner, grace=timedelta(hours=grace_hours), clock=lambda: clock), adapter


def test_catch_up_delivers_the_latest_missed_digest_once(app, lab):
    # Down since Thursday; back on Friday at 11:00 Berlin: Thursday's and Friday's ticks were missed.
    back = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
    sched, adapter = make(app, back)
    assert asyncio.run(sched.tick()) == {"console:lab": "posted 5 papers"}
    assert asyncio.run(sched.tick()) == {}  # not due again until Monday
    assert adapter.keys() == [f"digest-{lab.id}-2026-12-04#0", f"digest-{lab.id}-2026-12-04#1"]


def test_catch_up_respects_the_grace_window(app, lab):
    sched, adapter = make(app, datetime(2026, 12, 4, 22, 0, tzinfo=UTC), grace_hours=6)  # 14 h late
    assert asyncio.run(sched.tick()) == {}
    assert adapter.messages == []


def test_a_real_tick_fires_the_digest_at_local_time(app, lab):
    async def scenario():
        sched, adapter = make(app, datetime(2026, 12, 3, 7, 59, 59, tzinfo=UTC))
        sched.clock = lambda: datetime.now(UTC)
        sched.start()
        for _ in range(60):
            if adapter.messages:
                break
            await asyncio.sleep(0.05)
        sched.shutdown()
        return adapter

    # 08:59:59.5 Berlin on a Thursday; the 09:00 job fires half a second later.
    with time_machine.travel(datetime(2026, 12, 3, 7, 59, 59, 500000, tzinfo=UTC), tick=True):
        adapter = asyncio.run(scenario())
    assert {k.split("#")[0] for k in adapter.keys()} == {f"digest-{lab.id}-2026-12-03"}  # noqa: SIM118
