"""What a caller that only looks may read of channels and their digests: the store's own queries,
handed out once by ChannelService (``lookup``, ``history``) rather than forwarded one by one.
Read-only by type: nothing here can create, change or claim anything."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Protocol

from digest.models import Channel, ChannelRef, Subscription

if TYPE_CHECKING:
    from digest.store.deliveries import Delivery


class ChannelReads(Protocol):
    """Channels as stored; reading never creates one."""

    def get(self, ref: ChannelRef) -> Channel | None: ...
    def by_id(self, channel_id: int) -> Channel | None: ...
    def all(self) -> list[Channel]: ...
    def subscriptions(self, channel_id: int) -> list[Subscription]: ...


class DeliveryReads(Protocol):
    """A channel's digests as stored now, whatever their state."""

    def last(self, channel_id: int) -> Delivery | None: ...
    def for_day(self, channel_id: int, day: date) -> Delivery | None: ...
    def count(self, channel_id: int) -> int: ...
    def item_for_message(self, platform: str, message_ref: str) -> tuple[int, str] | None: ...
