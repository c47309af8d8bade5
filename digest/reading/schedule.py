"""The reading group's week, computed in the meeting's time zone on the one clock. No I/O.

For a meeting at time M (its weekday and wall-clock time in its zone; a time a DST gap skips
is right after the gap, as for digests):

- the poll opens at M − 2 days and closes at M − 1 day;
- at the close the pick is announced, and its discussion thread opened;
- a reminder goes to the thread at M − 1 hour;
- the recap goes to the thread at M + 2 hours.

A post missed (the bot was down) is still sent while its window lasts: the poll until it
closes, the announcement, thread and reminder until the meeting, the recap for 12 hours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from digest.clock.times import DAYS, due_on, last_due, next_due
from digest.errors import DigestError
from digest.models import DeliveryKind

POLL_OPENS = timedelta(days=2)
POLL_CLOSES = timedelta(days=1)
REMINDER = timedelta(hours=1)
RECAP_AFTER = timedelta(hours=2)
RECAP_LATE = timedelta(hours=12)
#: The reading group's posts, in the order of the week.
KINDS = (
    DeliveryKind.RG_POLL,
    DeliveryKind.RG_PICK,
    DeliveryKind.RG_THREAD,
    DeliveryKind.RG_REMIND,
    DeliveryKind.RG_RECAP,
)
#: The posts that go in the pick's discussion thread.
IN_THREAD = frozenset({DeliveryKind.RG_THREAD, DeliveryKind.RG_REMIND, DeliveryKind.RG_RECAP})
_NAMES = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
    "tues": 1,
    "weds": 2,
    "thur": 3,
    "thurs": 3,
}


def parse_weekday(text: str) -> int:
    """'tue', 'Tuesday', 'TUES' -> 1 (Monday 0); a DigestError naming the choices otherwise."""
    key = text.strip().lower().rstrip(".")
    if key in DAYS:
        return DAYS.index(key)
    if key in _NAMES:
        return _NAMES[key]
    raise DigestError(f"Unknown weekday {text[:20]!r}; use mon, tue, wed, thu, fri, sat or sun.")


@dataclass(frozen=True)
class Timeline:
    """One meeting's week: when each post is due, and until when it is still sent."""

    meeting: datetime  # aware, in the meeting's zone

    @property
    def day(self) -> date:
        """The meeting's date in its zone: the key of its poll and posts."""
        return self.meeting.date()

    @property
    def opens(self) -> datetime:
        return self.meeting - POLL_OPENS

    @property
    def closes(self) -> datetime:
        return self.meeting - POLL_CLOSES

    def window(self, kind: DeliveryKind) -> tuple[datetime, datetime]:
        """[from, until) in which the post of ``kind`` is sent."""
        if kind == DeliveryKind.RG_POLL:
            return self.opens, self.closes
        if kind in (DeliveryKind.RG_PICK, DeliveryKind.RG_THREAD):
            return self.closes, self.meeting
        if kind == DeliveryKind.RG_REMIND:
            return self.meeting - REMINDER, self.meeting
        recap = self.meeting + RECAP_AFTER
        return recap, recap + RECAP_LATE

    def due(self, now: datetime) -> list[DeliveryKind]:
        """The posts whose window holds ``now``, in the week's order."""
        out = []
        for kind in KINDS:
            start, end = self.window(kind)
            if start <= now < end:
                out.append(kind)
        return out


def meetings(now: datetime, weekday: int, at: str, tz: str) -> list[Timeline]:
    """The meetings whose posts may be due around ``now``: the last one (its recap may still
    be owed) and the next (its poll may be open)."""
    day = DAYS[weekday]
    found = [last_due(now, at, day, tz), next_due(now, at, day, tz)]
    return [Timeline(m) for m in found if m is not None]


def next_meeting(now: datetime, weekday: int, at: str, tz: str) -> Timeline:
    """The next meeting whose recap is not yet due: the one people are asking about."""
    last = last_due(now, at, DAYS[weekday], tz)
    if last is not None and now < last + RECAP_AFTER:
        return Timeline(last)
    found = next_due(now, at, DAYS[weekday], tz)
    assert found is not None  # a weekly time always has a next occurrence
    return Timeline(found)


def meeting_on(day: date, at: str, tz: str) -> Timeline:
    """The meeting on ``day`` (its poll's key), at the group's time in its zone."""
    found = due_on(day, at, DAYS[day.weekday()], tz)
    assert found is not None  # the day's own weekday
    return Timeline(found)
