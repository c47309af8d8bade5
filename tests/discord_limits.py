"""A checker for Discord's message limits and mention safety, used by the Discord tests."""

from __future__ import annotations

import re

from bot.adapters.discord.embeds import DiscordMessage


def check(msg: DiscordMessage) -> None:
    assert len(msg.content) <= 2000 and len(msg.embeds) <= 10
    assert sum(len(e) for e in msg.embeds) <= 6000
    assert len(msg.rows) <= 5 and all(len(r) <= 5 for r in msg.rows)
    for e in msg.embeds:
        d = e.to_dict()
        assert len(d.get("title", "")) <= 256 and len(d.get("description", "")) <= 4096
        assert len(d.get("fields", [])) <= 25 and all(
            len(f["value"]) <= 1024 for f in d.get("fields", [])
        )
        assert len(d.get("footer", {}).get("text", "")) <= 2048
        for text in [d.get("description", ""), *[f["value"] for f in d.get("fields", [])]]:
            assert not re.search(r"@(everyone|here)\b", text), text[:80]
            assert not re.search(r"<@[!&]?\d{17,20}>", text), text[:80]
            # [text](url) whose bracket follows an even number of backslashes: Discord renders it.
            link = r"(?:^|[^\\])(?:\\\\)*\[[^\]]+\]\(<?https?://[^)\s]+\)"
            assert not re.search(link, text, re.I), "masked link injected"
    for row in msg.rows:
        for b in row:
            assert len(b.label) <= 80 and (b.custom_id is None or len(b.custom_id) <= 100)
