"""Seeding a channel's interests from someone's own papers: each library entry becomes a `like:`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from digest.channels.subscriptions import MAX_SUBSCRIPTIONS
from digest.library.entries import Entry, Library, Skipped
from digest.models import Channel, ChannelRef, SubscriptionKind
from digest.store.papers import Wanted
from digest.text.numbers import plural

if TYPE_CHECKING:
    from digest.channels.service import ChannelService
    from digest.papers.service import PaperService
    from digest.store import Store

#: Skipped entries named one by one in the reply; the rest are counted by reason.
SHOWN_REASONS = 5


@dataclass
class ImportReport:
    """What one import did: entries read, matched to stored papers, kept as given, followed."""

    format: str
    read: int
    matched: int = 0  # entries that are papers already stored
    kept: int = 0  # entries stored from their own title and abstract
    added: int = 0  # new `like:` interests
    skipped: list[Skipped] = field(default_factory=list)
    liked: list[str] = field(default_factory=list)  # paper ids now followed, in file order
    unit: str = "line"  # what a skipped entry's number counts ('item' in a pasted id list)

    def summary(self) -> str:
        """The reply: counts first, then each skipped entry with its reason (a few, then totals)."""
        found = f"{self.matched} matched a stored paper" + (
            f", {self.kept} kept from the file's title and abstract" if self.kept else ""
        )
        head = (
            f"Read {self.read} {'entry' if self.read == 1 else 'entries'} ({self.format}): {found}; "
            f"added {plural(self.added, '`like:` interest')}, skipped {len(self.skipped)}."
        )
        if not self.skipped:
            return head
        lines = [head]
        ordered = sorted(self.skipped, key=lambda s: s.line)
        shown, rest = ordered[:SHOWN_REASONS], ordered[SHOWN_REASONS:]  # the rest: not shown
        lines += [f"• {f'{self.unit} {s.line}: ' if s.line else ''}{s.reason}" for s in shown]
        if rest:
            counts = Counter(s.reason.split(":")[0].split(" of the")[0] for s in rest)
            kinds = ", ".join(f"{why}: {n}" for why, n in counts.most_common())
            lines.append(f"• and {len(rest)} more ({kinds})")
        return "\n".join(lines)


class LibraryImports:
    """A channel's library import: each entry of an exported library followed as a `like:`."""

    def __init__(
        self, store: Store, papers: PaperService, channel: Callable[[ChannelRef], Channel]
    ) -> None:
        self.store = store
        self.papers = papers
        self.channel = channel  # finds or creates the channel (ChannelService.channel)

    @classmethod
    def over(cls, channels: ChannelService) -> LibraryImports:
        """Imports into the channels ``channels`` finds or creates."""
        return cls(channels.store, channels.papers, channels.channel)

    def import_library(
        self, ref: ChannelRef, library: Library, user: str | None = None
    ) -> ImportReport:
        """Follow every entry of ``library`` as a `like:`: the stored paper it names, else the
        entry as given (stored as a library paper: an example, never a digest's news)."""
        channel = self.channel(ref)
        report = ImportReport(
            library.format, library.read, skipped=list(library.skipped), unit=library.unit
        )
        entries = list(library.entries)
        found = self.store.papers.find_wanted([wanted_of(e) for e in entries])
        subs = self.store.channels.subscriptions(channel.id)
        liked = {s.text for s in subs if s.kind is SubscriptionKind.LIKE}
        room = MAX_SUBSCRIPTIONS - len(subs)
        chosen: list[tuple[Entry, str | None]] = []  # (entry, stored id or None: store it)
        for entry, pid in zip(entries, found, strict=True):
            if pid is None and entry.record is None:
                what = (
                    entry.ref.arxiv or entry.ref.doi or entry.ref.openreview or entry.ref.paper_id
                )
                report.skipped.append(
                    Skipped(entry.line, f"no title: {what} is not a stored paper")
                )
            elif pid is not None and pid in liked:
                report.matched += 1
                report.skipped.append(Skipped(entry.line, "duplicate: already followed here"))
            elif room <= len(chosen):
                report.matched += pid is not None
                report.skipped.append(
                    Skipped(
                        entry.line,
                        f"over the limit: a channel follows at most {MAX_SUBSCRIPTIONS} things",
                    )
                )
            else:
                report.matched += pid is not None
                chosen.append((entry, pid))
                if pid is not None:
                    liked.add(pid)
        new = [e for e, pid in chosen if pid is None]
        stored = iter(self._store_new(new, report))
        for entry, pid in chosen:
            pid = pid or next(stored)
            if pid is None or pid in report.liked:  # two entries the store found one paper
                report.skipped.append(Skipped(entry.line, "duplicate of another entry"))
            elif self.store.channels.add_subscription(channel.id, SubscriptionKind.LIKE, pid, user):
                report.added += 1
                report.liked.append(pid)
            else:  # added meanwhile by someone else
                report.skipped.append(Skipped(entry.line, "duplicate: already followed here"))
        return report

    def _store_new(self, entries: list[Entry], report: ImportReport) -> list[str | None]:
        """Store the entries' records (counted as kept, or matched when the store found them to
        be a stored paper after all); the stored id of each entry."""
        if not entries:
            return []
        records = [e.record for e in entries if e.record is not None]
        counts = self.papers.store_library(records)
        report.kept += counts.added
        report.matched += len(records) - counts.added
        ids = self.store.papers.find_wanted([wanted_of(e) for e in entries])
        out = []
        for e, pid in zip(entries, ids, strict=True):
            if pid is None and e.record is not None:  # found by its own id (title too short)
                stored = self.store.papers.get(e.record.id)
                pid = stored.id if stored else None
            out.append(pid)
        return out


def wanted_of(entry: Entry) -> Wanted:
    """What the store looks a library entry up by: its ids, else its title and abstract."""
    rec = entry.record
    return Wanted(
        arxiv=entry.ref.arxiv,
        doi=entry.ref.doi,
        openreview=entry.ref.openreview,
        paper_id=entry.ref.paper_id,
        title=rec.title if rec else "",
        abstract=rec.abstract if rec else "",
    )
