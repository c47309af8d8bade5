"""Exactly-once digest delivery, as steps around the platform post (which the chat side performs).

claim (composed items reserved, unique per channel and day) -> sending -> posted.
A crash leaves a stale claim: one never sent is sent; one that was sending is first looked
up on the platform (by its delivery key) and only re-sent if the platform has no trace of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from digest.backlog import compose_digest
from digest.channels import ChannelService
from digest.compose import Digest, DigestItem, interests
from digest.models import Channel
from digest.store.deliveries import CLAIMED, POSTED, SENDING, Delivery, ItemClaim


@dataclass(frozen=True)
class Claim:
    """A digest this worker owns and must now post."""

    delivery: Delivery
    digest: Digest

    @property
    def key(self) -> str:
        """Stable idempotency key for the platform (same across retries and processes)."""
        return f"digest-{self.delivery.channel_id}-{self.delivery.digest_date.isoformat()}"


class Deliveries:
    """The delivery protocol over the store; platform-free."""

    def __init__(self, channels: ChannelService, worker: str) -> None:
        self.channels = channels
        self.store = channels.store
        self.worker = worker

    def claim(self, channel: Channel, day: date) -> Claim | None:
        """Compose and reserve today's digest; None if another worker (or an earlier run) has it."""
        if self.store.deliveries.for_day(channel.id, day) is not None:
            return None
        digest = compose_digest(self.channels, channel, day)  # new papers, then the backlog
        items = [ItemClaim(i.paper.id, i.rank, i.score, i.why) for i in digest.items]
        delivery = self.store.deliveries.claim(
            channel.id, day, self.worker, items, digest.near_misses, quiet=channel.quiet_when_empty
        )
        return Claim(delivery, digest) if delivery is not None else None

    def begin(self, claim: Claim) -> bool:
        """Mark the claim as being sent; False if this worker no longer owns it."""
        if claim.delivery.status == SENDING:
            return True
        return self.store.deliveries.transition(claim.delivery.id, self.worker, CLAIMED, SENDING)

    def finish(
        self, claim: Claim, message_ref: str, item_refs: dict[str, str] | None = None
    ) -> bool:
        """Record the platform's message reference; the digest is now posted."""
        for paper_id, ref in (item_refs or {}).items():
            self.store.deliveries.set_item_ref(claim.delivery.id, paper_id, ref)
        return self.store.deliveries.transition(
            claim.delivery.id, self.worker, SENDING, POSTED, message_ref
        )

    def stale(
        self, older_than: timedelta, is_dead: Callable[[str], bool] = lambda worker: False
    ) -> list[Claim]:
        """Unfinished claims whose owner went quiet for ``older_than`` or is dead; now owned by us."""
        out = []
        cutoff = datetime.now(UTC) - older_than
        for d in self.store.deliveries.unfinished():
            if d.claimed_by == self.worker:
                continue  # our own, in progress
            dead = d.claimed_by if is_dead(d.claimed_by) else None
            if self.store.deliveries.take_over(d.id, self.worker, cutoff, dead_owner=dead):
                fresh = self.store.deliveries.get(d.id)
                out.append(Claim(fresh, self.rebuild(fresh)))
        return out

    def rebuild(self, d: Delivery) -> Digest:
        """The digest of a stored claim, exactly as it was composed (same papers, order, reasons)."""
        channel = self.store.channels.by_id(d.channel_id)
        papers = self.store.papers.get_many(i.paper_id for i in d.items)
        items = tuple(
            DigestItem(i.rank, papers[i.paper_id], i.score, i.why)
            for i in d.items
            if i.paper_id in papers
        )
        profile = self.channels.profile(channel)
        return Digest(channel, d.digest_date, interests(profile), items, near_misses=d.near_misses)

    def release(self, claim: Claim) -> None:
        """Drop a claim that can never be posted (the channel is gone or forbids us)."""
        self.store.deliveries.delete(claim.delivery.id)
