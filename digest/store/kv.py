"""Small pieces of operational state (e.g. the last synced command-tree hash)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine, delete
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from digest.store.schema import KeyValueRow


class KeyValueRepo:
    """get/set of short strings by key."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, key: str) -> str | None:
        """The value stored under ``key``, if any."""
        with Session(self.engine) as session:
            row = session.get(KeyValueRow, key)
            return row.value if row else None

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` (replacing any previous value)."""
        with Session(self.engine) as session:
            session.merge(KeyValueRow(key=key, value=value))
            session.commit()

    def get_or_create(self, key: str, make: Callable[[], str]) -> str:
        """The value under ``key``; the first caller stores ``make()`` (a racing one reads it)."""
        value = self.get(key)
        if value is not None:
            return value
        try:
            with Session(self.engine) as session:
                session.add(KeyValueRow(key=key, value=make()))
                session.commit()
        except IntegrityError:  # another process stored it first: theirs is the one
            pass
        value = self.get(key)
        assert value is not None
        return value

    def delete_range(self, low: str, high: str) -> int:
        """Delete every key from ``low`` up to (not including) ``high``; returns how many."""
        with Session(self.engine) as session:
            stmt = delete(KeyValueRow).where(KeyValueRow.key >= low, KeyValueRow.key < high)
            removed = session.execute(stmt).rowcount
            session.commit()
            return removed
