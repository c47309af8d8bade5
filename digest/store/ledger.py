"""The message ledger: a digest planned once as ordered platform messages, each confirmed alone.

A paper counts as delivered only when the message carrying it is confirmed. Every write here is
fenced by the delivery's lease (same transaction), so a worker that lost it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, bindparam, delete, exists, func, select, update
from sqlalchemy.orm import Session

from digest.models import MessageState
from digest.store.deliveries import CLAIMED as CLAIMED_DELIVERY
from digest.store.deliveries import FAILED, POSTED, DeliveryRepo, Lease
from digest.store.deliveries import SENDING as SENDING_DELIVERY
from digest.store.schema import ChannelRow, DeliveryItemRow, DeliveryMessageRow, DeliveryRow

PLANNED, SENDING, CONFIRMED = (s.value for s in MessageState)  # plain strings for the queries


@dataclass(frozen=True)
class PlannedMessage:
    """One message of a digest's plan, and how far it got."""

    position: int
    paper_ids: tuple[str, ...]
    status: str
    message_ref: str | None


class LedgerRepo:
    """Plans, marks and confirms the messages of a digest."""

    def __init__(self, engine: Engine, deliveries: DeliveryRepo) -> None:
        self.engine = engine
        self.deliveries = deliveries
        self._steps: dict[float, _StepSql] = {}

    def messages(self, delivery_id: int) -> list[PlannedMessage]:
        """The plan, in order ([] when not planned yet)."""
        stmt = (
            select(DeliveryMessageRow)
            .where(DeliveryMessageRow.delivery_id == delivery_id)
            .order_by(DeliveryMessageRow.position)
        )
        with Session(self.engine) as session:
            return [
                PlannedMessage(r.position, tuple(r.paper_ids), r.status, r.message_ref)
                for r in session.scalars(stmt)
            ]

    def plan(self, lease: Lease, parts: list[tuple[str, ...]], lease_s: float,
             rendered: str | None = None) -> bool:  # fmt: skip
        """Store the plan once, with ``rendered`` (what it takes to render its messages again
        identically); an existing plan is kept as it is. False if the lease is lost."""
        with Session(self.engine) as session:
            if not self.deliveries.hold(session, lease, lease_s):
                return False
            if session.scalar(
                select(exists().where(DeliveryMessageRow.delivery_id == lease.delivery_id))
            ):
                return True
            session.execute(
                update(DeliveryRow)
                .where(DeliveryRow.id == lease.delivery_id)
                .values(rendered=rendered)
            )
            for n, ids in enumerate(parts):
                session.add(
                    DeliveryMessageRow(
                        delivery_id=lease.delivery_id, position=n, paper_ids=list(ids)
                    )
                )
                session.execute(
                    update(DeliveryItemRow)
                    .where(
                        DeliveryItemRow.delivery_id == lease.delivery_id,
                        DeliveryItemRow.paper_id.in_(ids),
                    )
                    .values(position=n)
                )
            session.commit()
            return True

    def rendered(self, delivery_id: int) -> str | None:
        """The digest as it was planned (None: planned before plans kept it, or not planned)."""
        with Session(self.engine) as session:
            return session.scalar(select(DeliveryRow.rendered).where(DeliveryRow.id == delivery_id))

    def earlier_ref(self, channel_id: int, delivery_id: int) -> str | None:
        """The platform's reference of the last message confirmed in this channel by an earlier
        digest: a point in the platform's own time before anything of this digest was sent."""
        stmt = (
            select(DeliveryMessageRow.message_ref)
            .join(DeliveryRow, DeliveryRow.id == DeliveryMessageRow.delivery_id)
            .where(
                DeliveryRow.channel_id == channel_id,
                DeliveryRow.id < delivery_id,
                DeliveryMessageRow.status == CONFIRMED,
                DeliveryMessageRow.message_ref.is_not(None),
            )
            .order_by(DeliveryRow.id.desc(), DeliveryMessageRow.position.desc())
            .limit(1)
        )
        with Session(self.engine) as session:
            return session.scalar(stmt)

    def mark(self, lease: Lease, position: int, status: str, lease_s: float,
             message_ref: str | None = None) -> bool:  # fmt: skip
        """Set one message's state (``sending`` before posting, ``confirmed`` after); fenced."""
        with Session(self.engine) as session:
            if not self.deliveries.hold(session, lease, lease_s):
                return False
            session.execute(
                update(DeliveryMessageRow)
                .where(
                    DeliveryMessageRow.delivery_id == lease.delivery_id,
                    DeliveryMessageRow.position == position,
                    DeliveryMessageRow.status != CONFIRMED,
                )
                .values(status=status, message_ref=message_ref)
            )
            if status == CONFIRMED:
                self._item_ref(session, lease.delivery_id, position, message_ref)
            if position == 0:
                session.execute(
                    update(DeliveryRow)
                    .where(DeliveryRow.id == lease.delivery_id)
                    .values(status=SENDING, message_ref=message_ref)
                )
            session.commit()
            return True

    def step(self, lease: Lease, position: int, message_ref: str, lease_s: float,
             then: int | None = None, finish: bool = False) -> bool:  # fmt: skip
        """Confirm one message and, in the same transaction, mark the next one ``then`` as
        sending (it is posted next) or, ``finish``, record the digest posted: what ``mark`` and
        ``finish`` do one after the other, in one write. False if the lease is lost (or, to
        finish, a message is still open)."""
        sql = self._steps.get(lease_s) or self._steps.setdefault(lease_s, _StepSql(self, lease_s))
        key = dict(did=lease.delivery_id, b_owner=lease.owner, b_fence=lease.fence)
        with self.engine.begin() as conn:
            if position == 0:  # the header is there: the digest is being sent
                held = conn.execute(sql.hold_first, {**key, "ref": message_ref})
            else:
                held = conn.execute(sql.hold, key)
            if held.rowcount != 1:
                return False
            at = dict(did=lease.delivery_id, pos=position, ref=message_ref)
            conn.execute(sql.confirm, at)
            conn.execute(sql.item_ref, at)
            if then is not None:
                conn.execute(sql.sending, dict(did=lease.delivery_id, pos=then))
            if finish:
                return conn.execute(sql.finish, key).rowcount == 1
            return True

    def _item_ref(self, session: Session, delivery_id: int, position: int, ref: str | None) -> None:
        """A message that shows one paper: reactions on it count as feedback on that paper."""
        stmt = select(DeliveryItemRow).where(
            DeliveryItemRow.delivery_id == delivery_id, DeliveryItemRow.position == position
        )
        items = list(session.scalars(stmt))
        if len(items) == 1:
            items[0].message_ref = ref

    def finish(self, lease: Lease) -> bool:
        """Mark the digest posted, only if every planned message is confirmed and we hold it."""
        open_messages = exists().where(
            DeliveryMessageRow.delivery_id == lease.delivery_id,
            DeliveryMessageRow.status != CONFIRMED,
        )
        with Session(self.engine) as session:
            stmt = (
                update(DeliveryRow)
                .where(self.deliveries.held_by(lease), ~open_messages)
                .values(status=POSTED, posted_at=self.deliveries.now())
            )
            done = session.execute(stmt).rowcount == 1
            session.commit()
            return done

    def fail(self, lease: Lease, reason: str) -> bool:
        """Give a digest up: papers of unconfirmed messages go back to the channel's next digest.

        The record stays (failed, with ``reason``), so `channels` and `list` say why the day's
        digest did not arrive; its window is reopened so the released papers are candidates again.
        """
        with Session(self.engine) as session:
            if not self.deliveries.hold(session, lease, 0):
                return False
            confirmed = select(DeliveryMessageRow.position).where(
                DeliveryMessageRow.delivery_id == lease.delivery_id,
                DeliveryMessageRow.status == CONFIRMED,
            )
            kept = list(session.scalars(confirmed))
            session.execute(
                delete(DeliveryItemRow).where(
                    DeliveryItemRow.delivery_id == lease.delivery_id,
                    DeliveryItemRow.position.is_(None) | DeliveryItemRow.position.not_in(kept),
                )
            )
            row = session.get(DeliveryRow, lease.delivery_id)
            row.status, row.last_error, row.retry_at = FAILED, reason, None
            row.upto_seq = self._before(session, row)
            session.commit()
            return True

    def _before(self, session: Session, row: DeliveryRow) -> int:
        stmt = select(func.max(DeliveryRow.upto_seq)).where(
            DeliveryRow.channel_id == row.channel_id, DeliveryRow.id != row.id
        )
        return min(session.scalar(stmt) or 0, row.upto_seq or 0)

    def message_papers(self, platform: str, message_ref: str) -> tuple[int, list[str]] | None:
        """(channel id, paper ids) of the confirmed digest message posted as ``message_ref``."""
        stmt = (
            select(DeliveryRow.channel_id, DeliveryMessageRow.paper_ids)
            .join(DeliveryRow, DeliveryRow.id == DeliveryMessageRow.delivery_id)
            .join(ChannelRow, ChannelRow.id == DeliveryRow.channel_id)
            .where(
                ChannelRow.platform == platform,
                DeliveryMessageRow.message_ref == message_ref,
                DeliveryMessageRow.status == CONFIRMED,
            )
        )
        with Session(self.engine) as session:
            row = session.execute(stmt).first()
        return (row[0], list(row[1])) if row else None

    def delivered(self, channel_id: int) -> list[str]:
        """Papers whose message was confirmed in this channel, oldest first."""
        stmt = (
            select(DeliveryItemRow.paper_id, DeliveryMessageRow.paper_ids)
            .join(
                DeliveryMessageRow,
                (DeliveryMessageRow.delivery_id == DeliveryItemRow.delivery_id)
                & (DeliveryMessageRow.position == DeliveryItemRow.position),
            )  # fmt: skip
            .where(DeliveryItemRow.channel_id == channel_id, DeliveryMessageRow.status == CONFIRMED)
            .order_by(DeliveryItemRow.id)
        )
        with Session(self.engine) as session:
            return [pid for pid, _ in session.execute(stmt)]


class _StepSql:
    """``LedgerRepo.step``'s statements, built once (a tick runs thousands of steps: building
    SQLAlchemy expressions costs more than running them)."""

    def __init__(self, ledger: LedgerRepo, lease_s: float) -> None:
        row, msgs = DeliveryRow.__table__, DeliveryMessageRow.__table__
        items = DeliveryItemRow.__table__
        now = ledger.deliveries.now
        held = (
            (row.c.id == bindparam("did"))
            & (row.c.claimed_by == bindparam("b_owner"))
            & (row.c.fence == bindparam("b_fence"))
            & ((row.c.status == CLAIMED_DELIVERY) | (row.c.status == SENDING_DELIVERY))
        )  # Lease-fenced as DeliveryRepo.held_by, without an expanding IN to compile each time
        message = (msgs.c.delivery_id == bindparam("did")) & (msgs.c.position == bindparam("pos"))
        self.hold = update(row).where(held).values(lease_until=now(lease_s))
        self.confirm = (
            update(msgs)
            .where(message, msgs.c.status != CONFIRMED)
            .values(status=CONFIRMED, message_ref=bindparam("ref"))
        )
        # Reactions on a message that shows one paper count as feedback on that paper.
        same = items.alias("same_message")  # not correlated with the row being updated
        alone = (
            select(func.count())
            .select_from(same)
            .where(same.c.delivery_id == bindparam("did"), same.c.position == bindparam("pos"))
            .scalar_subquery()
        )
        self.item_ref = (
            update(items)
            .where(
                items.c.delivery_id == bindparam("did"),
                items.c.position == bindparam("pos"),
                alone == 1,
            )
            .values(message_ref=bindparam("ref"))
        )
        self.hold_first = (
            update(row)
            .where(held)
            .values(lease_until=now(lease_s), status=SENDING_DELIVERY, message_ref=bindparam("ref"))
        )
        self.sending = (
            update(msgs)
            .where(message, msgs.c.status != CONFIRMED)
            .values(status=SENDING, message_ref=None)
        )
        still_open = exists().where(
            msgs.c.delivery_id == bindparam("did"), msgs.c.status != CONFIRMED
        )
        self.finish = update(row).where(held, ~still_open).values(status=POSTED, posted_at=now())
