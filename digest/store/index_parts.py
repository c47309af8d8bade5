"""The fitted ranking index in the database: bases and segments, each written once.

A base is a fitted index (or a merge of a base with its segments); a segment holds the papers
appended to a base's chain, computed with its vocabulary. Each piece of work is claimed first
(``index_claims``), as digests are claimed (digest/store/deliveries.py): a unique key, a lease
on the database clock, taken over when it lapses; the part is written in the same transaction
that marks the claim done, and only while the claim is still the writer's.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import uuid4

from sqlalchemy import Engine, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.store.database import rows_changed
from digest.store.deliveries import db_now
from digest.store.schema import CounterRow, IndexClaimRow, IndexPartRow

BASE, SEGMENT = "base", "segment"
TEXTS = "index_texts"  # the counter bumped whenever stored papers change text


@dataclass(frozen=True)
class PartInfo:
    """A stored part, without its blob."""

    id: int
    kind: str
    base_id: int | None
    merged_from: int | None
    seq_from: int
    seq_to: int
    papers: int
    text_epoch: int
    size: int


@dataclass(frozen=True)
class IndexClaim:
    """A piece of index work held by ``token``."""

    key: str
    token: str


_INFO = (
    IndexPartRow.id,
    IndexPartRow.kind,
    IndexPartRow.base_id,
    IndexPartRow.merged_from,
    IndexPartRow.seq_from,
    IndexPartRow.seq_to,
    IndexPartRow.papers,
    IndexPartRow.text_epoch,
    IndexPartRow.size,
)


class IndexPartRepo:
    """Claims, writes and reads the parts of the shared index."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def latest_base(self, fmt: str) -> PartInfo | None:
        """The newest base in format ``fmt`` (None: nothing fitted yet)."""
        stmt = (
            select(*_INFO)
            .where(IndexPartRow.format == fmt, IndexPartRow.kind == BASE)
            .order_by(IndexPartRow.id.desc())
            .limit(1)
        )
        with Session(self.engine) as session:
            row = session.execute(stmt).first()
        return PartInfo(*row) if row else None

    def segments(self, base_id: int, after: int = 0) -> list[PartInfo]:
        """The segments of ``base_id`` written after part ``after``, oldest first."""
        stmt = (
            select(*_INFO)
            .where(IndexPartRow.base_id == base_id, IndexPartRow.id > after)
            .order_by(IndexPartRow.id)
        )
        with Session(self.engine) as session:
            return [PartInfo(*row) for row in session.execute(stmt)]

    def blob(self, part_id: int) -> bytes | None:
        """A part's content (None: pruned meanwhile)."""
        with Session(self.engine) as session:
            return session.scalar(select(IndexPartRow.blob).where(IndexPartRow.id == part_id))

    def claim(self, key: str, worker: str, lease_s: float) -> IndexClaim | None:
        """Hold the work named ``key``; None when it is done, or another holds a live lease."""
        token = f"{worker}:{uuid4().hex[:12]}"
        with Session(self.engine) as session:
            try:
                session.add(
                    IndexClaimRow(
                        key=key,
                        claimed_by=token,
                        lease_until=db_now(self.engine, lease_s),
                        done=False,
                    )
                )
                session.commit()
                return IndexClaim(key, token)
            except IntegrityError:
                session.rollback()
            taken = rows_changed(
                session.execute(
                    update(IndexClaimRow)
                    .where(
                        IndexClaimRow.key == key,
                        IndexClaimRow.done.is_(False),
                        IndexClaimRow.lease_until < db_now(self.engine),
                    )
                    .values(claimed_by=token, lease_until=db_now(self.engine, lease_s))
                )
            )
            session.commit()
        return IndexClaim(key, token) if taken == 1 else None

    def is_done(self, key: str) -> bool:
        """True when the work named ``key`` was finished (by anyone)."""
        with Session(self.engine) as session:
            return bool(session.scalar(select(IndexClaimRow.done).where(IndexClaimRow.key == key)))

    def release(self, claim: IndexClaim) -> None:
        """Give unfinished work up: another may claim it at once."""
        with Session(self.engine) as session:
            session.execute(
                delete(IndexClaimRow).where(
                    IndexClaimRow.key == claim.key,
                    IndexClaimRow.claimed_by == claim.token,
                    IndexClaimRow.done.is_(False),
                )
            )
            session.commit()

    def add(
        self,
        claim: IndexClaim,
        fmt: str,
        kind: str,
        blob: bytes,
        seq_from: int,
        seq_to: int,
        papers: int,
        base_id: int | None = None,
        merged_from: int | None = None,
        text_epoch: int = 0,
    ) -> PartInfo | None:
        """Write a part and mark ``claim`` done, in one transaction, only while the claim is
        still ours (None: another worker took it over)."""
        with Session(self.engine) as session:
            mine = rows_changed(
                session.execute(
                    update(IndexClaimRow)
                    .where(
                        IndexClaimRow.key == claim.key,
                        IndexClaimRow.claimed_by == claim.token,
                        IndexClaimRow.done.is_(False),
                    )
                    .values(done=True)
                )
            )
            if mine != 1:
                session.rollback()
                return None
            row = IndexPartRow(
                format=fmt,
                kind=kind,
                base_id=base_id,
                merged_from=merged_from,
                seq_from=seq_from,
                seq_to=seq_to,
                papers=papers,
                text_epoch=text_epoch,
                size=len(blob),
                blob=blob,
                created_by=claim.token.rsplit(":", 1)[0],
                created_at=db_now(self.engine),
            )
            session.add(row)
            session.flush()
            info = PartInfo(
                row.id, kind, base_id, merged_from, seq_from, seq_to, papers, text_epoch, len(blob)
            )
            session.commit()
        return info

    def prune(self, fmt: str, keep_from: int) -> int:
        """Delete bases older than ``keep_from`` and their segments, and every part of another
        format; how many parts went."""
        with Session(self.engine) as session:
            gone = rows_changed(
                session.execute(
                    delete(IndexPartRow).where(
                        or_(
                            IndexPartRow.format != fmt,
                            (IndexPartRow.kind == BASE) & (IndexPartRow.id < keep_from),
                            (IndexPartRow.kind == SEGMENT) & (IndexPartRow.base_id < keep_from),
                        )
                    )
                )
            )
            session.commit()
            return gone

    def text_epoch(self) -> int:
        """How many times stored papers changed text (a base fitted before the last is stale)."""
        with Session(self.engine) as session:
            value = session.scalar(select(CounterRow.value).where(CounterRow.name == TEXTS))
        return value or 0

    def texts_changed(self) -> None:
        """Stored papers changed text: every base fitted before now is stale."""
        with Session(self.engine) as session:
            done = rows_changed(
                session.execute(
                    update(CounterRow)
                    .where(CounterRow.name == TEXTS)
                    .values(value=CounterRow.value + 1)
                )
            )
            if done == 0:  # a schema made without the migration's counter row
                session.add(CounterRow(name=TEXTS, value=1))
            session.commit()

    def sizes(self, fmt: str) -> tuple[int, int]:
        """(parts, bytes) stored in format ``fmt``."""
        with Session(self.engine) as session:
            n, size = session.execute(
                select(func.count(), func.coalesce(func.sum(IndexPartRow.size), 0)).where(
                    IndexPartRow.format == fmt
                )
            ).one()
        return n, size
