"""The Slack tests' checker: the shared Block Kit validator, plus mention/link injection checks."""

from __future__ import annotations

import re

from bot.adapters.slack.blocks import SlackMessage
from bot.adapters.slack.limits import message_problems


def texts(obj) -> list[str]:
    """Every string under a block structure."""
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in texts(v)]
    if isinstance(obj, list):
        return [t for v in obj for t in texts(v)]
    return [obj] if isinstance(obj, str) else []


def check(msg: SlackMessage, allowed_links: set[str] = frozenset()) -> None:
    """Raise AssertionError on anything Slack would reject, or an injected mention/link."""
    assert msg.text.strip(), "fallback text must be set"
    problems = message_problems(msg.blocks, msg.text)
    assert not problems, problems
    for t in texts(msg.blocks) + [msg.text]:
        assert not re.search(r"<[!@#]", t), f"mention or channel ping in {t[:80]!r}"
        for link in re.findall(r"<([^|>]+)\|", t):
            assert link in allowed_links, f"unexpected link {link!r}"
