"""Paper use cases the CLI and chat adapters call: ingest, browse, search, similar papers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from digest.clock import Clock, system_clock
from digest.errors import DigestError, NotFoundError
from digest.models import Paper, PaperRecord
from digest.store import Store
from digest.text.topic_text import MAX_QUERY_CHARS, query_too_long

#: Where the time of the last ingest is kept (what /healthz reports as the ingest's age).
LAST_INGEST_KEY = "ops.last_ingest_at"

# The index, the ranker and ingest load when first used: listings and settings rank nothing.
if TYPE_CHECKING:
    from digest.index.embeddings import ModelConfig
    from digest.index.lifecycle import IndexStatus, IndexStore
    from digest.ingest import SourceConfig
    from digest.ingest.pipeline import IngestReport
    from digest.rank.ranker import Filters, Hit, Ranker, SearchResult
    from digest.store.papers import UpsertCounts
    from digest.tldr.writer import AfterIngest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchView:
    """A search page with the papers behind its hits."""

    result: SearchResult
    papers: dict[str, Paper]


class PaperService:
    """Paper-level use cases over one store and one shared ranker."""

    def __init__(
        self,
        store: Store,
        index_dir: Path | None = None,
        sources: SourceConfig | None = None,
        model: ModelConfig | None = None,
        strict_model: bool = False,
        clock: Clock = system_clock,
        tldrs: AfterIngest | None = None,
        embeds: bool = True,
    ) -> None:
        self.store = store
        self.clock = clock
        self.sources = sources
        self.tldrs = tldrs  # abstractive TL;DRs, written after ingest (None: extractive only)
        # embeds: whether ingest here embeds new papers (False: a worker the runtime steps does)
        self._index_args = (index_dir, model, strict_model, embeds)
        self._ranker: Ranker | None = None

    @property
    def model(self) -> ModelConfig:
        """The embedding model configured (the default: the packaged one, when installed)."""
        from digest.index.embeddings import ModelConfig

        return self._index_args[1] or ModelConfig.from_env()

    @cached_property
    def indexes(self) -> IndexStore:
        """The index and embedding store, made on first use: a command that ranks nothing (a
        listing, a setting) must not load the embedding model."""
        from digest.index.lifecycle import IndexStore

        index_dir, model, strict, embeds = self._index_args
        return IndexStore(self.store, index_dir, model=model, strict=strict, embeds=embeds)

    def ingest(
        self, source: str, fmt: str = "auto", progress: Callable[[int], None] | None = None
    ) -> IngestReport:
        """Read one source into the store (and embed new papers when the semantic extra is on)."""
        from digest.ingest import SourceConfig
        from digest.ingest.pipeline import ingest

        report = ingest(self.store, source, fmt, self.sources or SourceConfig(), progress)
        if report.updated_ids:  # same ids, new text: the fitted index no longer describes them
            self.indexes.invalidate()
        # New papers, papers whose new text lost its vector, and any backlog (semantic ranking
        # switched on for a stored corpus): one claim query when there is nothing to embed.
        self.indexes.embed_new()
        if self.tldrs is not None:
            report.tldrs = 0
            try:
                report.tldrs = self.tldrs.after_ingest([*report.added_ids, *report.updated_ids])
            except Exception:  # noqa: BLE001 - the papers are stored; digests show the extractive line
                log.exception("writing TL;DRs after ingesting %s failed", source)
        return report

    def ranker(self, covering: int | None = None, wait: bool = True) -> Ranker | None:
        """The ranker over the stored papers; a new index (papers were added) gets a new ranker.

        ``covering``: the index must hold every paper up to that ingest sequence (a digest's
        candidates). Without ``wait``: None at once when no index is complete yet.
        """
        index = self.indexes.current(covering) if wait else self.indexes.ready()
        if index is None:
            self._ranker = None
        elif self._ranker is None or self._ranker.index is not index:
            from digest.rank.ranker import Ranker

            self._ranker = Ranker(index, encoder=self.indexes.queries)
        return self._ranker

    def paper(self, paper_id: str) -> Paper:
        """The paper a person names, wherever an id is taken (`paper`, `why`, `similar`, `up`,
        `subscribe like:`, `import`…): its stored id, an arXiv id, DOI, the OpenReview id its
        links carry (bare, as people paste it), or an arXiv, OpenReview or doi.org link of it;
        else a NotFoundError saying what was looked for. The one resolver of typed ids."""
        from digest.store.papers import Wanted
        from digest.text.openreview_ids import looks_bare
        from digest.text.paper_refs import parse_ref

        text = paper_id.strip()
        if (paper := self.store.papers.get(text)) is not None:
            return paper
        ref = parse_ref(text)
        if ref is None and looks_bare(text):  # 'NnMEadcdyD': a stored paper's OpenReview id?
            found = self.store.papers.find_wanted([Wanted(openreview=text)])[0]
            if found is not None and (paper := self.store.papers.get(found)) is not None:
                return paper
        if ref is None:
            raise NotFoundError(f"No paper with id {text[:80]!r}.")
        wanted = Wanted(arxiv=ref.arxiv, doi=ref.doi, openreview=ref.openreview)
        found = self.store.papers.find_wanted([wanted])[0]
        paper = self.store.papers.get(found) if found is not None else None
        if paper is None:
            what = ref.arxiv or ref.doi or ref.openreview
            raise NotFoundError(
                f"No stored paper is {what!r}; `/papers import` a BibTeX or RIS entry with its "
                "title to follow it anyway."
            )
        return paper

    def store_library(self, records: list[PaperRecord]) -> UpsertCounts:
        """Store papers read from someone's library (examples, never news), indexed as ingest
        indexes new papers so a `like:` of them ranks at once."""
        counts = self.store.papers.upsert(records)
        if counts.updated_ids:
            self.indexes.invalidate()
        if counts.added_ids or counts.updated_ids:
            self.indexes.embed_new()
        return counts

    def find_paper(self, paper_id: str) -> Paper | None:
        """The paper with exactly this id, or None (for autocomplete: no error to show)."""
        return self.store.papers.get(paper_id)

    def titles_like(self, text: str) -> list[tuple[str, str]]:
        """(id, title) of papers whose titles contain ``text``: answers before an index exists."""
        return self.store.papers.titles_like(text)

    def papers(self, limit: int = 20, offset: int = 0) -> list[Paper]:
        """Most recently ingested papers."""
        if limit < 1:
            raise DigestError("--limit must be at least 1.")
        return self.store.papers.list(limit, offset)

    def search(
        self, query: str, filters: Filters | None = None, page: int = 1, per_page: int = 10
    ) -> SearchView:
        """Free-text search with filters and pagination."""
        if len(query) > MAX_QUERY_CHARS:
            raise DigestError(query_too_long(len(query)))
        ranker = self.ranker()
        if ranker is None:
            from digest.rank.ranker import SearchResult

            empty = SearchResult(
                query, (), 0, page, per_page, "No papers stored yet: run `digestbot ingest` first."
            )
            return SearchView(empty, {})
        if filters is not None and filters.author:
            self.one_author(filters.author)
        result = ranker.search(query, filters, page, per_page)
        return SearchView(result, self.store.papers.get_many(h.paper_id for h in result.hits))

    def authors_named(self, name: str) -> list[str]:
        """The stored authors ``name`` means (whole names; several when it is ambiguous), as
        their papers spell them, most papers first."""
        from digest.rank.authors import name_key

        ranker = self.ranker()
        if ranker is None:
            return []
        found = ranker.people(name)
        papers = self.store.papers.get_many(ranker.index.ids[p.row] for p in found)
        out = []
        for p in found:
            paper = papers.get(ranker.index.ids[p.row])
            spelt = paper and next((a for a in paper.authors if name_key(a) == p.key), None)
            spelt = spelt or p.name.title()
            if "," in spelt:  # "Zhang, Yu" named as a reader says it: "Yu Zhang"
                family, _, given = spelt.partition(",")
                spelt = f"{given.strip()} {family.strip()}"
            out.append(spelt)
        return out

    def one_author(self, name: str) -> None:
        """Raise when ``name`` fits several stored authors, naming them (an unknown name passes:
        its papers may arrive later)."""
        found = self.authors_named(name)
        if len(found) > 1:
            shown = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
            raise DigestError(
                f"{name.strip()[:60]!r} is ambiguous: it fits {len(found)} stored authors "
                f'({shown}); give the whole name, e.g. author:"{found[0]}".'
            )

    def search_ready(self, query: str, per_page: int = 10) -> SearchView | None:
        """A first page from the index complete now, or None when there is none yet (never
        waits on a build: autocomplete answers from the titles instead)."""
        ranker = self.ranker(wait=False)
        if ranker is None:
            return None
        result = ranker.search(query, None, 1, per_page, explain=False)
        return SearchView(result, self.store.papers.get_many(h.paper_id for h in result.hits))

    def similar(self, paper_id: str, k: int = 5) -> tuple[Paper, list[Hit], dict[str, Paper]]:
        """Papers most like ``paper_id``."""
        paper = self.paper(paper_id)
        ranker = self.ranker()
        hits = ranker.similar(paper.id, k) if ranker else []
        return paper, hits, self.store.papers.get_many(h.paper_id for h in hits)

    def index_status(self) -> IndexStatus:
        """How far embedding (and the shared index) is: `digestbot index` shows it."""
        return self.indexes.status()

    def paper_count(self) -> int:
        """How many papers are stored."""
        return self.store.papers.count()

    def papers_by_id(self, ids: Iterable[str]) -> dict[str, Paper]:
        """The stored papers among ``ids``, by id (unknown ids are left out)."""
        return self.store.papers.get_many(ids)

    def record_ingest(self) -> None:
        """Remember that papers were ingested now (for /healthz)."""
        self.store.kv.set(LAST_INGEST_KEY, self.clock().isoformat())

    def ingest_age_hours(self) -> float | None:
        """Hours since the last recorded ingest, or None when none was recorded."""
        last = self.store.kv.get(LAST_INGEST_KEY)
        if last is None:
            return None
        return (self.clock() - datetime.fromisoformat(last)).total_seconds() / 3600

    def ping(self) -> None:
        """One round trip to the database (raises when it cannot be reached)."""
        self.store.ping()

    def export_state(self, secret_tables: tuple[str, ...] = ()) -> dict[str, Any]:
        """Everything user-made as one document (digest/transfer/portable.py), ``secret_tables`` too."""
        from digest.transfer.portable import export_state

        return export_state(self.store, secret_tables)

    def import_state(
        self, doc: dict[str, Any], secret_tables: tuple[str, ...] = ()
    ) -> dict[str, int]:
        """Load an export into this (empty) deployment; counts of what was loaded."""
        from digest.transfer.portable import import_state

        return import_state(self.store, doc, secret_tables)
