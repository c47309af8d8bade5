"""Keeps the fitted ranking index in step with the store, shared by every process through the
database (digest/store/index_parts.py), never through a folder.

The lifecycle: a full fit is claimed in the database, so one process fits each version and every
other loads it; papers stored since are appended as a *segment* (computed once, with the fitted
vocabulary, idf and LSA basis, by whoever claims it, and stored), which the others load and
apply without analysing any text; after a few segments a *merge* folds them into a new base, so
a process starting later loads one part. A running bot answers from the last complete index
while a refresh or a refit runs (bot/runtime/index_work.py drives the rounds), and swaps the new
one in when it is whole. Without a folder (tests, benches) the index is fitted and appended in
memory and nothing is shared.
"""

from __future__ import annotations

import logging
import pickle
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

from digest.index.embeddings import (
    DIM,
    Encoder,
    ModelConfig,
    ModelUnavailableError,
    QueryCache,
    SemanticRequiredError,
    load_encoder,
)
from digest.index.vectors import EmbeddingStore
from digest.models import Paper
from digest.rank.index import (
    DocInput,
    PaperIndex,
    Segment,
    SegmentMismatchError,
    apply_segment,
    build_index,
    make_segment,
)
from digest.rank.semantic import align
from digest.store import Store
from digest.store.index_parts import BASE, SEGMENT, IndexClaim, IndexPartRepo, PartInfo
from digest.store.papers import CorpusVersion

log = logging.getLogger(__name__)
FORMAT_VERSION = 12  # bump when PaperIndex, Segment or the analyzer changes shape
FORMAT = f"paper-index-{FORMAT_VERSION}"
#: Segments of a base after which a merge folds them into a new base.
MERGE_SEGMENTS = 8
#: Leases on index work (seconds, the database clock): a fit of 100k papers takes minutes.
FIT_LEASE = 600.0
PART_LEASE = 60.0  # a segment of 5,000 papers takes seconds: a dead claimer delays little
#: How long a command with no index at all waits for another process's fit before fitting.
WAIT_FOR_FIT = FIT_LEASE


@dataclass(frozen=True)
class Snapshot:
    """A complete index and the ingest sequence it covers (every paper numbered up to ``seq``)."""

    index: PaperIndex
    seq: int


def doc_input(p: Paper) -> DocInput:
    """What the ranker needs of a stored paper."""
    return DocInput(p.id, p.title, p.abstract, p.authors, p.venue, p.year)


def _dump(obj: object) -> bytes:
    return pickle.dumps(obj, protocol=5)


def _load(blob: bytes) -> object:
    # Parts are written by digestbot processes into this deployment's own database.
    return pickle.loads(blob)  # noqa: S301


class IndexStore:
    """Loads, refreshes and shares the index for one database."""

    def __init__(
        self,
        store: Store,
        folder: Path | None,
        model: ModelConfig | None = None,
        strict: bool = False,
        embeds: bool = True,
    ) -> None:
        self.store = store
        self.index: PaperIndex | None = None  # the one answers come from (vectors attached)
        # A folder named means a persistent install: the index and the embeddings are shared
        # through the database (the folder itself holds nothing of them any more).
        self.parts = store.index_parts if folder is not None else None
        self.worker = worker_name()
        self.model_error = ""  # why a configured embedding model is not in use
        # Embeddings need a persistent install and the semantic extra; without them, lexical.
        self.encoder = self._encoder(model, strict) if folder else None
        self._seen = -1
        # False in a running bot: it embeds nothing itself, its embedding worker process does
        # (bot/runtime/index_work.py), as the composition root chose when it built this.
        self._embeds = embeds
        self.embeddings = (
            EmbeddingStore(store.embeddings, store.papers, self.encoder, self.worker)
            if folder and self.encoder
            else None
        )
        #: Query vectors, cached: a repeated query (a digest's topics each day) costs no model run.
        self.queries = QueryCache(self.encoder) if self.encoder is not None else None
        self.serving = False  # a running bot: never wait on a refresh while an index exists
        # What this process did (the metrics and the tests read them): full fits, segments
        # computed, merges written, parts read from the database.
        self.fits = self.appends = self.merges = self.loads = 0
        self._snap: Snapshot | None = None  # what ``index`` was made from, without vectors
        self._stored: Snapshot | None = None  # the base and the segments applied, exactly
        self._base: PartInfo | None = None  # the base ``_stored`` grew from
        self._applied = 0  # the id of the last segment applied to ``_stored`` (0: none)
        self._segments = 0  # segments applied since the base
        self._epoch = 0  # the database's text epoch when last read
        self._stale = False  # papers changed text: the index held describes the old one
        self._flight = threading.Lock()  # one refresh at a time: the others wait, then find it done
        self._fit_flight = threading.Lock()  # one full fit at a time
        self._served = threading.Lock()  # guards swapping ``index``
        # Guards what was loaded from the database (_stored, _base, _applied): the refresher
        # and a refit behind it (another thread) both move it.
        self._state = threading.RLock()

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

    def invalidate(self) -> None:
        """Papers changed text, not just count: the next refresh refits, here and in every
        process sharing the database (a running bot keeps answering meanwhile)."""
        self._stale = True
        if self.parts is not None:
            self.parts.texts_changed()
        if not self.serving:
            with self._served:
                self._snap, self._stored, self._base, self.index = None, None, None, None

    # -- serving ------------------------------------------------------------------------------

    @property
    def _repo(self) -> IndexPartRepo:
        """The stored parts, on the paths that share the index (a folder is set)."""
        assert self.parts is not None, "the index is shared only when a folder is set"
        return self.parts

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
        return self.refresh(need=covering)

    def refresh(self, need: int | None = None) -> PaperIndex | None:
        """Bring the index in step with the store: load what other processes stored (a newer
        base, new segments), append papers stored since as a segment (claimed, so one process
        computes it), and fit only when there is no index, texts changed or papers were
        deleted. One refresh at a time. ``need``: the ingest sequence the answer must cover."""
        with self._flight:
            version = self.store.papers.version()
            if version.count == 0:
                self._publish(None)
                return None
            self._sync()
            snap = self._append(version, need)
            # A fit: none yet, papers were deleted, or (a one-shot command) texts changed or the
            # vocabulary drifted; a running bot refits those two behind its answers instead.
            whole = snap is not None and len(snap.index) == self._holds(snap, version)
            if not whole or (not self.serving and self.refit_due(snap)):
                snap = self._fit_shared(version)
            if snap is not self._snap:
                self._publish(snap)
            return self._attach()

    def _holds(self, snap: Snapshot, version: CorpusVersion) -> int:
        """How many papers an index covering ``snap.seq`` must hold (fewer: papers were deleted,
        a refit is due). A running bot's index may trail the store by a segment another process
        is making."""
        if snap.seq >= version.seq:
            return version.count
        return self.store.papers.count_upto(snap.seq)

    def refit_due(self, snap: Snapshot | None = None) -> bool:
        """Whether ``snap`` (the served one) should be fitted afresh: texts changed, or the
        vocabulary drifted."""
        snap = snap or self._snap
        return snap is not None and (self._is_stale() or snap.index.needs_refit())

    def _is_stale(self) -> bool:
        if self.parts is None or self._base is None:
            return self._stale
        return self._base.text_epoch < self._epoch

    def refit_if_due(self) -> bool:
        """Fit the whole index afresh when due, behind the answers, then swap it in (True)."""
        if not self.refit_due():
            return False
        snap = self._fit_shared(self.store.papers.version())
        with self._flight:
            self._sync()
            snap = self._append(self.store.papers.version(), None) or snap
            self._publish(snap)
        return True

    def merge_if_due(self) -> bool:
        """Fold the segments applied since the base into a new base, when there are enough of
        them and this process claims the merge (True: it wrote one)."""
        if self.parts is None or self._base is None or self._segments < MERGE_SEGMENTS:
            return False
        with self._flight, self._state:
            stored, base, last = self._stored, self._base, self._applied
            if stored is None or base is None:
                return False
            claim = self.parts.claim(f"{FORMAT}:merge:{base.id}:{last}", self.worker, FIT_LEASE)
            if claim is None:
                return False
            try:
                blob = _dump(stored)
            except BaseException:
                self.parts.release(claim)
                raise
            info = self.parts.add(
                claim,
                FORMAT,
                BASE,
                blob,
                0,
                stored.seq,
                len(stored.index),
                merged_from=base.id,
                text_epoch=base.text_epoch,
            )
            if info is None:
                return False
            self.merges += 1
            self._base, self._applied, self._segments = info, 0, 0
            self.parts.prune(FORMAT, base.id)  # the base before keeps serving slow readers
            log.info(
                "merged %d segments into the index (%d bytes)", last and MERGE_SEGMENTS, len(blob)
            )
            return True

    def tick(self) -> None:
        """One round of the refresher: refresh, then refit if due, then merge if due (tests
        drive it directly)."""
        try:
            self.refresh()
            self.refit_if_due()
            self.merge_if_due()
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

    # -- the shared parts ---------------------------------------------------------------------

    def _sync(self) -> None:
        """Bring ``_stored`` to the newest base in the database and the segments stored for it."""
        if self.parts is None:
            return
        with self._state:
            self._sync_held()

    def _sync_held(self) -> None:
        self._epoch = self._repo.text_epoch()
        base = self._repo.latest_base(FORMAT)
        if base is None:
            return
        mine = self._base
        if mine is None or base.id != mine.id:
            if (
                mine is not None
                and base.merged_from == mine.id
                and self._stored is not None
                and self._stored.seq == base.seq_to
            ):
                # A merge of exactly what this process holds: adopt it without reading it.
                self._base, self._applied, self._segments = base, 0, 0
            elif not self._load_base(base):
                return
        if self._base is None:  # no stored base could be loaded: nothing to add to
            return
        for seg in self._repo.segments(self._base.id, after=self._applied):
            if not self._load_segment(seg):
                break

    def _load_base(self, base: PartInfo) -> bool:
        blob = self._repo.blob(base.id)
        if blob is None:
            return False  # pruned meanwhile: the next look finds the newer one
        snap = _load(blob)
        self.loads += 1
        if not isinstance(snap, Snapshot):
            return False
        self._stored, self._base, self._applied, self._segments = snap, base, 0, 0
        return True

    def _load_segment(self, seg: PartInfo) -> bool:
        stored = self._stored
        if stored is None or seg.seq_from != stored.seq:
            return False  # not the next one for what we hold (a race with a merge): reload later
        blob = self._repo.blob(seg.id)
        if blob is None:
            return False
        part = _load(blob)
        self.loads += 1
        try:
            index = (
                stored.index if part is None else apply_segment(stored.index, cast(Segment, part))
            )
        except SegmentMismatchError:
            log.warning("index segment %d does not fit the index held; reloading", seg.id)
            self._base = None
            return False
        self._stored = Snapshot(index, seg.seq_to)
        self._applied, self._segments = seg.id, self._segments + 1
        return True

    def _append(self, version: CorpusVersion, need: int | None) -> Snapshot | None:
        with self._state:
            return self._append_held(version, need)

    def _append_held(self, version: CorpusVersion, need: int | None) -> Snapshot | None:
        """The index to serve: the stored one with the papers numbered up to ``version.seq``
        appended. Shared: as a segment this process claims and stores; when another process is
        making it, a running bot waits for it (the next round loads it) unless ``need`` asks
        for those papers now, and a one-shot command appends them in memory."""
        base = self._stored if self.parts is not None else self._snap
        if self.parts is None and self._stale and not self.serving:
            return None
        if base is None or version.seq <= base.seq:
            return base
        ids = self.store.papers.ids_between(base.seq, version.seq)
        if self.parts is None or self._base is None or self._is_stale():
            return Snapshot(self._extended(base.index, ids), version.seq)
        key = f"{FORMAT}:segment:{self._base.id}:{base.seq}"
        claim = self.parts.claim(key, self.worker, PART_LEASE)
        if claim is not None:
            return self._write_segment(claim, base, ids, version.seq)
        if self.parts.is_done(key):  # stored since we looked: load it, then what follows
            self._sync()
            if self._stored is not None and self._stored.seq > base.seq:
                return self._append(version, need)
        if self.serving and (need is None or need <= base.seq):
            return self._snap if self._snap is not None else base  # the next round loads it
        return Snapshot(self._extended(base.index, ids), version.seq)

    def _extended(self, index: PaperIndex, ids: list[str]) -> PaperIndex:
        """``index`` with ``ids`` appended in memory only (nothing shared: not fitted yet, a
        stale fit, or a digest that cannot wait for another process's segment)."""
        papers = self.store.papers.get_many(ids)
        seg = make_segment(index, [doc_input(papers[i]) for i in ids if i in papers])
        if seg is None:
            return index
        self.appends += 1
        return apply_segment(index, seg)

    def _write_segment(
        self, claim: IndexClaim, base: Snapshot, ids: list[str], upto: int
    ) -> Snapshot:
        try:
            papers = self.store.papers.get_many(ids)
            seg: Segment | None = make_segment(
                base.index, [doc_input(papers[i]) for i in ids if i in papers]
            )
            index = base.index if seg is None else apply_segment(base.index, seg)
            blob = _dump(seg)
        except BaseException:
            self._repo.release(claim)
            raise
        self.appends += 1
        assert self._base is not None  # checked on entry; a segment always has its base
        info = self._repo.add(
            claim, FORMAT, SEGMENT, blob, base.seq, upto, len(index), base_id=self._base.id
        )
        snap = Snapshot(index, upto)
        if info is not None:
            self._stored, self._applied, self._segments = snap, info.id, self._segments + 1
        return snap

    def _fit_shared(self, version: CorpusVersion) -> Snapshot:
        """A full fit up to ``version``, or the one another thread or process fitted."""
        with self._fit_flight:
            if self.parts is None:
                return self._fit(version)
            started, done = time.monotonic(), 0
            while True:
                self._sync()
                base = self._base
                if base is not None and self._fresh_enough(base, version):
                    snap = self._append(version, version.seq)
                    if snap is not None:
                        return snap
                key = f"{FORMAT}:fit:{base.id if base else 0}:{self._epoch}"
                if self._stored is not None and len(self._stored.index) > version.count:
                    key += f":{version.count}"  # papers were deleted: a fit for this count
                claim = self.parts.claim(key, self.worker, FIT_LEASE)
                if claim is not None:
                    return self._write_fit(claim, version)
                if self.parts.is_done(key):
                    done += 1
                    if done < 3:
                        continue  # fitted meanwhile: load it
                    return self._fit(version)  # stored yet not loadable here: fit, unshared
                if self._snap is not None and self.serving:
                    return self._snap  # another process fits; keep answering meanwhile
                if time.monotonic() - started > WAIT_FOR_FIT:
                    return self._fit(version)  # never stuck on a claim that does not move
                time.sleep(0.2)  # another process is fitting: wait for it

    def _fresh_enough(self, base: PartInfo, version: CorpusVersion) -> bool:
        """Whether the base (with the segments after it) can serve ``version`` without a refit:
        fitted after the last text change, not drifted, no paper deleted since."""
        if base.text_epoch < self._epoch or self._stored is None:
            return False
        if self._stored.index.needs_refit():
            return False
        return len(self._stored.index) <= version.count

    def _write_fit(self, claim: IndexClaim, version: CorpusVersion) -> Snapshot:
        try:
            epoch = self._repo.text_epoch()  # before reading: a change made during it marks it
            snap = self._fit(version)
            blob = _dump(snap)
        except BaseException:
            self._repo.release(claim)
            raise
        info = self._repo.add(
            claim, FORMAT, BASE, blob, 0, snap.seq, len(snap.index), text_epoch=epoch
        )
        if info is not None:
            with self._state:
                old = self._base
                self._stored, self._base, self._applied, self._segments = snap, info, 0, 0
                self._epoch = max(self._epoch, epoch)
            self._repo.prune(FORMAT, old.id if old is not None else info.id)
        return snap

    def _fit(self, version: CorpusVersion) -> Snapshot:
        self._stale = False  # before reading: a change made during the fit marks it again
        log.info("fitting the ranking index")
        self.fits += 1
        docs = [doc_input(p) for p in self.store.papers.iter_all(upto=version.seq)]
        return Snapshot(build_index(docs), version.seq)

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
        if self.embeddings is None or not self._embeds:
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
