"""Runs digest deliveries against adapters: claim in the store, post, record; recover after crashes."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from datetime import date, timedelta

from bot.commands.replies import digest_reply
from bot.ports import Adapter, PostError
from digest.delivery import Claim, Deliveries
from digest.models import Channel, ChannelRef
from digest.store.deliveries import EMPTY, SENDING

log = logging.getLogger(__name__)


def worker_is_dead(worker: str) -> bool:
    """True for a worker id (host:pid) of this host whose process no longer exists."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isascii() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class DigestRunner:
    """Delivers each channel's digest at most once per day, through its platform's adapter."""

    def __init__(
        self,
        deliveries: Deliveries,
        adapters: dict[str, Adapter],
        on_outcome: Callable[[str, str], None] | None = None,
    ) -> None:
        self.deliveries = deliveries
        self.on_outcome = on_outcome  # (platform, outcome) -> None, e.g. a metrics counter
        self.store = deliveries.store
        self.adapters = adapters
        self.lock = asyncio.Lock()  # one claim+compose at a time per process keeps SQLite calm

    async def run_channel(self, channel_id: int, day: date) -> str:
        """Deliver ``day``'s digest for a channel; returns what happened, for logs and replies."""
        channel = await asyncio.to_thread(self.store.channels.by_id, channel_id)
        outcome = await self._run(channel, day)
        if self.on_outcome is not None and channel is not None:
            self.on_outcome(channel.ref.platform, outcome)
        log.info("digest %s", outcome, extra={"platform": channel.ref.platform if channel else "",
                 "workspace": channel.ref.workspace if channel else "", "channel": channel.ref.channel_id if channel else ""})  # fmt: skip
        return outcome

    async def _run(self, channel: Channel | None, day: date) -> str:
        if channel is None:
            return "gone"
        if channel.paused:
            return f"paused ({channel.paused_reason or 'by request'})"
        adapter = self.adapters.get(channel.ref.platform)
        if adapter is None:
            return f"no {channel.ref.platform} connection"
        async with self.lock:
            claim = await asyncio.to_thread(self.deliveries.claim, channel, day)
        if claim is None:
            return "already delivered"
        return await self.send(claim, adapter)

    async def run_now(self, ref: ChannelRef, day: date) -> str:
        """`/papers digest now`: today's digest immediately (and then not again today)."""
        channel = await asyncio.to_thread(self.store.channels.get, ref)
        return await self.run_channel(channel.id, day) if channel else "gone"

    async def send(self, claim: Claim, adapter: Adapter) -> str:
        """Post a claimed digest and record it."""
        if claim.delivery.status == EMPTY:
            return "empty (quiet)"
        ref = claim.digest.channel.ref
        if not await asyncio.to_thread(self.deliveries.begin, claim):
            return "taken over by another worker"
        try:
            posted = await adapter.post_digest(ref, digest_reply(claim.digest), claim.key)
        except PostError as exc:
            return await asyncio.to_thread(self._failed, claim, exc)
        await asyncio.to_thread(self.deliveries.finish, claim, posted.message_ref, posted.item_refs)
        return f"posted {len(claim.digest.items)} papers"

    def _failed(self, claim: Claim, exc: PostError) -> str:
        channel = claim.digest.channel
        log.warning("posting to %s failed: %s", channel.ref, exc.reason)
        if exc.permanent:
            self.store.channels.update(channel.id, paused=True, paused_reason=exc.reason)
            self.deliveries.release(claim)  # its papers go to the next digest once resumed
            return f"failed: {exc.reason} (channel paused)"
        return f"failed: {exc.reason} (will retry)"

    async def recover(self, stale_after: timedelta = timedelta(minutes=10)) -> list[str]:
        """Finish digests a crashed worker left claimed or half-sent, exactly once."""
        outcomes = []
        for claim in await asyncio.to_thread(self.deliveries.stale, stale_after, worker_is_dead):
            adapter = self.adapters.get(claim.digest.channel.ref.platform)
            if adapter is None:
                continue
            if claim.delivery.status == SENDING:
                try:
                    found = await adapter.find_posted(claim.digest.channel.ref, claim.key)
                except (
                    PostError
                ) as exc:  # unknown whether it went out: try again later, never guess
                    outcomes.append(f"unverified: {exc.reason}")
                    continue
                if found is not None:  # it did go out before the crash: just record it
                    await asyncio.to_thread(
                        self.deliveries.finish, claim, found.message_ref, found.item_refs
                    )
                    outcomes.append("recorded")
                    continue
            outcomes.append(await self.send(claim, adapter))
        return outcomes
