"""Drawing weekly pictures in a child process, so the bot's own process stays free to answer.

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
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.weekly.stats import WeeklyStats

log = logging.getLogger(__name__)

#: How much lower than the bot the drawing process runs (nice(2) increment).
NICENESS = 10


def draw_here(stats: WeeklyStats, title: str) -> bytes:
    """Draw in this process (one-shot commands: a child would cost more than it saves)."""
    from digest.weekly.chart import draw  # matplotlib loads here, and only here

    return draw(stats, title)


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
