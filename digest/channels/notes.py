"""Values the bot keeps for itself across restarts (a command tree's hash, where it was synced)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from digest.store import Store


class Notes:
    """A key's kept value, in the database every process of the bot shares."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def recall(self, key: str) -> str | None:
        """The value kept under ``key``, or None."""
        return self.store.kv.get(key)

    def remember(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key`` (replacing what was there)."""
        self.store.kv.set(key, value)
