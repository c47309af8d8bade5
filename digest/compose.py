"""Digest building: a channel's ranked picks for a day, as a platform-neutral object. No I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from digest.models import Channel, Paper
from digest.rank.engine import Ranker
from digest.rank.profile import Profile

DIVERSITY = 0.3


@dataclass(frozen=True)
class DigestItem:
    """One paper in a digest."""

    rank: int
    paper: Paper
    score: float
    why: str


@dataclass(frozen=True)
class Digest:
    """A channel's digest for one day."""

    channel: Channel
    day: date
    interests: tuple[str, ...]
    items: tuple[DigestItem, ...]
    more: int = 0
    near_misses: int = 0
    considered: int = 0

    @property
    def empty(self) -> bool:
        """True when nothing cleared the channel's threshold."""
        return not self.items

    def title(self) -> str:
        """The header line: date and what the channel follows."""
        return f"Papers for {self.day:%a %d %b %Y}"

    def summary(self) -> str:
        """One line of counts under the header."""
        near_text = f"{self.near_misses} near miss{'es' if self.near_misses != 1 else ''}"
        if self.empty:
            return f"No new papers matched today ({self.considered} new considered, {near_text})."
        extra = f", {self.more} more above your threshold" if self.more else ""
        near = f", {near_text}" if self.near_misses else ""
        return f"{len(self.items)} of {self.considered} new papers{extra}{near}."


def interests(p: Profile) -> tuple[str, ...]:
    """Human-readable list of what a profile follows."""
    out = list(p.topics)
    out += [f"author:{a}" for a in p.authors]
    out += [f"like:{x}" for x in p.likes]
    out += [f"-{x}" for x in p.excludes]
    return tuple(out)


def compose(
    channel: Channel,
    profile: Profile,
    ranker: Ranker | None,
    candidate_ids: list[str],
    day: date,
    papers: Mapping[str, Paper],
) -> Digest:
    """Rank ``candidate_ids`` for ``channel`` and keep the top ``digest_size`` above its threshold."""
    if ranker is None or not candidate_ids:
        return Digest(channel, day, interests(profile), (), considered=len(candidate_ids))
    picks = ranker.rank(
        profile,
        candidate_ids,
        size=channel.digest_size,
        threshold=channel.threshold,
        diversity=DIVERSITY,
    )
    items = tuple(
        DigestItem(rank, papers[h.paper_id], h.score, h.why)
        for rank, h in enumerate(picks.hits, 1)
        if h.paper_id in papers
    )
    return Digest(
        channel,
        day,
        interests(profile),
        items,
        more=picks.more,
        near_misses=picks.near_misses,
        considered=picks.considered,
    )
