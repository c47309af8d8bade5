"""Errors to public Discord commands stay private (issue 23), against a fake that, like Discord,
gives a deferral's first follow-up the deferral's visibility whatever flags it asks for.

Breaks that turn this red: answer() without deleting the public "thinking…" message before an
error (the error replaces it and the whole channel sees it); the fake without `loading` (it would
believe the ephemeral flag, and this bug could not be seen).
"""

from __future__ import annotations

import pytest

from tests.support.discord_app import discord_app_bot, dispatch, slash  # noqa: F401

EPHEMERAL = 64


@pytest.mark.asyncio
async def test_an_error_to_a_public_command_is_seen_only_by_its_asker(bot):
    await dispatch(bot.client, slash("list", "tl", public=True))  # nobody set this channel up
    sent = bot.fake.followups["tl"]
    assert len(sent) == 1 and sent[0]["flags"] & EPHEMERAL, sent
    assert "no digest" in sent[0]["embeds"][0]["description"] + sent[0]["content"]
    assert "tl" in bot.fake.deleted


@pytest.mark.asyncio
async def test_a_public_answer_is_still_public(bot):
    await dispatch(bot.client, slash("subscribe", "ts", text="diffusion models"))
    await dispatch(bot.client, slash("list", "tl2", public=True))
    sent = bot.fake.followups["tl2"]
    assert sent and not sent[0]["flags"] & EPHEMERAL and "tl2" not in bot.fake.deleted
