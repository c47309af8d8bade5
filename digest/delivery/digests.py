"""What a channel's digests are and will be, for replies and the command line: the digest it
would get now, when the next one goes out, today's state, the weekly picture on demand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from digest.clock.times import local_day
from digest.delivery.backlog import compose_digest
from digest.delivery.due import upcoming
from digest.delivery.steps import describe
from digest.models import DeliveryState

if TYPE_CHECKING:
    from digest.channels.service import ChannelService
    from digest.delivery.compose import Digest
    from digest.models import Channel, ChannelRef
    from digest.weekly.picture import Picture
    from digest.weekly.stats import WeeklyStats


class Digests:
    """A channel's digests seen from outside the delivery ledger: read-only, nothing claimed."""

    def __init__(
        self, channels: ChannelService, draw: Callable[[WeeklyStats, str], bytes] | None = None
    ) -> None:
        self.channels = channels
        self.store = channels.store
        self.draw = draw  # how the weekly picture is drawn (None: in this process)

    def preview(self, ref: ChannelRef, day: date) -> Digest:
        """The digest the channel would get now, without claiming or sending anything."""
        return compose_digest(self.channels, self.channels.channel(ref), day)

    def next_digest(self, channel: Channel, now: datetime) -> datetime | None:
        """When the channel's next digest really goes out (a missed one still in grace first:
        digest/delivery/due.py)."""
        dues = upcoming(self.store, channel, now, self.channels.catchup_grace)
        return dues[0] if dues else None

    def today_state(self, channel: Channel, now: datetime) -> str:
        """The true state of the channel's digest for its local today, in words."""
        day = local_day(now, channel.timezone)
        d = self.store.deliveries.for_day(channel.id, day)
        if channel.paused and d is None:  # not "not delivered yet", as if it might still come
            return f"not sent: {channel.pause_state}"
        state = describe(d, self.store.ledger.messages)
        failed = d is not None and d.status == DeliveryState.FAILED
        return f"{state} (channel paused)" if channel.paused and failed else state

    def preview_target(self, channel: Channel, now: datetime) -> tuple[date, str]:
        """The day a preview shows, and a note when today's digest is already settled or under way.

        A preview composes what is still unsent; once today's digest went out that is the NEXT
        digest's content, so it is labelled with that digest's day and says so (never today's).
        """
        today = local_day(now, channel.timezone)
        d = self.store.deliveries.for_day(channel.id, today)
        if d is None:
            return today, ""
        state = describe(d, self.store.ledger.messages)
        if d.posted_at is not None:
            at = d.posted_at if d.posted_at.tzinfo else d.posted_at.replace(tzinfo=UTC)
            state += f" at {at.astimezone(ZoneInfo(channel.timezone)):%H:%M} ({channel.timezone})"
        due = self.next_digest(channel, now)
        if due is None:
            return today + timedelta(days=1), (
                f"Today's digest: {state}. No next digest is scheduled; "
                "this is what one would hold now."
            )
        return due.date(), (
            f"Today's digest: {state}. This preview is what the next digest, "
            f"{due:%a %d %b %H:%M %Z}, would hold."
        )

    def weekly_picture(self, ref: ChannelRef, now: datetime) -> Picture | None:
        """The weekly picture on demand: eight weeks up to this one; None with nothing to draw."""
        from digest.weekly.picture import WeeklyPictures

        pictures = WeeklyPictures(self.store, draw=self.draw)
        return pictures.now_picture(self.channels.channel(ref), now)
