"""Paper persistence: idempotent upserts that merge the same paper arriving from several sources."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Engine, delete, func, or_, select, update
from sqlalchemy.orm import Session

from digest.clock import Clock, system_clock
from digest.models import LIBRARY_SOURCE, Links, Paper, PaperRecord
from digest.store.identity import MIN_HASH_CHARS, Keys, KeyView, abstracts_agree
from digest.store.paper_rows import fold, issue_key, to_row
from digest.store.schema import CounterRow, PaperEmbeddingRow, PaperRow
from digest.store.tldrs import TldrRepo
from digest.text.arxiv_ids import arxiv_base_id
from digest.text.hashes import content_hash, normalize_title
from digest.text.openreview_ids import link_id


@dataclass(frozen=True)
class CorpusVersion:
    """What the stored corpus is at one moment: its highest ingest sequence and paper count."""

    seq: int
    count: int


@dataclass(frozen=True)
class Wanted:
    """A paper someone names by any of its identities (an imported library entry)."""

    arxiv: str | None = None
    doi: str | None = None  # lower case
    openreview: str | None = None
    paper_id: str | None = None
    title: str = ""
    abstract: str = ""


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


def _absorb(session: Session, keys: Keys, row: PaperRow, counts: UpsertCounts) -> bool:
    """Add ``row`` as a new paper (True: it needs a sequence number) or fold it into the stored
    paper it is the same work as (False), counting what happened."""
    existing_id = keys.find(row, lambda i: session.get(PaperRow, i))
    if existing_id is None:
        row.cite_key = issue_key(row, keys.cite_keys)
        session.add(row)
        keys.add(KeyView(row))
        counts.added += 1
        counts.added_ids.append(row.id)
        return True
    old = session.get(PaperRow, existing_id)
    outcome = fold(old, row)
    if outcome == "updated":
        keys.add(KeyView(old))  # its new title and text find it from now on
        counts.updated += 1
    elif outcome == "unchanged":
        counts.unchanged += 1
    else:
        counts.merged += 1
    if outcome in ("updated", "retitled"):  # new text (a real title for a derived one too)
        counts.updated_ids.append(existing_id)
        # Its vectors describe the old text: gone in the same commit, so it is embedded again.
        session.execute(delete(PaperEmbeddingRow).where(PaperEmbeddingRow.paper_id == existing_id))
    return False


def to_paper(row: PaperRow, tldr: str | None = None) -> Paper:
    """Domain object from a row (``tldr``: its cached abstractive line, if any)."""
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
        cite_key=row.cite_key,
        content_hash=row.content_hash,
        tldr=tldr,
    )


class PaperRepo:
    """Reads and writes papers."""

    def __init__(self, engine: Engine, clock: Clock = system_clock) -> None:
        self.engine = engine
        self.clock = clock  # stamps rows (ingested, created, voted): the composition root's clock
        self.tldrs = TldrRepo(engine, clock)
        # Whether papers read here carry their stored abstractive TL;DR (written from their
        # present text, by whichever model); False: the extractive line only (DIGESTBOT_TLDR).
        self.tldr_stored = True

    def _papers(self, session: Session, rows: list[PaperRow]) -> list[Paper]:
        """Domain objects for ``rows``, with their current cached TL;DRs."""
        lines = self.tldrs.current(session, rows) if self.tldr_stored else {}
        return [to_paper(r, lines.get(r.id)) for r in rows]

    def _keys(self, session: Session) -> Keys:
        # Only the identity columns: loading abstracts of 100k papers here would be wasted I/O.
        cols = (
            PaperRow.id,
            PaperRow.arxiv_id,
            PaperRow.openreview_id,
            PaperRow.content_hash,
            PaperRow.title_key,
            PaperRow.title_derived,
            PaperRow.cite_key,
            func.length(PaperRow.abstract).label("abstract_len"),
        )
        keys = Keys()
        for row in session.execute(select(*cols)):
            keys.add(row)
        return keys

    def upsert(
        self,
        records: Iterable[PaperRecord],
        batch: int = 100,
        progress: Callable[[int], None] | None = None,
    ) -> UpsertCounts:
        """Store new papers, merge known ones; re-running the same source adds nothing.

        Commits every ``batch`` records: SQLite has one writer, and a short transaction lets
        others (a command's de-duplication, another ingest) write between batches.
        """
        counts = UpsertCounts()
        now = self.clock()
        with Session(self.engine, expire_on_commit=False) as session:
            keys = self._keys(session)
            pending, fresh = 0, []
            for rec in records:
                row = to_row(rec, now)
                if _absorb(session, keys, row, counts):
                    fresh.append(row)
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

    def version(self) -> CorpusVersion:
        """The highest ingest sequence and the paper count, read in one statement (consistent)."""
        with Session(self.engine) as session:
            seq, count = session.execute(select(func.max(PaperRow.seq), func.count())).one()
            return CorpusVersion(seq or 0, count or 0)

    def count_upto(self, seq: int) -> int:
        """Papers numbered up to ``seq`` (and imported ones, which have no number): what an index
        covering ``seq`` holds."""
        stmt = select(func.count()).where(or_(PaperRow.seq <= seq, PaperRow.seq.is_(None)))
        with Session(self.engine) as session:
            return session.scalar(stmt) or 0

    def ids_between(self, after: int, upto: int, news: bool = False) -> list[str]:
        """Ids of papers whose ingest sequence is in (after, upto]; ``news``: only those from a
        source (not someone's imported library: those are examples, never a digest's news)."""
        stmt = select(PaperRow.id).where(PaperRow.seq > after, PaperRow.seq <= upto)
        if news:
            stmt = stmt.where(PaperRow.source != LIBRARY_SOURCE)
        with Session(self.engine) as session:
            return list(session.scalars(stmt.order_by(PaperRow.seq)))

    def get(self, paper_id: str) -> Paper | None:
        """One paper by id (arXiv ids may carry a version)."""
        with Session(self.engine) as session:
            row = session.get(PaperRow, paper_id)
            if row is None and (base := arxiv_base_id(paper_id)):
                row = session.get(PaperRow, base)
            return self._papers(session, [row])[0] if row else None

    def get_many(self, ids: Iterable[str]) -> dict[str, Paper]:
        """Papers by id, for the ids that exist."""
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Paper] = {}
        with Session(self.engine) as session:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                rows = list(session.scalars(select(PaperRow).where(PaperRow.id.in_(chunk))))
                out.update((p.id, p) for p in self._papers(session, rows))
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
            return self._papers(session, list(session.scalars(stmt)))

    def recent_ids(self, limit: int, news: bool = False) -> builtins.list[str]:
        """Ids of the ``limit`` most recently ingested papers, newest first (by ingest sequence);
        ``news``: without imported library papers (as ``ids_between``)."""
        order = (PaperRow.seq.desc().nulls_last(), PaperRow.ingested_at.desc(), PaperRow.id)
        stmt = select(PaperRow.id).order_by(*order).limit(limit)
        if news:
            stmt = stmt.where(PaperRow.source != LIBRARY_SOURCE)
        with Session(self.engine) as session:
            return list(session.scalars(stmt))

    def iter_all(self, upto: int | None = None) -> Iterator[Paper]:
        """Every paper in a stable order (id), streamed; ``upto``: only those with an ingest
        sequence up to it (and imported ones, which have none)."""
        with Session(self.engine) as session:
            stmt = select(PaperRow).order_by(PaperRow.id).execution_options(yield_per=2000)
            if upto is not None:
                stmt = stmt.where(or_(PaperRow.seq <= upto, PaperRow.seq.is_(None)))
            for row in session.scalars(stmt):
                yield to_paper(row)

    def titles_like(self, text: str, limit: int = 10) -> builtins.list[tuple[str, str]]:
        """(id, title) of up to ``limit`` papers whose title contains ``text``, newest first: a
        cheap look-up for when no ranking index is ready."""
        words = text.strip()[:100].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        if not words:
            return []
        stmt = (
            select(PaperRow.id, PaperRow.title)
            .where(PaperRow.title.ilike(f"%{words}%", escape="\\"))
            .order_by(PaperRow.seq.desc().nulls_last(), PaperRow.id)
            .limit(limit)
        )
        with Session(self.engine) as session:
            return [(pid, title) for pid, title in session.execute(stmt)]

    def ids_since(self, since: datetime | None) -> builtins.list[str]:
        """Ids of papers ingested after ``since`` (all when None)."""
        stmt = select(PaperRow.id)
        if since is not None:
            stmt = stmt.where(PaperRow.ingested_at > since)
        with Session(self.engine) as session:
            return list(session.scalars(stmt))

    def find_wanted(self, wanted: builtins.list[Wanted]) -> builtins.list[str | None]:
        """The stored paper each of ``wanted`` names (None: none), by id, arXiv id, OpenReview
        id, DOI (in a doi.org link), normalised title (abstracts, when both have one, agree) or the
        same long abstract (normalised).

        A few statements for the whole list, not a few per entry: a library holds hundreds."""

        def chunks(values: set[str]) -> Iterator[builtins.list[str]]:
            items = sorted(values)
            for start in range(0, len(items), 500):
                yield items[start : start + 500]

        def lookup(col, values: set[str]) -> dict[str, str]:  # noqa: ANN001 - a column
            out: dict[str, str] = {}
            with Session(self.engine) as session:
                for part in chunks(values):
                    stmt = select(col, PaperRow.id).where(col.in_(part)).order_by(PaperRow.seq)
                    for key, pid in session.execute(stmt):
                        out.setdefault(key, pid)
            return out

        ids = lookup(PaperRow.id, {w.paper_id for w in wanted if w.paper_id})
        arxiv = lookup(PaperRow.arxiv_id, {w.arxiv for w in wanted if w.arxiv})
        wanted_or = {w.openreview for w in wanted if w.openreview}
        openreview = lookup(PaperRow.openreview_id, wanted_or)
        # Papers stored before their links were read for an OpenReview id, or read from a file
        # under it: found by their id, or by a link that names it.
        for key, pid in lookup(PaperRow.id, wanted_or - set(openreview)).items():
            openreview.setdefault(key, pid)
        for o in sorted(wanted_or - set(openreview))[:200]:  # a library names a few at most
            links = (PaperRow.forum_url, PaperRow.abs_url, PaperRow.pdf_url)
            near = or_(*(c.like(f"%openreview.net/%{o}%") for c in links))
            with Session(self.engine) as session:
                for row in session.execute(select(PaperRow.id, *links).where(near)):
                    if o in {link_id(u) for u in row[1:] if u}:
                        openreview.setdefault(o, row[0])
                        break
        dois = self._by_doi({w.doi for w in wanted if w.doi})
        keys = {normalize_title(w.title)[:500] for w in wanted if w.title}
        titles: dict[str, list[tuple[str, str]]] = {}
        with Session(self.engine) as session:
            for part in chunks({k for k in keys if k}):
                stmt = (
                    select(PaperRow.title_key, PaperRow.id, PaperRow.abstract)
                    .where(PaperRow.title_key.in_(part), PaperRow.title_derived.is_(False))
                    .order_by(PaperRow.seq)
                )
                for key, pid, abstract in session.execute(stmt):
                    titles.setdefault(key, []).append((pid, abstract))
        # The same long abstract (normalised): a bundled paper has no real title to match by.
        hashes = {w: content_hash(w.abstract) for w in wanted if len(w.abstract) >= MIN_HASH_CHARS}
        by_hash: dict[str, list[tuple[str, str | None]]] = {}
        with Session(self.engine) as session:
            for part in chunks(set(hashes.values())):
                stmt = (
                    select(PaperRow.content_hash, PaperRow.id, PaperRow.arxiv_id)
                    .where(PaperRow.content_hash.in_(part))
                    .order_by(PaperRow.seq)
                )
                for key, pid, arxiv_id in session.execute(stmt):
                    by_hash.setdefault(key, []).append((pid, arxiv_id))
        out: builtins.list[str | None] = []
        for w in wanted:
            found = (
                ids.get(w.paper_id or "")
                or arxiv.get(w.arxiv or "")
                or openreview.get(w.openreview or "")
                or dois.get(w.doi or "")
            )
            if found is None and w.title:
                same = titles.get(normalize_title(w.title)[:500], ())
                found = next((p for p, a in same if abstracts_agree(a, w.abstract)), None)
            if found is None and w in hashes:  # unless two arXiv ids say they differ
                same_text = by_hash.get(hashes[w], ())
                found = next((p for p, a in same_text if not (a and w.arxiv) or a == w.arxiv), None)
            out.append(found)
        return out

    def _by_doi(self, dois: set[str]) -> dict[str, str]:
        """Stored papers with a doi.org link, by lower-cased DOI (the store keeps no DOI column)."""
        if not dois:
            return {}
        cols = (PaperRow.abs_url, PaperRow.pdf_url, PaperRow.forum_url)
        stmt = (
            select(PaperRow.id, *cols)
            .where(or_(*(c.ilike("%doi.org/10.%") for c in cols)))
            .order_by(PaperRow.seq)
        )
        out: dict[str, str] = {}
        with Session(self.engine) as session:
            for pid, *urls in session.execute(stmt):
                for url in filter(None, urls):
                    _, _, doi = url.partition("doi.org/")
                    if doi.lower() in dois:
                        out.setdefault(doi.lower(), pid)
        return out
