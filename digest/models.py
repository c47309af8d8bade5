"""Domain objects shared by every layer: frozen dataclasses, free of storage and platform details."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum

from digest.errors import DigestError


@dataclass(frozen=True)
class Shards:
    """One replica's part of a sharded platform's channels: shard ``ids`` out of ``count``
    (the store turns it into SQL: digest/store/channels.py)."""

    ids: frozenset[int]
    count: int
    platform: str = "discord"


@dataclass(frozen=True, slots=True)
class Links:
    """Where a paper can be read."""

    pdf: str | None = None
    abs: str | None = None
    forum: str | None = None
    code: str | None = None

    def merged(self, other: Links) -> Links:
        """Keep ours, fill gaps from ``other`` (used when two sources describe one paper)."""
        return Links(
            pdf=self.pdf or other.pdf,
            abs=self.abs or other.abs,
            forum=self.forum or other.forum,
            code=self.code or other.code,
        )


#: The source of papers read from someone's own library (`/papers import`): kept as examples of
#: what a channel likes, never news, so never a digest candidate (``PaperRepo.ids_between``).
LIBRARY_SOURCE = "library"


@dataclass(frozen=True, slots=True)
class PaperRecord:
    """A paper as parsed from a source, before it is stored."""

    id: str
    source: str
    title: str
    abstract_raw: str
    abstract: str
    title_derived: bool = False
    authors: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    links: Links = field(default_factory=Links)
    published: date | None = None


@dataclass(frozen=True, slots=True)
class Paper(PaperRecord):
    """A stored paper."""

    ingested_at: datetime | None = None
    content_hash: str = ""
    arxiv_id: str | None = None  # the store's: from an id that is an arXiv id or an arxiv.org link
    cite_key: str | None = None  # the BibTeX key issued when the paper was first stored
    tldr: str | None = (
        None  # the cached abstractive TL;DR for the configured model (digest/tldr/extractive.py)
    )


@dataclass(frozen=True, slots=True)
class ParseProblem:
    """A record a parser had to skip, with where it was."""

    line: int
    message: str
    warning: bool = False  # stored anyway (e.g. no abstract); not a skipped line


class DeliveryKind(StrEnum):
    """What a delivery carries: a day's digest (papers), or a week's picture (one image)."""

    DIGEST = "digest"
    WEEKLY = "weekly"
    # The reading group's posts (digest/reading/): a poll, the pick's announcement, the message
    # opening its discussion thread, the reminder and the recap (those three in that thread).
    RG_POLL = "rg-poll"
    RG_PICK = "rg-pick"
    RG_THREAD = "rg-thread"
    RG_REMIND = "rg-remind"
    RG_RECAP = "rg-recap"


class DeliveryState(StrEnum):
    """Where a channel's digest for one day stands; the values are the strings the database
    stores, so reading a state needs no migration."""

    CLAIMED = "claimed"  # papers reserved; the plan and the posts follow
    SENDING = "sending"
    POSTED = "posted"
    EMPTY = "empty"  # a quiet day: nothing to post, settled
    FAILED = "failed"  # given up; unposted papers went back

    @property
    def unfinished(self) -> bool:
        """A worker still has to post it (or a lapsed lease lets another take it over)."""
        return self in (DeliveryState.CLAIMED, DeliveryState.SENDING)


class MessageState(StrEnum):
    """How far one planned message of a digest got; the values are the stored strings."""

    PLANNED = "planned"
    SENDING = "sending"  # a post was attempted: a retry asks the platform first
    CONFIRMED = "confirmed"  # the platform has it: its papers are delivered


class SubscriptionKind(StrEnum):
    """What a subscription line means for ranking."""

    TOPIC = "topic"
    AUTHOR = "author"
    EXCLUDE = "exclude"
    LIKE = "like"


#: Platforms whose channels live in a workspace (Slack team, Discord guild): ``slack:T123/C456``.
WORKSPACE_PLATFORMS = ("slack", "discord")


#: What a personal digest's channel id starts with (``@<user>``): ChannelRef.personal, and the
#: store's queries that leave personal digests out.
PERSONAL_MARK = "@"


@dataclass(frozen=True, slots=True)
class ChannelRef:
    """Identifies a channel on a platform; a DM is just another channel."""

    platform: str
    channel_id: str
    workspace: str = ""

    @classmethod
    def parse(cls, text: str) -> ChannelRef:
        """Parse ``platform:id`` or ``platform:workspace/id`` (``slack:T123/C456``)."""
        platform, sep, rest = text.strip().partition(":")
        if not sep or not platform or not rest:
            raise DigestError(
                f"Channel must look like platform:id (e.g. console:lab or slack:T123/C456), got {text[:60]!r}."
            )
        platform = platform.lower()
        workspace, slash, channel_id = rest.rpartition("/")
        if platform in WORKSPACE_PLATFORMS:  # Slack and Discord channel ids are per workspace
            if not slash or not workspace or not channel_id or "/" in workspace:
                raise DigestError(
                    f"Channel must look like {platform}:WORKSPACE/CHANNEL, got {text[:60]!r}."
                )
            return cls(platform=platform, channel_id=channel_id, workspace=workspace)
        return cls(platform=platform, channel_id=rest)

    @property
    def personal(self) -> bool:
        """A person's own digest (its id is ``@<user>``, one per platform), not a shared channel."""
        return self.channel_id.startswith(PERSONAL_MARK)

    def __str__(self) -> str:
        """``platform:id``, or ``platform:workspace/id`` when the channel belongs to a workspace."""
        if self.workspace:
            return f"{self.platform}:{self.workspace}/{self.channel_id}"
        return f"{self.platform}:{self.channel_id}"


@dataclass(frozen=True, slots=True)
class Channel:
    """A channel's digest settings."""

    id: int
    ref: ChannelRef
    name: str = ""
    timezone: str = "UTC"
    digest_time: str = "09:00"
    weekdays: str = "mon,tue,wed,thu,fri"
    digest_size: int = 5
    threshold: float = 0.3
    paused: bool = False
    paused_reason: str | None = None
    quiet_when_empty: bool = False
    threaded: bool = False  # post each paper as a reply under the digest's header
    backlog: bool = True  # after the new papers, fill the digest with unposted older ones
    admin_only: bool = False
    owner_user: str | None = None
    share_votes: bool = True  # its 👍 count in the workspace's `top` and other digests' marks
    public: bool | None = None  # everyone there may see it, as its platform said; None: unknown
    created_at: datetime | None = None  # when it was set up (digests start that local day)
    weekly: bool | None = None  # the weekly picture; None: on once it has two interests

    @property
    def pause_state(self) -> str:
        """'paused by Ann' (a person, or the command line) or 'paused: channel_not_found'."""
        reason = self.paused_reason or "by request"
        return reason if reason.startswith("paused by ") else f"paused: {reason}"


@dataclass(frozen=True, slots=True)
class Subscription:
    """One line of a channel's interest profile."""

    id: int
    channel_id: int
    kind: SubscriptionKind
    text: str
    created_by: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FeedbackVote:
    """A +1/-1 from one user on one paper in one channel."""

    channel_id: int
    user: str
    paper_id: str
    value: int


@dataclass(frozen=True)
class LikedIn:
    """A 👍 a shared channel gave a paper: what a digest's "👍 in #name" marks are made of."""

    paper_id: str
    channel_row: int  # the channel's database id
    platform: str
    workspace: str
    name: str  # its name, else its platform id
