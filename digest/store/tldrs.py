"""Cached abstractive TL;DRs by paper, and the daily budget of calls that writes them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.clock import Clock, system_clock
from digest.store.schema import CounterRow, PaperRow, PaperTldrRow

_BUDGET = "tldr:"  # counters named tldr:YYYY-MM-DD count one day's calls to the endpoint


class TldrRepo:
    """Reads and writes the ``paper_tldrs`` cache."""

    def __init__(self, engine: Engine, clock: Clock = system_clock) -> None:
        self.engine = engine
        self.clock = clock  # stamps when a line was written

    def current(
        self, session: Session, rows: Iterable[PaperRow], model: str | None = None
    ) -> dict[str, str]:
        """Paper id -> cached line for ``rows`` written from their present text (by ``model``
        when one is named: the writer's test of what is stale; readers take any model's)."""
        hashes = {r.id: r.content_hash for r in rows}
        if not hashes:
            return {}
        stmt = select(PaperTldrRow).where(PaperTldrRow.paper_id.in_(list(hashes)))
        if model is not None:
            stmt = stmt.where(PaperTldrRow.model == model)
        return {
            t.paper_id: t.text
            for t in session.scalars(stmt)
            if hashes[t.paper_id] == t.content_hash
        }

    def stale(self, ids: Iterable[str], model: str) -> list[str]:
        """Of ``ids`` (kept in order), the stored papers with no current line by ``model``."""
        wanted = list(dict.fromkeys(ids))
        out: list[str] = []
        with Session(self.engine) as session:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = list(session.scalars(select(PaperRow).where(PaperRow.id.in_(chunk))))
                fresh = self.current(session, rows, model)
                have = {r.id for r in rows}
                out += [i for i in chunk if i in have and i not in fresh]
        return out

    def save(self, paper_id: str, model: str, content_hash: str, text: str) -> bool:
        """Store ``text`` as ``paper_id``'s line (replacing any); False when the paper is gone."""
        now = self.clock()
        with Session(self.engine) as session:
            if session.get(PaperRow, paper_id) is None:
                return False
            session.merge(
                PaperTldrRow(
                    paper_id=paper_id,
                    model=model,
                    content_hash=content_hash,
                    text=text,
                    created_at=now,
                )
            )
            try:
                session.commit()
            except IntegrityError:  # deleted meanwhile, or another writer's row: theirs stays
                return False
        return True

    def spend(self, day: date, limit: int) -> bool:
        """Count one call against ``day``'s budget; False (nothing counted) when it is spent.

        One conditional UPDATE: processes sharing the database never overspend together."""
        name = f"{_BUDGET}{day.isoformat()}"
        with Session(self.engine) as session:
            for _ in range(2):
                stmt = (
                    update(CounterRow)
                    .where(CounterRow.name == name, CounterRow.value < limit)
                    .values(value=CounterRow.value + 1)
                    .returning(CounterRow.value)
                )
                if session.execute(stmt).scalar_one_or_none() is not None:
                    session.commit()
                    return True
                if session.get(CounterRow, name) is not None:
                    session.rollback()
                    return False  # the row exists and is at the limit
                try:  # the day's first call: make its counter, then count on it
                    old = CounterRow.name.like(f"{_BUDGET}%") & (CounterRow.name < name)
                    session.execute(delete(CounterRow).where(old))  # earlier days'
                    session.execute(insert(CounterRow).values(name=name, value=0))
                    session.commit()
                except IntegrityError:  # another process made it first
                    session.rollback()
        return False
