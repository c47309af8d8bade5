"""Keeps the fitted ranking index in step with the store, persisted with joblib between runs.

The lifecycle: one full fit at a time per process (a lock) and per index folder (a file
lock beside the saved index, so replicas sharing the folder fit once and load each other's); papers
stored since the index's ingest sequence are appended as a delta with the fitted vocabulary, idf
and LSA basis (no refit); a running bot answers from the last complete index while a refresh or a
refit runs on its own thread, and swaps the new one in when it is whole.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from digest.index.embeddings import (
    DIM,
    Encoder,
    ModelConfig,
    ModelUnavailableError,
    SemanticRequiredError,
    load_encoder,
    model_tag,
    packaged_model,
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


def _suffix(encoder: Encoder | None) -> str:
    """'' for the packaged model (the folder older versions used), else the model's content tag."""
    files = getattr(encoder, "files", None)  # stand-in encoders (tests, benches) have none
    if files is None or files == packaged_model():
        return ""
    return f"-{model_tag(files)}"


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
        # Embeddings need a folder to live in and the semantic extra; without them, lexical only.
        self.encoder = self._encoder(model, strict) if folder else None
        self._seen = -1
        self.background = background  # a long-running bot embeds missing papers on a thread
        self.embeddings = (
            EmbeddingStore(folder / f"embeddings-{key}{_suffix(self.encoder)}", self.encoder)
            if folder and self.encoder
            else None
        )
        self.serving = False  # a running bot: never wait on a refresh while an index exists
        self.fits = 0  # full fits made by this process (the metrics and the tests read it)
        self._snap: Snapshot | None = None  # what ``index`` was made from, without vectors
        self._stale = False  # papers changed text: the index held or saved describes the old one
        self._flight = threading.Lock()  # one refresh at a time: the others wait, then find it done
        self._fit_flight = threading.Lock()  # one full fit at a time
        self._served = threading.Lock()  # guards swapping ``index``
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._refitter: threading.Thread | None = None

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

    def round(self) -> None:
        """One round of a running bot's refresher: refresh, and start a due refit on a thread of
        its own, so rounds go on appending new papers while a long fit runs."""
        try:
            self.refresh()
            busy = self._refitter is not None and self._refitter.is_alive()
            if self.refit_due() and not busy:
                self._refitter = threading.Thread(
                    target=self._refit_quietly, name="index-refit", daemon=True
                )
                self._refitter.start()
        except Exception:  # noqa: BLE001 - a failed round leaves the served index; the next retries
            log.exception("index refresh failed; answering from the previous index")

    def _refit_quietly(self) -> None:
        try:
            self.refit_if_due()
        except Exception:  # noqa: BLE001 - the served index stays; the next round tries again
            log.exception("index refit failed; answering from the previous index")

    def serve(self, every: float = REFRESH_SECONDS) -> None:
        """From now on answer from the last complete index, refreshed every ``every`` seconds on a
        thread of its own; the first round loads the saved index (or fits one) at once."""
        self.serving = True
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()

        def loop() -> None:
            while True:
                self.round()
                if self._stop.wait(every):
                    return

        self._thread = threading.Thread(target=loop, name="index-refresh", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the refresher (a fit in progress finishes on its daemon thread)."""
        self._stop.set()

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
        """``index`` with the stored embeddings attached; missing ones are computed in background."""
        if self.embeddings is None:
            return index
        vectors = self.embeddings.vectors()
        version = self.embeddings.version
        if index is self.index and version == self._seen:
            return index  # no vector was added or replaced since the last look (the fast case)
        self._seen = version
        # Only a running bot embeds here, and not twice: a run in progress looks again when done.
        idle = self.background and not self.embeddings.busy
        missing = [pid for pid in index.ids if pid not in vectors] if idle else []
        if missing:
            self.embeddings.embed_in_background(
                lambda: list(self.store.papers.get_many(missing).values())
            )
        if not vectors and index.dense is None:
            return index  # nothing embedded yet: lexical, and the same object
        dense, has = align(index.ids, vectors, DIM)
        return replace(index, dense=dense, has_dense=has)  # a new object: rankers refresh

    def embed_new(self, changed: Iterable[str] = ()) -> int:
        """Embed stored papers with no vector, and ``changed`` ones whose text is new; how many
        (0 without the extra, and in a running bot, which embeds them on its own thread)."""
        if self.embeddings is None:
            return 0
        todo = sorted(
            set(self.embeddings.missing(self.store.papers.ids_since(None))) | set(changed)
        )
        if self.background:  # a running bot keeps answering: its embedding thread does the work
            self.embeddings.embed_in_background(
                lambda: list(self.store.papers.get_many(todo).values())
            )
            return 0
        return self.embeddings.embed_with_bar(list(self.store.papers.get_many(todo).values()))
