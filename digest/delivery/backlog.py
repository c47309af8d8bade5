"""A channel's backlog: unposted papers above its threshold, sent after the day's new ones.

A digest first takes the papers new since the channel's last digest; free slots are then filled
from the backlog (best first), unless the channel turned it off (`option backlog off`). The same
queue answers `why`: whether a paper would be sent, and roughly when.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from digest.delivery.due import overdue_note, upcoming
from digest.models import Channel, LikedIn, Paper
from digest.rank.profile import Profile, profile_of
from digest.rank.results import NO_MATCH

# Composing and ranking load when a digest is composed: a listing reads profiles only.
if TYPE_CHECKING:
    from digest.delivery.compose import Digest
    from digest.papers.service import PaperService
    from digest.rank.ranker import Picks, Ranker
    from digest.store import Store

#: How many digests ahead `why` looks before saying "not soon".
HORIZON = 10
#: The backlog is drawn from this many most recently stored unsent papers, so its cost per channel
#: does not grow with the store (warm, at 10k papers: 5.4 ms for all of them, 2.1 ms for 2,000).
BACKLOG_POOL = 2000


@dataclass(frozen=True)
class Reads:
    """What ranking papers for a channel needs from the store, each read once per digest."""

    profile: Profile
    delivered: frozenset[str]
    voted: frozenset[str]  # a net vote of 0 (one 👍, one 👎) still counts as seen

    @cached_property  # asked twice a digest (new papers, then the backlog)
    def seen(self) -> frozenset[str]:
        """Sent, voted on, or followed as `like:` (the channel's own example): never offered."""
        return self.delivered | self.voted | frozenset(self.profile.likes)


class Composer(Protocol):
    """What composing reads from: the store, the papers (their ranker) and the catch-up grace
    window. Deliveries is one; so is the channel service (previews)."""

    store: Store
    papers: PaperService
    catchup_grace: timedelta


def reads(service: Composer, channel: Channel) -> Reads:
    """The channel's profile, papers sent and papers voted on: one query each."""
    subs = service.store.channels.subscriptions(channel.id)
    totals = service.store.channels.feedback_totals(channel.id)
    delivered = service.store.deliveries.delivered_paper_ids(channel.id)
    return Reads(profile_of(subs, totals), frozenset(delivered), frozenset(totals))


class Source:
    """Where composing reads its rows: the store, a few queries per channel. A scheduler tick
    uses one that answers many channels from rows read in bulk (digest/delivery/tick.py)."""

    def __init__(self, service: Composer) -> None:
        self.service = service
        self.store = service.store

    def reads(self, channel: Channel) -> Reads:
        """The channel's profile, papers sent and papers voted on."""
        return reads(self.service, channel)

    def ranker(self, covering: int | None) -> Ranker | None:
        """The ranker over an index holding every paper up to ``covering``."""
        return self.service.papers.ranker(covering=covering)

    def last_upto(self, channel_id: int) -> int:
        """The ingest sequence the channel's digests considered up to."""
        return self.store.deliveries.last_upto(channel_id)

    def ids_between(self, after: int, upto: int) -> list[str]:
        """Papers with an ingest sequence in (after, upto], news only (not library papers)."""
        return self.store.papers.ids_between(after, upto, news=True)

    def recent_ids(self, limit: int) -> list[str]:
        """The ``limit`` most recently stored news papers, newest first."""
        return self.store.papers.recent_ids(limit, news=True)

    def liked_in(self, paper_ids: Iterable[str]) -> list[LikedIn]:
        """The shared channels' 👍 of ``paper_ids`` (for the digest marks)."""
        return self.store.channels.liked_in(paper_ids)

    def get_many(self, ids: Iterable[str]) -> dict[str, Paper]:
        """Papers by id."""
        return self.store.papers.get_many(ids)


def candidates(
    service: Composer,
    channel: Channel,
    seen: frozenset[str],
    upto: int | None = None,
    src: Source | None = None,
) -> list[str]:
    """Papers ingested after those the channel's last digest considered (by ingest sequence,
    never by clock), up to ``upto``, that are not in ``seen`` (sent or voted on: ``Reads.seen``)."""
    src = src or Source(service)
    upto = service.store.papers.max_seq() if upto is None else upto
    after = src.last_upto(channel.id)
    return [pid for pid in src.ids_between(after, upto) if pid not in seen]


def backlog(
    service: Composer,
    channel: Channel,
    exclude_ids: Iterable[str],
    limit: int,
    known: tuple[Reads, Ranker | None] | None = None,
    src: Source | None = None,
) -> Picks:
    """Up to ``limit`` unposted papers above the threshold, best first (``more`` counts the rest).

    Drawn from the ``BACKLOG_POOL`` most recently stored papers the channel was not sent. Empty
    when the channel turned its backlog off. ``exclude_ids`` are today's new candidates; ``known``
    is what the caller already read (the channel's reads and the ranker), else it is read here.
    """
    from digest.delivery.compose import diversity_for
    from digest.rank.ranker import Picks

    state, ranker = known or (reads(service, channel), service.papers.ranker())
    if not channel.backlog or ranker is None:
        return Picks(())
    skip = state.seen | set(exclude_ids)
    recent = (src or Source(service)).recent_ids(BACKLOG_POOL + len(skip))
    ids = [pid for pid in recent if pid not in skip][:BACKLOG_POOL]
    return ranker.rank(
        state.profile,
        ids,
        size=max(limit, 0),
        threshold=channel.threshold,
        diversity=diversity_for(state.profile),
    )


def compose_digest(
    service: Composer, channel: Channel, day: date, upto: int | None = None
) -> Digest:
    """The channel's digest for ``day``: new papers (up to sequence ``upto``) first, then the
    backlog fills free slots. Each row it needs is read once (a test counts the statements).

    A digest for a set ``upto`` waits for an index holding every paper up to it (a candidate
    missing from the index would be skipped for good); a preview answers from the one at hand.
    """
    src = Source(service)
    chosen = choose(service, channel, upto, src)
    picked = chosen.paper_ids
    named = picked + list(chosen.state.profile.likes)  # the footer names followed papers
    return assemble(chosen, day, src.get_many(named), src.liked_in(picked))


@dataclass(frozen=True)
class Chosen:
    """A channel's picks for a digest, before its papers are read: new ones, then the backlog."""

    channel: Channel
    state: Reads
    new: Picks
    older: Picks

    @property
    def paper_ids(self) -> list[str]:
        """Every picked paper."""
        return [h.paper_id for h in self.new.hits + self.older.hits]


def choose(service: Composer, channel: Channel, upto: int | None, src: Source) -> Chosen:
    """The channel's picks: new papers (up to sequence ``upto``) first, then the backlog."""
    from digest.delivery.compose import rank_new

    state, ranker = src.reads(channel), src.ranker(upto)
    ids = candidates(service, channel, state.seen, upto, src)
    new = rank_new(channel, state.profile, ranker, ids)
    older = backlog(
        service, channel, ids, channel.digest_size - len(new.hits), (state, ranker), src
    )
    return Chosen(channel, state, new, older)


def assemble(
    chosen: Chosen, day: date, papers: Mapping[str, Paper], liked: Iterable[LikedIn] = ()
) -> Digest:
    """The digest of ``chosen`` (``papers`` holds at least the picked ones), each pick marked
    with the other shared channels of its workspace that 👍'd it (``liked``: Source.liked_in)."""
    from digest.delivery.compose import compose, with_backlog

    first = compose(chosen.channel, chosen.state.profile, chosen.new, day, papers)
    return with_marks(with_backlog(first, chosen.older, papers), liked)


def with_marks(digest: Digest, liked: Iterable[LikedIn]) -> Digest:
    """``digest`` with its picks' 👍 in other shared channels of the same workspace; a personal
    digest gets none (what a person reads alone is not shown to a team, and vice versa)."""
    channel = digest.channel
    if channel.ref.personal or not digest.items:
        return digest
    picked = {i.paper.id for i in digest.items}
    where = (channel.ref.platform, channel.ref.workspace or "")
    out: dict[str, list[str]] = {}
    for like in liked:
        if (
            like.paper_id in picked
            and like.channel_row != channel.id
            and ((like.platform, like.workspace) == where)
        ):
            out.setdefault(like.paper_id, []).append(like.name)
    return replace(digest, elsewhere={p: tuple(names) for p, names in out.items()})


@dataclass(frozen=True)
class Outlook:
    """Whether and when a paper would reach a channel."""

    score: float | None
    why: str
    verdict: str


def _queue(service: Composer, channel: Channel, known: tuple[Reads, Ranker]) -> list[str]:
    """The order papers above the threshold would be sent in: the next digest as it would be
    composed (new papers first, the backlog filling free places), then the rest best first.

    After the next digest every paper waiting is in the backlog, which goes out best first: a
    new paper at 0.52 left out of the next digest does not go before one waiting at 0.65.
    """
    from digest.delivery.compose import diversity_for, rank_new

    state, ranker = known
    ids = candidates(service, channel, state.seen)
    profile, size = state.profile, channel.digest_size
    new = rank_new(channel, profile, ranker, ids)
    older = backlog(service, channel, ids, size - len(new.hits), known)
    first = [h.paper_id for h in new.hits + older.hits]
    rest = ranker.rank(
        profile,
        [i for i in ids if i not in set(first)],
        size=size * HORIZON,
        threshold=channel.threshold,
        diversity=diversity_for(profile),
    ).hits
    if channel.backlog:  # the older papers wait with the new ones left out
        later = backlog(service, channel, ids + first, size * HORIZON, known).hits
        rest = tuple(sorted(rest + later, key=lambda h: -h.score))
    return first + [h.paper_id for h in rest]


def _due_dates(service: Composer, channel: Channel, now: datetime, n: int) -> list[datetime]:
    """The next ``n`` scheduled digests, skipping days that already have one."""
    return upcoming(service.store, channel, now, service.catchup_grace, n)


def _when(service: Composer, channel: Channel, place: int, now: datetime) -> str:
    """The sentence saying in which upcoming digest the ``place``-th queued paper goes out."""
    nth = place // channel.digest_size
    dues = _due_dates(service, channel, now, nth + 1)
    if len(dues) <= nth:
        return "It is queued, but this channel has no upcoming digest day."
    when = f"{dues[nth]:%a %d %b %H:%M} ({channel.timezone}){overdue_note(dues[nth], now)}"
    if nth == 0:
        return f"It would be sent in the next digest, {when}."
    # The line is the backlog's order, best score first, and scores follow the channel's
    # votes: a 👍 or 👎 here reorders it, so the place is an estimate by today's scores.
    return (
        f"It is number {place + 1} in line by today's scores, so it would go out in about "
        f"{nth + 1} digests, around {when}; votes here reorder the line, and newer papers that "
        "match go first."
    )


def _beside(score: float, threshold: float) -> str:
    """``score`` with enough decimals to tell it from the threshold it is compared with."""
    for digits in (2, 3):
        if f"{score:.{digits}f}" != f"{threshold:.{digits}f}" or score == threshold:
            return f"{score:.{digits}f}"
    return f"{score:.4f}"  # equal to four places: the verdict beside it says which side


FOLLOWED = (
    "This channel follows it as `like:`, an example of what it wants, so it is never sent here "
    "as news; digests bring papers like it. `unsubscribe like:{id}` stops following it."
)


def outlook(service: Composer, channel: Channel, paper_id: str, now: datetime) -> Outlook:
    """Whether and when ``paper_id`` would be sent to ``channel``, with its score and reason."""
    state, ranker = reads(service, channel), service.papers.ranker()
    if paper_id in state.profile.likes:  # an example of what it wants, not news to it
        return Outlook(None, "", FOLLOWED.format(id=paper_id))
    picks = ranker.rank(state.profile, [paper_id], size=1, threshold=0.0)
    if not picks.hits:
        return Outlook(None, "", "It is excluded by this channel's `exclude` terms.")
    hit = picks.hits[0]
    # Shown as 0.00, no interest matches it: a "matches ..." line beside it would contradict it.
    why = hit.why if round(hit.score, 2) > 0 else NO_MATCH
    head = f"Score {_beside(hit.score, channel.threshold)}"
    if paper_id in state.delivered:
        return Outlook(hit.score, why, f"{head}. It was already sent here; never twice.")
    if paper_id in state.voted:
        net = service.store.channels.feedback_totals(channel.id).get(paper_id, 0)
        if net < 0:  # its interest match is beside the point: a 👎 keeps it out for good
            return Outlook(hit.score, "", f"{head}. It got 👎 here, so digests skip it.")
        mark = "👍" if net > 0 else "👍 and 👎"
        return Outlook(hit.score, why, f"{head}. It got {mark} here, so digests skip it.")
    if hit.score < channel.threshold:
        verdict = (
            f"{head}, below this channel's threshold {channel.threshold:.2f}: it will not be sent."
        )
        return Outlook(hit.score, why, verdict)
    head += f", above this channel's threshold {channel.threshold:.2f}."
    queue = _queue(service, channel, (state, ranker))
    if paper_id not in queue:
        tail = (
            "It is not new since the last digest and this channel's backlog is off, so it will not be sent."
            if not channel.backlog
            else f"More than {HORIZON} digests' worth of papers are ahead of it."
        )
    elif channel.paused:
        tail = "Digests are paused here; it waits until `resume`."
    else:
        tail = _when(service, channel, queue.index(paper_id), now)
    return Outlook(hit.score, why, f"{head} {tail}")
