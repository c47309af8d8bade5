"""Keeps the fitted ranking index in step with the store, persisted with joblib between runs.

The lifecycle (issue 21): one full fit at a time per process (a lock) and per index folder (a file
lock beside the saved index, so replicas sharing the folder fit once and load each other's); papers
stored since the index's ingest sequence are appended as a delta with the fitted vocabulary, idf
and LSA basis (no refit); a running bot answers from the last complete index while a refresh or a
refit runs on its own thread, and swaps the new one in when it is whole.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path

from digest.index.embeddings import (
    DIM,
    Encoder,
    ModelConfig,
    ModelUnavailableError,
    QueryCache,
    SemanticRequiredError,
    load_encoder,
)
from digest.index.files import SavedIndex, Snapshot
from digest.index.vectors import EmbeddingStore
from digest.models import Paper
from digest.rank.index import DocInput, PaperIndex, add_documents, build_index
from digest.rank.semantic import align
from digest.store import Store
from digest.store.papers import CorpusVersion

log = logging.getLogger(__name__)
FORMAT_VERSION = 11  # bump when PaperIndex, the analyzer or Snapshot changes shape
#: Seconds between a running bot's looks for papers stored since its index (by any process).
REFRESH_SECONDS = 10.0


def doc_input(p: Paper) -> DocInput:
    """What the ranker needs of a stored paper."""
    return DocInput(p.id, p.title, p.abstract, p.authors, p.venue, p.year)


class IndexStore:
    """Loads, refreshes and saves the index for one database."""

    def __init__(
        self,
        store: Store,
        folder: Path | None,
        background: bool = False,
        model: ModelConfig | None = None,
        strict: bool = False,
    ) -> None:
        self.store = store
        self.index: PaperIndex | None = None  # the one answers come from (vectors attached)
        url = store.engine.url.render_as_string(hide_password=False)
        key = hashlib.sha1(f"{FORMAT_VERSION}:{url}".encode()).hexdigest()[:16]
        self.files = SavedIndex(
            folder / f"index-{key}.joblib" if folder else None,
            folder / f"index-{key}.lock" if folder else None,
        )
        self.model_error = ""  # why a configured embedding model is not in use
        # Embeddings need a persistent index (a folder named) and the semantic extra; without
        # them, lexical only. They live in the database, not the folder.
        self.encoder = self._encoder(model, strict) if folder else None
        self._seen = -1
        # A running bot embeds nothing itself: its embedding worker process does (bot/runtime).
        self.background = background
        self.embeddings = (
            EmbeddingStore(store.embeddings, store.papers, self.encoder, worker_name())
            if folder and self.encoder
            else None
        )
        #: Query vectors, cached: a repeated query (a digest's topics each day) costs no model run.
        self.queries = QueryCache(self.encoder) if self.encoder is not None else None
        self.serving = False  # a running bot: never wait on a refresh while an index exists
        self.fits = 0  # full fits made by this process (the metrics and the tests read it)
        self._snap: Snapshot | None = None  # what ``index`` was made from, without vectors
        self._stale = False  # papers changed text: the index held or saved describes the old one
        self._flight = threading.Lock()  # one refresh at a time: the others wait, then find it done
        self._fit_flight = threading.Lock()  # one full fit at a time
        self._served = threading.Lock()  # guards swapping ``index``

    def _encoder(self, model: ModelConfig | None, strict: bool) -> Encoder | None:
        """The embedding model, or None; one that cannot be had stops a CLI command, or is logged."""
        try:
            return load_encoder(model)
        except ModelUnavailableError as exc:
            if strict or isinstance(exc, SemanticRequiredError):  # `on` means required, always
                raise
            self.model_error = str(exc)
            log.warning("%s; ranking stays lexical", exc)
            return None

    @property
    def path(self) -> Path | None:
        """The saved index file (None: nothing is saved)."""
        return self.files.path

    def _file_lock(self, timeout: float | None = None) -> AbstractContextManager[None]:
        """The saved index's lock (a method of ours, so a test can watch it being asked for)."""
        return self.files.lock(timeout)

    def invalidate(self) -> None:
        """Papers changed text, not just count: the next refresh refits (a running bot keeps
        answering from the index it has meanwhile)."""
        self._stale = True
        if not self.serving:
            self._snap, self.index = None, None
        self.files.remove()

    # -- serving ------------------------------------------------------------------------------

    def ready(self) -> PaperIndex | None:
        """The index answers come from now, without waiting (None: none is complete yet)."""
        return self.index

    def current(self, covering: int | None = None) -> PaperIndex | None:
        """The index to answer with. A one-shot command brings it in step with the store first; a
        running bot answers from the last complete one at once (its refresher keeps it within
        one interval), waiting only when there is none or ``covering`` (an ingest sequence a
        digest takes candidates up to) is past it."""
        snap = self._snap
        covered = covering is None or (snap is not None and snap.seq >= covering)
        if self.serving and self.index is not None and covered:
            return self._attach()
        return self.refresh()

    def refresh(self) -> PaperIndex | None:
        """Bring the index in step with the store: adopt a newer saved one (another process's),
        append papers stored since by ingest sequence without refitting, and fit only when
        there is no index, texts changed or papers were deleted. One refresh at a time."""
        with self._flight:
            version = self.store.papers.version()
            if version.count == 0:
                self._publish(None)
                return None
            # A running bot keeps a stale index answering until the refit behind it is done.
            snap = None if self._stale and not self.serving else self._newest(version)
            if snap is not None:
                snap = self._extend(snap, version)
            # A fit: none yet, papers were deleted, or (a one-shot command) texts changed or the
            # vocabulary drifted; a running bot refits those two behind its answers instead.
            whole = snap is not None and len(snap.index) == version.count
            if not whole or (not self.serving and self.refit_due(snap)):
                snap = self._fit_shared(version)
            if snap is not self._snap:
                self._publish(snap)
                self.files.save_if_newest(snap, wait=False)
            return self._attach()

    def refit_due(self, snap: Snapshot | None = None) -> bool:
        """Whether ``snap`` (the served one) should be fitted afresh: texts changed, or the
        vocabulary drifted."""
        snap = snap or self._snap
        return snap is not None and (self._stale or snap.index.needs_refit())

    def refit_if_due(self) -> bool:
        """Fit the whole index afresh when due, behind the answers, then swap it in (True)."""
        if not self.refit_due():
            return False
        snap = self._fit_shared(self.store.papers.version())
        with self._flight:
            self._publish(self._extend(snap, self.store.papers.version()))
        return True

    def tick(self) -> None:
        """One round of the refresher: refresh, then refit if due (tests drive it directly)."""
        try:
            self.refresh()
            self.refit_if_due()
        except Exception:  # noqa: BLE001 - a failed round leaves the served index; the next retries
            log.exception("index refresh failed; answering from the previous index")

    def _publish(self, snap: Snapshot | None) -> None:
        with self._served:
            self._snap = snap
            self.index = None if snap is None else self._with_vectors(snap.index)

    def _attach(self) -> PaperIndex | None:
        with self._served:
            if self.index is not None:
                self.index = self._with_vectors(self.index)
            return self.index

    def _newest(self, version: CorpusVersion) -> Snapshot | None:
        """Ours, or the saved one when another process saved a newer one since we looked."""
        snap = self._snap
        if self.files.changed() and not self._stale:
            disk = self.files.load()
            if (
                disk is not None
                and disk.seq <= version.seq
                and (snap is None or disk.seq >= snap.seq)
            ):
                return disk
        return snap

    def _extend(self, snap: Snapshot, version: CorpusVersion) -> Snapshot:
        """``snap`` with the papers numbered in (snap.seq, version.seq] appended (the delta)."""
        if version.seq <= snap.seq:
            return snap
        ids = self.store.papers.ids_between(snap.seq, version.seq)
        papers = self.store.papers.get_many(ids)
        docs = [doc_input(papers[i]) for i in ids if i in papers]
        return Snapshot(add_documents(snap.index, docs), version.seq)

    def _fit_shared(self, version: CorpusVersion) -> Snapshot:
        """A full fit up to ``version``, or the one another thread or process just saved."""
        with self._fit_flight, self._file_lock():
            if not self._stale:  # papers whose text changed make the saved index stale
                disk = self.files.load()  # another thread or process may have fitted it meanwhile
                if disk is not None and disk.seq <= version.seq:
                    snap = self._extend(disk, version)
                    if len(snap.index) == version.count and not snap.index.needs_refit():
                        return snap
            self._stale = False  # before reading: a change made during the fit marks it again
            log.info("fitting the ranking index")
            self.fits += 1
            docs = [doc_input(p) for p in self.store.papers.iter_all(upto=version.seq)]
            snap = Snapshot(build_index(docs), version.seq)
            self.files.save(snap)
            return snap

    def _with_vectors(self, index: PaperIndex) -> PaperIndex:
        """``index`` with the stored embeddings attached (those stored since the last look are
        read; none is computed here)."""
        if self.embeddings is None:
            return index
        vectors = self.embeddings.vectors()
        version = self.embeddings.version
        if index is self.index and version == self._seen:
            return index  # no vector was added or replaced since the last look (the fast case)
        self._seen = version
        if not vectors and index.dense is None:
            return index  # nothing embedded yet: lexical, and the same object
        dense, has = align(index.ids, vectors, DIM)
        return replace(index, dense=dense, has_dense=has)  # a new object: rankers refresh

    def status(self) -> IndexStatus:
        """Papers stored and, with semantic ranking, how many have a vector."""
        if self.embeddings is None:
            why = (
                self.model_error
                or "off (DIGESTBOT_SEMANTIC=off, or the semantic extra is not installed)"
            )
            return IndexStatus(self.store.papers.count(), why)
        done = self.store.embeddings.progress(self.embeddings.model)
        return IndexStatus(done.papers, "", done.embedded, done.claimed)

    def embed_new(self) -> int:
        """Embed stored papers with no vector (new ones, and those whose text changed: their
        vectors were dropped when the text was stored); how many this process embedded. A
        running bot embeds none: its embedding worker process claims them."""
        if self.embeddings is None or self.background:
            return 0
        return self.embeddings.embed_with_bar()


@dataclass(frozen=True)
class IndexStatus:
    """How far the shared work on the corpus is (what `digestbot index` shows)."""

    papers: int
    semantic: str  # why ranking is lexical, or '' when meaning is on
    embedded: int = 0  # papers with a vector under the model in use
    embedding_now: int = 0  # papers claimed by a worker right now


def worker_name() -> str:
    """Who holds a claim: host and process, as a person reading the claims would want."""
    import os
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"
