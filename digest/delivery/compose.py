"""Digest building: a channel's ranked picks for a day, as a platform-neutral object. No I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date

from digest.ingest import FEED_HINT
from digest.models import Channel, Paper
from digest.rank import feedback
from digest.rank.profile import Profile
from digest.rank.ranker import Picks, Ranker
from digest.text.numbers import plural

DIVERSITY = 0.3


@dataclass(frozen=True)
class DigestItem:
    """One paper in a digest."""

    rank: int
    paper: Paper
    score: float
    why: str
    #: Opted-in members this pick fits best (user ids; digest/mentions): who should read it.
    mentions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Digest:
    """A channel's digest for one day."""

    channel: Channel
    day: date
    interests: tuple[str, ...]
    items: tuple[DigestItem, ...]
    more: int = 0  # above the threshold, not in this digest (waiting in the backlog)
    near_misses: int = 0
    considered: int = 0
    earlier: int = 0  # items taken from the backlog (they follow the new ones)
    backlog_on: bool = True
    #: paper id -> other channels of the workspace that 👍'd it (names, or ids when unnamed)
    elsewhere: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when nothing cleared the channel's threshold."""
        return not self.items

    def title(self) -> str:
        """The header line: date and what the channel follows."""
        return f"Papers for {self.day:%a %d %b %Y}"

    def summary(self) -> str:
        """One line of counts under the header, e.g. "5 new papers for you; 5 more waiting"."""
        new = len(self.items) - self.earlier
        if self.empty:
            near = f"{self.near_misses} near miss{'es' if self.near_misses != 1 else ''}"
            line = f"No new papers matched today ({self.considered} new considered, {near})."
            return f"{line} {FEED_HINT}" if not self.considered else line  # ran dry: what next
        parts = [f"{plural(new, 'new paper')} for you"] if new else []
        if self.earlier:
            earlier = f"{plural(self.earlier, 'earlier paper')} you have not seen"
            parts.append(f"plus {earlier}" if new else earlier[0].upper() + earlier[1:])
        line = ", ".join(parts)
        if self.more and self.backlog_on:
            line += f"; {self.more} more waiting"
        elif self.more:
            line += f"; {self.more} more matched (the backlog is off, so they will not be sent)"
        return line + "."


def diversity_for(p: Profile) -> float:
    """How much a channel's digest diversifies: less as its votes say what it wants."""
    return feedback.diversity(DIVERSITY, len(p.votes))


#: A followed paper's title in a digest's footer is cut to this many characters (on a word).
LIKE_TITLE = 60


def interests(p: Profile, papers: Mapping[str, Paper] | None = None) -> tuple[str, ...]:
    """Human-readable list of what a profile follows; a `like:` by its paper's title (shortened)
    when ``papers`` holds it: an imported library's ids alone say nothing."""
    from digest.text.headline import shorten

    papers = papers or {}
    out = list(p.topics)
    out += [f"author:{a}" for a in p.authors]
    out += [
        f"like: {shorten(papers[x].title, LIKE_TITLE)}" if x in papers else f"like:{x}"
        for x in p.likes
    ]
    out += [f"-{x}" for x in p.excludes]
    return tuple(out)


def rank_new(
    channel: Channel, profile: Profile, ranker: Ranker | None, candidate_ids: list[str]
) -> Picks:
    """The channel's top ``digest_size`` picks above its threshold among ``candidate_ids``."""
    if ranker is None or not candidate_ids:
        return Picks((), considered=len(candidate_ids))
    return ranker.rank(
        profile,
        candidate_ids,
        size=channel.digest_size,
        threshold=channel.threshold,
        diversity=diversity_for(profile),
    )


def compose(
    channel: Channel, profile: Profile, picks: Picks, day: date, papers: Mapping[str, Paper]
) -> Digest:
    """The day's digest of ``picks`` (``papers`` holds at least the picked ones, and the liked
    ones to name them by title)."""
    items = tuple(
        DigestItem(rank, papers[h.paper_id], h.score, h.why)
        for rank, h in enumerate(picks.hits, 1)
        if h.paper_id in papers
    )
    return Digest(
        channel,
        day,
        interests(profile, papers),
        items,
        more=picks.more,
        near_misses=picks.near_misses,
        considered=picks.considered,
    )


def with_backlog(new: Digest, older: Picks, papers: Mapping[str, Paper]) -> Digest:
    """``new`` with its free slots filled by ``older`` (backlog picks), new papers first."""
    start = len(new.items) + 1
    extra = tuple(
        DigestItem(rank, papers[h.paper_id], h.score, h.why)
        for rank, h in enumerate((h for h in older.hits if h.paper_id in papers), start)
    )
    return replace(
        new,
        items=new.items + extra,
        earlier=len(extra),
        more=new.more + older.more,
        backlog_on=new.channel.backlog,
    )
