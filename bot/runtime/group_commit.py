"""Group commit: the ledger writes of many posting digests, written together in one transaction.

Each confirmation waits for a commit (on PostgreSQL a WAL flush, ~30 ms under load), and a
digest posts its next message only after its previous confirmation is durable
(docs/reliability.md). Written one transaction each, 64 digests in flight queue for the
database; here every item that arrives while a batch is being written goes into the next one,
so one commit (and a few statements) serves them all, and each caller is answered only after
the commit that holds its own item.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from weakref import WeakKeyDictionary

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class _Queue:
    """One event loop's items waiting for a batch, and its batches in flight."""

    pending: list[tuple[Any, asyncio.Future]] = field(default_factory=list)
    running: int = 0
    tasks: set[asyncio.Task[None]] = field(default_factory=set)


class GroupCommit(Generic[T, R]):
    """Calls ``write`` (in a worker thread) with every item submitted meanwhile; ``write``
    returns one answer per item, in order, once the items are durable."""

    def __init__(
        self, write: Callable[[Sequence[T]], Sequence[R]], batches: int = 2, most: int = 256
    ) -> None:
        self.write = write
        # Batches in flight at once: while one commits, the next gathers (and its Python work
        # overlaps the other's wait for the server); each holds one pooled connection.
        self.batches = max(1, batches)
        self.most = max(1, most)  # items a transaction at most
        # Per event loop (each has its own futures and tasks; tests run one per asyncio.run).
        self._queues: WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue] = WeakKeyDictionary()

    async def submit(self, item: T) -> R:
        """Write ``item`` with whatever else is waiting; its answer once committed."""
        loop = asyncio.get_running_loop()
        queue = self._queues.get(loop) or self._queues.setdefault(loop, _Queue())
        future: asyncio.Future[R] = loop.create_future()
        queue.pending.append((item, future))
        if queue.running < self.batches:
            queue.running += 1
            task = loop.create_task(self._flush(queue))
            queue.tasks.add(task)
            task.add_done_callback(queue.tasks.discard)
        return await future

    async def _flush(self, queue: _Queue) -> None:
        """Write what is pending, batch after batch, until nothing is."""
        try:
            while queue.pending:
                batch, queue.pending = queue.pending[: self.most], queue.pending[self.most :]
                try:
                    answers = await asyncio.to_thread(self._write, [i for i, _ in batch])
                except BaseException:  # cancelled (the loop is shutting down), or worse:
                    for _, future in batch:  # no caller is left waiting for ever
                        future.cancel()
                    raise
                for (_, future), (ok, answer) in zip(batch, answers, strict=True):
                    if future.done():  # its caller was cancelled meanwhile
                        continue
                    if ok:
                        future.set_result(answer)
                    else:
                        future.set_exception(answer)
        finally:
            queue.running -= 1

    def _write(self, items: list[T]) -> list[tuple[bool, object]]:
        """The batch in one call; if it fails, each item alone, so one item's error (or a
        deadlock between processes) reaches only the callers it concerns. Trying an item again
        is safe: a failed transaction wrote nothing, and a step written twice changes nothing
        the first did not (a confirmed message stays confirmed)."""
        try:
            return [(True, a) for a in self._answers(items)]
        except Exception as exc:  # noqa: BLE001 - handed to the callers, each for its own item
            if len(items) == 1:
                return [(False, exc)]
            log.warning(
                "a group of %d ledger writes failed (%s); writing each alone", len(items), exc
            )
        out: list[tuple[bool, object]] = []
        for item in items:
            try:
                out.append((True, self._answers([item])[0]))
            except Exception as exc:  # noqa: BLE001 - as above
                out.append((False, exc))
        return out

    def _answers(self, items: list[T]) -> list[R]:
        answers = list(self.write(items))
        if len(answers) != len(items):
            raise RuntimeError(f"{len(answers)} answers for {len(items)} ledger writes")
        return answers
