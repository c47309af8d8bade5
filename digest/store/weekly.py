"""What weekly pictures are drawn from, and which channels owe one.

A picture is a delivery of kind ``weekly`` in the one delivery ledger (digest/store/deliveries.py,
digest/store/ledger.py): claimed per (channel, week), leased, retried, confirmed and looked up
after a crash by the same code as a digest. This module only reads.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Engine, and_, false, func, or_, select, true
from sqlalchemy.orm import Session

from digest.models import Channel, DeliveryKind
from digest.store.channels import to_channel
from digest.store.schema import (
    ChannelRow,
    DeliveryItemRow,
    DeliveryRow,
    FeedbackRow,
    SubscriptionRow,
)

PICTURES = DeliveryRow.kind == DeliveryKind.WEEKLY.value


class WeeklyRepo:
    """Which channels owe a picture, and the per-week rows a picture is drawn from."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def owing(self, platforms: set[str], unclaimed_from: date) -> list[Channel]:
        """Channels on ``platforms`` that may owe a picture: running, with the picture on (or on
        by default: two interests or more), and no claim for ``unclaimed_from`` or later. One
        statement, so a sweep costs what is owed, not the number of channels."""
        interests = (
            select(func.count())
            .where(SubscriptionRow.channel_id == ChannelRow.id, SubscriptionRow.kind != "exclude")
            .correlate(ChannelRow)
            .scalar_subquery()
        )
        claimed = (
            select(DeliveryRow.id)
            .where(
                DeliveryRow.channel_id == ChannelRow.id,
                PICTURES,
                DeliveryRow.digest_date >= unclaimed_from,
            )
            .correlate(ChannelRow)
            .exists()
        )
        stmt = (
            select(ChannelRow)
            .where(
                ChannelRow.paused == false(),
                ChannelRow.platform.in_(sorted(platforms)),
                or_(ChannelRow.weekly == true(), and_(ChannelRow.weekly.is_(None), interests >= 2)),
                ~claimed,
            )
            .order_by(ChannelRow.id)
        )
        with Session(self.engine) as session:
            return [to_channel(r) for r in session.scalars(stmt)]

    def claimed_weeks(self, since: date) -> set[tuple[int, date]]:
        """(channel id, week) of every picture claimed for ``since`` or later, whatever its state."""
        stmt = select(DeliveryRow.channel_id, DeliveryRow.digest_date).where(
            PICTURES, DeliveryRow.digest_date >= since
        )
        with Session(self.engine) as session:
            return {(c, w) for c, w in session.execute(stmt)}

    def delivered(self, channel_id: int, since: date) -> list[tuple[date, str]]:
        """(digest date, why-line) of each paper a channel was sent from ``since`` on."""
        stmt = (
            select(DeliveryRow.digest_date, DeliveryItemRow.why)
            .join(DeliveryRow, DeliveryRow.id == DeliveryItemRow.delivery_id)
            .where(DeliveryItemRow.channel_id == channel_id, DeliveryRow.digest_date >= since)
        )
        with Session(self.engine) as session:
            return [(d, why) for d, why in session.execute(stmt)]

    def votes(self, channel_id: int, since: datetime) -> list[tuple[datetime, int]]:
        """(when, +1/-1) of each vote in force in a channel, cast (or last changed) since then."""
        stmt = select(FeedbackRow.created_at, FeedbackRow.value).where(
            FeedbackRow.channel_id == channel_id, FeedbackRow.created_at >= since
        )
        with Session(self.engine) as session:
            return [(at, v) for at, v in session.execute(stmt)]
