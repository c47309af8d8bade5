"""Delivery claims: the database decides which process posts a channel's digest for a date, once.

A claim carries a lease (``lease_until``) measured with the database clock and a fencing token
(``fence``, bumped on every take-over): every state change is conditional on owner and fence, so
a worker that lost its lease can neither record nor post again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime

from sqlalchemy import Connection, Engine, delete, exists, func, literal, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.models import DeliveryKind, DeliveryState
from digest.store.schema import ChannelRow, DeliveryItemRow, DeliveryMessageRow, DeliveryRow

# The one spelling of the states: DeliveryState's members (StrEnum: the stored strings).
CLAIMED, SENDING, POSTED, EMPTY, FAILED = DeliveryState
UNFINISHED = (CLAIMED, SENDING)
#: Digests only (not weekly pictures): what a channel's day, history and ingest window read.
DIGESTS = DeliveryRow.kind == DeliveryKind.DIGEST.value


@dataclass(frozen=True)
class ItemClaim:
    """A paper reserved for a digest, with its rank, score and reason."""

    paper_id: str
    rank: int
    score: float
    why: str
    #: The opted-in members this pick mentions (user ids), fixed when the digest was composed.
    mentions: tuple[str, ...] = ()


def mentions_column(mentions: tuple[str, ...]) -> str | None:
    """``ItemClaim.mentions`` as the ``delivery_items.mentions`` column stores it."""
    return json.dumps(list(mentions)) if mentions else None


def mentions_of(value: str | None) -> tuple[str, ...]:
    """The stored ``delivery_items.mentions`` column as user ids."""
    return tuple(str(u) for u in json.loads(value)) if value else ()


@dataclass(frozen=True)
class Lease:
    """Proof of ownership: valid while (owner, fence) still match the row."""

    delivery_id: int
    owner: str
    fence: int


@dataclass(frozen=True)
class Delivery:
    """A claimed digest."""

    id: int
    channel_id: int
    digest_date: date
    status: DeliveryState
    claimed_by: str
    claimed_at: datetime
    message_ref: str | None
    near_misses: int
    items: tuple[ItemClaim, ...] = ()
    fence: int = 1
    retry_at: datetime | None = None
    attempts: int = 0
    last_error: str | None = None
    upto_seq: int | None = None
    posted_at: datetime | None = None
    kind: DeliveryKind = DeliveryKind.DIGEST

    @property
    def lease(self) -> Lease:
        """The lease as this row last recorded it."""
        return Lease(self.id, self.claimed_by, self.fence)


def _aware(dt: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything here is UTC."""
    return dt.replace(tzinfo=UTC) if dt is not None and dt.tzinfo is None else dt


def db_now(engine: Engine, seconds: float = 0.0):  # noqa: ANN201 - a SQL expression
    """The database's clock (plus ``seconds``) as a SQL expression: never the worker's clock."""
    if engine.dialect.name == "postgresql":
        return func.clock_timestamp() + func.make_interval(0, 0, 0, 0, 0, 0, literal(seconds))
    # SQLite stores DateTime as 'YYYY-MM-DD HH:MM:SS.ffffff'; produce the same, from its clock.
    return func.strftime("%Y-%m-%d %H:%M:%f000", "now", f"{seconds:+.3f} seconds")


def _delivery(row: DeliveryRow, items: list[DeliveryItemRow] | None = None) -> Delivery:
    return Delivery(
        id=row.id,
        channel_id=row.channel_id,
        digest_date=row.digest_date,
        status=DeliveryState(row.status),
        claimed_by=row.claimed_by,
        claimed_at=_aware(row.claimed_at),
        message_ref=row.message_ref,
        near_misses=row.near_misses,
        items=tuple(
            ItemClaim(i.paper_id, i.rank, i.score, i.why, mentions_of(i.mentions))
            for i in sorted(items or [], key=lambda i: i.rank)
        ),
        fence=row.fence,
        retry_at=_aware(row.retry_at),
        attempts=row.attempts,
        last_error=row.last_error,
        upto_seq=row.upto_seq,
        posted_at=_aware(row.posted_at),
        kind=DeliveryKind(row.kind),
    )


class DeliveryRepo:
    """Claims, fenced state changes and history of digests."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def now(self, seconds: float = 0.0):  # noqa: ANN201 - a SQL expression
        """The database clock, shifted by ``seconds``."""
        return db_now(self.engine, seconds)

    def claim(
        self,
        channel_id: int,
        day: date,
        worker: str,
        items: list[ItemClaim],
        near_misses: int = 0,
        quiet: bool = False,
        upto_seq: int = 0,
        lease_s: float = 120.0,
        grace_s: float = 12 * 3600,
        kind: DeliveryKind = DeliveryKind.DIGEST,
    ) -> Delivery | None:
        """Reserve (channel, day) of ``kind`` and its papers in one transaction; None if already
        claimed.

        An empty digest is still claimed: the day is covered, and a non-quiet channel is told so.
        A weekly picture is claimed the same way, with no papers, ``day`` its Monday.
        """
        with Session(self.engine) as session:
            row = DeliveryRow(
                channel_id=channel_id,
                digest_date=day,
                kind=kind.value,
                status=EMPTY if quiet and not items else CLAIMED,  # a quiet empty day is done
                claimed_by=worker,
                claimed_at=self.now(),  # the database clock: recovery searches from here
                near_misses=near_misses,
                fence=1,
                lease_until=self.now(lease_s),
                give_up_at=self.now(grace_s),
                upto_seq=upto_seq,
            )
            session.add(row)
            try:
                session.flush()
                session.add_all(
                    DeliveryItemRow(
                        delivery_id=row.id,
                        channel_id=channel_id,
                        paper_id=i.paper_id,
                        rank=i.rank,
                        score=i.score,
                        why=i.why,
                        mentions=mentions_column(i.mentions),
                    )
                    for i in items
                )
                delivery_id = row.id
                session.commit()
            except IntegrityError:  # another process claimed this day, or one of these papers
                session.rollback()
                return None
        return self.get(delivery_id)

    def reopen(self, channel_id: int, day: date) -> bool:
        """Clear a failed digest that delivered nothing, so the day can be claimed again (a run
        after the channel was fixed and resumed); one that reached the channel stays."""
        undelivered = (
            (DeliveryRow.channel_id == channel_id)
            & (DeliveryRow.digest_date == day)
            & DIGESTS
            & (DeliveryRow.status == FAILED)
            & ~exists().where(DeliveryItemRow.delivery_id == DeliveryRow.id)
        )
        with Session(self.engine) as session:
            found = session.scalar(select(DeliveryRow.id).where(undelivered))
            if found is None:
                return False
            session.execute(
                delete(DeliveryMessageRow).where(DeliveryMessageRow.delivery_id == found)
            )
            done = session.execute(delete(DeliveryRow).where(DeliveryRow.id == found, undelivered))
            session.commit()
            return done.rowcount == 1

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

    def for_day(
        self, channel_id: int, day: date, kind: DeliveryKind = DeliveryKind.DIGEST
    ) -> Delivery | None:
        """The claim of ``kind`` for a channel and day (a picture's: its Monday), if any."""
        stmt = select(DeliveryRow.id).where(
            DeliveryRow.channel_id == channel_id,
            DeliveryRow.digest_date == day,
            DeliveryRow.kind == kind.value,
        )
        with Session(self.engine) as session:
            found = session.scalar(stmt)
        return self.get(found) if found else None

    def held_by(self, lease: Lease):  # noqa: ANN201 - a SQL condition
        """SQL condition: the row is unfinished and still ours (owner and fence match)."""
        return (
            (DeliveryRow.id == lease.delivery_id)
            & (DeliveryRow.claimed_by == lease.owner)
            & (DeliveryRow.fence == lease.fence)
            & DeliveryRow.status.in_(UNFINISHED)
        )

    def hold(self, session: Session | Connection, lease: Lease, lease_s: float) -> bool:
        """Renew the lease inside ``session``'s transaction; False if it is no longer ours."""
        stmt = update(DeliveryRow).where(self.held_by(lease)).values(lease_until=self.now(lease_s))
        return session.execute(stmt).rowcount == 1

    def renew(self, lease: Lease, lease_s: float) -> bool:
        """Extend the lease (while a post is in flight); False if another worker took over."""
        with Session(self.engine) as session:
            held = self.hold(session, lease, lease_s)
            session.commit()
            return held

    def take_over(self, delivery_id: int, worker: str, lease_s: float) -> Lease | None:
        """Become owner of an unfinished delivery whose lease ran out (by the database clock).

        A conditional UPDATE that bumps the fence: when several workers try, exactly one wins,
        and the previous owner's token stops working.
        """
        stmt = (
            update(DeliveryRow)
            .where(
                DeliveryRow.id == delivery_id,
                DeliveryRow.status.in_(UNFINISHED),
                DeliveryRow.lease_until < self.now(),
            )
            .values(
                claimed_by=worker,
                fence=DeliveryRow.fence + 1,
                lease_until=self.now(lease_s),
                retry_at=None,
            )
            .returning(DeliveryRow.fence)
        )
        with Session(self.engine) as session:
            fence = session.execute(stmt).scalar_one_or_none()
            session.commit()
        return Lease(delivery_id, worker, fence) if fence is not None else None

    def expired(
        self, platforms: set[str] | None = None, kinds: set[DeliveryKind] | None = None
    ) -> list[int]:
        """Unfinished deliveries whose lease ran out: crash leftovers and deferred retries."""
        stmt = select(DeliveryRow.id).where(
            DeliveryRow.status.in_(UNFINISHED), DeliveryRow.lease_until < self.now()
        )
        if kinds is not None:
            stmt = stmt.where(DeliveryRow.kind.in_(sorted(k.value for k in kinds)))
        if platforms is not None:
            stmt = stmt.join(ChannelRow, ChannelRow.id == DeliveryRow.channel_id).where(
                ChannelRow.platform.in_(platforms)
            )
        with Session(self.engine) as session:
            return list(session.scalars(stmt.order_by(DeliveryRow.id)))

    def defer(self, lease: Lease, error: str, delay_s: float) -> bool:
        """Retry in ``delay_s`` (any worker may, once the lease lapses then); False past the grace."""
        later = self.now(delay_s)
        stmt = (
            update(DeliveryRow)
            .where(self.held_by(lease), DeliveryRow.give_up_at >= later)
            .values(
                retry_at=later,
                lease_until=later,
                last_error=error,
                attempts=DeliveryRow.attempts + 1,
            )
        )
        with Session(self.engine) as session:
            changed = session.execute(stmt).rowcount == 1
            session.commit()
            return changed

    def nothing_to_send(self, lease: Lease) -> bool:
        """Settle a held claim that has nothing to send (a weekly picture of empty weeks, or of a
        channel paused or switched off since): empty, nothing posted. False if the lease is lost."""
        stmt = update(DeliveryRow).where(self.held_by(lease)).values(status=EMPTY)
        with Session(self.engine) as session:
            done = session.execute(stmt).rowcount == 1
            session.commit()
            return done

    def unfinished(self) -> list[Delivery]:
        """Claimed or sending deliveries (in progress elsewhere, or crash leftovers)."""
        stmt = select(DeliveryRow.id).where(DeliveryRow.status.in_(UNFINISHED))
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
            .where(DeliveryRow.channel_id == channel_id, DIGESTS)
            .order_by(DeliveryRow.digest_date.desc())
            .limit(1)
        )
        with Session(self.engine) as session:
            found = session.scalar(stmt)
        return self.get(found) if found else None

    def last_upto(self, channel_id: int) -> int:
        """The ingest sequence the channel's digests have considered up to (0: none yet)."""
        stmt = select(func.max(DeliveryRow.upto_seq)).where(
            DeliveryRow.channel_id == channel_id, DIGESTS
        )
        with Session(self.engine) as session:
            return session.scalar(stmt) or 0

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
            .where(DeliveryRow.channel_id == channel_id, DIGESTS)
        )
        with Session(self.engine) as session:
            return session.scalar(stmt) or 0
