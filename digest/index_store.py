"""Keeps the fitted ranking index in step with the store, persisted with joblib between runs."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import joblib

from digest.embedding_store import EmbeddingStore
from digest.embeddings import (
    DIM,
    Encoder,
    ModelConfig,
    ModelUnavailableError,
    SemanticRequiredError,
    load_encoder,
    model_tag,
    packaged_model,
)
from digest.models import Paper
from digest.rank.index import DocInput, PaperIndex, add_documents, build_index
from digest.rank.semantic import align
from digest.store import Store

log = logging.getLogger(__name__)
FORMAT_VERSION = 9  # bump when PaperIndex or the analyzer changes shape


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
        self.index: PaperIndex | None = None
        url = store.engine.url.render_as_string(hide_password=False)
        key = hashlib.sha1(f"{FORMAT_VERSION}:{url}".encode()).hexdigest()[:16]
        self.path = folder / f"index-{key}.joblib" if folder else None
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

    def _load(self) -> PaperIndex | None:
        if not self.path or not self.path.exists():
            return None
        try:
            index = joblib.load(self.path)
        except Exception as exc:  # noqa: BLE001 - a stale or truncated cache is simply rebuilt
            log.warning("ignoring unreadable index cache %s: %s", self.path, exc)
            return None
        return index if isinstance(index, PaperIndex) else None

    def _save(self, index: PaperIndex) -> None:
        if not self.path:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        os.close(fd)
        joblib.dump(index, tmp)
        os.replace(tmp, self.path)  # atomic: a crash never leaves a half-written cache

    def _try_save(self, index: PaperIndex) -> None:
        """Save the cache if the folder is writable; otherwise warn and keep it in memory."""
        try:
            self._save(index)
        except OSError as exc:
            log.warning(
                "index cache not saved (%s): %s; search works, the next start refits",
                self.path,
                exc,
            )

    def invalidate(self) -> None:
        """Forget the index (papers changed text, not just count); the next use refits."""
        self.index = None
        if self.path:
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                log.warning("stale index cache %s not removed: %s", self.path, exc)

    def current(self) -> PaperIndex | None:
        """The index covering every stored paper (None when the store is empty)."""
        if self.index is not None and len(self.index) == self.store.papers.count():
            # fast path: papers are only ever added, so equal counts mean in step
            self.index = self._with_vectors(self.index)
            return self.index
        ids = set(self.store.papers.ids_since(None))
        if not ids:
            self.index = None
            return None
        index = self.index or self._load()
        changed = False
        if index is None or not set(index.ids) <= ids:  # missing, or papers were deleted
            index, changed = self._rebuild(), True
        elif missing := ids - set(index.ids):
            docs = self.store.papers.get_many(sorted(missing)).values()
            index, changed = add_documents(index, [doc_input(p) for p in docs]), True
            if index.needs_refit():
                index = self._rebuild()
        if changed:
            self._try_save(index)
        self.index = self._with_vectors(index)
        return self.index

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

    def _rebuild(self) -> PaperIndex:
        log.info("fitting the ranking index")
        return build_index([doc_input(p) for p in self.store.papers.iter_all()])
