"""Searches kept behind page buttons, for every platform: a short key stands for a search that
a button cannot carry whole (Slack: a value holds 2,000 characters; Discord: a custom id 100).

One key format and the one clock (digest/clock): a key starts with the hour it was kept (fixed-
width hex sorts like the number), so every keep deletes the searches older than KEPT_HOURS with
one range delete, and what is kept stays bounded by a day of paging.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.clock import Clock
    from digest.papers.service import PaperService
    from digest.store import Store

KEPT_HOURS = 24  # a search's Prev/Next buttons work this long
PREFIX = "pages."
#: Where earlier versions kept searches (hour-keyed like PREFIX): still read, so a button
#: posted before an upgrade pages for its day, and expired the same way.
LEGACY = ("slack.pages.", "discord.pager.")
UNEXPIRING = "slack.pager."  # kept for ever by an even older version: read, deleted on a keep


class SearchPages:
    """Keep a search under a short key; recall it by that key for KEPT_HOURS."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    @classmethod
    def over(cls, papers: PaperService) -> SearchPages:
        """Pages kept in the paper service's database, on its clock."""
        return cls(papers.store, papers.clock)

    def keep(self, search: str) -> str:
        """The key ``search`` is kept under (the same search in the same hour: the same key)."""
        hour = int(self.clock().timestamp() // 3600)
        key = f"{hour:06x}{hashlib.sha256(search.encode()).hexdigest()[:10]}"
        self.store.kv.set(PREFIX + key, search)
        for prefix in (PREFIX, *LEGACY):
            self.store.kv.delete_range(prefix, f"{prefix}{hour - KEPT_HOURS:06x}")
        self.store.kv.delete_range(UNEXPIRING, UNEXPIRING[:-1] + "/")
        return key

    def recall(self, key: str) -> str | None:
        """The search kept under ``key``, or None once it expired (or never was)."""
        for prefix in (PREFIX, *LEGACY, UNEXPIRING):
            if (search := self.store.kv.get(prefix + key)) is not None:
                return search
        return None
