"""What the runner needs from a chat platform adapter (console, Slack, Discord)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol

from bot.commands.replies import Reply
from digest.models import ChannelRef


class Failure(StrEnum):
    """What a failed post means for the delivery (``PostError.kind``)."""

    TRANSIENT = "transient"  # retry later, looking the message up first
    REJECTED = "rejected"  # this payload refused: degrade it, then pause
    GONE = "gone"  # channel, bot or permission gone: pause


TRANSIENT, REJECTED, GONE = Failure  # the members themselves, so every caller spells them once


class PostError(Exception):
    """Posting failed, classified once per platform by its adapter.

    ``transient``: retry later (429, 5xx, timeout, dropped connection); ``rejected``: the platform
    refused this payload (degrade it, then pause); ``gone``: channel, bot or permission gone (pause).
    """

    def __init__(
        self,
        reason: str,
        kind: Failure = TRANSIENT,
        retry_after: float | None = None,
        *,
        rate_limited: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = Failure(kind)  # ValueError for a kind that is not one
        self.retry_after = retry_after
        #: The platform asked us to slow down (HTTP 429): said in words, not as its error code.
        self.rate_limited = rate_limited


class Adapter(Protocol):
    """A chat platform as the runner sees it: a digest goes out as a planned list of messages.

    Message 0 is the header; with ``reply.threaded`` the others go in its thread (``parent``
    is message 0's reference). Each message carries its own key, so it can be found again. A
    weekly picture is a plan of one message whose reply carries ``image``: posted as the
    platform shares a file, and found again by its file name.
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
