"""What a digest run did: the line people read, and its kind for exit codes and callers."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Protocol

from digest.models import DeliveryState


class Kind(Enum):
    """The kinds of outcome callers act on (the CLI's exit codes: docs/commands.md, `digest`)."""

    POSTED = "posted"  # this run posted the digest
    SETTLED = "settled"  # already delivered, or a quiet day: nothing left to do
    NOT_SENT = "not sent"  # not run: paused, no connection, channel gone, nothing claimed
    BUSY = "busy"  # another process holds the digest: being prepared or sent
    LOST = "lost"  # this run's claim was taken over by another worker
    RETRYING = "retrying"  # a post failed; a retry is planned
    FAILED = "failed"  # a post failed for good (the channel may be paused)


class Outcome(str):
    """An outcome is the text replies and logs show (a str, unchanged) with a ``kind``."""

    kind: Kind

    def __new__(cls, text: str, kind: Kind) -> Outcome:
        outcome = super().__new__(cls, text)
        outcome.kind = kind
        return outcome


class StoredState(Protocol):
    """What the kind of a stored digest depends on (a delivery as the core reads it)."""

    status: DeliveryState
    retry_at: datetime | None
    last_error: str | None


def state_kind(d: StoredState | None) -> Kind:
    """The kind of a stored digest state, branch for branch as digest.delivery.steps.describe words it."""
    if d is None:
        return Kind.NOT_SENT
    if d.status in (DeliveryState.POSTED, DeliveryState.EMPTY):
        return Kind.SETTLED
    if d.status == DeliveryState.FAILED:
        return Kind.FAILED
    return Kind.RETRYING if d.retry_at is not None and d.last_error else Kind.BUSY
