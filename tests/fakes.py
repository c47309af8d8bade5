"""A fake chat adapter implementing the runner's port: records posts, can fail on demand."""

from __future__ import annotations

from bot.commands.replies import Reply
from bot.ports import Posted, PostError
from digest.models import ChannelRef


class RecordingAdapter:
    """Keeps every posted digest by key; ``fail`` maps channel ids to PostErrors to raise."""

    def __init__(self, platform: str = "console") -> None:
        self.platform = platform
        self.posts: list[tuple[ChannelRef, Reply, str]] = []
        self.sent: list[tuple[ChannelRef, Reply]] = []
        self.fail: dict[str, PostError] = {}

    async def post_digest(self, ref: ChannelRef, reply: Reply, key: str) -> Posted:
        if ref.channel_id in self.fail:
            raise self.fail[ref.channel_id]
        self.posts.append((ref, reply, key))
        return Posted(f"msg-{key}", {c.paper_id: f"msg-{key}-{c.paper_id}" for c in reply.cards})

    async def find_posted(self, ref: ChannelRef, key: str) -> Posted | None:
        return Posted(f"msg-{key}") if any(k == key for _, _, k in self.posts) else None

    async def send(self, ref: ChannelRef, reply: Reply) -> None:
        self.sent.append((ref, reply))

    def keys(self) -> list[str]:
        return [k for _, _, k in self.posts]
