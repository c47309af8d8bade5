"""The one clock CLI commands read "now" from (chat commands carry theirs in Context.now)."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """The current instant in UTC; read once per command, so every date it derives agrees."""
    return datetime.now(UTC)
