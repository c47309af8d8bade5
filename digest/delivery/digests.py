"""What a channel's digests are and will be, for replies and the command line: the digest it
would get now, when the next one goes out, today's state, the weekly picture on demand."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import TYPE_CHECKING

from digest.delivery.backlog import compose_digest
from digest.delivery.steps import next_digest, preview_target, today_state

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
        """When the channel's next digest really goes out (a missed one still in grace first)."""
        return next_digest(self.store, channel, now, self.channels.catchup_grace)

    def today_state(self, channel: Channel, now: datetime) -> str:
        """The true state of the channel's digest for its local today, in words."""
        return today_state(self.store, channel, now)

    def preview_target(self, channel: Channel, now: datetime) -> tuple[date, str]:
        """The day a preview shows, and a note when today's digest is settled or under way."""
        return preview_target(self.store, channel, now, self.channels.catchup_grace)

    def weekly_picture(self, ref: ChannelRef, now: datetime) -> Picture | None:
        """The weekly picture on demand: eight weeks up to this one; None with nothing to draw."""
        from digest.weekly.picture import WeeklyPictures

        pictures = WeeklyPictures(self.store, worker="", draw=self.draw)
        return pictures.now_picture(self.channels.channel(ref), now)
