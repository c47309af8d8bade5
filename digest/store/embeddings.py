"""Paper embeddings in the database: claimed, computed once, loaded by every process.

Work is shared as digests are (digest/store/deliveries.py): a process claims a batch of papers
that have no vector under a model, with a lease on the database clock; it stores their vectors
and drops its claims in one transaction, but only for the claims it still holds, so a worker
whose lease lapsed (another took the papers over) stores nothing. A stored vector carries the
hash of the text it was computed from, and a sequence number drawn in commit order, so a reader
loads only what was stored since it last looked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from uuid import uuid4

from sqlalchemy import Engine, and_, delete, exists, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.store.database import rows_changed
from digest.store.deliveries import db_now
from digest.store.schema import CounterRow, EmbeddingClaimRow, PaperEmbeddingRow, PaperRow

COUNTER = "embeddings"


@dataclass(frozen=True)
class EmbeddingClaim:
    """Papers a worker holds for embedding under ``model``, proven by ``token``."""

    model: str
    token: str
    paper_ids: tuple[str, ...]


@dataclass(frozen=True)
class StoredVector:
    """One stored vector as read back: raw float16 bytes, the text hash, the sequence number."""

    paper_id: str
    text_hash: str
    vector: bytes
    seq: int


@dataclass(frozen=True)
class EmbeddingProgress:
    """How many stored papers have a vector under a model, and how many are being embedded."""

    embedded: int
    papers: int
    claimed: int


class EmbeddingRepo:
    """Claims, stores and reads paper embeddings."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def claim(self, model: str, worker: str, limit: int, lease_s: float) -> EmbeddingClaim | None:
        """Up to ``limit`` papers with no vector under ``model`` and no live claim, oldest first,
        claimed for ``worker`` until ``lease_s`` seconds from now by the database clock; None
        when there is nothing left to claim."""
        token = f"{worker}:{uuid4().hex[:12]}"
        for _ in range(100):  # each round some other worker won every paper we listed
            listed, got = self._claim(model, token, limit, lease_s)
            if not listed:
                return None
            if got:
                return EmbeddingClaim(model, token, tuple(got))
        return None

    def _claim(self, model: str, token: str, limit: int, lease_s: float) -> tuple[int, list[str]]:
        """One try: (papers listed as unclaimed, those this token won)."""
        stored = exists().where(
            PaperEmbeddingRow.paper_id == PaperRow.id, PaperEmbeddingRow.model == model
        )
        held = exists().where(
            EmbeddingClaimRow.paper_id == PaperRow.id,
            EmbeddingClaimRow.model == model,
            EmbeddingClaimRow.lease_until >= db_now(self.engine),
        )
        todo = (
            select(PaperRow.id)
            .where(~stored, ~held)
            .order_by(PaperRow.seq.nulls_last(), PaperRow.id)
            .limit(limit)
        )
        got: list[str] = []
        with Session(self.engine) as session:
            ids = list(session.scalars(todo))
            if not ids:
                return 0, []
            # A lapsed claim (its worker died or stalled) is taken over by rewriting its owner;
            # the old owner's token no longer matches, so what it computes is not stored.
            lapsed = session.execute(
                update(EmbeddingClaimRow)
                .where(
                    EmbeddingClaimRow.model == model,
                    EmbeddingClaimRow.paper_id.in_(ids),
                    EmbeddingClaimRow.lease_until < db_now(self.engine),
                )
                .values(claimed_by=token, lease_until=db_now(self.engine, lease_s))
                .returning(EmbeddingClaimRow.paper_id)
            )
            got += list(lapsed.scalars())
            session.commit()
            for pid in ids:
                if pid in got:
                    continue
                try:  # a unique key per (paper, model): of two workers, one inserts
                    session.execute(
                        insert(EmbeddingClaimRow).values(
                            paper_id=pid,
                            model=model,
                            claimed_by=token,
                            lease_until=db_now(self.engine, lease_s),
                        )
                    )
                    session.commit()
                    got.append(pid)
                except IntegrityError:
                    session.rollback()
            # A paper another worker stored after we listed it (its claim gone with the store,
            # so ours went in) is done: looked up after our claims committed, it is seen.
            done = set(
                session.scalars(
                    select(PaperEmbeddingRow.paper_id).where(
                        PaperEmbeddingRow.model == model, PaperEmbeddingRow.paper_id.in_(got)
                    )
                )
            )
            if done:
                session.execute(
                    delete(EmbeddingClaimRow).where(
                        EmbeddingClaimRow.model == model,
                        EmbeddingClaimRow.claimed_by == token,
                        EmbeddingClaimRow.paper_id.in_(done),
                    )
                )
                session.commit()
                got = [pid for pid in got if pid not in done]
        return len(ids), got

    def store(
        self,
        claim: EmbeddingClaim,
        vectors: dict[str, tuple[str, bytes]],
        current_hash: Callable[[str, str], str],
    ) -> int:
        """Store ``vectors`` (paper id -> (text hash, float16 bytes)) for the papers ``claim``
        still holds and whose text is still the one embedded (``current_hash(title, abstract)``),
        and release the claim, in one transaction; how many were stored."""
        with Session(self.engine) as session:
            mine = set(
                session.scalars(
                    delete(EmbeddingClaimRow)
                    .where(
                        EmbeddingClaimRow.model == claim.model,
                        EmbeddingClaimRow.claimed_by == claim.token,
                        EmbeddingClaimRow.paper_id.in_(claim.paper_ids),
                    )
                    .returning(EmbeddingClaimRow.paper_id)
                )
            )
            texts = session.execute(
                select(PaperRow.id, PaperRow.title, PaperRow.abstract).where(
                    PaperRow.id.in_(sorted(mine))
                )
            )
            # A paper whose text changed while it was embedded is left without a vector: it is
            # claimed again and embedded from its new text.
            keep = [
                pid
                for pid, title, abstract in texts
                if pid in vectors and vectors[pid][0] == current_hash(title, abstract)
            ]
            if keep:
                last = _draw(session, len(keep))
                for n, pid in enumerate(sorted(keep)):
                    session.merge(
                        PaperEmbeddingRow(
                            paper_id=pid,
                            model=claim.model,
                            text_hash=vectors[pid][0],
                            vector=vectors[pid][1],
                            seq=last - len(keep) + 1 + n,
                            created_by=claim.token.rsplit(":", 1)[0],
                        )
                    )
            session.commit()
            return len(keep)

    def release(self, claim: EmbeddingClaim) -> None:
        """Give the claim up unfinished (shutting down): others may take the papers at once."""
        with Session(self.engine) as session:
            session.execute(
                delete(EmbeddingClaimRow).where(
                    EmbeddingClaimRow.model == claim.model,
                    EmbeddingClaimRow.claimed_by == claim.token,
                )
            )
            session.commit()

    def since(self, model: str, after: int, limit: int = 5_000) -> list[StoredVector]:
        """Vectors stored under ``model`` with a sequence number above ``after``, in order."""
        stmt = (
            select(
                PaperEmbeddingRow.paper_id,
                PaperEmbeddingRow.text_hash,
                PaperEmbeddingRow.vector,
                PaperEmbeddingRow.seq,
            )
            .where(PaperEmbeddingRow.model == model, PaperEmbeddingRow.seq > after)
            .order_by(PaperEmbeddingRow.seq)
            .limit(limit)
        )
        with Session(self.engine) as session:
            return [StoredVector(*row) for row in session.execute(stmt)]

    def forget(self, paper_ids: Sequence[str]) -> int:
        """Drop every model's vector of these papers (their text changed): embedded again."""
        if not paper_ids:
            return 0
        with Session(self.engine) as session:
            gone = rows_changed(
                session.execute(
                    delete(PaperEmbeddingRow).where(PaperEmbeddingRow.paper_id.in_(list(paper_ids)))
                )
            )
            session.commit()
            return gone

    def progress(self, model: str) -> EmbeddingProgress:
        """Papers with a vector under ``model``, papers stored, papers claimed right now."""
        live = and_(
            EmbeddingClaimRow.model == model,
            EmbeddingClaimRow.lease_until >= db_now(self.engine),
        )
        with Session(self.engine) as session:
            done = session.scalar(select(func.count()).where(PaperEmbeddingRow.model == model))
            papers = session.scalar(select(func.count()).select_from(PaperRow))
            claimed = session.scalar(select(func.count()).where(live))
        return EmbeddingProgress(done or 0, papers or 0, claimed or 0)


def _draw(session: Session, n: int) -> int:
    """Draw ``n`` numbers from the embeddings counter (its row stays locked until the commit, so
    numbers follow commit order); the last one drawn."""
    stmt = (
        update(CounterRow)
        .where(CounterRow.name == COUNTER)
        .values(value=CounterRow.value + n)
        .returning(CounterRow.value)
    )
    last = session.execute(stmt).scalar_one_or_none()
    if last is None:  # a schema made without the migration's counter row
        session.add(CounterRow(name=COUNTER, value=n))
        session.flush()
        last = n
    return last
