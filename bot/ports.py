"""What the runner needs from a chat platform adapter (console, Slack, Discord)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from bot.commands.replies import Reply
from digest.models import ChannelRef

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
    ) -> None:
        super().__init__(reason)
        if kind not in KINDS:
            raise ValueError(f"unknown PostError kind {kind!r}")
        self.reason = reason
        self.kind = kind
        self.retry_after = retry_after


class Adapter(Protocol):
    """A chat platform as the runner sees it: a digest goes out as a planned list of messages.

    Message 0 is the header; with ``reply.threaded`` the others go in its thread (``parent``
    is message 0's reference). Each message carries its own key, so it can be found again.
    """

    platform: str

    def plan(self, reply: Reply) -> list[tuple[str, ...]]:
        """The messages this digest takes, as the paper ids each one carries (deterministic)."""
        ...

    async def post_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        degrade: bool = False,
    ) -> str:
        """Post message ``position`` tagged with ``key``; its reference. ``degrade``: the same
        message without what a platform may refuse (link buttons, long text)."""
        ...

    async def find_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        since: str | datetime | None = None,
    ) -> str | None:
        """The message posted under ``key``; None if surely not there; PostError if unsure.

        ``since``: a message reference the platform gave earlier (this digest's previous
        message, or an earlier digest's last): the part was posted after it, by the platform's
        own clock; a time only for a channel's first message (no message to go by).
        """
        ...

    # Optional: ``latest_ref(ref) -> str | None``, the channel's newest message reference
    # (the platform's clock), read before a channel's first digest is posted (DigestRunner).

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        """Post an ordinary message."""
        ...


class ImagePoster(Protocol):
    """A platform that can share a picture in a channel (the weekly picture, `stats`)."""

    platform: str

    async def upload_image(
        self, ref: ChannelRef, png: bytes, alt: str, title: str, filename: str = "weekly.png"
    ) -> str:
        """Share ``png`` with its alt text and title; the platform's reference to it.
        Raises PostError (transient, rejected or gone) as posting does."""
        ...
