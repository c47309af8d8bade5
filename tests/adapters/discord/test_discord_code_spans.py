"""Discord replies keep the core's code spans as code, in Discord's syntax (issue 23).

Escaping every backtick showed hints as "\\`/papers subscribe …\\`" (literal backticks, no code).
Now a matched one-line span stays code (Discord renders nothing inside it) while everything
outside is escaped as before, and `/papers …` hints carry Discord's option names.

Breaks that turn this red (each tried): headers() using safe() instead of rich() (backticks
escaped again); rich() leaving the text outside spans unescaped (Markdown from a topic renders);
rich() keeping a lone backtick unescaped (a span opens across the user's text).
"""

from __future__ import annotations

import pytest

from bot.adapters.discord.embeds import render, rich
from bot.commands.replies import Reply
from tests.support.discord_app import discord_app_bot, dispatch, slash  # noqa: F401


def test_code_spans_stay_code_and_the_rest_is_escaped() -> None:
    text = "1. topic: *bold* a`b\nNothing yet: `/papers subscribe text:<topic>`."
    (msg,) = render(Reply(text=text, title="t"))
    desc = msg.embeds[0].description
    assert "`/papers subscribe text:<topic>`" in desc and "\\`/papers" not in desc
    assert "\\*bold\\*" in desc and "a\\`b" in desc


def test_hidden_characters_go_from_spans_too() -> None:
    assert rich("`/papers\u202e list`") == "`/papers list`"


@pytest.mark.asyncio
async def test_list_hint_is_a_code_span_in_discord_syntax(bot):
    """`/papers list` on a new channel: the hint arrives as a real code span with `text:`."""
    await dispatch(bot.client, slash("list", "c1"))
    assert bot.fake.rejected == []
    desc = bot.fake.followups["c1"][0]["embeds"][0]["description"]
    assert "`/papers subscribe text:<topic>`" in desc and "\\`" not in desc


@pytest.mark.asyncio
async def test_help_shows_options_as_code(bot):
    await dispatch(bot.client, slash("help", "c2"))
    desc = "".join(e["description"] for m in bot.fake.followups["c2"] for e in m["embeds"])
    assert "`/papers search query: [venue:]" in desc and "\\`" not in desc
