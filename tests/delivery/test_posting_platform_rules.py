"""What Slack and Discord refuse on the posting path, and what a digest then does (issue 23).

The fakes refuse what the platforms refuse (Slack: history of a public channel the app posts to
through chat:write.public without being a member; Discord: a second thread on one message,
160004, and a thread without Create Public Threads, 50013); assertions are on what arrived.
"""

import asyncio
from datetime import date

import discord
import pytest

from bot.adapters.discord.poster import DiscordPoster
from bot.adapters.slack.poster import SlackPoster
from bot.runtime.runner import DigestRunner
from digest.delivery.steps import Deliveries
from digest.models import ChannelRef, SubscriptionKind
from digest.store.deliveries import POSTED
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack

DAY = date(2026, 12, 1)


def deliveries(app):
    from datetime import timedelta

    return Deliveries(app.papers, "w1", lease=timedelta(seconds=0.3), backoff=(0.2,))


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@pytest.mark.parametrize("fault", ["500", "drop"])
def test_a_public_channel_posted_without_membership_is_not_paused_by_recovery(app, slack, fault):
    """A public channel the app is not in: chat:write.public lets it post, but history answers
    not_in_channel. Seen: one transient error, then recovery read history, got not_in_channel
    (permanent) and paused a channel it could post to.
    Breaks that turn this red: SlackPoster.find_part letting not_in_channel from history through
    (the channel is paused, 4 papers never arrive); the fake's public channels taking history
    reads from non-members (the refusal is never met)."""
    slack.known.add("CPUB")
    slack.public.add("CPUB")
    ref = ChannelRef("slack", "CPUB", "T1")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    seen = {"n": 0}

    def chaos(method, args):
        if method == "chat.postMessage":
            seen["n"] += 1
            return fault if seen["n"] == 1 else None
        return None

    slack.chaos = chaos

    async def lookup(team):
        return "xoxb-test"

    poster = SlackPoster(lookup, base_url=slack.url, min_interval=0, timeout=2)
    r = DigestRunner(deliveries(app), {"slack": poster})
    assert asyncio.run(r.run_channel(ch.id, DAY)).startswith("retrying at ")
    asyncio.run(asyncio.sleep(0.45))
    assert asyncio.run(r.recover()) == ["posted 5 papers"]
    assert ("conversations.history", "CPUB", "not_in_channel") in slack.refusals
    assert not app.store.channels.by_id(ch.id).paused
    # Not in the channel, so no lookup is possible: a post whose answer was lost is sent again
    # (documented); one Slack never stored arrives once.
    assert len(slack.arrived("CPUB")) == (1 if fault == "500" else 2)


@pytest.fixture
def fake(monkeypatch):
    with FakeDiscord() as f:
        monkeypatch.setattr(discord.http.Route, "BASE", f.base)
        yield f


def run_discord(app, ch, worker="w1"):
    async def go():
        client = discord.Client(intents=discord.Intents.none())
        await client.login("fake-token")
        try:
            r = DigestRunner(deliveries(app), {"discord": DiscordPoster(client)})
            return await r.run_channel(ch.id, DAY)
        finally:
            await client.close()

    return asyncio.run(go())


def threaded_discord_channel(app, cid="111"):
    ref = ChannelRef("discord", cid, "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    app.channels.settings.set_option(ref, "threads", True)
    return app.store.channels.get(ref)


def test_a_threaded_discord_digest_starts_its_thread_once(app, fake):
    """Seen: a thread POSTed for every paper message (24 refusals 160004 per 25-paper digest).
    Breaks that turn this red: DiscordPoster._thread starting the thread for every message
    (4 refusals 160004 here)."""
    ch = threaded_discord_channel(app)
    assert run_discord(app, ch) == "posted 5 papers"
    header = fake.arrived("111")
    assert len(header) == 1 and len(fake.arrived(header[0]["id"])) == 5
    starts = [p for m, p, _ in fake.calls if m == "POST" and p.endswith("/threads")]
    assert len(starts) == 1 and fake.thread_refusals == []


@pytest.mark.parametrize("refusal", ["no_thread_permission", "no_threads"])
def test_no_thread_allowed_sends_the_papers_inline_instead_of_pausing(app, fake, refusal):
    """Without Create Public Threads (403 / 50013), or where threads cannot be (50024), the
    papers go inline after the header. Seen: 50013 paused the channel after the header was
    posted; 50024 was tried (and refused) again for every message.
    Breaks that turn this red: DiscordPoster._thread re-raising 50013 (classified gone: paused,
    papers lost) or not remembering the refusal (one refused start per message)."""
    getattr(fake, refusal).add("111")
    ch = threaded_discord_channel(app)
    assert run_discord(app, ch) == "posted 5 papers"
    assert not app.store.channels.by_id(ch.id).paused
    assert len(fake.arrived("111")) == 6  # the header, then each paper inline
    assert len(fake.thread_refusals) == 1
    assert app.store.deliveries.for_day(ch.id, DAY).status == POSTED


def test_a_discord_error_is_named_once_and_on_one_line(app, fake):
    """Seen: "Discord error Discord error 429/0"; a form error's text spread over lines.
    Breaks that turn this red: classify() prefixing transient reasons with "Discord error" (the
    runner adds it); the detail not joined onto one line."""
    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    fake.fail["111"] = [(409, {}, {"message": "upstream\nbusy", "code": 0})]
    outcome = run_discord(app, ch)
    assert outcome.startswith("retrying at ") and outcome.count("Discord error") == 1
    assert "\n" not in outcome and "upstream busy" in outcome
    assert fake.arrived("111") == []


def test_a_discord_pause_reason_is_one_line(app, fake):
    """Issue 26 item 8: a Discord error text over several lines became a pause reason with a
    newline (`list` and `channels` print it as one line). Breaks that turn this red: classify()
    keeping the Forbidden text as Discord sent it."""
    ref = ChannelRef("discord", "111", "77")
    app.channels.follows.add(ref, SubscriptionKind.TOPIC, "diffusion models")
    ch = app.store.channels.get(ref)
    fake.fail["111"] = [(403, {}, {"message": "Missing Access\nto this channel", "code": 50001})]
    assert "channel paused" in run_discord(app, ch)
    reason = app.store.channels.by_id(ch.id).paused_reason
    assert reason == "missing access: Missing Access to this channel"
