"""A checker for Slack's Block Kit limits and for mention/link injection, used by the Slack tests."""

from __future__ import annotations

import re

from bot.adapters.slack.blocks import SlackMessage


def texts(obj) -> list[str]:
    """Every string under a block structure."""
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in texts(v)]
    if isinstance(obj, list):
        return [t for v in obj for t in texts(v)]
    return [obj] if isinstance(obj, str) else []


def check(msg: SlackMessage, allowed_links: set[str] = frozenset()) -> None:
    """Raise AssertionError on any limit breach or injected mention/link."""
    assert msg.text.strip(), "fallback text must be set"
    assert len(msg.blocks) <= 50
    for b in msg.blocks:
        assert len(b.get("block_id", "")) <= 255
        if b["type"] == "header":
            assert b["text"]["type"] == "plain_text" and len(b["text"]["text"]) <= 150
        if b["type"] == "section":
            assert len(b["text"]["text"]) <= 3000
        for e in b.get("elements", []):
            if e.get("type") == "button":
                assert len(e["text"]["text"]) <= 75 and len(e["action_id"]) <= 255
                assert len(e.get("value", "")) <= 2000
            elif "text" in e:
                assert len(e["text"]) <= 3000
    for t in texts(msg.blocks) + [msg.text]:
        assert not re.search(r"<[!@#]", t), f"mention or channel ping in {t[:80]!r}"
        for link in re.findall(r"<([^|>]+)\|", t):
            assert link in allowed_links, f"unexpected link {link!r}"
