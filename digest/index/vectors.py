"""Stored paper embeddings: append-only chunk files beside the index cache, resumable, incremental.

Each vector is stored with a hash of the text it was computed from, so a paper whose title or
abstract a re-ingest changed is embedded again; the newest chunk wins. Vectors written before
hashes were stored have none and count as current until the paper's text is reported changed.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from digest.index.embeddings import DIM, Encoder, paper_text
from digest.models import Paper

log = logging.getLogger(__name__)
CHUNK = 32  # papers per saved chunk: an interrupted run loses at most this many


def text_hash(p: Paper) -> str:
    """A short hash of the text a paper is embedded from."""
    return hashlib.sha1(paper_text(p.title, p.abstract).encode()).hexdigest()[:16]


class EmbeddingStore:
    """Vectors by paper id in ``folder``; each chunk is written atomically, so a crash loses nothing saved."""

    def __init__(self, folder: Path, encoder: Encoder) -> None:
        self.folder = folder
        self.encoder = encoder
        self._vectors: dict[str, np.ndarray] = {}
        self._hashes: dict[str, str] = {}  # paper id -> text hash ('' for vectors stored without)
        self._loaded: set[str] = set()  # chunk files read so far
        self._mtime = -1  # the folder's mtime when last read: chunks another process added
        self.version = 0  # bumped whenever a vector is added or replaced
        self._lock = threading.RLock()  # _save updates the map while holding it
        self._worker: threading.Thread | None = None
        self._pending: list[Callable[[], Sequence[Paper]]] = []  # loads queued for the thread
        self._running = False
        self._atexit = False
        self._stop = threading.Event()

    def _refresh(self) -> None:
        """Read chunk files not read yet (this process's or another's), oldest first."""
        try:
            mtime = self.folder.stat().st_mtime_ns
        except OSError:
            return  # nothing stored yet
        # A folder changed in the last seconds is listed again: mtimes can be coarse.
        if mtime == self._mtime and time.time_ns() - mtime > 2_000_000_000:
            return
        self._mtime = mtime
        for f in sorted(self.folder.glob("chunk-*.npz")):
            if f.name in self._loaded:
                continue
            self._loaded.add(f.name)
            try:
                with np.load(f) as z:
                    ids = z["ids"].tolist()
                    hashes = z["hashes"].tolist() if "hashes" in z.files else [""] * len(ids)
                    self._put(ids, hashes, z["vectors"])
            except Exception as exc:  # noqa: BLE001 - a damaged chunk is recomputed
                log.warning("ignoring unreadable embedding chunk %s: %s", f, exc)

    def _put(self, ids: list[str], hashes: list[str], vecs: np.ndarray) -> None:
        self._vectors.update(zip(ids, vecs, strict=True))
        self._hashes.update(zip(ids, hashes, strict=True))
        self.version += 1

    def vectors(self) -> dict[str, np.ndarray]:
        """Every stored vector (chunks are read once; new ones as they appear)."""
        with self._lock:
            self._refresh()
            return self._vectors

    def missing(self, ids: Sequence[str]) -> list[str]:
        """Ids that have no vector yet."""
        have = self.vectors()
        return [i for i in ids if i not in have]

    def stale(self, papers: Sequence[Paper]) -> list[Paper]:
        """Papers with no vector, or one computed from other text (or from text not recorded)."""
        have = self.vectors()
        return [p for p in papers if p.id not in have or self._hashes.get(p.id) != text_hash(p)]

    def _save(self, papers: Sequence[Paper], vecs: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp.npz")
        os.close(fd)
        ids, hashes = [p.id for p in papers], [text_hash(p) for p in papers]
        np.savez(tmp, ids=np.array(ids), hashes=np.array(hashes), vectors=vecs.astype(np.float32))
        # Named by time: sorted names are oldest first, so a re-embedded paper's newest vector wins.
        name = f"chunk-{time.time_ns():020d}-{os.getpid()}.npz"
        with self._lock:
            self.vectors()  # read other processes' chunks first: ours is newer
            os.replace(tmp, self.folder / name)
            self._loaded.add(name)
            self._put(ids, hashes, vecs)

    def embed(self, papers: Sequence[Paper], progress: Callable[[int], None] | None = None) -> int:
        """Embed and save ``papers`` whose vector is missing or stale, chunk by chunk; how many."""
        todo = self.stale(papers)
        for s in range(0, len(todo), CHUNK):
            if self._stop.is_set():
                break  # shutting down: what is saved stays, the rest is embedded next time
            part = todo[s : s + CHUNK]
            vecs = self.encoder.encode([paper_text(p.title, p.abstract) for p in part])
            assert vecs.shape[1] == DIM
            self._save(part, vecs)
            if progress:
                progress(len(part))
        return len(todo)

    def embed_with_bar(self, papers: Sequence[Paper]) -> int:
        """Embed with a progress bar on a terminal (nothing on a pipe)."""
        todo = self.stale(papers)
        if not todo or not sys.stderr.isatty():
            return self.embed(papers)
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("embedding papers", total=len(todo))
            return self.embed(papers, lambda n: bar.advance(task, n))

    @property
    def busy(self) -> bool:
        """True while a background run is embedding or has work queued."""
        with self._lock:
            return self._running

    def embed_in_background(self, load: Callable[[], Sequence[Paper]]) -> bool:
        """Queue the papers ``load`` returns for the background thread (started if none runs);
        True when a thread was started."""
        with self._lock:
            self._pending.append(load)
            if self._running:
                return False  # the running thread takes it after its current work
            self._running = True
            if not self._atexit:
                atexit.register(self.stop)  # an ONNX run cut off at exit aborts the process
                self._atexit = True
        self._worker = threading.Thread(target=self._drain, name="digestbot-embed", daemon=True)
        self._worker.start()
        return True

    def _drain(self) -> None:
        """The background thread: embed each queued load in turn until none is left."""
        while True:
            with self._lock:  # deciding to stop under the lock: nothing queued is left behind
                if not self._pending or self._stop.is_set():
                    self._pending.clear()
                    self._running = False
                    return
                load = self._pending.pop(0)
            try:
                self.embed(load())
            except Exception:  # noqa: BLE001 - ranking stays lexical; the next refresh retries
                log.exception("background embedding failed")

    def stop(self) -> None:
        """Ask a background run to stop after its current chunk, and wait for it."""
        self._stop.set()
        self.wait()

    def wait(self, timeout: float | None = None) -> None:
        """Block until a background run finishes (tests, CLI)."""
        if self._worker is not None:
            self._worker.join(timeout)
