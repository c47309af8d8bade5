"""Subscribing where the bot cannot post says so at once (issue 23), from the `app_permissions`
Discord sends with every interaction.

Breaks that turn this red: run() without the cannot_post() note (subscribe succeeds silently and
the first digest fails 403/50001 and pauses); cannot_post() checking nothing (a note shown even
with every permission).
"""

from __future__ import annotations

import pytest

from tests.support.discord_app import discord_app_bot, dispatch, embed_text, slash  # noqa: F401

VIEW, SEND, EMBED = 1 << 10, 1 << 11, 1 << 14


@pytest.mark.asyncio
async def test_subscribe_warns_when_the_bot_cannot_post_here(bot):
    blind = slash("subscribe", "s1", text="diffusion models")
    blind["app_permissions"] = str(VIEW)  # sees the channel, may not post
    await dispatch(bot.client, blind)
    said = embed_text(bot.fake.followups["s1"][0])
    assert "Now following" in said and "Send Messages" in said and "View Channel" not in said
    able = slash("subscribe", "s2", text="graph neural networks")
    able["app_permissions"] = str(VIEW | SEND | EMBED)
    await dispatch(bot.client, able)
    assert "I lack" not in embed_text(bot.fake.followups["s2"][0])
