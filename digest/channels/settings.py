"""A channel's settings: schedule, size, threshold, pause and the on/off options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from digest.clock.times import parse_time, parse_weekdays
from digest.clock.zones import parse_timezone
from digest.errors import DigestError
from digest.models import Channel, ChannelRef
from digest.text.numbers import numeric_text, typed_value, whole_number

if TYPE_CHECKING:
    from digest.store import Store


class ChannelSettings:
    """A channel's settings: one part of ChannelService, over the store and ``channel``, which
    finds or creates a channel."""

    def __init__(self, store: Store, channel: Callable[[ChannelRef], Channel]) -> None:
        self.store = store
        self.channel = channel

    def set_schedule(
        self, ref: ChannelRef, at: str, tz: str | None = None, days: str | None = None
    ) -> Channel:
        """Change when digests arrive."""
        fields = {"digest_time": parse_time(at)}
        if tz:
            fields["timezone"] = parse_timezone(tz)
        if days:
            fields["weekdays"] = parse_weekdays(days)
        return self.store.channels.update(self.channel(ref).id, **fields)

    def set_size(self, ref: ChannelRef, text: str) -> Channel:
        """Papers per digest, 1 to 25."""
        size = whole_number(text, "Digest size", 1, 25)
        return self.store.channels.update(self.channel(ref).id, digest_size=size)

    def set_threshold(self, ref: ChannelRef, text: str) -> Channel:
        """Minimum score for a paper to be posted, 0 to 1."""
        number = numeric_text(text)
        try:
            value = float(number) if number.isascii() else -1.0
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            raise DigestError(
                f"Threshold must be a number from 0 to 1 (e.g. 0.3), {typed_value(text.strip(), number)}."
            )
        value += 0.0  # -0.0 + 0.0 is 0.0: '-0' must not be stored and shown as -0.00
        return self.store.channels.update(self.channel(ref).id, threshold=value)

    def set_paused(self, ref: ChannelRef, paused: bool, reason: str | None = None) -> Channel:
        """Pause or resume digests; the reason is shown by `list` and `digestbot channels`."""
        return self.store.channels.update(
            self.channel(ref).id, paused=paused, paused_reason=reason if paused else None
        )

    def pause_workspace(self, platform: str, workspace: str, reason: str) -> int:
        """Pause every channel of a workspace the app was removed from (one write, however many
        channels it has), saying why; their data stays. Returns how many were paused."""
        return self.store.channels.pause_workspace(platform, workspace, reason)

    def set_option(self, ref: ChannelRef, name: str, on: bool, user: str | None = None) -> Channel:
        """Boolean channel options: quiet, admin-only, threads, backlog, weekly, share-votes.
        Whoever turns admin-only on (``user``) becomes the owner: they must be able to unlock it,
        admin or not."""
        fields = {
            "quiet": "quiet_when_empty",
            "admin-only": "admin_only",
            "threads": "threaded",
            "backlog": "backlog",
            "weekly": "weekly",
            "share-votes": "share_votes",
        }
        if name not in fields:
            raise DigestError(f"Unknown option {name[:30]!r}; options are {', '.join(fields)}.")
        if name == "admin-only" and ref.personal:  # a DM digest has no admins
            raise DigestError(
                "admin-only is for shared channels: your personal digest is already yours alone "
                "to change."
            )
        if name == "share-votes" and ref.personal:
            raise DigestError(
                "share-votes is for shared channels: your personal 👍 are never shared."
            )
        owner = {"owner_user": user} if name == "admin-only" and on and user else {}
        return self.store.channels.update(self.channel(ref).id, **{fields[name]: on}, **owner)
