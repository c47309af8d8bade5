"""Discord digests through the runner and discord.py's HTTP client against a local fake REST API."""

import asyncio
from datetime import date, timedelta

import discord
import pytest

from bot.adapters.discord.poster import DiscordPoster
from bot.commands.replies import digest_reply
from bot.runner import DigestRunner
from digest.delivery import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from tests.fake_discord import FakeDiscord

DAY = date(2026, 12, 1)
RATE_LIMITED = (
    429,
    {"Via": "1.1 google"},
    {"message": "You are being rate limited.", "retry_after": 0.05, "global": False},
)


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def run(app, fake, coro_factory):
    """Log a discord.py client in against the fake (REST only, no gateway) and run ``coro_factory``."""

    async def go():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            poster = DiscordPoster(client)
            return await coro_factory(poster)
        finally:
            await client.close()

    return asyncio.run(go())


def channel(app, cid="111", topic="diffusion models"):
    ref = ChannelRef("discord", cid, "77")
    app.channels.add(ref, SubscriptionKind.TOPIC, topic)
    return app.store.channels.get(ref)


def runner(app, poster, worker="w1"):
    return DigestRunner(Deliveries(app.channels, worker), {"discord": poster})


def test_digest_arrives_as_embeds_with_buttons_and_no_mentions(app, fake):
    ch = channel(app)
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 5 papers"
    (post,) = fake.posts("111")  # five papers fit one message with the header
    assert len(post["embeds"]) == 6 and post["embeds"][0]["title"].startswith("📚 Papers for")
    assert post["allowed_mentions"] == {"parse": []}
    assert len(post["components"]) == 5 and post["components"][0]["components"][0][
        "custom_id"
    ].startswith("dv:u:")
    assert f"digest-{ch.id}-2026-12-01" in post["embeds"][0]["footer"]["text"]


def test_threaded_digest_posts_papers_in_a_thread(app, fake):
    ch = channel(app)
    app.channels.set_option(ch.ref, "threads", True)
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 5 papers"
    assert any(p.endswith("/threads") for _, p, _ in fake.calls)


def test_rate_limit_with_via_header_is_retried_by_discord_py(app, fake):
    ch = channel(app)
    fake.fail["111"] = [RATE_LIMITED]
    assert run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY)) == "posted 5 papers"
    assert len(fake.posts("111")) == 2 and len(fake.messages["111"]) == 1


@pytest.mark.parametrize(
    ("status", "reason"),
    [(403, "missing access"), (404, "channel not found")],
)
def test_forbidden_and_not_found_pause_only_that_channel(app, fake, status, reason):
    bad, good = channel(app, "222"), channel(app, "333")
    fake.fail["222"] = [
        (
            status,
            {},
            {"message": "Missing Access" if status == 403 else "Unknown Channel", "code": 50001},
        )
    ]

    async def both(p):
        r = runner(app, p)
        return await r.run_channel(bad.id, DAY), await r.run_channel(good.id, DAY)

    first, second = run(app, fake, both)
    assert "channel paused" in first and second == "posted 5 papers"
    assert reason in app.store.channels.by_id(bad.id).paused_reason


def test_closed_dms_pause_the_personal_digest_with_the_reason(app, fake):
    ch = channel(app, "@42")
    fake.fail["942"] = [(403, {}, {"message": "Cannot send messages to this user", "code": 50007})]
    assert "channel paused" in run(app, fake, lambda p: runner(app, p).run_channel(ch.id, DAY))
    from bot.commands import Context

    reply = app.commands.handle(
        "me list", Context(ref=ChannelRef("discord", "111", "77"), user="42", dm=ch.ref)
    )
    assert "Cannot send messages to this user" in reply.text


def test_crash_after_posting_is_found_in_history_and_not_reposted(app, fake):
    ch = channel(app)
    dead = Deliveries(app.channels, "host:1")
    claim = dead.claim(ch, DAY)
    dead.begin(claim)

    async def scenario(p):
        await p.post_digest(ch.ref, digest_reply(claim.digest), claim.key)  # posted, then crash
        return await runner(app, p, "host:2").recover(stale_after=timedelta(0))

    assert run(app, fake, scenario) == ["recorded"]
    assert len(fake.messages["111"]) == 1
