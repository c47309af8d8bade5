"""Digest schedules: parsing user input and finding due times across timezones and DST. No I/O."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from digest.errors import DigestError
from digest.text.numbers import numeric_text

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
PRESETS = {"daily": DAYS, "weekdays": DAYS[:5], "weekends": DAYS[5:]}

#: The default catch-up grace window: how long a missed scheduled digest is still delivered
#: (DIGESTBOT_CATCHUP_GRACE_HOURS, bot/config.py).
GRACE = timedelta(hours=12)


_NAMED = {"noon": "12:00", "midday": "12:00", "midnight": "00:00"}
# "9am", "9 am", "9:30pm", "9.30 p.m.", "12am" (midnight): the 12-hour clock's common spellings.
_TWELVE = re.compile(r"([0-9]{1,2})(?:[:.]([0-9]{2}))?\s*([ap])\.?\s*m\.?")


def parse_time(text: str) -> str:
    """'9', '9:30', '09:30', '9.30', '9h30', '21h', '0930', '9am', '9:30pm', 'noon',
    'midnight' -> 'HH:MM' (24-hour clock).

    Minutes always take two digits: '9:5' could mean 9:05 or 9:50, so it is refused, as is a
    three-digit '930'; four digits without a separator can only be HHMM. With am/pm the hour
    runs 1 to 12 ('12am' is midnight, '12pm' noon).
    """
    typed = numeric_text(text).strip().lower()
    if typed in _NAMED:
        return _NAMED[typed]
    if twelve := _TWELVE.fullmatch(typed):
        hour, minute = int(twelve.group(1)), int(twelve.group(2) or 0)
        if 1 <= hour <= 12 and minute <= 59:
            return f"{hour % 12 + (12 if twelve.group(3) == 'p' else 0):02d}:{minute:02d}"
        raise DigestError(
            f"With am/pm the hour runs 1 to 12 (9am, 9:30pm, 12pm is noon), got {text[:20]!r}."
        )
    m = re.fullmatch(r"([0-9]{1,2})(?:[:h.]([0-9]{2}))?h?|([0-9]{2})([0-9]{2})", typed)
    hour, minute = (m.group(1) or m.group(3), m.group(2) or m.group(4) or "0") if m else ("99", "0")
    if int(hour) > 23 or int(minute) > 59:
        raise DigestError(
            "Time must look like 09:30, 9:30, 0930, 21, 9am, 9:30pm, noon or midnight, "
            f"got {text[:20]!r}{_hint(typed)}."
        )
    return f"{int(hour):02d}:{int(minute):02d}"


def _hint(typed: str) -> str:
    """What an ambiguous time probably meant: one-digit minutes, or three digits ('930')."""
    if re.fullmatch(r"[0-9]{1,2}[:h.][0-9]", typed):
        return " (minutes take two digits: 9:05 or 9:50?)"
    if re.fullmatch(r"[0-9]{3}", typed) and int(typed[1:]) <= 59:  # H:MM (HH:M is refused)
        return (
            f" (three digits: {typed[0]}:{typed[1:]} is written 0{typed} or {typed[0]}:{typed[1:]})"
        )
    return ""


def parse_weekdays(text: str) -> str:
    """'daily', 'weekdays', 'weekends' or a list like 'mon,wed,fri' -> 'mon,wed,fri'."""
    key = text.strip().lower()
    if key in PRESETS:
        return ",".join(PRESETS[key])
    days = [d.strip()[:3] for d in re.split(r"[,\s]+", key) if d.strip()]
    if not days or any(d not in DAYS for d in days):
        raise DigestError(
            f"Days must be daily, weekdays, weekends or a list like mon,wed,fri; got {text[:30]!r}."
        )
    return ",".join(d for d in DAYS if d in days)


def _at(day: date, hhmm: str, tz: ZoneInfo) -> datetime:
    """The wall-clock time on ``day`` in ``tz``; a time a DST gap skips means right after the gap."""
    hour, minute = map(int, hhmm.split(":"))
    local = datetime.combine(day, time(hour, minute), tzinfo=tz)
    utc = ZoneInfo("UTC")
    early, late = local.replace(fold=1).astimezone(utc), local.astimezone(utc)
    if early >= late:  # the time exists (once, or twice in a fold: the first is used)
        return min(early, late).astimezone(tz)
    # Skipped: the gap's end is the first instant after ``early`` whose offset changed.
    before = early.astimezone(tz).utcoffset()
    step = timedelta(minutes=1)
    while early < late and (early + step).astimezone(tz).utcoffset() == before:
        early += step
    return (early + step).replace(second=0, microsecond=0).astimezone(tz)


def last_due(now: datetime, hhmm: str, weekdays: str, tz_name: str) -> datetime | None:
    """The most recent scheduled time at or before ``now`` (within the last 8 days)."""
    tz = ZoneInfo(tz_name)
    days = set(weekdays.split(","))
    local_now = now.astimezone(tz)
    for back in range(8):
        day = local_now.date() - timedelta(days=back)
        if DAYS[day.weekday()] in days:
            due = _at(day, hhmm, tz)
            if due <= local_now:
                return due
    return None


def next_due(now: datetime, hhmm: str, weekdays: str, tz_name: str) -> datetime | None:
    """The next scheduled time strictly after ``now``."""
    tz = ZoneInfo(tz_name)
    days = set(weekdays.split(","))
    local_now = now.astimezone(tz)
    for ahead in range(8):
        day = local_now.date() + timedelta(days=ahead)
        if DAYS[day.weekday()] in days:
            due = _at(day, hhmm, tz)
            if due > local_now:
                return due
    return None


def due_on(day: date, hhmm: str, weekdays: str, tz_name: str) -> datetime | None:
    """The scheduled time on ``day``, or None when ``day`` is not one of ``weekdays``."""
    if DAYS[day.weekday()] not in set(weekdays.split(",")):
        return None
    return _at(day, hhmm, ZoneInfo(tz_name))


def local_day(now: datetime, tz_name: str) -> date:
    """Today's date in the channel's timezone (the digest's date)."""
    return now.astimezone(ZoneInfo(tz_name)).date()
