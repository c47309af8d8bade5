"""A fake chat adapter implementing the runner's port: records every message, fails on demand."""

from __future__ import annotations

from datetime import datetime

from bot.commands.replies import Reply
from bot.ports import PostError
from digest.models import ChannelRef


class RecordingAdapter:
    """Keeps every posted message by key; ``fail`` maps channel ids to PostErrors to raise.

    ``per_message`` papers travel per message after the header, like a platform split.
    """

    def __init__(self, platform: str = "console", per_message: int = 100) -> None:
        self.platform = platform
        self.per_message = per_message
        self.messages: list[tuple[ChannelRef, str, tuple[str, ...]]] = []
        self.sent: list[tuple[ChannelRef, Reply]] = []
        self.digests: list[tuple[ChannelRef, Reply]] = []  # each digest's reply, at its header
        self.fail: dict[str, PostError] = {}

    def plan(self, reply: Reply) -> list[tuple[str, ...]]:
        ids = [c.paper_id for c in reply.cards]
        n = self.per_message
        return [()] + [tuple(ids[i : i + n]) for i in range(0, len(ids), n)]

    async def post_part(
        self,
        ref: ChannelRef,
        reply: Reply,
        position: int,
        key: str,
        parent: str | None,
        degrade: bool = False,
    ) -> str:
        if ref.channel_id in self.fail:
            raise self.fail[ref.channel_id]
        self.messages.append((ref, key, self.plan(reply)[position]))
        if position == 0:
            self.digests.append((ref, reply))
        return f"msg-{key}"

    async def find_part(
        self, ref: ChannelRef, reply: Reply, position: int, key: str, parent: str | None, since=None
    ) -> str | None:
        return f"msg-{key}" if key in self.keys() else None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        self.sent.append((ref, reply))

    def keys(self) -> list[str]:
        return [k for _, k, _ in self.messages]

    def papers(self, channel: str | None = None) -> list[str]:
        """Every paper that reached the (fake) platform, in order, duplicates kept."""
        return [
            p for ref, _, ids in self.messages if channel in (None, ref.channel_id) for p in ids
        ]


class FixedClock:
    """A clock (digest/clock/__init__.py) that says what it is told: ``clock.now = ...`` moves it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        """The instant set last."""
        return self.now
