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


class PostError(Exception):
    """Posting failed; ``permanent`` failures (channel gone, bot removed) pause the channel."""

    def __init__(self, reason: str, permanent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


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
