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


#: Any Slack mention-like token: <@U…>, <!here>, <#C…>, <!subteam^…>.
TOKEN = re.compile(r"<([!@#])([^>]*)>?")
#: A user mention as Slack parses it: a member (U…) or enterprise (W…) id, nothing after it.
USER_MENTION = re.compile(r"[UW][A-Z0-9]{1,20}")


def mention_problems(blocks: list, text: str) -> list[str]:
    """Mentions the bot must never send: a broadcast (<!channel>, <!here>, <!everyone>, any
    <!…>), a channel link, or a malformed user token (Slack would show it as text or ping the
    wrong thing)."""
    out = []
    for t in texts(blocks) + [text or ""]:
        for kind, body in TOKEN.findall(t):
            if kind != "@":
                out.append(f"broadcast or channel token <{kind}{body[:20]}>")
            elif not USER_MENTION.fullmatch(body):
                out.append(f"malformed user mention <@{body[:20]}>")
    return out


def mentioned(blocks: list, text: str) -> list[str]:
    """The user ids a message's blocks and text mention, once each, in order."""
    found = [b for t in texts(blocks) + [text or ""] for k, b in TOKEN.findall(t) if k == "@"]
    return list(dict.fromkeys(u for u in found if USER_MENTION.fullmatch(u)))


def check(
    msg: SlackMessage, allowed_links: set[str] = frozenset(), users: set[str] = frozenset()
) -> None:
    """Raise AssertionError on anything Slack would reject, or an injected mention/link;
    ``users``: the people this message may mention (its cards' mentions)."""
    assert msg.text.strip(), "fallback text must be set"
    problems = message_problems(msg.blocks, msg.text)
    assert not problems, problems
    assert not mention_problems(msg.blocks, msg.text), mention_problems(msg.blocks, msg.text)
    assert set(mentioned(msg.blocks, msg.text)) <= set(users), mentioned(msg.blocks, msg.text)
    for t in texts(msg.blocks) + [msg.text]:
        t = re.sub(r"<@[UW][A-Z0-9]{1,20}>", "", t) if users else t
        assert not re.search(r"<[!@#]", t), f"mention or channel ping in {t[:80]!r}"
        for link in re.findall(r"<([^|>]+)\|", t):
            assert link in allowed_links, f"unexpected link {link!r}"
