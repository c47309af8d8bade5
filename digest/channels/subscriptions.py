"""What a channel follows: adding and removing topics, authors, likes and exclusions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from digest.errors import DigestError
from digest.models import Channel, ChannelRef, Subscription, SubscriptionKind
from digest.text.headline import shorten
from digest.text.numbers import is_number, numeric_text, plural
from digest.text.topic_text import clean_topic

if TYPE_CHECKING:
    from digest.papers.service import PaperService
    from digest.store import Store

MAX_SUBSCRIPTIONS = 50


class Subscriptions:
    """What channels follow: one part of ChannelService, over the store, the papers (a liked
    paper's title, a topic's coverage) and ``channel``, which finds or creates a channel."""

    def __init__(
        self, store: Store, papers: PaperService, channel: Callable[[ChannelRef], Channel]
    ) -> None:
        self.store = store
        self.papers = papers
        self.channel = channel

    def add(
        self, ref: ChannelRef, kind: SubscriptionKind, text: str, user: str | None = None
    ) -> str:
        """Add a topic, author, exclusion or liked paper; returns a confirmation."""
        text = clean_topic(text)
        if kind in (SubscriptionKind.TOPIC, SubscriptionKind.EXCLUDE):
            from digest.rank.analyzer import phrase_terms

            if not phrase_terms(text):  # 'the', 'it', 'C++', '2024': nothing can ever match it
                raise DigestError(
                    f"{text!r} has no word a paper can be matched on (very common words, single "
                    "letters, symbols and plain numbers are not); say what to follow, e.g. "
                    "`subscribe sparse autoencoders`."
                )
        if kind is SubscriptionKind.AUTHOR:
            self.papers.one_author(text)  # "Y. Zhang" fitting Yu and Yang Zhang: say which
        channel = self.channel(ref)
        if kind is SubscriptionKind.LIKE:
            text = self.papers.paper(text).id  # an id, or an arXiv/DOI/OpenReview link
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

    def _named(self, s: Subscription) -> str:
        """A removed subscription as the reply names it: a `like:` by its paper's title (its
        id alone says nothing), else its text as typed."""
        if s.kind is SubscriptionKind.LIKE and (paper := self.papers.find_paper(s.text)):
            return f"papers like *{shorten(paper.title, 100)}*"
        return repr(s.text)

    def _coverage_note(self, kind: SubscriptionKind, text: str) -> str:
        if kind is not SubscriptionKind.TOPIC:
            return ""
        result = self.papers.search(text, per_page=1).result
        if not result.total and result.message.startswith("No paper mentions"):
            return f" {result.message} Digests will include it when a paper that does arrives."
        if not result.total:
            return " No stored paper matches it yet; digests will include it when one arrives."
        ranker = self.papers.ranker()  # built by the search just made
        n = ranker.specific_matches(text) if ranker is not None else result.total
        if n is None:  # 'learning': every paper "matches" a word most papers use
            return (
                " Its words are ones most papers use, so it picks little on its own; "
                "a more specific topic picks better."
            )
        if not n:
            return " No stored paper matches it yet; digests will include it when one arrives."
        return f" {plural(n, 'stored paper')} {'matches' if n == 1 else 'match'} it."

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
            return f"Stopped following {self._named(chosen[0])}."
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
        what = self._named(chosen[0]) if removed == 1 else plural(removed, "item")
        return f"Stopped following {what}.{stay}"
