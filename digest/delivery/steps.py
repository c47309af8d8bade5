"""Exactly-once digest delivery, as steps around the platform posts (which the chat side performs).

claim (papers reserved; unique per channel and day; a lease on the database clock) -> plan (an
ordered list of messages, stored once) -> each message: sending -> posted -> confirmed -> posted.
Every step is fenced by the lease. A lapsed lease (crash, or a deferred retry) is taken over by
any worker, which resumes from the first unconfirmed message, asking the platform first about a
message that was being sent.
"""

from __future__ import annotations

import logging
import secrets
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from digest.delivery.backlog import compose_digest
from digest.delivery.mentioned import mark
from digest.models import Channel, DeliveryKind, DeliveryState
from digest.rank.profile import profile_of
from digest.store.deliveries import Delivery, ItemClaim, Lease
from digest.store.ledger import CONFIRMED, SENDING, PlannedMessage, Step

__all__ = ["BACKOFF", "Claim", "Deliveries", "PlannedMessage", "describe", "new_instance_id"]

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # composing loads the ranker; `channels` and `list` only read states
    from digest.delivery.compose import Digest
    from digest.papers.service import PaperService

#: Waits between attempts after transient failures (seconds): 1, 5, 15, then 60 minutes.
BACKOFF = (60.0, 300.0, 900.0, 3600.0)
#: Key (with the delivery id) of the platform's newest message in a channel no digest had posted
#: to, read before its first message was posted: that lookup's bound on the platform's clock.
FIRST_BOUND = "first-bound:"


def new_instance_id() -> str:
    """A fresh id per process: host names and PIDs repeat across container restarts."""
    return f"{socket.gethostname()[:40]}-{secrets.token_hex(8)}"


@dataclass(frozen=True)
class Claim:
    """A digest this worker holds (``lease``) and must now post."""

    delivery: Delivery
    digest: Digest
    lease: Lease
    #: A claim this process just took in a tick (digest/delivery/tick.py): when (``time.monotonic``),
    #: its stored plan, and the reply it was rendered from; nothing of it was posted yet.
    fresh: float | None = None
    plan: tuple[PlannedMessage, ...] | None = None
    reply: Any = None

    @property
    def key(self) -> str:
        """Stable key (same across retries and processes): ``digest-…`` or ``weekly-…``."""
        d = self.delivery
        return f"{d.kind.value}-{d.channel_id}-{d.digest_date.isoformat()}"

    @property
    def picture(self) -> bool:
        """A weekly picture (one image message, no papers), not a digest."""
        return self.delivery.kind == DeliveryKind.WEEKLY

    @property
    def reading(self) -> bool:
        """A reading-group post (a poll, an announcement, a thread post), not a digest."""
        return self.delivery.kind not in (DeliveryKind.DIGEST, DeliveryKind.WEEKLY)

    def part_key(self, position: int) -> str:
        """The key of one planned message, findable on the platform."""
        return f"{self.key}#{position}"


class Deliveries:
    """The delivery protocol over the store; platform-free."""

    def __init__(
        self,
        papers: PaperService,
        worker: str,
        lease: timedelta = timedelta(minutes=2),
        grace: timedelta = timedelta(hours=12),
        backoff: tuple[float, ...] = BACKOFF,
    ) -> None:
        self.papers = papers
        self.store = papers.store
        self.worker = worker
        self.lease_s = lease.total_seconds()
        self.catchup_grace = grace  # how long a missed digest is still sent (and retried)
        self.grace_s = grace.total_seconds()
        self.backoff = backoff

    def claim(self, channel: Channel, day: date) -> Claim | None:
        """Compose and reserve the day's digest; None if another worker (or an earlier run) has it."""
        existing = self.store.deliveries.for_day(channel.id, day)
        if existing is not None and not self.store.deliveries.reopen(channel.id, day):
            return None
        upto = self.store.papers.max_seq()  # read first: everything up to here is committed
        digest = compose_digest(self, channel, day, upto)  # new papers, then the backlog
        # Mentions are fixed now, with the claim: a retry or take-over posts these, and an
        # opt-out counts from the next digest composed.
        digest = mark(self.store, self.papers.ranker(covering=upto), [digest])[0]
        items = [ItemClaim(i.paper.id, i.rank, i.score, i.why, i.mentions) for i in digest.items]
        delivery = self.store.deliveries.claim(
            channel.id,
            day,
            self.worker,
            items,
            digest.near_misses,
            quiet=channel.quiet_when_empty,
            upto_seq=upto,
            lease_s=self.lease_s,
            grace_s=self.grace_s,
        )
        return Claim(delivery, digest, delivery.lease) if delivery is not None else None

    def claim_picture(self, channel: Channel, week: date) -> Claim | None:
        """Reserve a channel's weekly picture for ``week`` (its Monday): a delivery with one
        planned message and no papers; None if another worker (or an earlier run) has it."""
        delivery = self.store.deliveries.claim(
            channel.id,
            week,
            self.worker,
            [],
            lease_s=self.lease_s,
            grace_s=self.grace_s,
            kind=DeliveryKind.WEEKLY,
        )
        if delivery is None:
            return None
        return Claim(delivery, self.rebuild(delivery), delivery.lease)

    def claim_post(self, channel: Channel, day: date, kind: DeliveryKind) -> Claim | None:
        """Reserve a reading-group post of ``kind`` for the meeting on ``day``: a delivery of
        one planned message and no papers, like a picture; None if another worker has it."""
        delivery = self.store.deliveries.claim(
            channel.id, day, self.worker, [], lease_s=self.lease_s, grace_s=self.grace_s, kind=kind
        )
        if delivery is None:
            return None
        return Claim(delivery, self.rebuild(delivery), delivery.lease)

    def take_over(
        self, platforms: set[str] | None = None, kinds: set[DeliveryKind] | None = None
    ) -> list[Claim]:
        """Unfinished deliveries (of ``kinds``: all when None) whose lease lapsed (crashed
        owner, or a retry now due); now ours."""
        out = []
        for delivery_id in self.store.deliveries.expired(platforms, kinds):
            lease = self.store.deliveries.take_over(delivery_id, self.worker, self.lease_s)
            if lease is None or (fresh := self.store.deliveries.get(delivery_id)) is None:
                continue
            try:
                out.append(Claim(fresh, self.rebuild(fresh), lease))
            except Exception as exc:  # noqa: BLE001 - one broken claim must not hold up the others
                log.exception("digest %s cannot be resumed", delivery_id)
                why = f"not sent because of an internal error ({type(exc).__name__}: {exc})"
                self.store.ledger.fail(lease, why[:300])
        return out

    def rebuild(self, d: Delivery) -> Digest:
        """The digest of a stored claim, exactly as it was composed (same papers, order, reasons)."""
        from digest.delivery.compose import Digest, DigestItem, interests

        channel = self.store.channels.by_id(d.channel_id)
        if d.kind != DeliveryKind.DIGEST and channel is not None:  # no papers: made when sent
            return Digest(channel, d.digest_date, (), ())
        subs = self.store.channels.subscriptions(channel.id)
        profile = profile_of(subs, self.store.channels.feedback_totals(channel.id))
        wanted = [i.paper_id for i in d.items] + list(profile.likes)  # likes: the footer's titles
        papers = self.store.papers.get_many(wanted)
        items = tuple(
            DigestItem(i.rank, papers[i.paper_id], i.score, i.why, i.mentions)
            for i in d.items
            if i.paper_id in papers
        )
        return Digest(
            channel, d.digest_date, interests(profile, papers), items, near_misses=d.near_misses
        )

    def plan(
        self, claim: Claim, parts: list[tuple[str, ...]], rendered: str | None = None
    ) -> list[PlannedMessage] | None:
        """The stored plan (made from ``parts`` and ``rendered`` the first time); None if the
        lease is lost."""
        if not self.store.ledger.plan(claim.lease, parts, self.lease_s, rendered):
            return None
        return self.store.ledger.messages(claim.delivery.id)

    def rendered(self, claim: Claim) -> str | None:
        """What the plan was made from: a retry renders exactly this, not today's settings."""
        return self.store.ledger.rendered(claim.delivery.id)

    def first_bound(self, claim: Claim) -> str | None:
        """The platform's reference of the channel's newest message, read before this digest's
        first message was posted to a channel no digest had posted to ('': the channel was
        empty); None when none was kept."""
        return self.store.kv.get(f"{FIRST_BOUND}{claim.delivery.id}")

    def keep_first_bound(self, claim: Claim, ref: str) -> None:
        """Keep ``first_bound`` before posting the first message (see DigestRunner)."""
        self.store.kv.set(f"{FIRST_BOUND}{claim.delivery.id}", ref)

    def earlier_ref(self, claim: Claim) -> str | None:
        """A message the platform stored before this digest began (an earlier digest's last)."""
        return self.store.ledger.earlier_ref(claim.delivery.channel_id, claim.delivery.id)

    def renew(self, claim: Claim) -> bool:
        """Keep the lease while a post is in flight; False once another worker holds it."""
        return self.store.deliveries.renew(claim.lease, self.lease_s)

    def sending(self, claim: Claim, position: int) -> bool:
        """About to post a message: from now on a retry must ask the platform first."""
        return self.store.ledger.mark(claim.lease, position, SENDING, self.lease_s)

    def confirm(self, claim: Claim, position: int, message_ref: str) -> bool:
        """The platform has this message: its papers are delivered."""
        return self.store.ledger.mark(claim.lease, position, CONFIRMED, self.lease_s, message_ref)

    def steps(self, steps: Sequence[tuple[Claim, int, str, int | None, bool]]) -> list[bool]:
        """Confirm messages of many digests, ``(claim, position, message_ref, then, finish)``
        each, in one transaction (group commit): each confirmation marks the digest's next message
        (``then``) sending, or ``finish``es it, in the same write. Each answer, given after the
        commit: False once another worker holds that digest (or, to finish, a message is open)."""
        return self.store.ledger.steps(
            [Step(c.lease, pos, ref, then, finish) for c, pos, ref, then, finish in steps],
            self.lease_s,
        )

    def finish(self, claim: Claim) -> bool:
        """Every message confirmed: the digest is posted."""
        return self.store.ledger.finish(claim.lease)

    def retry_later(self, claim: Claim, error: str, at_least: float = 0.0) -> datetime | None:
        """Defer after a transient failure; when the retry is due, or None once past the grace."""
        delay = max(at_least, self.backoff[min(claim.delivery.attempts, len(self.backoff) - 1)])
        if not self.store.deliveries.defer(claim.lease, error, delay):
            return None
        fresh = self.store.deliveries.get(claim.delivery.id)
        return fresh.retry_at if fresh is not None else None

    def nothing_to_send(self, claim: Claim) -> bool:
        """Settle a claim with nothing to send (a picture of empty weeks): empty, not posted."""
        return self.store.deliveries.nothing_to_send(claim.lease)

    def fail(self, claim: Claim, reason: str) -> bool:
        """Give up (payload rejected, channel gone, grace over); unposted papers go back."""
        return self.store.ledger.fail(claim.lease, reason)

    def for_day(self, channel_id: int, day: date) -> Delivery | None:
        """The channel's digest for ``day`` as stored now (one snapshot), or None."""
        return self.store.deliveries.for_day(channel_id, day)

    def describe(self, d: Delivery | None) -> str:
        """What a stored digest's state means, in the words replies use (see ``describe``)."""
        return describe(d, self.store.ledger.messages)

    def lapsed(self, d: Delivery) -> bool:
        """Its owner's lease ran out: a sweep (``take_over``) resumes it."""
        return d.id in self.store.deliveries.expired()

    def state(self, channel_id: int, day: date) -> str:
        """The true state of a channel's digest for ``day``, for replies and `digestbot channels`."""
        return describe(self.store.deliveries.for_day(channel_id, day), self.store.ledger.messages)


#: How a platform's "429 Too Many Requests" is recorded and said: in words, with no code.
SLOW_DOWN = "asked us to slow down"


def slow_down(platform: str) -> str:
    """The reason recorded when ``platform`` rate-limited a post ("Discord asked us to slow down")."""
    return f"{platform.capitalize()} {SLOW_DOWN}"


def retrying(when: datetime, reason: str) -> str:
    """'retrying at 09:00 UTC after Slack error 500', or for a rate limit 'Discord asked us to
    slow down; retrying at 04:08 UTC' (nothing went wrong that a person needs to read about)."""
    if reason.endswith(SLOW_DOWN):
        return f"{reason}; retrying at {when:%H:%M} UTC"
    return f"retrying at {when:%H:%M} UTC after {reason}"


def describe(d: Delivery | None, messages=None) -> str:  # noqa: ANN001 - a ledger lookup
    """One line a user can trust: delivered, retrying (when and why), sending, failed, or none."""
    if d is None:
        return "not delivered yet"
    if d.status == DeliveryState.POSTED:
        return "already delivered"
    if d.status == DeliveryState.EMPTY:
        return "nothing new (quiet day)"
    if d.status == DeliveryState.FAILED and not d.items:
        return f"not delivered: {d.last_error}"
    if d.status == DeliveryState.FAILED:
        return f"partly delivered, then stopped: {d.last_error}"
    if d.retry_at is not None and d.last_error:
        return retrying(d.retry_at, d.last_error)
    planned = messages(d.id) if messages else []
    done = sum(m.status == CONFIRMED for m in planned)
    if d.status == DeliveryState.CLAIMED and not planned:
        return "being prepared"
    return f"being sent ({done} of {len(planned)} messages confirmed)"
