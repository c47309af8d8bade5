"""The Discord tests' checker: the shared message validator, plus mention-safety checks."""

from __future__ import annotations

import re

from bot.adapters.discord.embeds import DiscordMessage
from bot.adapters.discord.limits import message_problems
from bot.adapters.discord.poster import payload as body


def check(msg: DiscordMessage) -> None:
    """Raise AssertionError on anything Discord would reject, or an injected mention/link."""
    problems = message_problems(body(msg))
    assert not problems, problems
    for e in msg.embeds:
        d = e.to_dict()
        for text in [d.get("description", ""), *[f["value"] for f in d.get("fields", [])]]:
            assert not re.search(r"@(everyone|here)\b", text), text[:80]
            assert not re.search(r"<@[!&]?\d{17,20}>", text), text[:80]
            # [text](url) whose bracket follows an even number of backslashes: Discord renders it.
            link = r"(?:^|[^\\])(?:\\\\)*\[[^\]]+\]\(<?https?://[^)\s]+\)"
            assert not re.search(link, text, re.I), "masked link injected"
