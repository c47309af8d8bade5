"""What an embedding worker process runs: claim papers lacking a vector, embed them, store them,
until told to stop. The bot's runtime starts it in a process of its own (bot/runtime/index_work.py);
nothing here starts a thread or a process."""

from __future__ import annotations

import importlib
import logging
from typing import Any, Protocol

from digest.index.embeddings import ModelConfig, load_encoder

log = logging.getLogger(__name__)


class StopFlag(Protocol):
    """A multiprocessing or threading Event."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> Any: ...


def stand_in(name: str) -> Any:
    """An encoder named "module:attribute" (a stand-in for the model in tests and benches)."""
    mod, _, attr = name.partition(":")
    return getattr(importlib.import_module(mod), attr)()


def embed_until(
    url: str,
    model: ModelConfig,
    stop: StopFlag,
    every: float,
    encoder: str | None = None,
    ready: Any = None,
) -> int:
    """Embed the papers of the database at ``url`` that lack a vector, looking again every
    ``every`` seconds when none is left, until ``stop`` is set; how many this process embedded.
    ``ready`` (an Event) is set once the model is loaded and the database open."""
    from digest.index.lifecycle import worker_name
    from digest.index.vectors import EmbeddingStore
    from digest.store import Store

    model_encoder = stand_in(encoder) if encoder else load_encoder(model)
    if model_encoder is None:
        return 0
    store = Store.open(url, migrate=False)
    vectors = EmbeddingStore(store.embeddings, store.papers, model_encoder, worker_name())
    if ready is not None:
        ready.set()
    try:
        while not stop.is_set():
            try:
                done = vectors.embed_pending(stop=stop.is_set)
            except Exception:  # noqa: BLE001 - the database blinked: look again after a pause
                log.exception("embedding papers failed; trying again")
                done = 0
            if done == 0:
                stop.wait(every)
    finally:
        store.close()
    return vectors.embedded
