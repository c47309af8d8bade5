"""Channel use cases the command core calls: subscriptions, settings, feedback, previews, stats."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from digest.backlog import already_seen, compose_digest
from digest.compose import Digest, plural
from digest.due import GRACE
from digest.errors import DigestError, NotFoundError
from digest.headline import shorten
from digest.models import Channel, ChannelRef, Subscription, SubscriptionKind
from digest.rank.profile import Profile
from digest.rank.why import interest_of
from digest.schedule import parse_time, parse_weekdays
from digest.service import DigestService
from digest.text import is_number, numeric_text, typed_value, whole_number
from digest.topic_text import clean_topic
from digest.zones import parse_timezone

PERSONAL_WORKSPACE = "dm"  # a personal digest belongs to its person, not to a server
MAX_SUBSCRIPTIONS = 50


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
    """Per-channel use cases over the store and the shared ranker."""

    def __init__(
        self,
        papers: DigestService,
        default_timezone: str = "UTC",
        restricted_platforms: frozenset[str] = frozenset(),
        catchup_grace: timedelta = GRACE,
    ) -> None:
        self.papers = papers
        # How long a missed scheduled digest is still delivered (what `why` and `list` announce).
        self.catchup_grace = catchup_grace
        self.store = papers.store
        self.default_timezone = default_timezone
        # Platforms whose new (non-DM) channels start with settings limited to channel admins.
        self.restricted_platforms = restricted_platforms
        # False for one-shot read-only uses (the CLI): reading an unknown channel must not create it.
        self.create_missing = True

    def channel(self, ref: ChannelRef, name: str = "", owner: str | None = None) -> Channel:
        """The channel for ``ref``, created on first use.

        Channels on ``restricted_platforms`` (not DMs) start with settings limited to channel
        admins (`option admin-only off` opens them); elsewhere everyone may change them.
        With ``create_missing`` off, an unknown channel is a NotFoundError instead.
        """
        if not self.create_missing:
            return self.find(ref)
        restricted = ref.platform in self.restricted_platforms and not ref.channel_id.startswith(
            "@"
        )
        return self.store.channels.ensure(
            ref, name=name, timezone=self.default_timezone, owner_user=owner, admin_only=restricted
        )

    def personal_ref(self, platform: str, user: str) -> ChannelRef:
        """A person's one personal digest on a platform, reachable from every server and the DM.

        Older versions made one per server; the oldest is kept, takes over the others'
        subscriptions, and the others are paused, so nobody gets the same digest twice a day.
        """
        mine = self.store.channels.with_channel_id(platform, f"@{user}")
        if not mine:
            return ChannelRef(platform, f"@{user}", PERSONAL_WORKSPACE)
        keep, *extra = mine
        for ch in (c for c in extra if not c.paused):
            for sub in self.store.channels.subscriptions(ch.id):
                self.store.channels.add_subscription(keep.id, sub.kind, sub.text, sub.created_by)
            self.set_paused(ch.ref, True, "merged into your one personal digest")
        return keep.ref

    def find(self, ref: ChannelRef) -> Channel:
        """An existing channel or a NotFoundError."""
        channel = self.store.channels.get(ref)
        if channel is None:
            raise NotFoundError(no_channel(ref))
        return channel

    def subscriptions(self, ref: ChannelRef) -> list[Subscription]:
        """A channel's profile lines in order (the numbers users see start at 1)."""
        return self.store.channels.subscriptions(self.channel(ref).id)

    def profile(self, channel: Channel) -> Profile:
        """Everything the ranker needs to know about a channel's interests and votes."""
        subs = self.store.channels.subscriptions(channel.id)
        by = {k: tuple(s.text for s in subs if s.kind == k) for k in SubscriptionKind}
        votes = tuple(
            (pid, 1 if v > 0 else -1)
            for pid, v in self.store.channels.feedback_totals(channel.id).items()
            if v
        )
        return Profile(
            topics=by[SubscriptionKind.TOPIC],
            authors=by[SubscriptionKind.AUTHOR],
            excludes=by[SubscriptionKind.EXCLUDE],
            likes=by[SubscriptionKind.LIKE],
            votes=votes,
        )

    def follows_nothing(self, channel: Channel, day: date | None = None) -> bool:
        """True when nothing would rank a paper here (no topic, author or like, and no 👍), so no
        digest is sent or previewed: the one rule the runner, the scheduler, chat and the CLI use.

        A ``day`` that already has a digest is not such a day: its real state (delivered, being
        sent...) is said first, wherever it is asked. Without a day: the digests to come."""
        if day is not None and self.store.deliveries.for_day(channel.id, day) is not None:
            return False
        return self.profile(channel).is_empty()

    def add(
        self, ref: ChannelRef, kind: SubscriptionKind, text: str, user: str | None = None
    ) -> str:
        """Add a topic, author, exclusion or liked paper; returns a confirmation."""
        text = clean_topic(text)
        channel = self.channel(ref)
        if kind is SubscriptionKind.LIKE:
            text = self.papers.paper(text).id
        subs = self.store.channels.subscriptions(channel.id)
        if len(subs) >= MAX_SUBSCRIPTIONS:
            raise DigestError(
                f"This channel already follows {MAX_SUBSCRIPTIONS} things; unsubscribe some first."
            )
        # not followed but kept out of every digest
        verb = "excluding" if kind is SubscriptionKind.EXCLUDE else "following"
        same = {s.text.casefold(): s.text for s in subs if s.kind is kind}
        if text.casefold() in same:  # said as stored: `GRAPH networks` is 'graph networks' here
            return f"Already {verb} {self._what(kind, same[text.casefold()])}."
        if not self.store.channels.add_subscription(channel.id, kind, text, user):
            return f"Already {verb} {self._what(kind, text)}."
        return f"Now {verb} {self._what(kind, text)}.{self._coverage_note(kind, text)}"

    def _what(self, kind: SubscriptionKind, text: str) -> str:
        """How a confirmation names a subscription (a liked paper by its title, cut on a word)."""
        if kind is SubscriptionKind.LIKE:
            return f"papers like *{shorten(self.papers.paper(text).title, 100)}*"
        if kind is SubscriptionKind.EXCLUDE:
            return f"papers that mention {text!r}"
        return f"{kind.value} {text!r}"

    def _coverage_note(self, kind: SubscriptionKind, text: str) -> str:
        if kind is not SubscriptionKind.TOPIC:
            return ""
        result = self.papers.search(text, per_page=1).result
        if not result.total and result.message.startswith("No paper mentions"):
            return f" {result.message} Digests will include it when a paper that does arrives."
        if not result.total:
            return " No stored paper matches it yet; digests will include it when one arrives."
        return f" {plural(result.total, 'stored paper')} {'matches' if result.total == 1 else 'match'} it."

    def unsubscribe(self, ref: ChannelRef, selector: str) -> str:
        """Remove by number (as in `list`), by exact text, `all` (what is followed; exclusions
        stay) or `exclusions`."""
        channel = self.channel(ref)
        subs = self.store.channels.subscriptions(channel.id)
        key = " ".join(selector.split()).lower()
        if key in ("all", "exclusions"):
            return self._unsubscribe_group(channel, subs, key == "exclusions")
        if is_number(numeric_text(key)):
            n = int(numeric_text(key))
            if not 1 <= n <= len(subs):
                raise DigestError(
                    f"There is no subscription number {n}; `list` shows 1 to {len(subs)}."
                )
            chosen = [subs[n - 1]]
        else:
            chosen = [
                s
                for s in subs
                if s.text.lower() == key or f"{s.kind.value}:{s.text}".lower() == key
            ]
            if not chosen:
                raise DigestError(
                    f"This channel does not follow {selector.strip()[:60]!r}; `list` shows what it does."
                )
        removed = self.store.channels.remove_subscriptions(channel.id, [s.id for s in chosen])
        if removed == 1:
            return f"Stopped following {chosen[0].text!r}."
        return f"Stopped following {plural(removed, 'item')}."

    def _unsubscribe_group(self, channel: Channel, subs: list[Subscription], excl: bool) -> str:
        """`all`: every followed topic, author and like, keeping exclusions; `exclusions`: those."""
        chosen = [s for s in subs if (s.kind is SubscriptionKind.EXCLUDE) == excl]
        removed = self.store.channels.remove_subscriptions(channel.id, [s.id for s in chosen])
        if excl:
            return f"Removed {plural(removed, 'exclusion')}." if removed else "No exclusions here."
        kept = len(subs) - len(chosen)  # exclusions are not followed: they stay until removed
        one = kept == 1
        stay = (
            f" {plural(kept, 'exclusion')} {'stays' if one else 'stay'} "
            f"(`unsubscribe exclusions` removes {'it' if one else 'them'})."
            if kept
            else ""
        )
        if not removed:
            return f"This channel follows nothing.{stay}"
        what = repr(chosen[0].text) if removed == 1 else plural(removed, "item")
        return f"Stopped following {what}.{stay}"

    def set_schedule(
        self, ref: ChannelRef, at: str, tz: str | None = None, days: str | None = None
    ) -> Channel:
        """Change when digests arrive."""
        fields = {"digest_time": parse_time(at)}
        if tz:
            fields["timezone"] = parse_timezone(tz)
        if days:
            fields["weekdays"] = parse_weekdays(days)
        return self.store.channels.update(self.channel(ref).id, **fields)

    def set_size(self, ref: ChannelRef, text: str) -> Channel:
        """Papers per digest, 1 to 25."""
        size = whole_number(text, "Digest size", 1, 25)
        return self.store.channels.update(self.channel(ref).id, digest_size=size)

    def set_threshold(self, ref: ChannelRef, text: str) -> Channel:
        """Minimum score for a paper to be posted, 0 to 1."""
        number = numeric_text(text)
        try:
            value = float(number) if number.isascii() else -1.0
        except ValueError:
            value = -1.0
        if not 0.0 <= value <= 1.0:
            raise DigestError(
                f"Threshold must be a number from 0 to 1 (e.g. 0.3), {typed_value(text.strip(), number)}."
            )
        value += 0.0  # -0.0 + 0.0 is 0.0: '-0' must not be stored and shown as -0.00
        return self.store.channels.update(self.channel(ref).id, threshold=value)

    def set_paused(self, ref: ChannelRef, paused: bool, reason: str | None = None) -> Channel:
        """Pause or resume digests; the reason is shown by `list` and `digestbot channels`."""
        return self.store.channels.update(
            self.channel(ref).id, paused=paused, paused_reason=reason if paused else None
        )

    def set_option(self, ref: ChannelRef, name: str, on: bool) -> Channel:
        """Boolean channel options: quiet, admin-only, threads, backlog (see `help`)."""
        fields = {
            "quiet": "quiet_when_empty",
            "admin-only": "admin_only",
            "threads": "threaded",
            "backlog": "backlog",
        }
        if name not in fields:
            raise DigestError(f"Unknown option {name[:30]!r}; options are {', '.join(fields)}.")
        if name == "admin-only" and ref.channel_id.startswith("@"):  # a DM digest has no admins
            raise DigestError(
                "admin-only is for shared channels: your personal digest is already yours alone "
                "to change."
            )
        return self.store.channels.update(self.channel(ref).id, **{fields[name]: on})

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

    def vote_counts(self, ref: ChannelRef, paper_id: str) -> tuple[int, int]:
        """(👍, 👎) counts for a paper in a channel."""
        channel = self.channel(ref)
        votes = [
            v.value for v in self.store.channels.feedback(channel.id) if v.paper_id == paper_id
        ]
        return votes.count(1), votes.count(-1)

    def candidates(self, channel: Channel, upto: int | None = None) -> list[str]:
        """Papers ingested after those the channel's last digest considered (by ingest sequence,
        never by clock), up to ``upto``; never one it was already sent or voted on."""
        upto = self.store.papers.max_seq() if upto is None else upto
        after = self.store.deliveries.last_upto(channel.id)
        fresh = self.store.papers.ids_between(after, upto)
        seen = already_seen(self, channel)
        return [pid for pid in fresh if pid not in seen]

    def preview(self, ref: ChannelRef, day: date) -> Digest:
        """The digest the channel would get now, without claiming or sending anything."""
        return compose_digest(self, self.channel(ref), day)

    def stats(self, ref: ChannelRef) -> Stats:
        """Digest, paper and vote counts, and how many delivered papers each interest brought."""
        channel = self.channel(ref)
        items = self.store.deliveries.items(channel.id)
        votes = Counter(v.value for v in self.store.channels.feedback(channel.id))
        per = Counter(interest_of(why) for _, why in items)
        return Stats(
            self.store.deliveries.count(channel.id), len(items), votes[1], votes[-1], dict(per)
        )

    def bibtex(self, ref: ChannelRef, which: str = "liked") -> str:
        """BibTeX for the channel's 👍 papers (``liked``) or every paper it was sent (``all``)."""
        from digest.bibtex import export

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
