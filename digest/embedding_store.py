"""Stored paper embeddings: append-only chunk files beside the index cache, resumable, incremental."""

from __future__ import annotations

import atexit
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from digest.embeddings import DIM, Encoder, paper_text
from digest.models import Paper

log = logging.getLogger(__name__)
CHUNK = 32  # papers per saved chunk: an interrupted run loses at most this many


class EmbeddingStore:
    """Vectors by paper id in ``folder``; each chunk is written atomically, so a crash loses nothing saved."""

    def __init__(self, folder: Path, encoder: Encoder) -> None:
        self.folder = folder
        self.encoder = encoder
        self._vectors: dict[str, np.ndarray] | None = None
        self._lock = threading.RLock()  # _save updates the map while holding it
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()

    def vectors(self) -> dict[str, np.ndarray]:
        """Every stored vector (read from disk once, then kept up to date in memory)."""
        with self._lock:
            if self._vectors is None:
                self._vectors = {}
                for f in sorted(self.folder.glob("chunk-*.npz")):
                    try:
                        with np.load(f) as z:
                            self._vectors.update(zip(z["ids"].tolist(), z["vectors"], strict=True))
                    except Exception as exc:  # noqa: BLE001 - a damaged chunk is recomputed
                        log.warning("ignoring unreadable embedding chunk %s: %s", f, exc)
            return self._vectors

    def missing(self, ids: Sequence[str]) -> list[str]:
        """Ids that have no vector yet."""
        have = self.vectors()
        return [i for i in ids if i not in have]

    def _save(self, ids: list[str], vecs: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp.npz")
        os.close(fd)
        np.savez(tmp, ids=np.array(ids), vectors=vecs.astype(np.float32))
        n = len(list(self.folder.glob("chunk-*.npz")))
        os.replace(tmp, self.folder / f"chunk-{n:06d}-{os.getpid()}.npz")
        with self._lock:
            self.vectors().update(zip(ids, vecs, strict=True))

    def embed(self, papers: Sequence[Paper], progress: Callable[[int], None] | None = None) -> int:
        """Embed and save ``papers`` that have no vector, chunk by chunk; how many were embedded."""
        todo = [p for p in papers if p.id not in self.vectors()]
        for s in range(0, len(todo), CHUNK):
            if self._stop.is_set():
                break  # shutting down: what is saved stays, the rest is embedded next time
            part = todo[s : s + CHUNK]
            vecs = self.encoder.encode([paper_text(p.title, p.abstract) for p in part])
            assert vecs.shape[1] == DIM
            self._save([p.id for p in part], vecs)
            if progress:
                progress(len(part))
        return len(todo)

    def embed_with_bar(self, papers: Sequence[Paper]) -> int:
        """Embed with a progress bar on a terminal (nothing on a pipe)."""
        todo = self.missing([p.id for p in papers])
        if not todo or not sys.stderr.isatty():
            return self.embed(papers)
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("embedding papers", total=len(todo))
            return self.embed(papers, lambda n: bar.advance(task, n))

    def embed_in_background(self, load: Callable[[], Sequence[Paper]]) -> bool:
        """Start embedding the papers ``load`` returns on a daemon thread, unless one runs."""
        if self._worker is not None and self._worker.is_alive():
            return False

        def run() -> None:
            try:
                self.embed(load())
            except Exception:  # noqa: BLE001 - ranking stays lexical; the next refresh retries
                log.exception("background embedding failed")

        self._worker = threading.Thread(target=run, name="digestbot-embed", daemon=True)
        self._worker.start()
        atexit.register(self.stop)  # an ONNX run cut off at interpreter exit aborts the process
        return True

    def stop(self) -> None:
        """Ask a background run to stop after its current chunk, and wait for it."""
        self._stop.set()
        self.wait()

    def wait(self, timeout: float | None = None) -> None:
        """Block until a background run finishes (tests, CLI)."""
        if self._worker is not None:
            self._worker.join(timeout)
