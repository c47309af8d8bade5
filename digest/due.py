"""When a channel's digests really go out: the one rule the scheduler, `why`, `list` and `channels` share.

A scheduled time missed (the bot was down, or the channel was set up after it) is still
delivered at once while it is within the catch-up grace window (DIGESTBOT_CATCHUP_GRACE_HOURS),
so "the next digest" is that one, not tomorrow's. Days that already have a digest are skipped.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from digest.models import Channel
from digest.schedule import last_due, next_due
from digest.store import Store

GRACE = timedelta(hours=12)  # the default catch-up grace window (bot/config.py)


def catch_up_due(now: datetime, channel: Channel, grace: timedelta = GRACE) -> datetime | None:
    """The latest scheduled time at or before ``now`` that a catch-up still delivers, if any."""
    due = last_due(now, channel.digest_time, channel.weekdays, channel.timezone)
    return due if due is not None and now - due <= grace else None


def upcoming(
    store: Store, channel: Channel, now: datetime, grace: timedelta = GRACE, n: int = 1
) -> list[datetime]:
    """The next ``n`` digests as the scheduler sends them (a missed one still in grace first)."""
    out: list[datetime] = []
    due = catch_up_due(now, channel, grace) or next_due(
        now, channel.digest_time, channel.weekdays, channel.timezone
    )
    for _ in range(n + 8):
        if due is None:
            break
        if store.deliveries.for_day(channel.id, due.date()) is None:
            out.append(due)
            if len(out) == n:
                break
        due = next_due(due, channel.digest_time, channel.weekdays, channel.timezone)
    return out


def overdue_note(due: datetime, now: datetime) -> str:
    """' (missed: caught up at once)' for a missed digest being caught up, else ''."""
    return " (missed: caught up at once)" if due <= now else ""
