"""The message ledger: a digest planned once as ordered platform messages, each confirmed alone.

A paper counts as delivered only when the message carrying it is confirmed. Every write here is
fenced by the delivery's lease (same transaction), so a worker that lost it changes nothing.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Connection,
    Engine,
    Integer,
    String,
    Table,
    Text,
    bindparam,
    case,
    cast,
    column,
    delete,
    exists,
    func,
    select,
    update,
)
from sqlalchemy.orm import Session

from digest.models import MessageState
from digest.store.deliveries import CLAIMED as CLAIMED_DELIVERY
from digest.store.deliveries import DIGESTS, FAILED, POSTED, DeliveryRepo, Lease
from digest.store.deliveries import SENDING as SENDING_DELIVERY
from digest.store.schema import ChannelRow, DeliveryItemRow, DeliveryMessageRow, DeliveryRow

PLANNED, SENDING, CONFIRMED = MessageState  # the one spelling (StrEnum: the stored strings)


@dataclass(frozen=True)
class PlannedMessage:
    """One message of a digest's plan, and how far it got."""

    position: int
    paper_ids: tuple[str, ...]
    status: str
    message_ref: str | None


@dataclass(frozen=True)
class Step:
    """One confirmation for ``LedgerRepo.steps``: message ``position`` of the leased digest is on
    the platform as ``message_ref``; then mark ``then`` sending, or ``finish`` the digest."""

    lease: Lease
    position: int
    message_ref: str
    then: int | None = None
    finish: bool = False


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

    def plan(
        self,
        lease: Lease,
        parts: list[tuple[str, ...]],
        lease_s: float,
        rendered: str | None = None,
    ) -> bool:
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
                DIGESTS,  # a picture's reference is a file on Slack, not a point in history
                DeliveryMessageRow.status == CONFIRMED,
                DeliveryMessageRow.message_ref.is_not(None),
            )
            .order_by(DeliveryRow.id.desc(), DeliveryMessageRow.position.desc())
            .limit(1)
        )
        with Session(self.engine) as session:
            return session.scalar(stmt)

    def mark(
        self,
        lease: Lease,
        position: int,
        status: str,
        lease_s: float,
        message_ref: str | None = None,
    ) -> bool:
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

    def steps(self, steps: Sequence[Step], lease_s: float) -> list[bool]:
        """Confirm one message of each of many digests in one transaction (group commit): a few
        statements whatever their number, each an executemany. Each step also marks its digest's
        next message ``then`` sending (it is posted next) or, ``finish``, records the digest
        posted, as ``mark`` then ``finish`` would, in the same write. Each answer: False if the
        lease is lost (or, to finish, a message is still open).

        Each step is fenced by its own lease: one whose lease is lost writes nothing, the
        others are written. Leases are renewed in delivery id order, so two processes' batches
        lock shared rows in the same order (no deadlock). Nothing is answered before the commit:
        a caller told True may post its next message, because this confirmation is durable."""
        if not steps:
            return []
        sql = self._steps.get(lease_s) or self._steps.setdefault(lease_s, _sql(self, lease_s))
        order = sorted(steps, key=lambda s: (s.lease.delivery_id, s.position))
        with self.engine.begin() as conn:
            held = sql.confirm_held(self, conn, order)
            if not held:
                return [False] * len(steps)
            ending = [s for s in held if s.finish]
            done = set(ending)
            if ending and sql.run(conn, sql.finish, [_key(s) for s in ending]) < len(done):
                done = self._posted(conn, sql, ending)
        ok = {s for s in held if not s.finish} | done
        return [s in ok for s in steps]

    @staticmethod
    def _held(conn: Connection, sql: _StepSql, steps: Sequence[Step]) -> list[Step]:
        """The steps whose lease this transaction holds (owner and fence match, unfinished)."""
        rows = conn.execute(sql.leases, {"dids": [s.lease.delivery_id for s in steps]})
        now = {did: (owner, fence, status) for did, owner, fence, status in rows}
        return [
            s
            for s in steps
            if now.get(s.lease.delivery_id, (None,) * 3)[:2] == (s.lease.owner, s.lease.fence)
            and now[s.lease.delivery_id][2] in (CLAIMED_DELIVERY, SENDING_DELIVERY)
        ]

    @staticmethod
    def _posted(conn: Connection, sql: _StepSql, steps: Sequence[Step]) -> set[Step]:
        """The finishing steps whose digest is now posted (by this transaction: it holds them)."""
        rows = conn.execute(sql.leases, {"dids": [s.lease.delivery_id for s in steps]})
        posted = {did for did, _owner, _fence, status in rows if status == POSTED}
        return {s for s in steps if s.lease.delivery_id in posted}

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
            )
            .where(DeliveryItemRow.channel_id == channel_id, DeliveryMessageRow.status == CONFIRMED)
            .order_by(DeliveryItemRow.id)
        )
        with Session(self.engine) as session:
            return [pid for pid, _ in session.execute(stmt)]


def _key(step: Step) -> dict:
    """A step's lease as ``_StepSql``'s fence parameters."""
    lease = step.lease
    return dict(did=lease.delivery_id, b_owner=lease.owner, b_fence=lease.fence)


def _sql(ledger: LedgerRepo, lease_s: float) -> _StepSql:
    if ledger.engine.dialect.name == "postgresql":
        return _JsonStepSql(ledger, lease_s)
    return _StepSql(ledger, lease_s)


class _StepSql:
    """``LedgerRepo.steps``'s statements, built once (a tick runs thousands of steps: building
    SQLAlchemy expressions costs more than running them); each runs as one executemany."""

    def run(self, conn: Connection, stmt: Any, rows: list[dict]) -> int:
        """``stmt`` for each of ``rows`` (one executemany); the rows it changed."""
        return conn.execute(stmt, rows).rowcount

    def confirm_held(self, ledger: LedgerRepo, conn: Connection, order: list[Step]) -> list[Step]:
        """Renew the leases of ``order`` (in delivery id order) and, for the steps whose lease
        is still ours, confirm their message, record it on a lone paper's item and mark the next
        message sending; the steps held."""
        hold = [dict(_key(s), first=s.position == 0, ref=s.message_ref) for s in order]
        renewed = self.run(conn, self.hold, hold)
        # Every lease held (the usual case) shows in the count; else read which are ours
        # (rows this transaction renewed are locked by it: what it reads of them is final).
        held = order if renewed == len(order) else ledger._held(conn, self, order)
        if not held:
            return []
        at = [dict(did=s.lease.delivery_id, pos=s.position, ref=s.message_ref) for s in held]
        self.run(conn, self.confirm, at)
        self.run(conn, self.item_ref, at)
        marks = [dict(did=s.lease.delivery_id, pos=s.then) for s in held if s.then is not None]
        if marks:
            self.run(conn, self.sending, marks)
        return held

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
        # The header's confirmation also records the digest as being sent, with its reference.
        first = bindparam("first", type_=Boolean)
        self.hold = (
            update(row)
            .where(held)
            .values(
                lease_until=now(lease_s),
                status=case((first, SENDING_DELIVERY), else_=row.c.status),
                message_ref=case((first, bindparam("ref", type_=String)), else_=row.c.message_ref),
            )
        )
        self.leases = select(row.c.id, row.c.claimed_by, row.c.fence, row.c.status).where(
            row.c.id.in_(bindparam("dids", expanding=True))
        )
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
        self.sending = (
            update(msgs)
            .where(message, msgs.c.status != CONFIRMED)
            .values(status=SENDING, message_ref=None)
        )
        still_open = exists().where(
            msgs.c.delivery_id == bindparam("did"), msgs.c.status != CONFIRMED
        )
        self.finish = update(row).where(held, ~still_open).values(status=POSTED, posted_at=now())


class _JsonStepSql(_StepSql):
    """PostgreSQL: each of ``_StepSql``'s statements once for all the rows, which travel as one
    JSON parameter (``UPDATE … FROM json_to_recordset(…)``), instead of an executemany whose
    rows the driver and SQLAlchemy each convert one by one (most of a tick's ledger CPU). The
    statement's text does not change with the number of rows: compiled and parsed once."""

    def __init__(self, ledger: LedgerRepo, lease_s: float) -> None:
        from sqlalchemy.dialects.postgresql import JSON as PG_JSON

        row = typing.cast(Table, DeliveryRow.__table__)
        msgs = typing.cast(Table, DeliveryMessageRow.__table__)
        items = typing.cast(Table, DeliveryItemRow.__table__)
        now = ledger.deliveries.now

        def given(**types: Any) -> Any:
            source = func.json_to_recordset(cast(bindparam("rows", type_=Text), PG_JSON))
            return source.table_valued(*(column(n, t) for n, t in types.items())).render_derived(
                name="given", with_types=True
            )

        fence = given(did=BigInteger, b_owner=Text, b_fence=BigInteger, first=Boolean, ref=Text)
        # The leases still ours, locked in delivery id order before they are renewed (the rows
        # are joined in no set order: two processes' batches sharing a row must not deadlock,
        # which the executemany's sorted rows ensured).
        ours = (
            select(row.c.id.label("did"), fence.c.first, fence.c.ref)
            .where(
                row.c.id == fence.c.did,
                row.c.claimed_by == fence.c.b_owner,
                row.c.fence == fence.c.b_fence,
                row.c.status.in_([CLAIMED_DELIVERY, SENDING_DELIVERY]),
            )
            .order_by(row.c.id)
            .with_for_update(of=row)
            .subquery("ours")
        )
        self.hold = (
            update(row)
            .where(row.c.id == ours.c.did)
            .values(
                lease_until=now(lease_s),
                status=case((ours.c.first, SENDING_DELIVERY), else_=row.c.status),
                message_ref=case((ours.c.first, ours.c.ref), else_=row.c.message_ref),
            )
        )
        self.leases = select(row.c.id, row.c.claimed_by, row.c.fence, row.c.status).where(
            row.c.id.in_(bindparam("dids", expanding=True))
        )
        at = given(did=BigInteger, pos=Integer, ref=Text)
        message = (msgs.c.delivery_id == at.c.did) & (msgs.c.position == at.c.pos)
        self.confirm = (
            update(msgs)
            .where(message, msgs.c.status != CONFIRMED)
            .values(status=CONFIRMED, message_ref=at.c.ref)
        )
        same = items.alias("same_message")
        alone = (
            select(func.count())
            .select_from(same)
            .where(same.c.delivery_id == at.c.did, same.c.position == at.c.pos)
            .scalar_subquery()
        )
        self.item_ref = (
            update(items)
            .where(items.c.delivery_id == at.c.did, items.c.position == at.c.pos, alone == 1)
            .values(message_ref=at.c.ref)
        )
        mark = given(did=BigInteger, pos=Integer)
        self.sending = (
            update(msgs)
            .where(
                msgs.c.delivery_id == mark.c.did,
                msgs.c.position == mark.c.pos,
                msgs.c.status != CONFIRMED,
            )
            .values(status=SENDING, message_ref=None)
        )
        ends = given(did=BigInteger, b_owner=Text, b_fence=BigInteger)
        still_open = exists().where(msgs.c.delivery_id == ends.c.did, msgs.c.status != CONFIRMED)
        self.finish = (
            update(row)
            .where(
                row.c.id == ends.c.did,
                row.c.claimed_by == ends.c.b_owner,
                row.c.fence == ends.c.b_fence,
                row.c.status.in_([CLAIMED_DELIVERY, SENDING_DELIVERY]),
                ~still_open,
            )
            .values(status=POSTED, posted_at=now())
        )

        # The four writes of a step in one statement (data-modifying CTEs): the leases renewed
        # (locked in id order), then, for the rows renewed, each message confirmed and the next
        # one marked sending in one UPDATE (different rows), and a lone paper's item given the
        # message's reference; it answers the delivery ids held. One round trip instead of four.
        step = given(
            did=BigInteger,
            b_owner=Text,
            b_fence=BigInteger,
            first=Boolean,
            ref=Text,
            pos=Integer,
            nxt=Integer,
        )
        mine = (
            select(row.c.id.label("did"), step.c.first, step.c.ref, step.c.pos, step.c.nxt)
            .where(
                row.c.id == step.c.did,
                row.c.claimed_by == step.c.b_owner,
                row.c.fence == step.c.b_fence,
                row.c.status.in_([CLAIMED_DELIVERY, SENDING_DELIVERY]),
            )
            .order_by(row.c.id)
            .with_for_update(of=row)
            .subquery("mine")
        )
        held = (
            update(row)
            .where(row.c.id == mine.c.did)
            .values(
                lease_until=now(lease_s),
                status=case((mine.c.first, SENDING_DELIVERY), else_=row.c.status),
                message_ref=case((mine.c.first, mine.c.ref), else_=row.c.message_ref),
            )
            .returning(row.c.id.label("did"), mine.c.ref, mine.c.pos, mine.c.nxt)
            .cte("held")
        )
        this = msgs.c.position == held.c.pos
        moved = (
            update(msgs)
            .where(
                msgs.c.delivery_id == held.c.did,
                this | (msgs.c.position == held.c.nxt),
                msgs.c.status != CONFIRMED,
            )
            .values(
                status=case((this, CONFIRMED), else_=SENDING),
                message_ref=case((this, held.c.ref), else_=None),
            )
            .cte("moved")
        )
        lone = items.alias("lone")
        alone_here = (
            select(func.count())
            .select_from(lone)
            .where(lone.c.delivery_id == held.c.did, lone.c.position == held.c.pos)
            .scalar_subquery()
        )
        refs = (
            update(items)
            .where(
                items.c.delivery_id == held.c.did,
                items.c.position == held.c.pos,
                alone_here == 1,
            )
            .values(message_ref=held.c.ref)
            .cte("refs")
        )
        self.step = select(held.c.did).add_cte(moved, refs)

    def run(self, conn: Connection, stmt: Any, rows: list[dict]) -> int:
        return conn.execute(stmt, {"rows": _json(rows)}).rowcount

    def confirm_held(self, ledger: LedgerRepo, conn: Connection, order: list[Step]) -> list[Step]:
        if len({s.lease.delivery_id for s in order}) < len(order):  # never expected: a digest
            # waits for one confirmation before posting its next message
            return super().confirm_held(ledger, conn, order)
        rows = [
            dict(_key(s), first=s.position == 0, ref=s.message_ref, pos=s.position, nxt=s.then)
            for s in order
        ]
        ours = set(conn.execute(self.step, {"rows": _json(rows)}).scalars())
        return [s for s in order if s.lease.delivery_id in ours]


def _json(rows: list[dict]) -> str:
    return json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
