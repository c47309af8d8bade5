"""A running bot's index upkeep, off its answers: a refresher thread and an embedding process.

The refresher keeps the served index in step with the store (digest/index/lifecycle.py does one
round; a refit that falls due runs on a thread of its own, so rounds go on appending new papers
meanwhile). Embedding is CPU work in ONNX and Python: it runs in one worker process at a lower
priority, as the weekly pictures are drawn (bot/runtime/background.py), never in the process whose
event loop answers commands. The worker claims papers lacking a vector in the database, so any
number of replicas' workers (and a one-shot `digestbot ingest`) embed each paper once.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from digest.index.embeddings import ModelConfig
    from digest.index.lifecycle import IndexStore

log = logging.getLogger(__name__)

#: Seconds between a running bot's looks for papers stored since its index (by any process).
REFRESH_SECONDS = 10.0
#: Seconds the embedding worker waits before looking again when nothing was left to embed.
EMBED_POLL_SECONDS = 5.0
#: How much lower than the bot the embedding process runs (nice(2) increment).
NICENESS = 10


class IndexRefresher:
    """Refreshes an IndexStore every ``every`` seconds on a thread, and refits behind it."""

    def __init__(self, indexes: IndexStore, every: float = REFRESH_SECONDS) -> None:
        self.indexes = indexes
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.refitter: threading.Thread | None = None

    def start(self) -> None:
        """From now on answers come from the last complete index; the first round loads the
        stored index (or fits one) at once."""
        self.indexes.serving = True
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()

        def loop() -> None:
            while True:
                self.round()
                if self._stop.wait(self.every):
                    return

        self._thread = threading.Thread(target=loop, name="index-refresh", daemon=True)
        self._thread.start()

    def round(self) -> None:
        """One round: refresh, and start a due refit on a thread of its own."""
        try:
            self.indexes.refresh()
            busy = self.refitter is not None and self.refitter.is_alive()
            if not busy:  # a merge writes the whole index once: behind the answers too
                self.indexes.merge_if_due()
            if self.indexes.refit_due() and not busy:
                self.refitter = threading.Thread(
                    target=self._refit_quietly, name="index-refit", daemon=True
                )
                self.refitter.start()
        except Exception:  # noqa: BLE001 - a failed round leaves the served index; the next retries
            log.exception("index refresh failed; answering from the previous index")

    def _refit_quietly(self) -> None:
        try:
            self.indexes.refit_if_due()
        except Exception:  # noqa: BLE001 - the served index stays; the next round tries again
            log.exception("index refit failed; answering from the previous index")

    def stop(self) -> None:
        """Stop the rounds (a fit in progress finishes on its daemon thread)."""
        self._stop.set()


def _embed_forever(
    url: str,
    model: ModelConfig,
    stop: Any,
    every: float,
    encoder: str | None,
    niceness: int,
    ready: Any,
) -> None:
    """The worker process: at a lower priority, embed until the bot says stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the bot stops us itself (close)
    with contextlib.suppress(OSError):
        os.nice(niceness)
    from digest.index.worker import embed_until

    embed_until(url, model, stop, every, encoder, ready)


class EmbeddingWorker:
    """One niced child process that embeds the papers lacking a vector, for as long as the bot
    runs; the bot itself never runs the model on a paper."""

    def __init__(
        self,
        url: str,
        model: ModelConfig,
        every: float = EMBED_POLL_SECONDS,
        encoder: str | None = None,
        niceness: int = NICENESS,
    ) -> None:
        self.url, self.model, self.every = url, model, every
        self.encoder = encoder
        self.niceness = niceness
        # spawn, not fork: the bot has threads (a forked copy of a held lock deadlocks)
        self._ctx = multiprocessing.get_context("spawn")
        self._stop = self._ctx.Event()
        self.ready = self._ctx.Event()  # set by the worker once its model is loaded
        self.process: multiprocessing.process.BaseProcess | None = None

    def start(self) -> None:
        """Start the worker (once)."""
        if self.process is not None:
            return
        self.process = self._ctx.Process(
            target=_embed_forever,
            args=(
                self.url,
                self.model,
                self._stop,
                self.every,
                self.encoder,
                self.niceness,
                self.ready,
            ),
            name="digestbot-embed",
            daemon=True,
        )
        self.process.start()

    def close(self, timeout: float = 30.0) -> None:
        """Ask the worker to stop after its current chunk, and wait for it (then end it)."""
        if self.process is None:
            return
        self._stop.set()
        self.process.join(timeout)
        if self.process.is_alive():  # a chunk stuck in the model: what is stored stays
            self.process.terminate()
            self.process.join(5)
        self.process = None
