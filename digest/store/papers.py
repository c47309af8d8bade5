"""Paper persistence: idempotent upserts that merge the same paper arriving from several sources."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from digest.models import Links, Paper, PaperRecord
from digest.store.identity import Keys, KeyView
from digest.store.schema import CounterRow, PaperRow
from digest.text import arxiv_base_id, arxiv_ref, content_hash, normalize_title, paper_arxiv_ref


@dataclass
class UpsertCounts:
    """What one upsert batch did."""

    added: int = 0
    merged: int = 0
    unchanged: int = 0
    updated: int = 0  # same id, different text: the stored paper now has the new text
    added_ids: list[str] = field(default_factory=list)
    updated_ids: list[str] = field(default_factory=list)  # their text changed: embed them again


def _commit_numbered(session: Session, fresh: list[PaperRow]) -> None:
    """Number new papers from the `ingest` counter, then commit.

    Drawing updates the counter row, which stays locked until this commit: two ingests number
    and commit one after the other, so sequence order is commit order and a digest that took
    everything up to N can never later see a paper below N appear (none can be skipped).
    """
    if fresh:
        stmt = (
            update(CounterRow)
            .where(CounterRow.name == "ingest")
            .values(value=CounterRow.value + len(fresh))
            .returning(CounterRow.value)
        )
        last = session.execute(stmt).scalar_one()
        for n, row in enumerate(fresh):
            row.seq = last - len(fresh) + 1 + n
    session.commit()


def _to_row(rec: PaperRecord, now: datetime) -> PaperRow:
    links = rec.links
    base, version = paper_arxiv_ref(rec.id, rec.source, links.abs, links.pdf) or (None, None)
    # An id that is an arXiv id (2611.00002v2) is stored without its version: one paper.
    id_is_arxiv = rec.source == "arxiv" or arxiv_ref(rec.id) is not None
    openreview = rec.id if rec.source == "openreview" else None
    return PaperRow(
        id=base if id_is_arxiv and base else rec.id,
        source=rec.source,
        title=rec.title,
        title_derived=rec.title_derived,
        title_key=normalize_title(rec.title)[:500],
        abstract_raw=rec.abstract_raw,
        abstract=rec.abstract,
        authors=list(rec.authors),
        keywords=list(rec.keywords),
        venue=rec.venue,
        year=rec.year,
        pdf_url=links.pdf,
        abs_url=links.abs,
        forum_url=links.forum,
        code_url=links.code,
        arxiv_id=base,
        arxiv_version=version,
        openreview_id=openreview,
        published=rec.published,
        ingested_at=now,
        content_hash=content_hash(rec.abstract),
    )


def _merge(old: PaperRow, new: PaperRow) -> bool:
    """Fill ``old`` from ``new``: real titles beat derived ones, links and ids are unioned."""
    changed = False
    if old.title_derived and not new.title_derived:
        old.title, old.title_derived, old.title_key = new.title, False, new.title_key
        changed = True
    if old.arxiv_id is None and new.arxiv_id:
        # The version comes only with the id: a stored text of unknown version that a refused
        # record names must not be stamped with that record's (older) version number.
        old.arxiv_version = new.arxiv_version
    for attr in (
        "pdf_url",
        "abs_url",
        "forum_url",
        "code_url",
        "arxiv_id",
        "openreview_id",
        "venue",
        "year",
        "published",
    ):
        if getattr(old, attr) is None and getattr(new, attr) is not None:
            setattr(old, attr, getattr(new, attr))
            changed = True
    for attr in ("authors", "keywords"):
        if not getattr(old, attr) and getattr(new, attr):
            setattr(old, attr, getattr(new, attr))
            changed = True
    return changed


def _same_arxiv(old: PaperRow, new: PaperRow) -> bool:
    """Both rows name one arXiv paper, so their version numbers can be compared."""
    return bool(new.arxiv_id) and new.arxiv_id == old.arxiv_id


def _replaces(old: PaperRow, new: PaperRow) -> bool:
    """Whether ``new`` is a later (or corrected) text of ``old``, never an older version.

    The same id sent again replaces the text unless it is known to be older; another record of
    the same arXiv paper (a JSONL line with its arxiv.org link) replaces it only as a later version.
    A paper stored without an abstract takes the first record with one that joins it (once: after
    that, ``abstracts_agree`` needs the two abstracts to share their words).
    """
    if not old.abstract.strip() and new.abstract.strip():
        return True
    if _same_arxiv(old, new) and old.arxiv_version and new.arxiv_version:
        if new.arxiv_version != old.arxiv_version:
            return new.arxiv_version > old.arxiv_version
    elif _same_arxiv(old, new) and new.arxiv_version:
        return _beats_unknown_version(old, new)
    elif new.published and old.published and new.published < old.published:
        return False  # an older version (arXiv v1 after v2) never replaces a newer one
    return new.id == old.id


def _beats_unknown_version(old: PaperRow, new: PaperRow) -> bool:
    """Whether an explicit version replaces a stored text of unknown version (stored before 0006).

    Only a version above 1 with a strictly later date: v1 is never newer than anything, and arXiv
    feeds give every version v1's date, so an equal date says nothing about which text is newer.
    """
    later = bool(new.published and old.published and new.published > old.published)
    return (new.arxiv_version or 0) > 1 and later


def _update(old: PaperRow, new: PaperRow) -> bool:
    """Give ``old`` the text and links of a later version or a re-sent id; True if it changed."""
    if not _replaces(old, new):
        return False
    newer = _same_arxiv(old, new) and (new.arxiv_version or 0) > (old.arxiv_version or 0)
    changed = False
    if newer:  # the new version's own links (…v2) and number replace the old ones
        for attr in ("arxiv_version", "abs_url", "pdf_url"):
            if getattr(new, attr) and getattr(new, attr) != getattr(old, attr):
                setattr(old, attr, getattr(new, attr))
                changed = True
    if not new.abstract or new.content_hash == old.content_hash:
        return changed
    old.abstract, old.abstract_raw, old.content_hash = (
        new.abstract,
        new.abstract_raw,
        new.content_hash,
    )
    if not new.title_derived or old.title_derived:
        old.title, old.title_derived, old.title_key = new.title, new.title_derived, new.title_key
    for attr in ("authors", "keywords"):
        if getattr(new, attr):
            setattr(old, attr, getattr(new, attr))
    return True


def to_paper(row: PaperRow) -> Paper:
    """Domain object from a row."""
    return Paper(
        id=row.id,
        source=row.source,
        title=row.title,
        title_derived=row.title_derived,
        abstract_raw=row.abstract_raw,
        abstract=row.abstract,
        authors=tuple(row.authors or ()),
        keywords=tuple(row.keywords or ()),
        venue=row.venue,
        year=row.year,
        links=Links(pdf=row.pdf_url, abs=row.abs_url, forum=row.forum_url, code=row.code_url),
        published=row.published,
        ingested_at=row.ingested_at,
        arxiv_id=row.arxiv_id,
        content_hash=row.content_hash,
    )


class PaperRepo:
    """Reads and writes papers."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _keys(self, session: Session) -> Keys:
        # Only the identity columns: loading abstracts of 100k papers here would be wasted I/O.
        cols = (
            PaperRow.id,
            PaperRow.arxiv_id,
            PaperRow.openreview_id,
            PaperRow.content_hash,
            PaperRow.title_key,
            PaperRow.title_derived,
            func.length(PaperRow.abstract).label("abstract_len"),
        )
        keys = Keys()
        for row in session.execute(select(*cols)):
            keys.add(row)
        return keys

    def upsert(
        self,
        records: Iterable[PaperRecord],
        batch: int = 1000,
        progress: Callable[[int], None] | None = None,
    ) -> UpsertCounts:
        """Store new papers, merge known ones; re-running the same source adds nothing."""
        counts = UpsertCounts()
        now = datetime.now(UTC)
        with Session(self.engine, expire_on_commit=False) as session:
            keys = self._keys(session)
            pending, fresh = 0, []
            for rec in records:
                row = _to_row(rec, now)
                existing_id = keys.find(row, lambda i: session.get(PaperRow, i))
                if existing_id is None:
                    session.add(row)
                    keys.add(KeyView(row))
                    fresh.append(row)
                    counts.added += 1
                    counts.added_ids.append(row.id)
                elif _update(old := session.get(PaperRow, existing_id), row):
                    _merge(old, row)
                    keys.add(KeyView(old))  # its new title and text find it from now on
                    counts.updated += 1
                    counts.updated_ids.append(existing_id)
                else:
                    title = old.title
                    if not _merge(old, row):
                        counts.unchanged += 1
                    else:
                        counts.merged += 1
                        if old.title != title:  # a real title replaced a derived one: new text
                            counts.updated_ids.append(existing_id)
                pending += 1
                if pending >= batch:
                    _commit_numbered(session, fresh)
                    if progress:
                        progress(pending)
                    pending, fresh = 0, []
            _commit_numbered(session, fresh)
            if progress and pending:
                progress(pending)
        return counts

    def max_seq(self) -> int:
        """The highest committed ingest sequence (0 for an empty store)."""
        with Session(self.engine) as session:
            return session.scalar(select(func.max(PaperRow.seq))) or 0

    def ids_between(self, after: int, upto: int) -> list[str]:
        """Ids of papers whose ingest sequence is in (after, upto]."""
        stmt = select(PaperRow.id).where(PaperRow.seq > after, PaperRow.seq <= upto)
        with Session(self.engine) as session:
            return list(session.scalars(stmt.order_by(PaperRow.seq)))

    def get(self, paper_id: str) -> Paper | None:
        """One paper by id (arXiv ids may carry a version)."""
        with Session(self.engine) as session:
            row = session.get(PaperRow, paper_id)
            if row is None and (base := arxiv_base_id(paper_id)):
                row = session.get(PaperRow, base)
            return to_paper(row) if row else None

    def get_many(self, ids: Iterable[str]) -> dict[str, Paper]:
        """Papers by id, for the ids that exist."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Paper] = {}
        with Session(self.engine) as session:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                for row in session.scalars(select(PaperRow).where(PaperRow.id.in_(chunk))):
                    out[row.id] = to_paper(row)
        return out

    def count(self) -> int:
        """How many papers are stored."""
        with Session(self.engine) as session:
            return session.scalar(select(func.count()).select_from(PaperRow)) or 0

    def list(self, limit: int = 20, offset: int = 0) -> list[Paper]:
        """Most recently ingested first."""
        stmt = (
            select(PaperRow)
            .order_by(PaperRow.ingested_at.desc(), PaperRow.id)
            .limit(limit)
            .offset(offset)
        )
        with Session(self.engine) as session:
            return [to_paper(r) for r in session.scalars(stmt)]

    def recent_ids(self, limit: int) -> list[str]:
        """Ids of the ``limit`` most recently ingested papers, newest first (by ingest sequence)."""
        order = (PaperRow.seq.desc().nulls_last(), PaperRow.ingested_at.desc(), PaperRow.id)
        stmt = select(PaperRow.id).order_by(*order).limit(limit)
        with Session(self.engine) as session:
            return list(session.scalars(stmt))

    def iter_all(self) -> Iterator[Paper]:
        """Every paper in a stable order (id), streamed."""
        with Session(self.engine) as session:
            stmt = select(PaperRow).order_by(PaperRow.id).execution_options(yield_per=2000)
            for row in session.scalars(stmt):
                yield to_paper(row)

    def ids_since(self, since: datetime | None) -> list[str]:
        """Ids of papers ingested after ``since`` (all when None)."""
        stmt = select(PaperRow.id)
        if since is not None:
            stmt = stmt.where(PaperRow.ingested_at > since)
        with Session(self.engine) as session:
            return list(session.scalars(stmt))
