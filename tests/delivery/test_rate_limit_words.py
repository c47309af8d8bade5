"""A platform's 429 is said in words wherever a digest's state is shown: "Discord asked us to
slow down; retrying at 04:08 UTC" in `list`, `digestbot channels` and the runner's outcome,
never "Discord error 429/0: You are being rate limited..".

Breaks that turn this red (each tried): classify() (Discord or Slack) not marking a 429
``rate_limited`` (the code and Discord's text come back); the runner recording
"<Platform> error …" for it (the same); retrying() ignoring SLOW_DOWN (the words come after
"retrying at … after", and the test's exact sentence is not there).
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

import discord
import pytest

from bot.adapters.discord.poster import DiscordPoster
from bot.commands import Context
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.adapters.discord.test_discord_posting import RATE_LIMITED
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack

DAY = datetime.now(UTC).date()  # `list` tells today's digest
SAID = re.compile(r"Discord asked us to slow down; retrying at \d\d:\d\d UTC")


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def test_a_discord_rate_limit_reads_as_words_in_list(app, fake):
    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    fake.fail["111"] = [RATE_LIMITED] * 10  # more than discord.py retries by itself

    async def go():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            poster = DiscordPoster(client)
            runner = DigestRunner(
                Deliveries(app.papers, "w1"), {"discord": poster}, channels=app.channels
            )
            return await runner.run_channel(ch.id, DAY)
        finally:
            await client.close()

    outcome = asyncio.run(go())
    assert SAID.fullmatch(outcome), outcome
    listing = app.commands.handle("list", Context(ref, "42")).text
    assert SAID.search(listing) and "429" not in listing and "rate limited" not in listing, listing
    assert app.store.deliveries.for_day(ch.id, DAY).last_error == "Discord asked us to slow down"


def test_a_slack_rate_limit_reads_as_words_too():
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.slack_response import SlackResponse

    from bot.adapters.slack.poster import classify

    with FakeSlack():  # the answer Slack gives: 429, error "ratelimited", Retry-After
        answer = SlackResponse(
            client=None,
            http_verb="POST",
            api_url="chat.postMessage",
            req_args={},
            data={"ok": False, "error": "ratelimited"},
            headers={"Retry-After": "30"},
            status_code=429,
        )
    err = classify(SlackApiError("ratelimited", answer))
    assert err.rate_limited and err.retry_after == 30.0
