"""A scheduler tick's use cases: the due channels, their digests composed and claimed in bulk,
their next due times moved on; what the scheduler asks instead of reaching the store.

Claiming 10,000 due channels one by one costs ~30 statements each; here the rows composing
needs are read for all of them in a few statements, the ranker is asked once per distinct
question (channels following the same topics, with the same history, share one ranking), and
the claims (with their plans) are taken in one transaction. The delivery rules are those of
digest/delivery/steps.py: the database decides, once, who posts each (channel, day).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from digest.delivery.backlog import Reads, Source, assemble, choose, profile_of
from digest.delivery.mentioned import mark
from digest.delivery.steps import Claim, Deliveries
from digest.models import Channel, DeliveryState
from digest.store.batch import CHUNK, ChannelReads, NewClaim, chunks
from digest.store.deliveries import Delivery, ItemClaim
from digest.store.ledger import PLANNED, SENDING, PlannedMessage

if TYPE_CHECKING:
    from digest.delivery.compose import Digest
    from digest.rank.profile import Profile
    from digest.rank.ranker import Ranker
    from digest.rank.results import Picks
    from digest.store import Store
    from digest.store.channels import Shards

__all__ = ["CHUNK", "Render", "Ticks", "chunks"]

log = logging.getLogger(__name__)

#: What the chat side makes of a digest before it is claimed: the messages' papers, the
#: rendering stored with the plan, and the reply itself (kept with the claim, not re-read).
Render = Callable[["Digest"], tuple[list[tuple[str, ...]], str | None, Any]]


class _SharedRanker:
    """The tick's ranker, asked once per distinct question: channels with the same profile,
    candidates and settings get the same picks (Picks are immutable)."""

    def __init__(self, ranker: Ranker) -> None:
        self.ranker = ranker
        self.answers: dict[tuple, Picks] = {}

    def rank(
        self,
        p: Profile,
        candidate_ids: list[str],
        size: int = 5,
        threshold: float = 0.3,
        diversity: float = 0.3,
    ) -> Picks:
        key = (p, tuple(candidate_ids), size, threshold, diversity)
        if (found := self.answers.get(key)) is None:
            found = self.answers[key] = self.ranker.rank(
                p, candidate_ids, size, threshold, diversity
            )
        return found


class BulkSource(Source):
    """Composing's reads answered from rows read for every due channel at once."""

    def __init__(self, deliveries: Deliveries, rows: ChannelReads, upto: int) -> None:
        super().__init__(deliveries)
        self.rows = rows
        ranker = self.service.papers.ranker(covering=upto)
        self.shared = _SharedRanker(ranker) if ranker is not None else None
        self._between: dict[tuple[int, int], list[str]] = {}
        self._recent: list[str] = []
        self._recent_all = False
        self._papers: dict = {}
        self._profiles: dict[int, Profile] = {}

    def profile(self, channel_id: int) -> Profile:
        """A channel's profile, from the bulk rows (made once: the tick asks twice)."""
        if (found := self._profiles.get(channel_id)) is None:
            found = self._profiles[channel_id] = profile_of(
                self.rows.subscriptions.get(channel_id, ()), self.rows.totals.get(channel_id, {})
            )
        return found

    def reads(self, channel: Channel) -> Reads:
        totals = self.rows.totals.get(channel.id, {})
        delivered = frozenset(self.rows.delivered.get(channel.id, ()))
        return Reads(self.profile(channel.id), delivered, frozenset(totals))

    def ranker(self, covering: int | None) -> Any:
        return self.shared

    def last_upto(self, channel_id: int) -> int:
        return self.rows.last_upto.get(channel_id, 0)

    def ids_between(self, after: int, upto: int) -> list[str]:
        if (after, upto) not in self._between:
            self._between[after, upto] = self.store.papers.ids_between(after, upto, news=True)
        return self._between[after, upto]

    def recent_ids(self, limit: int) -> list[str]:
        # One read serves every channel: the longest asked for so far, doubled when outgrown.
        if limit > len(self._recent) and not self._recent_all:
            want = max(limit, 2 * len(self._recent))
            self._recent = self.store.papers.recent_ids(want, news=True)
            self._recent_all = len(self._recent) < want
        return self._recent[:limit]

    def load(self, ids: Iterable[str]) -> None:
        """Read the papers of many digests at once (before ``get_many`` is asked)."""
        missing = [i for i in dict.fromkeys(ids) if i not in self._papers]
        if missing:
            self._papers.update(self.store.papers.get_many(missing))

    def get_many(self, ids: Iterable[str]) -> dict:
        self.load(ids)
        return {i: self._papers[i] for i in ids if i in self._papers}


class Ticks:
    """The scheduler's side of the store, through the delivery service."""

    def __init__(self, deliveries: Deliveries) -> None:
        self.deliveries = deliveries

    @property
    def store(self) -> Store:
        """The store behind the delivery service."""
        return self.deliveries.store

    def due(
        self, now: datetime, platforms: set[str], shards: Shards | None = None
    ) -> list[tuple[Channel, datetime]]:
        """Active channels whose next due time has come, with the mark read (one statement)."""
        return self.store.channels.due(now, platforms, shards)

    def count_due(self, now: datetime, platforms: set[str], shards: Shards | None = None) -> int:
        """How many active channels of these platforms and shards are due (one statement)."""
        return self.store.channels.count_due(now, platforms, shards)

    def take(
        self,
        now: datetime,
        platforms: set[str],
        limit: int,
        hold: datetime,
        shards: Shards | None = None,
    ) -> list[tuple[Channel, datetime]]:
        """Up to ``limit`` due channels, taken from the other replicas' reach until ``hold``
        (see ``ChannelRepo.take``), with the mark ``advance`` compares against."""
        return self.store.channels.take(now, platforms, limit, hold, shards)

    def live(self) -> int:
        """How many replicas are running now (their presence leases unlapsed; at least 1)."""
        return self.store.leases.live()

    def next_due_time(self, platforms: set[str], shards: Shards | None = None) -> datetime | None:
        """The earliest next due time of an active channel of these platforms and shards."""
        return self.store.channels.next_due_time(platforms, shards)

    def channel(self, channel_id: int) -> Channel | None:
        """A channel by id (None: removed)."""
        return self.store.channels.by_id(channel_id)

    def advance(self, moves: Sequence[tuple[int, datetime, datetime]]) -> int:
        """Move each channel's next due time ``(id, seen, to)`` unless a settings change marked
        it since ``seen`` was read; one statement a chunk."""
        return self.store.batch.advance(moves)

    def claim(self, due: Sequence[tuple[Channel, date]], render: Render) -> dict[int, Claim]:
        """Compose and claim the digests of ``due`` channels in bulk; the claims we got, by
        channel id. Not claimed (and not in the answer): a day that already has a digest (any
        state), a channel that follows nothing, a claim another process took first."""
        if not due:
            return {}
        started = time.monotonic()
        upto = self.store.papers.max_seq()  # read first: everything up to here is committed
        rows = self.store.batch.reads([c.id for c, _ in due], {d for _, d in due})
        src = BulkSource(self.deliveries, rows, upto)
        todo = [
            (c, d)
            for c, d in due
            if (c.id, d) not in rows.existing and not src.profile(c.id).is_empty()
        ]
        chosen = [(choose(self.deliveries, c, upto, src), d) for c, d in todo]
        named = [(ch, d, ch.paper_ids + list(ch.state.profile.likes)) for ch, d in chosen]
        src.load(pid for _, _, ids in named for pid in ids)  # followed ones: the footer's titles
        liked = src.liked_in(pid for ch, _ in chosen for pid in ch.paper_ids)  # one read: marks
        digests = [assemble(ch, d, src.get_many(ids), liked) for ch, d, ids in named]
        # who should read each: every due channel's opted-in members read at once, each scored
        # against its digest's picks only, through the tick's one ranker
        digests = mark(self.store, src.shared, digests)
        made: list[tuple[Digest, NewClaim, Any]] = []
        for digest in digests:
            try:
                parts, rendered, reply = render(digest)
            except Exception:  # noqa: BLE001 - one digest that cannot be rendered must not
                # hold up the others; it is not claimed, and the next sweep tries it again
                log.exception("digest for %s could not be rendered", digest.channel.ref)
                continue
            made.append((digest, _new_claim(digest, upto, parts, rendered), reply))
        d = self.deliveries
        taken = self.store.batch.claim([n for _, n, _ in made], d.worker, d.lease_s, d.grace_s)
        out: dict[int, Claim] = {}
        for digest, new, reply in made:
            if (got := taken.get(new.channel_id)) is None:
                continue
            delivery = Delivery(
                id=got.delivery_id,
                channel_id=new.channel_id,
                digest_date=new.day,
                status=DeliveryState(got.status),
                claimed_by=d.worker,
                claimed_at=got.claimed_at,
                message_ref=None,
                near_misses=new.near_misses,
                items=new.items,
                upto_seq=upto,
            )
            plan = tuple(
                PlannedMessage(n, ids, SENDING if n == 0 else PLANNED, None)
                for n, ids in enumerate(new.parts)
            )
            out[new.channel_id] = Claim(
                delivery, digest, delivery.lease, fresh=started, plan=plan, reply=reply
            )
        return out


def _new_claim(
    digest: Digest, upto: int, parts: list[tuple[str, ...]], rendered: str | None
) -> NewClaim:
    items = tuple(ItemClaim(i.paper.id, i.rank, i.score, i.why, i.mentions) for i in digest.items)
    return NewClaim(
        channel_id=digest.channel.id,
        day=digest.day,
        items=items,
        near_misses=digest.near_misses,
        quiet=digest.channel.quiet_when_empty,
        upto_seq=upto,
        parts=tuple(tuple(p) for p in parts),
        rendered=rendered,
    )
