"""Mentions: who asked to be mentioned on a channel's picks, what their own digest follows (read
in bulk for a tick's digests), and the mentions a delivered pick carries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from sqlalchemy import Engine, Integer, delete, func, insert, select
from sqlalchemy.exc import IntegrityError

from digest.clock import Clock, system_clock
from digest.models import Subscription
from digest.store.batch import _among, chunks
from digest.store.channels import _sub
from digest.store.deliveries import mentions_of
from digest.store.schema import (
    ChannelRow,
    DeliveryItemRow,
    FeedbackRow,
    MentionOptInRow,
    SubscriptionRow,
)


@dataclass(frozen=True)
class OptIn:
    """A member opted in on a channel, with their personal digest's id and threshold."""

    channel_id: int
    user: str
    personal_id: int
    threshold: float


@dataclass
class MemberReads:
    """What scoring opted-in members needs, read for many channels at once."""

    optins: dict[int, list[OptIn]] = field(default_factory=dict)  # by shared channel id
    subscriptions: dict[int, list[Subscription]] = field(default_factory=dict)  # by personal id
    totals: dict[int, dict[str, int]] = field(default_factory=dict)  # by personal id


class MentionRepo:
    """Opt-ins per channel and member; the members' personal profiles in bulk."""

    def __init__(self, engine: Engine, clock: Clock = system_clock) -> None:
        self.engine = engine
        self.clock = clock

    def opt_in(self, channel_id: int, user: str, personal_id: int) -> bool:
        """Record the opt-in; False when it was already there."""
        row = dict(
            channel_id=channel_id, user_id=user, personal_id=personal_id, created_at=self.now()
        )
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(MentionOptInRow).values(**row))
        except IntegrityError:  # already in (or a concurrent `on`: one row either way)
            return False
        return True

    def opt_out(self, channel_id: int, user: str) -> bool:
        """Remove the opt-in; False when there was none."""
        with self.engine.begin() as conn:
            gone = conn.execute(
                delete(MentionOptInRow).where(
                    MentionOptInRow.channel_id == channel_id, MentionOptInRow.user_id == user
                )
            )
        return bool(gone.rowcount)

    def opted_in(self, channel_id: int, user: str) -> bool:
        """Whether ``user`` is opted in on the channel."""
        with self.engine.connect() as conn:
            found = conn.execute(
                select(func.count())
                .select_from(MentionOptInRow)
                .where(MentionOptInRow.channel_id == channel_id, MentionOptInRow.user_id == user)
            ).scalar_one()
        return bool(found)

    def members(self, channel_ids: Sequence[int]) -> MemberReads:
        """The opted-in members of ``channel_ids`` with their personal digests' subscriptions
        and net votes: three statements a chunk, however many channels (most have nobody)."""
        out = MemberReads()
        with self.engine.connect() as conn:
            among = _among(conn)
            for ids in chunks(list(dict.fromkeys(channel_ids))):
                rows = conn.execute(
                    select(
                        MentionOptInRow.channel_id,
                        MentionOptInRow.user_id,
                        MentionOptInRow.personal_id,
                        ChannelRow.threshold,
                    )
                    .join(ChannelRow, ChannelRow.id == MentionOptInRow.personal_id)
                    .where(among(MentionOptInRow.channel_id, ids, Integer))
                    .order_by(MentionOptInRow.id)
                )
                for cid, user, personal_id, threshold in rows:
                    out.optins.setdefault(cid, []).append(OptIn(cid, user, personal_id, threshold))
            personal = sorted({o.personal_id for got in out.optins.values() for o in got})
            for ids in chunks(personal):
                subs = select(SubscriptionRow).where(
                    among(SubscriptionRow.channel_id, ids, Integer)
                )
                for row in conn.execute(subs.order_by(SubscriptionRow.id)):
                    sub = _sub(cast(SubscriptionRow, row))
                    out.subscriptions.setdefault(sub.channel_id, []).append(sub)
                votes = (
                    select(
                        FeedbackRow.channel_id, FeedbackRow.paper_id, func.sum(FeedbackRow.value)
                    )
                    .where(among(FeedbackRow.channel_id, ids, Integer))
                    .group_by(FeedbackRow.channel_id, FeedbackRow.paper_id)
                )
                for cid, pid, total in conn.execute(votes):
                    out.totals.setdefault(cid, {})[pid] = int(total)
        return out

    def delivered_mentions(self, channel_id: int, paper_id: str) -> tuple[str, ...]:
        """Whom the channel's delivered (or claimed) pick of ``paper_id`` mentions."""
        with self.engine.connect() as conn:
            value = conn.execute(
                select(DeliveryItemRow.mentions).where(
                    DeliveryItemRow.channel_id == channel_id, DeliveryItemRow.paper_id == paper_id
                )
            ).scalar()
        return mentions_of(value)

    def now(self) -> datetime:
        """When an opt-in is recorded: the one clock."""
        return self.clock()
