"""Which days `digestbot digest --date` may post: today, or a missed day the scheduler would still send.

Breaks tried on purpose (each turned a test red):
- the creation-day check removed from `digest.delivery.due.refuse_day`;
- the grace check removed (a year-old date posts);
- the weekday check removed (an unscheduled past day posts);
- `Channel.created_at` not read from the row (None: creation check skipped).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from digest.delivery.due import refuse_day
from digest.models import ChannelRef, SubscriptionKind

NOW = datetime(2026, 11, 30, 12, 20, tzinfo=UTC)  # a Monday


@pytest.fixture
def lab(app):
    ref = ChannelRef("console", "lab")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_schedule(ref, "23:00", "UTC", "mon,tue,wed,thu,fri,sun")
    channel = app.store.channels.get(ref)
    assert channel.created_at is not None and channel.created_at.tzinfo is not None
    return replace(channel, created_at=datetime(2026, 11, 1, 8, 0, tzinfo=UTC))


@pytest.mark.parametrize(
    ("day", "grace_h", "needle"),
    [
        (date(2026, 11, 30), 12, None),  # today, always
        (date(2026, 11, 29), 24, None),  # Sunday 23:00 was 13 h 20 ago: a catch-up day
        (date(2026, 11, 29), 12, "catch-up window"),  # ... but not with 12 h of grace
        (date(2026, 11, 28), 168, "not a digest day"),  # Saturday: no digest that day
        (date(2026, 11, 27), 168, None),  # Friday, inside a week's grace
        (date(2026, 11, 20), 168, "catch-up window"),
        (date(2026, 10, 31), 24 * 365, "before console:lab was set up"),
        (date(1900, 1, 1), 24 * 365, "before console:lab was set up"),
        (date(2026, 12, 1), 12, "in the future"),
    ],
)
def test_refuse_day(lab, day, grace_h, needle):
    why = refuse_day(lab, day, NOW, timedelta(hours=grace_h))
    if needle is None:
        assert why is None, why
    else:
        assert why and needle in why and "--dry-run" in why, why


def test_creation_day_is_taken_in_the_channels_time_zone(lab):
    """Set up at 23:30 UTC on the 1st is the 2nd in Tokyo: the 1st did not exist there."""
    tokyo = replace(
        lab, timezone="Asia/Tokyo", created_at=datetime(2026, 11, 1, 23, 30, tzinfo=UTC)
    )
    why = refuse_day(tokyo, date(2026, 11, 1), NOW, timedelta(days=365))
    assert why and "before" in why and "(2026-11-02)" in why
