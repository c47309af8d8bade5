"""Work a running bot does beside its answers: drawing weekly pictures in a niced child process,
writing abstractive TL;DRs on a thread. The core (digest/) only does the work when asked; the
runtime decides where it runs.

A picture costs about 0.3 CPU-seconds of matplotlib (1.3 s for the first, with its import), most
of it Python holding the GIL. On a Monday with 10,000 channels that is most of an hour of drawing
in the process whose event loop acknowledges commands within Slack's 3 seconds. One worker
process, at a lower scheduling priority, draws instead; the bot only waits for its bytes.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

from digest.weekly.draw import draw_here

if TYPE_CHECKING:
    from digest.tldr.writer import TldrWriter
    from digest.weekly.stats import WeeklyStats

log = logging.getLogger(__name__)

#: How much lower than the bot the drawing process runs (nice(2) increment).
NICENESS = 10


def _lower_priority() -> None:
    # Ctrl-C reaches the whole process group: the bot stops the worker itself (close), so the
    # worker ignores it instead of printing a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Not allowed here: drawing at the same priority is still off the bot's GIL.
    with contextlib.suppress(OSError):
        os.nice(NICENESS)


class ProcessDrawer:
    """Draws in one worker process made on first use; a worker that died is replaced once."""

    def __init__(self, draw: Callable[[WeeklyStats, str], bytes] = draw_here) -> None:
        self._draw = draw  # module-level, so the worker can import it by name
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # spawn, not fork: the bot has threads (a forked copy of a held lock deadlocks)
                ctx = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(1, mp_context=ctx, initializer=_lower_priority)
            return self._pool

    def __call__(self, stats: WeeklyStats, title: str) -> bytes:
        """The picture's PNG, drawn by the worker (called from a thread, never the event loop)."""
        for attempt in (1, 2):
            pool = self._executor()
            try:
                return pool.submit(self._draw, stats, title).result()
            except BrokenProcessPool:  # the worker was killed (OOM, a signal): one fresh try
                log.warning("weekly picture worker died; starting another (try %d)", attempt)
                with self._lock:
                    if self._pool is pool:
                        self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
        raise RuntimeError("the weekly picture worker died twice")

    def close(self) -> None:
        """Stop the worker (if one was started)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class BackgroundTldrs:
    """A TL;DR writer whose post-ingest work runs on one thread: an ingest job returns at once."""

    def __init__(self, writer: TldrWriter) -> None:
        self.writer = writer
        self._lock = threading.Lock()
        self._pending: list[list[str]] = []
        self._worker: threading.Thread | None = None

    def after_ingest(self, ids: Iterable[str]) -> int:
        """Queue ``ids`` for the thread; 0 written now."""
        with self._lock:
            self._pending.append(list(ids))
            if self._worker is not None and self._worker.is_alive():
                return 0  # the running thread takes it after its current work
            self._worker = threading.Thread(target=self._drain, name="digestbot-tldr", daemon=True)
            self._worker.start()
        return 0

    def _drain(self) -> None:
        """The thread: each queued batch in turn until none is left."""
        while True:
            with self._lock:
                if not self._pending:
                    self._worker = None
                    return
                ids = self._pending.pop(0)
            try:
                self.writer.write(ids)
            except Exception:  # noqa: BLE001 - a digest falls back to the extractive line
                log.exception("writing TL;DRs failed")

    def wait(self, timeout: float | None = None) -> None:
        """Block until the thread has written everything queued (tests, shutdown)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
