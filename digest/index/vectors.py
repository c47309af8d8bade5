"""Paper embeddings kept in the database: embedded once by whichever process claims them, read
incrementally by every process (digest/store/embeddings.py holds the claims and rows).

Vectors are stored as float16 (768 bytes a paper): against the float32 the model gives, a
cosine moves by at most about 1e-3 (measured in tests/index/test_embedding_store.py), far
below the gaps that order a ranking. Each vector carries a hash of the text it was computed
from; a paper whose title or abstract a re-ingest changed loses its vector in the same commit
and is embedded again.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Sequence

import numpy as np

from digest.index.embeddings import DIM, Encoder, model_tag, paper_text
from digest.models import Paper
from digest.store.embeddings import EmbeddingClaim, EmbeddingRepo
from digest.store.papers import PaperRepo

log = logging.getLogger(__name__)
CHUNK = 32  # papers per claim: a worker that dies loses at most this many, for one lease
#: Seconds a claim is held; far above a chunk's cost (about 4 CPU-s), so a slow worker keeps it.
LEASE_SECONDS = 300.0


def text_hash(p: Paper) -> str:
    """A short hash of the text a paper is embedded from."""
    return hash_text(p.title, p.abstract)


def hash_text(title: str, abstract: str) -> str:
    """A short hash of ``paper_text(title, abstract)``."""
    return hashlib.sha1(paper_text(title, abstract).encode()).hexdigest()[:16]


def encoder_key(encoder: Encoder) -> str:
    """Which model's vectors these are: the model file's content tag (a stand-in encoder in tests
    and benches names itself with ``key``)."""
    files = getattr(encoder, "files", None)
    if files is not None:
        return model_tag(files)
    return str(getattr(encoder, "key", "stand-in"))


def pack(v: np.ndarray) -> bytes:
    """A vector as stored: little-endian float16."""
    return np.asarray(v, dtype="<f2").tobytes()


def unpack(raw: bytes) -> np.ndarray:
    """A stored vector as float32."""
    return np.frombuffer(raw, dtype="<f2").astype(np.float32)


class EmbeddingStore:
    """One model's vectors by paper id, read from the database as others store them."""

    def __init__(
        self, repo: EmbeddingRepo, papers: PaperRepo, encoder: Encoder, worker: str
    ) -> None:
        self.repo = repo
        self.papers = papers
        self.encoder = encoder
        self.model = encoder_key(encoder)
        self.worker = worker
        self._vectors: dict[str, np.ndarray] = {}
        self._hashes: dict[str, str] = {}
        self._seq = 0  # the highest sequence number read
        self.version = 0  # bumped whenever a vector is added or replaced
        self.embedded = 0  # papers this process embedded (the tests and the metrics read it)
        self._lock = threading.Lock()

    def vectors(self) -> dict[str, np.ndarray]:
        """Every stored vector (each read once; those stored since the last look are added)."""
        with self._lock:
            while rows := self.repo.since(self.model, self._seq):
                for r in rows:
                    self._vectors[r.paper_id] = unpack(r.vector)
                    self._hashes[r.paper_id] = r.text_hash
                self._seq = rows[-1].seq
                self.version += 1
            return self._vectors

    def missing(self, ids: Sequence[str]) -> list[str]:
        """Ids that have no vector yet."""
        have = self.vectors()
        return [i for i in ids if i not in have]

    def embed_pending(
        self,
        limit: int | None = None,
        progress: Callable[[int], None] | None = None,
        stop: Callable[[], bool] = lambda: False,
    ) -> int:
        """Claim papers with no vector, a chunk at a time, embed and store them, until none is
        left (or ``limit`` papers, or ``stop()``); how many this process stored."""
        done = 0
        while (limit is None or done < limit) and not stop():
            claim = self.repo.claim(self.model, self.worker, CHUNK, LEASE_SECONDS)
            if claim is None:
                break
            try:
                done += self._embed(claim)
            except BaseException:
                self.repo.release(claim)  # others may take these papers at once
                raise
            if progress:
                progress(len(claim.paper_ids))
        return done

    def _embed(self, claim: EmbeddingClaim) -> int:
        found = self.papers.get_many(claim.paper_ids)
        papers = [found[i] for i in claim.paper_ids if i in found]
        if not papers:
            self.repo.release(claim)
            return 0
        vecs = self.encoder.encode([paper_text(p.title, p.abstract) for p in papers])
        assert vecs.shape[1] == DIM
        self.embedded += len(papers)
        rows = {p.id: (text_hash(p), pack(v)) for p, v in zip(papers, vecs, strict=True)}
        return self.repo.store(claim, rows, hash_text)

    def embed_with_bar(self) -> int:
        """Embed every paper lacking a vector, with a progress bar on a terminal."""
        import sys

        todo = self.repo.progress(self.model)
        left = todo.papers - todo.embedded
        if left <= 0 or not sys.stderr.isatty():
            return self.embed_pending()
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("embedding papers", total=left)
            return self.embed_pending(progress=lambda n: bar.advance(task, n))
