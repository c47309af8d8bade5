"""Delivery claims: the database decides which process posts a channel's digest for a date, once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from sqlalchemy import Engine, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.store.schema import ChannelRow, DeliveryItemRow, DeliveryRow

CLAIMED, SENDING, POSTED, EMPTY = "claimed", "sending", "posted", "empty"


@dataclass(frozen=True)
class ItemClaim:
    """A paper reserved for a digest, with its rank, score and reason."""

    paper_id: str
    rank: int
    score: float
    why: str


@dataclass(frozen=True)
class Delivery:
    """A claimed digest."""

    id: int
    channel_id: int
    digest_date: date
    status: str
    claimed_by: str
    claimed_at: datetime
    message_ref: str | None
    near_misses: int
    items: tuple[ItemClaim, ...] = ()


def _aware(dt: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything here is UTC."""
    return dt.replace(tzinfo=UTC) if dt is not None and dt.tzinfo is None else dt


def _delivery(row: DeliveryRow, items: list[DeliveryItemRow] | None = None) -> Delivery:
    return Delivery(
        id=row.id,
        channel_id=row.channel_id,
        digest_date=row.digest_date,
        status=row.status,
        claimed_by=row.claimed_by,
        claimed_at=_aware(row.claimed_at),
        message_ref=row.message_ref,
        near_misses=row.near_misses,
        items=tuple(
            ItemClaim(i.paper_id, i.rank, i.score, i.why)
            for i in sorted(items or [], key=lambda i: i.rank)
        ),
    )


class DeliveryRepo:
    """Claims, state changes and history of digests."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def claim(
        self,
        channel_id: int,
        day: date,
        worker: str,
        items: list[ItemClaim],
        near_misses: int = 0,
        quiet: bool = False,
    ) -> Delivery | None:
        """Reserve (channel, day) and its papers in one transaction; None if already claimed.

        An empty digest is still claimed: the day is covered, and a non-quiet channel is told so.
        """
        now = datetime.now(UTC)
        with Session(self.engine) as session:
            row = DeliveryRow(
                channel_id=channel_id,
                digest_date=day,
                status=EMPTY if quiet and not items else CLAIMED,  # a quiet empty day is done
                claimed_by=worker,
                claimed_at=now,
                near_misses=near_misses,
            )
            session.add(row)
            try:
                session.flush()
                item_rows = [
                    DeliveryItemRow(
                        delivery_id=row.id,
                        channel_id=channel_id,
                        paper_id=i.paper_id,
                        rank=i.rank,
                        score=i.score,
                        why=i.why,
                    )  # fmt: skip
                    for i in items
                ]
                session.add_all(item_rows)
                session.commit()
            except IntegrityError:  # another process claimed this day, or one of these papers
                session.rollback()
                return None
            return _delivery(row, item_rows)

    def get(self, delivery_id: int) -> Delivery | None:
        """A delivery with its items."""
        with Session(self.engine) as session:
            row = session.get(DeliveryRow, delivery_id)
            if row is None:
                return None
            items = session.scalars(
                select(DeliveryItemRow).where(DeliveryItemRow.delivery_id == row.id)
            )
            return _delivery(row, list(items))

    def for_day(self, channel_id: int, day: date) -> Delivery | None:
        """The claim for a channel and day, if any."""
        stmt = select(DeliveryRow.id).where(
            DeliveryRow.channel_id == channel_id, DeliveryRow.digest_date == day
        )
        with Session(self.engine) as session:
            found = session.scalar(stmt)
        return self.get(found) if found else None

    def transition(
        self, delivery_id: int, worker: str, old: str, new: str, message_ref: str | None = None
    ) -> bool:
        """Move a delivery from ``old`` to ``new`` if ``worker`` still owns it (compare-and-set)."""
        values: dict = {"status": new}
        if new == POSTED:
            values |= {"posted_at": datetime.now(UTC), "message_ref": message_ref}
        stmt = (
            update(DeliveryRow)
            .where(
                DeliveryRow.id == delivery_id,
                DeliveryRow.status == old,
                DeliveryRow.claimed_by == worker,
            )
            .values(**values)
        )
        with Session(self.engine) as session:
            changed = session.execute(stmt).rowcount == 1
            session.commit()
            return changed

    def take_over(
        self, delivery_id: int, worker: str, stale_before: datetime, dead_owner: str | None = None
    ) -> bool:
        """Become owner of an unfinished delivery whose owner went quiet (or is known dead).

        A conditional UPDATE: when several workers try, exactly one sees rowcount 1.
        """
        owner_gone = DeliveryRow.claimed_at < stale_before
        if dead_owner is not None:
            owner_gone = owner_gone | (DeliveryRow.claimed_by == dead_owner)
        stmt = (
            update(DeliveryRow)
            .where(
                DeliveryRow.id == delivery_id,
                DeliveryRow.status.in_([CLAIMED, SENDING]),
                owner_gone,
            )
            .values(claimed_by=worker, claimed_at=datetime.now(UTC))
        )
        with Session(self.engine) as session:
            won = session.execute(stmt).rowcount == 1
            session.commit()
            return won

    def unfinished(self) -> list[Delivery]:
        """Claimed or sending deliveries (in progress elsewhere, or crash leftovers)."""
        stmt = select(DeliveryRow.id).where(DeliveryRow.status.in_([CLAIMED, SENDING]))
        with Session(self.engine) as session:
            ids = list(session.scalars(stmt))
        return [d for d in (self.get(i) for i in ids) if d is not None]

    def delivered_paper_ids(self, channel_id: int) -> set[str]:
        """Every paper ever reserved for this channel (never post one twice)."""
        stmt = select(DeliveryItemRow.paper_id).where(DeliveryItemRow.channel_id == channel_id)
        with Session(self.engine) as session:
            return set(session.scalars(stmt))

    def last(self, channel_id: int) -> Delivery | None:
        """The most recent digest claimed for a channel."""
        stmt = (
            select(DeliveryRow.id)
            .where(DeliveryRow.channel_id == channel_id)
            .order_by(DeliveryRow.digest_date.desc())
            .limit(1)
        )
        with Session(self.engine) as session:
            found = session.scalar(stmt)
        return self.get(found) if found else None

    def last_claimed_at(self, channel_id: int) -> datetime | None:
        """When the channel's latest digest was claimed (its papers cover the time up to then)."""
        stmt = select(func.max(DeliveryRow.claimed_at)).where(DeliveryRow.channel_id == channel_id)
        with Session(self.engine) as session:
            return _aware(session.scalar(stmt))

    def set_item_ref(self, delivery_id: int, paper_id: str, message_ref: str) -> None:
        """Remember which platform message shows a paper (reactions on it count as feedback)."""
        stmt = (
            update(DeliveryItemRow)
            .where(DeliveryItemRow.delivery_id == delivery_id, DeliveryItemRow.paper_id == paper_id)
            .values(message_ref=message_ref)
        )
        with Session(self.engine) as session:
            session.execute(stmt)
            session.commit()

    def item_for_message(self, platform: str, message_ref: str) -> tuple[int, str] | None:
        """(channel id, paper id) shown by a platform message (threads map to their digest's channel)."""
        stmt = (
            select(DeliveryItemRow.channel_id, DeliveryItemRow.paper_id)
            .join(ChannelRow, ChannelRow.id == DeliveryItemRow.channel_id)
            .where(ChannelRow.platform == platform, DeliveryItemRow.message_ref == message_ref)
        )
        with Session(self.engine) as session:
            row = session.execute(stmt).first()
            return (row[0], row[1]) if row else None

    def items(self, channel_id: int) -> list[tuple[str, str]]:
        """(paper id, why) of every paper sent to a channel, oldest first."""
        stmt = (
            select(DeliveryItemRow.paper_id, DeliveryItemRow.why)
            .where(DeliveryItemRow.channel_id == channel_id)
            .order_by(DeliveryItemRow.id)
        )
        with Session(self.engine) as session:
            return [(p, w) for p, w in session.execute(stmt)]

    def count(self, channel_id: int) -> int:
        """How many digests a channel has had (posted or empty)."""
        stmt = (
            select(func.count())
            .select_from(DeliveryRow)
            .where(DeliveryRow.channel_id == channel_id)
        )
        with Session(self.engine) as session:
            return session.scalar(stmt) or 0

    def delete(self, delivery_id: int) -> None:
        """Remove a claim and its reserved papers."""
        with Session(self.engine) as session:
            row = session.get(DeliveryRow, delivery_id)
            if row is not None:
                for item in session.scalars(
                    select(DeliveryItemRow).where(DeliveryItemRow.delivery_id == delivery_id)
                ):
                    session.delete(item)
                session.delete(row)
                session.commit()
