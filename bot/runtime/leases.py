"""This replica's leases, kept renewed: its presence (the scheduler shares due digests out among
the live replicas) and, when Discord is sharded by lease, the shards it serves.

Every ``every`` seconds one renewal (digest/store/leases.py, the database's clock) renews what
this replica holds, takes free or lapsed shards up to its fair share and gives back any beyond
it; when the answer changes, the listeners hear the new ``Shards`` (the scheduler runs their
channels, the Discord client connects exactly them). A renewal that fails (a database blip) keeps
serving until the last lease it got would lapse, measured on this host's monotonic clock from
before it asked, then lets its shards go: by then another replica may have taken them over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Set
from typing import Protocol

from digest.models import Shards

log = logging.getLogger(__name__)
#: How long a lease lasts unless renewed (a dead replica's shards are taken over after this plus
#: at most one renewal period of the replica that takes them: within 2 minutes).
TTL = 60.0
#: How often leases are renewed (a third of the lease: two renewals may fail before it lapses).
EVERY = 20.0

Listener = Callable[[Shards], Awaitable[None]]


class Held(Protocol):
    """What a shard renewal answers (digest/store/leases.py ``ShardHold``)."""

    @property
    def ids(self) -> Set[int]: ...
    @property
    def count(self) -> int: ...


class LeaseStore(Protocol):
    """The lease repository (``Store.leases``), reached through the composition root."""

    def beat(self, worker: str, ttl: float) -> int: ...
    def shard_count(self, platform: str, default: int) -> int: ...
    def shards(self, platform: str, worker: str, count: int, ttl: float) -> Held: ...
    def leave(self, worker: str) -> None: ...


class ReplicaLeases:
    """Presence, and the shards of ``platform`` (None: presence only) this replica holds."""

    def __init__(
        self,
        repo: LeaseStore,
        worker: str,
        platform: str | None = None,
        default_count: int = 1,
        ttl: float = TTL,
        every: float = EVERY,
    ) -> None:
        self.repo, self.worker, self.platform = repo, worker, platform
        self.default_count = default_count
        self.ttl, self.every = ttl, every
        self.shards = Shards(frozenset(), default_count, platform or "discord")
        self.listeners: list[Listener] = []
        self._until = 0.0  # monotonic time our last lease lapses
        self._task: asyncio.Task | None = None

    async def renew(self) -> Shards | None:
        """One renewal; the shards held now (None: presence only)."""
        asked = time.monotonic()
        try:
            if self.platform is None:
                await asyncio.to_thread(self.repo.beat, self.worker, self.ttl)
                return None
            held = await asyncio.to_thread(self._renew_shards)
        except Exception:  # noqa: BLE001 - a database blip: keep what we hold while it lasts
            log.exception("renewing this replica's leases failed")
            if self.platform is None or time.monotonic() < self._until:
                return self.shards if self.platform else None
            held = Shards(frozenset(), self.shards.count, self.platform)
        else:
            self._until = asked + self.ttl
        if held != self.shards:
            was, self.shards = self.shards, held
            log.info(
                "%s shards %s of %d now served here (were %s)",
                self.platform,
                sorted(held.ids),
                held.count,
                sorted(was.ids),
                extra={"platform": self.platform},
            )
            for listener in self.listeners:
                try:
                    await listener(held)
                except Exception:  # noqa: BLE001 - one listener failing must not stop the others
                    log.exception("applying the new shards failed")
        return held

    def _renew_shards(self) -> Shards:
        assert self.platform is not None
        count = self.repo.shard_count(self.platform, self.default_count)
        hold = self.repo.shards(self.platform, self.worker, count, self.ttl)
        return Shards(frozenset(hold.ids), hold.count, self.platform)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            await self.renew()

    def start(self) -> None:
        """Renew every ``every`` seconds in the running event loop (after a first ``renew``)."""
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="leases")

    async def stop(self) -> None:
        """Stop renewing and give everything back at once (a clean stop: no wait for a lapse)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            await asyncio.to_thread(self.repo.leave, self.worker)
        except Exception:  # noqa: BLE001 - stopping anyway: the leases lapse on their own
            log.exception("giving back this replica's leases failed")
