"""What colleagues liked: a workspace's most 👍'd papers, over the channels a person can see."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from digest.errors import DigestError
from digest.models import Channel, ChannelRef, Paper

if TYPE_CHECKING:
    from digest.channels.service import ChannelService

PERIODS = {"week": 7, "month": 30}  # what `top week|month` looks back over, in days
NO_WORKSPACE = "`/papers top` counts a server's channels: ask in one of them."


@dataclass(frozen=True)
class Liked:
    """A paper, how many people 👍'd it, and in which channels (names, or ids when unnamed)."""

    paper: Paper
    people: int
    channels: tuple[str, ...]


def shared_channels(
    service: ChannelService,
    ref: ChannelRef,
    visible: Collection[str] | None,
    everyone: bool = False,
) -> list[Channel]:
    """The channels of ``ref``'s workspace whose 👍 the asker may count: those sharing votes
    (option share-votes) among ``visible`` (channel ids the person can see, as their platform
    says; None: every channel, where only the operator asks: the console, the CLI), and the
    asking channel itself. ``everyone``: the answer is shared in ``ref``, so what its readers
    may not all see stays out: only channels everyone in the workspace can see (as their
    platform said; never said counts as private) besides ``ref`` itself.
    Personal digests never count."""
    from digest.channels.service import PERSONAL_WORKSPACE

    if ref.workspace == PERSONAL_WORKSPACE:
        raise DigestError(NO_WORKSPACE)
    return [
        c
        for c in service.workspace_channels(ref.platform, ref.workspace)
        if c.ref == ref
        or (
            c.share_votes
            and (visible is None or c.ref.channel_id in visible)
            and (not everyone or c.public is True)
        )
    ]


def top_liked(
    service: ChannelService,
    ref: ChannelRef,
    visible: Collection[str] | None,
    since: datetime,
    limit: int = 10,
    everyone: bool = False,
) -> tuple[list[Liked], int]:
    """The papers most people 👍'd since ``since`` across the channels the asker may count (each
    person once per paper, however many channels they 👍'd it in), most first; and how many
    channels were counted. ``everyone``: see shared_channels."""
    channels = shared_channels(service, ref, visible, everyone)
    names = {c.id: c.name or c.ref.channel_id for c in channels}
    people: dict[str, set[str]] = {}
    where: dict[str, set[str]] = {}
    for paper_id, user, channel_id in service.store.channels.thumbs_up(list(names), since):
        people.setdefault(paper_id, set()).add(user)
        where.setdefault(paper_id, set()).add(names[channel_id])
    best = sorted(people, key=lambda p: (-len(people[p]), p))[:limit]
    papers = service.store.papers.get_many(best)
    liked = [Liked(papers[p], len(people[p]), tuple(sorted(where[p]))) for p in best if p in papers]
    return liked, len(channels)
