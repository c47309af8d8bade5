"""Channel use cases the command core calls: subscriptions, settings, feedback, previews, stats."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property
from typing import TYPE_CHECKING

from digest.clock.times import GRACE
from digest.errors import DigestError, NotFoundError
from digest.models import PERSONAL_MARK, Channel, ChannelRef, MessageState, Paper, Subscription

if TYPE_CHECKING:
    from digest.channels.notes import Notes
    from digest.channels.reads import ChannelReads, DeliveryReads
    from digest.channels.settings import ChannelSettings
    from digest.channels.subscriptions import Subscriptions
    from digest.papers.service import PaperService
    from digest.rank.profile import Profile
    from digest.store.deliveries import Delivery

__all__ = ["PERSONAL_WORKSPACE", "ChannelService", "Stats", "no_channel"]

PERSONAL_WORKSPACE = "dm"  # a personal digest belongs to its person, not to a server


@dataclass(frozen=True)
class Stats:
    """What a channel has received and how its members reacted."""

    digests: int
    papers: int
    up: int
    down: int
    per_interest: dict[str, int]


def no_channel(ref: ChannelRef) -> str:
    """The error for a command that reads a channel nobody has set up."""
    return f"No channel {ref}; subscribe first (that creates it)."


class ChannelService:
    """Per-channel use cases over the store and the shared ranker: the one channel service the
    chat side calls. It finds and creates channels itself and hands what channels follow to
    ``follows`` (Subscriptions) and their settings to ``settings`` (ChannelSettings)."""

    def __init__(
        self,
        papers: PaperService,
        default_timezone: str = "UTC",
        restricted_platforms: frozenset[str] = frozenset(),
        catchup_grace: timedelta = GRACE,
    ) -> None:
        self.papers = papers
        # How long a missed scheduled digest is still delivered (what `why` and `list` announce).
        self.catchup_grace = catchup_grace
        self.store = papers.store
        self.clock = (
            papers.clock
        )  # the one clock (digest/clock/__init__.py), built by the composition root
        self.default_timezone = default_timezone
        # Platforms whose new (non-DM) channels start with settings limited to channel admins.
        self.restricted_platforms = restricted_platforms
        # False for one-shot read-only uses (the CLI): reading an unknown channel must not create it.
        self.create_missing = True
        # What callers that only look read (never creating a channel): the store's own queries.
        self.lookup: ChannelReads = self.store.channels
        self.history: DeliveryReads = self.store.deliveries

    # The parts are made on first use: `digestbot channels` lists channels and needs none of
    # them (the library import alone loads the BibTeX, RIS and CSV parsers).

    @cached_property
    def follows(self) -> Subscriptions:
        """What channels follow: subscribe, unsubscribe."""
        from digest.channels.subscriptions import Subscriptions

        return Subscriptions(self.store, self.papers, self.channel)

    @cached_property
    def notes(self) -> Notes:
        """Values the bot keeps for itself (a command tree's hash, where it was synced)."""
        from digest.channels.notes import Notes

        return Notes(self.store)

    @cached_property
    def settings(self) -> ChannelSettings:
        """A channel's schedule, size, threshold and pause."""
        from digest.channels.settings import ChannelSettings

        return ChannelSettings(self.store, self.channel)

    def channel(self, ref: ChannelRef, name: str = "", owner: str | None = None) -> Channel:
        """The channel for ``ref``, created on first use.

        Channels on ``restricted_platforms`` (not DMs) start with settings limited to channel
        admins (`option admin-only off` opens them); elsewhere everyone may change them.
        With ``create_missing`` off, an unknown channel is a NotFoundError instead.
        """
        if not self.create_missing:
            return self.find(ref)
        restricted = ref.platform in self.restricted_platforms and not ref.personal
        # the console's channels are one operator's: nobody there is kept from seeing them
        public = True if ref.platform == "console" and not ref.personal else None
        return self.store.channels.ensure(
            ref,
            name=name,
            timezone=self.default_timezone,
            owner_user=owner,
            admin_only=restricted,
            public=public,
        )

    def claim(
        self, ref: ChannelRef, user: str | None, name: str = "", public: bool | None = None
    ) -> Channel | None:
        """The channel, created if ``user`` changes it; the first person to change it is recorded
        as its owner, and the name the platform shows is kept (titles use it, not the id), as is
        whether everyone there can see it (``public``; None: the platform did not say)."""
        channel = self.store.channels.get(ref) if user is None else self.channel(ref, name, user)
        if channel is None:  # only read: nobody set this channel up, and reading creates nothing
            return None
        fields: dict[str, object] = {"name": name} if name and name != channel.name else {}
        if public is not None and public != channel.public and not ref.personal:
            fields["public"] = public
        if user and channel.owner_user is None and not ref.personal:
            fields["owner_user"] = user
        return self.store.channels.update(channel.id, **fields) if fields else channel

    def personal_ref(self, platform: str, user: str) -> ChannelRef:
        """A person's one personal digest on a platform, reachable from every server and the DM
        (the oldest, where an older version made one per server: migration 0017 merged them)."""
        mine = self.store.channels.with_channel_id(platform, f"{PERSONAL_MARK}{user}")
        return (
            mine[0].ref
            if mine
            else ChannelRef(platform, f"{PERSONAL_MARK}{user}", PERSONAL_WORKSPACE)
        )

    def find(self, ref: ChannelRef) -> Channel:
        """An existing channel or a NotFoundError."""
        channel = self.store.channels.get(ref)
        if channel is None:
            raise NotFoundError(no_channel(ref))
        return channel

    def workspace_channels(
        self, platform: str, workspace: str, personal: bool = False
    ) -> list[Channel]:
        """The shared channels of one workspace (and its personal digests if ``personal``),
        oldest first."""
        every = self.store.channels.in_workspace(platform, workspace)
        return [c for c in every if personal or not c.ref.personal]

    def partly_delivered(self, delivery: Delivery) -> bool:
        """True when at least one of the digest's messages was confirmed on the platform."""
        return self.parts_posted(delivery)[0] > 0

    def parts_posted(self, delivery: Delivery) -> tuple[int, int]:
        """(messages confirmed on the platform, messages planned) of a digest."""
        planned = self.store.ledger.messages(delivery.id)
        return sum(m.status == MessageState.CONFIRMED for m in planned), len(planned)

    def paused_count(self) -> int:
        """How many channels are paused (by their users or by the platform's refusals)."""
        return sum(c.paused for c in self.store.channels.all())

    def subscriptions(self, ref: ChannelRef) -> list[Subscription]:
        """A channel's profile lines in order (the numbers users see start at 1)."""
        return self.store.channels.subscriptions(self.channel(ref).id)

    def profile(self, channel: Channel) -> Profile:
        """Everything the ranker needs to know about a channel's interests and votes."""
        from digest.rank.profile import profile_of

        subs = self.store.channels.subscriptions(channel.id)
        return profile_of(subs, self.store.channels.feedback_totals(channel.id))

    def follows_nothing(self, channel: Channel, day: date | None = None) -> bool:
        """True when nothing would rank a paper here (no topic, author or like, and no 👍), so no
        digest is sent or previewed: the one rule the runner, the scheduler, chat and the CLI use.

        A ``day`` that already has a digest is not such a day: its real state (delivered, being
        sent...) is said first, wherever it is asked. Without a day: the digests to come."""
        if day is not None and self.store.deliveries.for_day(channel.id, day) is not None:
            return False
        return self.profile(channel).is_empty()

    def vote(self, ref: ChannelRef, user: str, paper_id: str, value: int) -> int:
        """Record 👍 (+1) or 👎 (-1); the same vote again withdraws it. Returns the vote in force."""
        paper = self.papers.paper(paper_id)
        return self.store.channels.set_feedback(self.channel(ref).id, user, paper.id, value)

    def react(self, platform: str, user: str, message_ref: str, value: int) -> str | None:
        """A 👍/👎 reaction on a digest item (value 0: reaction removed); returns the paper id, if any."""
        found = self.store.deliveries.item_for_message(platform, message_ref)
        if found is None:
            return None
        channel_id, paper_id = found
        self.store.channels.put_feedback(channel_id, user, paper_id, value)
        return paper_id

    def message_papers(self, platform: str, message_ref: str) -> tuple[Channel, list[Paper]] | None:
        """The channel and papers of a digest message showing several papers (a reaction on it
        cannot say which paper it meant); None for any other message."""
        found = self.store.ledger.message_papers(platform, message_ref)
        if found is None or len(found[1]) < 2 or (ch := self.lookup.by_id(found[0])) is None:
            return None
        papers = self.store.papers.get_many(found[1])
        return ch, [papers[i] for i in found[1] if i in papers]

    def vote_counts(self, ref: ChannelRef, paper_id: str) -> tuple[int, int]:
        """(👍, 👎) counts for a paper in a channel."""
        channel = self.channel(ref)
        votes = [
            v.value for v in self.store.channels.feedback(channel.id) if v.paper_id == paper_id
        ]
        return votes.count(1), votes.count(-1)

    def stats(self, ref: ChannelRef) -> Stats:
        """Digest, paper and vote counts, and how many delivered papers each interest brought."""
        channel = self.channel(ref)
        items = self.store.deliveries.items(channel.id)
        votes = Counter(v.value for v in self.store.channels.feedback(channel.id))
        from digest.rank.why import interest_of  # the ranker's modules load for stats alone

        per = Counter(interest_of(why) for _, why in items)
        return Stats(
            self.store.deliveries.count(channel.id), len(items), votes[1], votes[-1], dict(per)
        )

    def bibtex(self, ref: ChannelRef, which: str = "liked") -> str:
        """BibTeX for the channel's 👍 papers (``liked``) or every paper it was sent (``all``)."""
        from digest.text.bibtex import export

        channel = self.channel(ref)
        if which == "liked":
            ids = [
                pid for pid, v in self.store.channels.feedback_totals(channel.id).items() if v > 0
            ]
        elif which == "all":
            ids = [pid for pid, _ in self.store.deliveries.items(channel.id)]
        else:
            raise DigestError("Export `liked` or `all`, e.g. `export bibtex liked`.")
        papers = self.store.papers.get_many(ids)
        return export([papers[i] for i in ids if i in papers])
