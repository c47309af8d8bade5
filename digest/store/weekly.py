"""Weekly picture claims and the counts a picture is drawn from.

A picture is claimed per (channel, week) under a unique key, so several processes sharing the
database send it once. As with digests (digest/store/deliveries.py), the claim carries a lease
on the database clock and a fencing token: a claim whose owner crashed before posting, or whose
retry is due, is taken over by one worker, and the old owner's token stops working. A claim
that was being posted when its owner died is never taken over: the platform may have it, and
a second picture is worse than a missing one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Engine, and_, false, func, or_, select, true, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.models import Channel
from digest.store.channels import to_channel
from digest.store.deliveries import db_now
from digest.store.schema import (
    ChannelRow,
    DeliveryItemRow,
    DeliveryRow,
    FeedbackRow,
    SubscriptionRow,
    WeeklyPictureRow,
)

CLAIMED, SENDING, POSTED, EMPTY, FAILED = "claimed", "sending", "posted", "empty", "failed"


@dataclass(frozen=True)
class WeeklyLease:
    """Proof of owning a week's picture: valid while owner and fence still match the row."""

    id: int
    channel_id: int
    week: date
    owner: str
    fence: int
    attempts: int = 0  # passing failures so far (a retry waits longer each time)


class WeeklyRepo:
    """Claims of weekly pictures, and the per-week rows they are drawn from."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def claim(self, channel_id: int, week: date, worker: str, lease_s: float) -> WeeklyLease | None:
        """Reserve (channel, week); None when another process (or an earlier run) has it."""
        with Session(self.engine) as session:
            row = WeeklyPictureRow(
                channel_id=channel_id,
                week=week,
                status=CLAIMED,
                claimed_by=worker,
                fence=1,
                lease_until=db_now(self.engine, lease_s),
            )
            session.add(row)
            try:
                session.commit()
            except IntegrityError:
                session.rollback()
                return None
            return WeeklyLease(row.id, channel_id, week, worker, 1)

    def take_over(self, worker: str, lease_s: float, platforms: set[str]) -> list[WeeklyLease]:
        """Claims on ``platforms`` never posted whose lease lapsed (a crash before posting, a
        retry now due)."""
        lapsed = (
            select(WeeklyPictureRow.id)
            .join(ChannelRow, ChannelRow.id == WeeklyPictureRow.channel_id)
            .where(
                WeeklyPictureRow.status == CLAIMED,
                WeeklyPictureRow.lease_until < db_now(self.engine),
                ChannelRow.platform.in_(sorted(platforms)),
            )
        )
        out = []
        with Session(self.engine) as session:
            ids = list(session.scalars(lapsed))
        for pid in ids:
            stmt = (
                update(WeeklyPictureRow)
                .where(
                    WeeklyPictureRow.id == pid,
                    WeeklyPictureRow.status == CLAIMED,
                    WeeklyPictureRow.lease_until < db_now(self.engine),
                )
                .values(
                    claimed_by=worker,
                    fence=WeeklyPictureRow.fence + 1,
                    lease_until=db_now(self.engine, lease_s),
                )
                .returning(
                    WeeklyPictureRow.channel_id,
                    WeeklyPictureRow.week,
                    WeeklyPictureRow.fence,
                    WeeklyPictureRow.attempts,
                )
            )
            with Session(self.engine) as session:
                got = session.execute(stmt).first()
                session.commit()
            if got is not None:  # another worker may have won this one
                out.append(WeeklyLease(pid, got[0], got[1], worker, got[2], got[3]))
        return out

    def _move(self, lease: WeeklyLease, frm: tuple[str, ...], *also: Any, **values: Any) -> bool:
        """A fenced state change: only while the row is still ours and in one of ``frm``."""
        stmt = (
            update(WeeklyPictureRow)
            .where(
                WeeklyPictureRow.id == lease.id,
                WeeklyPictureRow.claimed_by == lease.owner,
                WeeklyPictureRow.fence == lease.fence,
                WeeklyPictureRow.status.in_(frm),
                *also,
            )
            .values(**values)
        )
        with Session(self.engine) as session:
            done = session.execute(stmt).rowcount == 1
            session.commit()
            return done

    def sending(self, lease: WeeklyLease) -> bool:
        """About to post: from now on the claim is never taken over."""
        return self._move(lease, (CLAIMED,), status=SENDING)

    def posted(self, lease: WeeklyLease, message_ref: str) -> bool:
        """The platform has the picture."""
        return self._move(
            lease, (SENDING,), status=POSTED, message_ref=message_ref, posted_at=db_now(self.engine)
        )

    def empty(self, lease: WeeklyLease) -> bool:
        """Nothing to draw this week (no papers, no votes): the week is settled, nothing sent."""
        return self._move(lease, (CLAIMED,), status=EMPTY)

    def defer(self, lease: WeeklyLease, error: str, delay_s: float, max_attempts: int) -> bool:
        """A passing failure: any worker may try again once ``delay_s`` has passed; after
        ``max_attempts`` the picture fails instead (False)."""
        if self._move(
            lease,
            (SENDING, CLAIMED),
            WeeklyPictureRow.attempts < max_attempts - 1,
            status=CLAIMED,
            last_error=error[:300],
            attempts=WeeklyPictureRow.attempts + 1,
            lease_until=db_now(self.engine, delay_s),
        ):
            return True
        self.fail(lease, f"gave up after {max_attempts} attempts: {error}")
        return False

    def fail(self, lease: WeeklyLease, error: str) -> bool:
        """Given up (refused, channel gone, too many attempts): the week is settled unsent."""
        return self._move(lease, (SENDING, CLAIMED), status=FAILED, last_error=error[:300])

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
            select(WeeklyPictureRow.id)
            .where(
                WeeklyPictureRow.channel_id == ChannelRow.id,
                WeeklyPictureRow.week >= unclaimed_from,
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
        """(channel id, week) of every claim for ``since`` or later, whatever its state."""
        stmt = select(WeeklyPictureRow.channel_id, WeeklyPictureRow.week).where(
            WeeklyPictureRow.week >= since
        )
        with Session(self.engine) as session:
            return {(c, w) for c, w in session.execute(stmt)}

    def state(self, channel_id: int, week: date) -> tuple[str, str | None] | None:
        """(status, last error) of a channel's picture for ``week``, or None if never claimed."""
        stmt = select(WeeklyPictureRow.status, WeeklyPictureRow.last_error).where(
            WeeklyPictureRow.channel_id == channel_id, WeeklyPictureRow.week == week
        )
        with Session(self.engine) as session:
            row = session.execute(stmt).first()
            return (row[0], row[1]) if row else None

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
