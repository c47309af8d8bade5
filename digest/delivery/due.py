"""When a channel's digests really go out: the one rule the scheduler, `why`, `list` and `channels` share.

A scheduled time missed (the bot was down, or the channel was set up after it) is still
delivered at once while it is within the catch-up grace window (DIGESTBOT_CATCHUP_GRACE_HOURS),
so "the next digest" is that one, not tomorrow's. Days that already have a digest are skipped.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from digest.clock.times import GRACE, due_on, last_due, local_day, next_due
from digest.models import Channel

if TYPE_CHECKING:
    from digest.store import Store


def catch_up_due(now: datetime, channel: Channel, grace: timedelta = GRACE) -> datetime | None:
    """The latest scheduled time at or before ``now`` that a catch-up still delivers, if any.

    Never one of a day before the channel was set up (in its timezone, as `refuse_day` says):
    a schedule change must not post a digest for a day the channel did not exist.
    """
    due = last_due(now, channel.digest_time, channel.weekdays, channel.timezone)
    if due is None or now - due > grace:
        return None
    if channel.created_at is not None and due.date() < local_day(
        channel.created_at, channel.timezone
    ):
        return None
    return due


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


def refuse_day(channel: Channel, day: date, now: datetime, grace: timedelta = GRACE) -> str | None:
    """Why a digest may not be posted for ``day`` now (None: it may), as one sentence.

    Today may always be posted (`digest now`); a past day only as the scheduler would still
    catch it up: a digest day of the channel's, after it was set up, within the grace window.
    Anything else would use up backlog papers for a day the channel never had a digest.
    """
    today = local_day(now, channel.timezone)
    look = "Look at a past day with --dry-run."
    if day > today:
        return f"--date {day} is in the future ({channel.ref} is at {today}); posting it now would use up that day. Preview it with --dry-run."
    if day == today:
        return None
    created = local_day(channel.created_at, channel.timezone) if channel.created_at else None
    if created is not None and day < created:
        return f"--date {day} is before {channel.ref} was set up ({created}). {look}"
    due = due_on(day, channel.digest_time, channel.weekdays, channel.timezone)
    if due is None:
        return f"--date {day} is not a digest day of {channel.ref} ({channel.weekdays}). {look}"
    if now - due > grace:
        hours = f"{grace.total_seconds() / 3600:g}"
        return (
            f"--date {day} is past the {hours} h catch-up window "
            f"(DIGESTBOT_CATCHUP_GRACE_HOURS); only today's or a recent missed digest is posted. {look}"
        )
    return None
