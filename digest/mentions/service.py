"""Mentions on a channel's digest: who opted in, which pick fits each of them best.

Privacy: a mention says only that a pick fits a member's own digest. Their profile is read to
score the digest's picks and nothing of it (topics, authors, liked papers, the why-line their
profile would give) is put in the digest; the one place it is said is `why`, privately, to that
member (``explain``).

Cost: a channel's members are scored against that digest's few picks only, through the one
ranker (digest/rank), never against the corpus; a tick reads every due channel's members and
their profiles in a few statements (``MentionRepo.members``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from digest.errors import DigestError
from digest.models import Channel, SubscriptionKind
from digest.rank.profile import Profile, profile_of

if TYPE_CHECKING:
    from digest.channels.service import ChannelService
    from digest.rank.results import Picks
    from digest.store import Store

#: What gives a personal digest something to fit: its followed topics, authors and papers.
#: At most this many people are mentioned in one digest, the best-fitting kept: Discord pings at
#: most 100 users a message (allowed_mentions) and Slack's blocks hold about as many tokens, so
#: a larger crowd would be stored as mentioned but not pinged (and `why` would say otherwise).
MAX_PER_DIGEST = 80

INTERESTS = (SubscriptionKind.TOPIC, SubscriptionKind.AUTHOR, SubscriptionKind.LIKE)

NO_INTERESTS = (
    "Mentions need your own interests first: `/papers me subscribe <topic>` (or "
    "`/papers me import` your library), then `/papers me mention on` here again."
)
NOT_HERE = (
    "Run `/papers me mention on` (or `off`) in the channel where you want to be mentioned, "
    "not in a direct message."
)
NO_DIGEST = "This channel has no digest yet, so there is nothing to be mentioned on."


class Scorer(Protocol):
    """What scoring needs of the one ranker (digest/rank/ranker.py; a tick's shared one too)."""

    def rank(
        self,
        p: Profile,
        candidate_ids: list[str],
        size: int = 5,
        threshold: float = 0.3,
        diversity: float = 0.3,
    ) -> Picks: ...


@dataclass(frozen=True)
class Member:
    """An opted-in member as scoring sees them: their id, profile and own threshold."""

    user: str
    profile: Profile
    threshold: float


def members_of(store: Store, channel_ids: Sequence[int]) -> dict[int, list[Member]]:
    """The opted-in members of each channel (a personal digest has none), read in bulk."""
    reads = store.mentions.members(channel_ids)
    return {
        cid: [
            Member(
                o.user,
                profile_of(
                    reads.subscriptions.get(o.personal_id, ()), reads.totals.get(o.personal_id, {})
                ),
                o.threshold,
            )
            for o in optins
        ]
        for cid, optins in reads.optins.items()
    }


def best_fits(ranker: Scorer, members: Sequence[Member], paper_ids: list[str]) -> dict[str, str]:
    """Each member's one best-fitting paper among ``paper_ids`` above their own threshold:
    user -> paper id (a member nothing fits is left out); at most ``MAX_PER_DIGEST`` members,
    those whose fit scores highest."""
    out: dict[str, str] = {}
    best: dict[str, float] = {}
    if not paper_ids:
        return out
    order = {pid: n for n, pid in enumerate(paper_ids)}
    for m in members:
        if m.user in out or m.profile.is_empty():
            continue
        # A paper the member voted down in their own digest never fits it (that digest never
        # sends a paper voted on): no ping on a pick they said they do not want.
        down = {pid for pid, v in m.profile.votes if v < 0}
        picks = ranker.rank(
            m.profile, paper_ids, size=len(paper_ids), threshold=m.threshold, diversity=0.0
        )
        hits = [
            h
            for h in picks.hits
            if h.score >= m.threshold and h.paper_id in order and h.paper_id not in down
        ]
        if hits:  # the best score; on a tie, the pick shown first
            top = min(hits, key=lambda h: (-h.score, order[h.paper_id]))
            out[m.user], best[m.user] = top.paper_id, top.score
    if len(out) > MAX_PER_DIGEST:
        keep = sorted(out, key=lambda u: -best[u])[:MAX_PER_DIGEST]
        out = {u: out[u] for u in keep}
    return out


@dataclass(frozen=True)
class Fit:
    """Why a pick mentioned you: its score and reason by your own digest's profile."""

    score: float
    threshold: float
    why: str


class Mentions:
    """`/papers me mention`: opting in and out per channel, and `why` for the person mentioned."""

    def __init__(self, channels: ChannelService) -> None:
        self.channels = channels
        self.store = channels.store

    @classmethod
    def over(cls, channels: ChannelService) -> Mentions:
        """The service over the channel service's store."""
        return cls(channels)

    def _personal(self, personal: Channel | None) -> Channel:
        """The member's personal digest, which must follow something to fit anything."""
        if personal is None:
            raise DigestError(NO_INTERESTS)
        subs = self.store.channels.subscriptions(personal.id)
        if not any(s.kind in INTERESTS for s in subs):
            raise DigestError(NO_INTERESTS)
        return personal

    def _shared(self, channel: Channel | None) -> Channel:
        if channel is None:
            raise DigestError(NO_DIGEST)
        if channel.ref.personal:
            raise DigestError(NOT_HERE)
        return channel

    def turn_on(self, channel: Channel | None, user: str, personal: Channel | None) -> bool:
        """Opt ``user`` in on ``channel``; False when they already were."""
        shared, own = self._shared(channel), self._personal(personal)
        return self.store.mentions.opt_in(shared.id, user, own.id)

    def turn_off(self, channel: Channel | None, user: str) -> bool:
        """Opt ``user`` out on ``channel`` (from the next digest composed on); False when they
        were not in."""
        return self.store.mentions.opt_out(self._shared(channel).id, user)

    def is_on(self, channel: Channel | None, user: str) -> bool:
        """Whether ``user`` is opted in on ``channel``."""
        return self.store.mentions.opted_in(self._shared(channel).id, user)

    def explain(
        self, channel: Channel, user: str, paper_id: str, personal: Channel | None
    ) -> Fit | None:
        """Why ``channel``'s pick of ``paper_id`` mentioned ``user``: their own digest's score
        and reason; None when it did not mention them (anyone else learns nothing here)."""
        if user not in self.store.mentions.delivered_mentions(channel.id, paper_id):
            return None
        ranker = self.channels.papers.ranker()
        if personal is None or ranker is None:
            return Fit(0.0, 0.0, "")
        subs = self.store.channels.subscriptions(personal.id)
        profile = profile_of(subs, self.store.channels.feedback_totals(personal.id))
        picks = ranker.rank(profile, [paper_id], size=1, threshold=0.0)
        hit = picks.hits[0] if picks.hits else None
        return Fit(hit.score if hit else 0.0, personal.threshold, hit.why if hit else "")
