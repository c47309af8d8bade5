"""What the runner needs from a chat platform adapter (console, Slack, Discord)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from bot.commands.replies import Reply
from digest.models import ChannelRef


@dataclass(frozen=True)
class Posted:
    """Where a digest landed: the parent message, and one message per paper when split."""

    message_ref: str
    item_refs: dict[str, str] = field(default_factory=dict)


TRANSIENT, REJECTED, GONE = "transient", "rejected", "gone"
KINDS = (TRANSIENT, REJECTED, GONE)


class PostError(Exception):
    """Posting failed, classified once per platform by its adapter.

    ``transient``: retry later (429, 5xx, timeout, dropped connection); ``rejected``: the platform
    refused this payload (degrade it, then pause); ``gone``: channel, bot or permission gone (pause).
    """

    def __init__(
        self,
        reason: str,
        kind: str = TRANSIENT,
        retry_after: float | None = None,
        *,
        permanent: bool | None = None,
    ) -> None:
        super().__init__(reason)
        if permanent is not None:  # older call style: permanent=True means the channel is gone
            kind = GONE if permanent else TRANSIENT
        if kind not in KINDS:
            raise ValueError(f"unknown PostError kind {kind!r}")
        self.reason = reason
        self.kind = kind
        self.retry_after = retry_after

    @property
    def permanent(self) -> bool:
        """True when retrying the same thing cannot help."""
        return self.kind != TRANSIENT


class Adapter(Protocol):
    """A chat platform as the runner sees it."""

    platform: str

    async def post_digest(self, ref: ChannelRef, reply: Reply, key: str) -> Posted:
        """Post a digest; ``key`` is stable across retries so the platform side can deduplicate."""
        ...

    async def find_posted(self, ref: ChannelRef, key: str) -> Posted | None:
        """The digest already posted under ``key``; None if surely not; PostError if it cannot tell."""
        ...

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """Post an ordinary message."""
        ...
