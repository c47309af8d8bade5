"""The weekly picture: papers per interest over eight weeks (from the channel's first) and votes.

Counts come from the store (papers delivered, by the interest their why-line credits, and votes,
by week of the channel's own calendar); ``aggregate`` is pure, and drawing is in
digest/weekly/chart.py (matplotlib, loaded only when a picture is drawn). A channel gets its
picture once a week, on Monday at its digest time (or the first look after, that week), as a
delivery of kind ``weekly`` in the one delivery ledger (digest/delivery/steps.py).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from digest.models import Channel
from digest.store import Store
from digest.weekly.stats import WeeklyStats

__all__ = ["WEEKS", "Picture", "WeeklyPictures", "WeeklyStats", "aggregate", "due_week"]

WEEKS = 8
#: Interests drawn one by one; the rest are summed as "other interests" (a legend stays legible).
TOP = 6
OTHER = "other interests"
#: The furthest ahead of UTC a time zone runs (UTC+14, Line Islands): its Monday comes first.
LATEST_ZONE = timedelta(hours=14)


@dataclass(frozen=True)
class Picture:
    """A drawn picture: the PNG, its one-line alt text, a title and a file name."""

    png: bytes
    alt: str
    title: str
    filename: str


def shown_name(channel: Channel) -> str:
    """'#lab': the channel's name as people know it. A console channel's id is its name; a
    Slack or Discord channel whose name was never seen keeps its platform reference."""
    if channel.name:
        return f"#{channel.name}"
    if channel.ref.platform == "console":
        return f"#{channel.ref.channel_id}"
    return str(channel.ref)


def week_of(day: date) -> date:
    """The Monday starting ``day``'s week."""
    return day - timedelta(days=day.weekday())


def aggregate(
    delivered: list[tuple[date, str]],
    votes: list[tuple[datetime, int]],
    last_week: date,
    tz: str,
    weeks: int = WEEKS,
    partial: bool = False,
    since: date | None = None,
) -> WeeklyStats:
    """Count papers per interest and votes per week for the ``weeks`` weeks ending with
    ``last_week`` (a Monday): papers by digest date, votes by their local day in ``tz``.
    Weeks before ``since`` (the channel's first day) are left out unless they hold data."""
    from digest.rank.why import interest_of  # the ranker's modules load here, as for `stats`

    mondays = tuple(last_week - timedelta(weeks=weeks - 1 - i) for i in range(weeks))
    slot = {m: i for i, m in enumerate(mondays)}
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * weeks)
    for day, why in delivered:
        if (i := slot.get(week_of(day))) is not None:
            counts[interest_of(why)][i] += 1
    up, down = [0] * weeks, [0] * weeks
    zone = ZoneInfo(tz)
    for at, value in votes:
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        if (i := slot.get(week_of(at.astimezone(zone).date()))) is not None:
            (up if value > 0 else down)[i] += 1
    # A week before the channel existed is not a week of zero papers: drawn as 0 it reads as a
    # trend. It is left out, unless it holds data (a created_at later than the first digest).
    first = 0
    if since is not None:
        busy = [i for i in range(weeks) if up[i] or down[i] or any(c[i] for c in counts.values())]
        first = min([slot.get(week_of(since), weeks - 1 if since > last_week else 0), *busy])
    ranked = sorted(counts, key=lambda k: (-sum(counts[k]), k))
    per = {k: tuple(counts[k][first:]) for k in ranked[:TOP]}
    if rest := ranked[TOP:]:
        per[OTHER] = tuple(sum(counts[k][i] for k in rest) for i in range(first, weeks))
    return WeeklyStats(mondays[first:], per, tuple(up[first:]), tuple(down[first:]), partial)


def _local_day(at: datetime | None, tz: str) -> date | None:
    """``at``'s day in the zone ``tz`` (None stays None)."""
    if at is None:
        return None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(ZoneInfo(tz)).date()


def due_week(channel: Channel, now: datetime) -> date | None:
    """The week whose picture is owed now: this week's, from Monday at the digest time on."""
    zone = ZoneInfo(channel.timezone)
    local = now.astimezone(zone)
    monday = week_of(local.date())
    hh, mm = (int(x) for x in channel.digest_time.split(":"))
    return monday if local >= datetime.combine(monday, time(hh, mm), zone) else None


class WeeklyPictures:
    """Which channels owe a picture, and drawing it; platform-free (the ledger sends it)."""

    def __init__(
        self, store: Store, draw: Callable[[WeeklyStats, str], bytes] | None = None
    ) -> None:
        self.store = store
        # How a picture becomes PNG bytes: in this process unless the root gives a worker's
        # (bot/runtime/background.py: the running bot draws in a child process).
        self.draw = draw

    def due(self, now: datetime, platforms: set[str]) -> list[tuple[Channel, date]]:
        """Channels on ``platforms`` whose picture for this week is owed and not yet claimed.

        The store reads only channels that may owe one (running, the picture on, no claim for
        the latest week any time zone is in): from Monday to Saturday, after the pictures went
        out, a sweep over 10,000 channels reads none of them."""
        latest = week_of((now.astimezone(UTC) + LATEST_ZONE).date())
        owed = []
        for ch in self.store.weekly.owing(platforms, unclaimed_from=latest):
            if (week := due_week(ch, now)) is not None:
                owed.append((ch, week))
        if not owed:
            return []
        claimed = self.store.weekly.claimed_weeks(min(w for _, w in owed))
        return [(ch, w) for ch, w in owed if (ch.id, w) not in claimed]

    def stats(self, channel: Channel, last_week: date, partial: bool = False) -> WeeklyStats:
        """Counts for the eight weeks ending with ``last_week``."""
        first = last_week - timedelta(weeks=WEEKS - 1)
        since = datetime.combine(first - timedelta(days=1), time(), UTC)  # any zone's Monday
        return aggregate(
            self.store.weekly.delivered(channel.id, first),
            self.store.weekly.votes(channel.id, since),
            last_week,
            channel.timezone,
            partial=partial,
            since=_local_day(channel.created_at, channel.timezone),
        )

    def picture(self, channel: Channel, last_week: date, partial: bool = False) -> Picture | None:
        """The picture for the eight weeks ending with ``last_week``; None when they are empty."""
        stats = self.stats(channel, last_week, partial)
        if stats.empty:
            return None
        from digest.weekly.draw import draw_here

        title = f"Weekly picture for {shown_name(channel)}, {stats.span()}"
        png = (self.draw or draw_here)(stats, title)
        return Picture(png, stats.alt_text(), title, f"weekly-{last_week}.png")

    def for_week(self, channel: Channel | None, week: date) -> Picture | None:
        """What ``week``'s claim sends: the eight weeks before it; None (nothing to send) when
        they are empty, or the channel was paused or switched off since the claim."""
        if channel is None or channel.paused or channel.weekly is False:
            return None
        return self.picture(channel, week - timedelta(weeks=1))

    def now_picture(self, channel: Channel, now: datetime) -> Picture | None:
        """The on-demand picture (`stats`): the eight weeks ending with this one, so far."""
        today = now.astimezone(ZoneInfo(channel.timezone)).date()
        pic = self.picture(channel, week_of(today), partial=True)
        if pic is None:
            return None
        # Named for the channel too: several channels' `stats` share one data folder (console)
        # or one person's DM (Slack), and one must not replace another's.
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(channel.ref)).strip("_.")
        return replace(pic, filename=f"weekly-{safe}-{week_of(today)}.png")
